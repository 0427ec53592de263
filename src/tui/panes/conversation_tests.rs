//! The conversation's entries: streaming, final answers, discarded replies, laziness.

use super::*;

/// Every row, wrapped directly (what the lazy cache must agree with).
fn text(c: &mut Conversation, width: usize) -> Vec<String> {
    c.refresh_open();
    c.lines
        .iter()
        .flat_map(|l| wrap_logical(l, width))
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn streamed_lines_commit_and_partial_line_shows() {
    let mut c = Conversation::new();
    c.push_entry(Kind::User, "do it");
    c.delta("Hel");
    assert_eq!(text(&mut c, 40), ["❯ do it", "", "• Hel"]);
    c.delta("lo\nsecond `x` li");
    assert_eq!(
        text(&mut c, 40),
        ["❯ do it", "", "• Hello", "  second x li"]
    );
    c.delta("ne\n");
    c.close_reply();
    assert_eq!(
        text(&mut c, 40),
        ["❯ do it", "", "• Hello", "  second x line"]
    );
}

#[test]
fn code_blocks_are_set_apart_and_final_answer_is_not_repeated() {
    let mut c = Conversation::new();
    c.delta("Done:\n```py\nx\t= 1\n```\n");
    c.final_answer("Done:\n```py\nx\t= 1\n```");
    assert_eq!(
        text(&mut c, 40),
        ["✓ Done:", "", "  py", "  │ x   = 1"],
        "no backtick lines: a label, then the code"
    );
    c.new_turn();
    c.final_answer("Other");
    assert_eq!(text(&mut c, 40).last().map(String::as_str), Some("✓ Other"));
}

#[test]
fn a_retried_reply_stays_marked_as_discarded() {
    let mut c = Conversation::new();
    c.push_entry(Kind::User, "task");
    c.delta("partial answ");
    assert!(c.discard_reply());
    assert_eq!(text(&mut c, 40), ["❯ task", "", "  partial answ"]);
    assert_eq!(c.lines.last().map(|l| l.kind), Some(Kind::Discarded));
    c.final_answer("Other");
    assert_eq!(
        text(&mut c, 40).last().map(String::as_str),
        Some("✓ Other"),
        "a discarded reply is never the final answer"
    );
}

#[test]
fn appending_does_not_rewrap_earlier_lines() {
    let mut c = Conversation::new();
    for i in 0..100 {
        c.push_entry(Kind::Notice, &format!("notice {i}"));
    }
    c.ensure_wrapped(30, 500);
    let before = c.cache.known();
    c.push_entry(Kind::Error, "boom");
    assert_eq!(c.cache.known(), before, "cache kept");
    c.ensure_wrapped(30, 500);
    assert_eq!(c.cache.known(), before + 2, "only the new lines wrapped");
    assert_eq!(text(&mut c, 30).last().map(String::as_str), Some("✗ boom"));
}

#[test]
fn a_think_block_is_shown_dimmed_and_is_not_part_of_the_answer() {
    let mut c = Conversation::new();
    c.push_entry(Kind::User, "what is it?");
    c.delta("<think>\nThe user asks");
    c.delta(" what it is.\n</think>\n\nA calculator.");
    c.final_answer("A calculator.");
    assert_eq!(
        text(&mut c, 40),
        [
            "❯ what is it?",
            "",
            "  The user asks what it is.",
            "✓ A calculator."
        ],
        "the answer is not repeated, the thinking has no tags"
    );
    let thinking = &c.lines[2];
    assert_eq!(thinking.kind, Kind::Thinking);
    let row = wrap_logical(thinking, 40);
    let styled = row[0]
        .spans
        .iter()
        .find(|s| s.content.contains("user asks"))
        .unwrap();
    assert!(styled.style.add_modifier.contains(Modifier::ITALIC));
    assert_eq!(styled.style.fg, theme::DIM.fg);
    // Without thinking nothing changes; an opening tag in the prompt leaves only the close.
    assert_eq!(
        split_thinking("plain"),
        (String::new(), "plain".to_string())
    );
    assert_eq!(
        split_thinking("hmm\n</think>\nok"),
        ("hmm".to_string(), "ok".to_string())
    );
    assert_eq!(
        split_thinking("<think>still"),
        ("still".to_string(), String::new())
    );
}
