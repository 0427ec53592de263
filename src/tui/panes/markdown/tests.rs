//! The markdown renderer: each construct as the conversation shows it.

use super::*;
use crate::tui::panes::line_kind::Kind;
use ratatui::style::Modifier;

fn texts(md: &str) -> Vec<String> {
    render(md, false).iter().map(MdLine::text).collect()
}

#[test]
fn fenced_code_loses_its_backticks_and_gets_a_label_and_a_gutter() {
    let lines = render("Done:\n\n```py\nx\t= 1\n```\nafter", false);
    let shown: Vec<String> = lines.iter().map(MdLine::text).collect();
    assert_eq!(shown, ["Done:", "", "py", "│ x   = 1", "", "after"]);
    assert_eq!(lines[2].kind, Kind::Fence);
    assert_eq!(lines[2].spans[0].style, theme::DIM);
    assert_eq!(lines[3].kind, Kind::Code);
    assert_eq!(lines[3].spans[0].style, CODE);
    assert_eq!(
        lines[3].cont[0].content, "│ ",
        "wrapped code keeps its gutter"
    );
    // An unclosed fence (still streaming) is code to the end.
    assert_eq!(texts("```\nlet a;\nlet b;"), ["│ let a;", "│ let b;"]);
}

#[test]
fn coloured_code_uses_the_syntax_slots() {
    let lines = render("```rust\nfn main() {}\n```", true);
    assert_eq!(lines[1].text(), "│ fn main() {}");
    assert!(lines[1].spans.iter().any(|s| s.style == theme::SYN_KEYWORD));
    let plain = render("```rust\nfn main() {}\n```", false);
    assert!(plain[1].spans.iter().all(|s| s.style == CODE));
}

#[test]
fn tables_align_their_columns_by_display_width() {
    let md = "| name | n | note |\n|:-----|--:|:----:|\n| 日本 | 1 | ok |\n| b | 22 | wide one |";
    assert_eq!(
        texts(md),
        [
            "name │  n │   note",
            "─────┼────┼─────────",
            "日本 │  1 │    ok",
            "b    │ 22 │ wide one",
        ]
    );
    let header = &render(md, false)[0];
    assert!(header.spans[0].style.add_modifier.contains(Modifier::BOLD));
}

#[test]
fn quotes_and_nested_lists_keep_their_markers_and_indents() {
    let md = "> quoted\n> more\n\n1. one\n2. two\n   - inner\n     - deeper\n3. three\n\n- a\n- b";
    assert_eq!(
        texts(md),
        [
            "│ quoted",
            "│ more",
            "",
            "1. one",
            "2. two",
            "   ◦ inner",
            "     ▪ deeper",
            "3. three",
            "",
            "• a",
            "• b",
        ]
    );
    let lines = render("- a long item", false);
    assert_eq!(
        lines[0].cont[0].content, "  ",
        "continuation rows hang under the text"
    );
}

#[test]
fn headings_emphasis_inline_code_and_links() {
    let lines = render(
        "# Plan\n\nCall `divide(1, 0)` for **errors**, *see* [docs](https://x.org/d).",
        false,
    );
    assert_eq!(lines[0].text(), "Plan");
    assert!(
        lines[0].spans[0]
            .style
            .add_modifier
            .contains(Modifier::BOLD)
    );
    let body = &lines[2];
    assert_eq!(
        body.text(),
        "Call divide(1, 0) for errors, see docs (https://x.org/d)."
    );
    let style = |word: &str| {
        body.spans
            .iter()
            .find(|s| s.content.contains(word))
            .map(|s| s.style)
            .unwrap_or_default()
    };
    assert_eq!(style("divide"), CODE);
    assert!(style("errors").add_modifier.contains(Modifier::BOLD));
    assert!(style("see").add_modifier.contains(Modifier::ITALIC));
    assert!(style("docs").add_modifier.contains(Modifier::UNDERLINED));
    assert_eq!(style("https"), theme::DIM);
}

#[test]
fn hostile_text_is_sanitized_everywhere() {
    let md = "a\x1b[31mred\n\n```\n\x1b]0;title\x07\n```\n| \x1b[2J |\n|---|\n| x |";
    for line in render(md, true) {
        let text = line.text();
        assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
    }
    assert_eq!(texts("line one\nline two"), ["line one", "line two"]);
}

#[test]
fn a_reply_colours_at_most_its_budget_of_code_lines() {
    let block = format!("```py\n{}```\n\n", "x = 1\n".repeat(900));
    let lines = render(&block.repeat(3), true);
    let coloured = |from: usize| {
        lines[from..]
            .iter()
            .filter(|l| l.kind == Kind::Code)
            .take(900)
    };
    let code_starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].kind == Kind::Fence)
        .map(|i| i + 1)
        .collect();
    assert_eq!(code_starts.len(), 3);
    let has_colour = |from: usize| coloured(from).any(|l| l.spans.iter().any(|s| s.style != CODE));
    assert!(has_colour(code_starts[0]) && has_colour(code_starts[1]));
    assert!(
        !has_colour(code_starts[2]),
        "past 2,000 lines a reply's code stays plain"
    );
}
