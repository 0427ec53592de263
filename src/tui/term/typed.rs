//! Keys typed while start-up waited for the terminal's background colour
//! (`background::query` reads the terminal itself, before the event stream
//! exists): the bytes left once the terminal's replies are taken out, turned
//! into the events crossterm would have made of them, so that the App gets
//! them first, in order, as if the event stream had read them.
//!
//! Why decoded here: crossterm's own parser is private to it, and these are
//! the few bytes a person types in a tenth of a second. What must stay true:
//! every printable character, Enter, Tab, Backspace, Esc, the control keys,
//! arrows and the like, and a bracketed paste come out as crossterm's
//! events; mouse reports and sequences not known here are dropped, never
//! turned into text (a reply or a report must not land in the input box).

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

/// The events in `bytes`, in order.
pub fn events(bytes: &[u8]) -> Vec<Event> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        i += match rest[0] {
            0x1b => {
                let (event, used) = escape(rest);
                out.extend(event);
                used
            }
            b => match control(b) {
                Some(k) => {
                    out.push(Event::Key(k));
                    1
                }
                None => text(rest, &mut out),
            },
        };
    }
    out
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, modifiers))
}

/// A one-byte key other than text (`None` for text and for ESC).
fn control(b: u8) -> Option<KeyEvent> {
    let (code, modifiers) = match b {
        b'\r' | b'\n' => (KeyCode::Enter, KeyModifiers::NONE),
        b'\t' => (KeyCode::Tab, KeyModifiers::NONE),
        0x7f | 0x08 => (KeyCode::Backspace, KeyModifiers::NONE),
        0 => (KeyCode::Char(' '), KeyModifiers::CONTROL),
        0x01..=0x1a => (KeyCode::Char((b - 1 + b'a') as char), KeyModifiers::CONTROL),
        0x1c..=0x1f => (
            KeyCode::Char((b - 0x1c + b'4') as char),
            KeyModifiers::CONTROL,
        ),
        _ => return None,
    };
    Some(KeyEvent::new(code, modifiers))
}

/// Text from the start of `bytes` up to the next control byte, one event a
/// character (capitals with Shift, as crossterm reports them); invalid UTF-8
/// is skipped. Returns the bytes used.
fn text(bytes: &[u8], out: &mut Vec<Event>) -> usize {
    let end = bytes
        .iter()
        .position(|b| *b < 0x20 || *b == 0x7f)
        .unwrap_or(bytes.len())
        .max(1);
    for c in String::from_utf8_lossy(&bytes[..end]).chars() {
        if c == char::REPLACEMENT_CHARACTER {
            continue;
        }
        let shift = match c.is_uppercase() {
            true => KeyModifiers::SHIFT,
            false => KeyModifiers::NONE,
        };
        out.push(key(KeyCode::Char(c), shift));
    }
    end
}

/// A sequence starting with ESC: its event (if any) and its length.
fn escape(bytes: &[u8]) -> (Option<Event>, usize) {
    match bytes.get(1) {
        None | Some(0x1b) => (Some(key(KeyCode::Esc, KeyModifiers::NONE)), 1),
        Some(b'[') => csi(bytes),
        Some(b'O') => match bytes.get(2) {
            Some(b) => (simple_final(*b).map(|c| key(c, KeyModifiers::NONE)), 3),
            None => (None, 2),
        },
        Some(&b) if b < 0x20 || b == 0x7f => match control(b) {
            Some(k) => (Some(key(k.code, k.modifiers | KeyModifiers::ALT)), 2),
            None => (None, 2),
        },
        Some(_) => {
            // Alt and a character: ESC, then the character's own bytes
            // (only continuation bytes: a broken one is left to be read on).
            let mut one = Vec::new();
            let continued = bytes[2..]
                .iter()
                .take(utf8_len(bytes[1]) - 1)
                .take_while(|b| (0x80..=0xbf).contains(*b))
                .count();
            let len = 1 + continued;
            text(&bytes[1..1 + len], &mut one);
            let event = one.pop().and_then(|e| match e {
                Event::Key(k) => Some(key(k.code, k.modifiers | KeyModifiers::ALT)),
                _ => None,
            });
            (event, 1 + len)
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// Arrows and the like by their final byte (CSI or SS3).
fn simple_final(b: u8) -> Option<KeyCode> {
    Some(match b {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'Z' => KeyCode::BackTab,
        b'P'..=b'S' => KeyCode::F(1 + b - b'P'),
        _ => return None,
    })
}

/// `ESC [ params final`: keys, focus changes and a bracketed paste.
fn csi(bytes: &[u8]) -> (Option<Event>, usize) {
    let Some(end) = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b)) else {
        return (None, bytes.len());
    };
    let (params, fin, len) = (&bytes[2..2 + end], bytes[2 + end], 3 + end);
    let params = String::from_utf8_lossy(params);
    let mut nums = params.split(';').map(|p| p.parse::<u32>().ok());
    let first = nums.next().flatten();
    let modifiers = modifiers(nums.next().flatten());
    let event = match (fin, first) {
        (b'~', Some(200)) => return paste(bytes, len),
        (b'I', None) => Some(Event::FocusGained),
        (b'O', None) => Some(Event::FocusLost),
        (b'~', Some(n)) => tilde(n).map(|c| key(c, modifiers)),
        (b'u', Some(n)) => unicode(n).map(|c| key(c, modifiers)),
        _ if params.starts_with(['<', '?', '>']) => None,
        (b, _) => simple_final(b).map(|c| key(c, modifiers)),
    };
    (event, len)
}

/// The modifiers of a `1 + bits` parameter (Shift 1, Alt 2, Ctrl 4).
fn modifiers(param: Option<u32>) -> KeyModifiers {
    let bits = param.unwrap_or(1).saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    for (bit, flag) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
    ] {
        if bits & bit != 0 {
            m |= flag;
        }
    }
    m
}

fn tilde(n: u32) -> Option<KeyCode> {
    Some(match n {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        _ => return None,
    })
}

/// A key of the keyboard protocol's `CSI code u` form.
fn unicode(n: u32) -> Option<KeyCode> {
    Some(match n {
        13 => KeyCode::Enter,
        9 => KeyCode::Tab,
        27 => KeyCode::Esc,
        127 | 8 => KeyCode::Backspace,
        // The keypad's keys, as the keyboard protocol numbers them.
        57399..=57408 => KeyCode::Char(char::from_digit(n - 57399, 10)?),
        57409 => KeyCode::Char('.'),
        57410 => KeyCode::Char('/'),
        57411 => KeyCode::Char('*'),
        57412 => KeyCode::Char('-'),
        57413 => KeyCode::Char('+'),
        57414 => KeyCode::Enter,
        57415 => KeyCode::Char('='),
        // Its other functional keys (private-use code points) type nothing.
        57344..=63743 => return None,
        n => KeyCode::Char(char::from_u32(n).filter(|c| !c.is_control())?),
    })
}

/// A bracketed paste starting at `bytes[..start]`: its text up to the end
/// marker (or to the end of what was read).
fn paste(bytes: &[u8], start: usize) -> (Option<Event>, usize) {
    const END: &[u8] = b"\x1b[201~";
    let rest = &bytes[start..];
    let (body, used) = match rest.windows(END.len()).position(|w| w == END) {
        Some(at) => (&rest[..at], start + at + END.len()),
        None => (rest, bytes.len()),
    };
    let text = String::from_utf8_lossy(body).into_owned();
    (Some(Event::Paste(text)), used)
}

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;
