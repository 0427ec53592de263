use super::*;

fn k(code: KeyCode) -> Event {
    key(code, KeyModifiers::NONE)
}

#[test]
fn text_and_one_byte_keys_come_out_as_crossterm_reports_them() {
    assert_eq!(
        events("hé A\r\t\x7f\x03".as_bytes()),
        vec![
            k(KeyCode::Char('h')),
            k(KeyCode::Char('é')),
            k(KeyCode::Char(' ')),
            key(KeyCode::Char('A'), KeyModifiers::SHIFT),
            k(KeyCode::Enter),
            k(KeyCode::Tab),
            k(KeyCode::Backspace),
            key(KeyCode::Char('c'), KeyModifiers::CONTROL),
        ]
    );
}

#[test]
fn escape_sequences_give_their_keys() {
    assert_eq!(
        events(b"\x1b[A\x1bOB\x1b[3~\x1b[1;5C\x1bx\x1b[13;2u\x1b"),
        vec![
            k(KeyCode::Up),
            k(KeyCode::Down),
            k(KeyCode::Delete),
            key(KeyCode::Right, KeyModifiers::CONTROL),
            key(KeyCode::Char('x'), KeyModifiers::ALT),
            key(KeyCode::Enter, KeyModifiers::SHIFT),
            k(KeyCode::Esc),
        ]
    );
}

#[test]
fn pastes_and_focus_come_through_and_reports_never_become_text() {
    assert_eq!(
        events(b"\x1b[Ia\x1b[200~x\ny\x1b[201~\x1b[<0;10;5M\x1b[?62;22cb"),
        vec![
            Event::FocusGained,
            k(KeyCode::Char('a')),
            Event::Paste("x\ny".into()),
            k(KeyCode::Char('b')),
        ]
    );
    assert_eq!(events(b"\x1b[12"), vec![], "a cut-off sequence is dropped");
    assert_eq!(
        events(b"a\xffb"),
        vec![k(KeyCode::Char('a')), k(KeyCode::Char('b'))]
    );
}

#[test]
fn keypad_keys_of_the_keyboard_protocol_type_what_they_show() {
    assert_eq!(
        events(b"\x1b[57399u\x1b[57408u\x1b[57409u\x1b[57413u\x1b[57414u\x1b[57428u"),
        vec![
            k(KeyCode::Char('0')),
            k(KeyCode::Char('9')),
            k(KeyCode::Char('.')),
            k(KeyCode::Char('+')),
            k(KeyCode::Enter),
        ],
        "a media key (57428) types nothing"
    );
}

#[test]
fn alt_with_a_broken_character_keeps_the_key_after_it() {
    assert_eq!(
        events(b"\x1b\xc3\ra\x1b\xc3\xa9"),
        vec![
            k(KeyCode::Enter),
            k(KeyCode::Char('a')),
            key(KeyCode::Char('é'), KeyModifiers::ALT),
        ]
    );
}
