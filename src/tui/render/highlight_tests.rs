//! Syntax colours: the common languages are known, scopes land on the
//! theme's slots, and oversized or unknown blocks stay plain.

use super::*;

fn style_of_word(spans: &[Span<'_>], word: &str) -> Option<Style> {
    spans
        .iter()
        .find(|s| s.content.contains(word))
        .map(|s| s.style)
}

fn one(lang: &str, line: &str) -> Vec<Span<'static>> {
    let got = lines(lang, &[line.to_string()]).unwrap_or_else(|| panic!("{lang} is known"));
    got.into_iter().next().unwrap_or_default()
}

#[test]
fn keywords_strings_comments_and_numbers_get_their_slots() {
    let rust = one("rust", r#"fn main() { let s = "hi"; } // done"#);
    assert_eq!(style_of_word(&rust, "fn"), Some(theme::SYN_KEYWORD));
    assert_eq!(style_of_word(&rust, "hi"), Some(theme::SYN_STRING));
    assert_eq!(style_of_word(&rust, "done"), Some(theme::SYN_COMMENT));
    assert_eq!(style_of_word(&rust, "main"), Some(theme::SYN_FUNCTION));
    let text: String = rust.iter().map(|s| s.content.as_ref()).collect();
    assert_eq!(
        text, r#"fn main() { let s = "hi"; } // done"#,
        "no text lost"
    );
    let py = one("py", "def f(x): return 42");
    assert_eq!(style_of_word(&py, "def"), Some(theme::SYN_KEYWORD));
    assert_eq!(style_of_word(&py, "42"), Some(theme::SYN_NUMBER));
    let toml = one("toml", r#"name = "stepwise" # the crate"#);
    assert_eq!(style_of_word(&toml, "name"), Some(theme::SYN_FUNCTION));
    assert_eq!(style_of_word(&toml, "stepwise"), Some(theme::SYN_STRING));
    assert_eq!(style_of_word(&toml, "crate"), Some(theme::SYN_COMMENT));
}

#[test]
fn the_common_languages_are_all_known() {
    for lang in [
        "rust",
        "rs",
        "python",
        "js",
        "javascript",
        "ts",
        "typescript",
        "go",
        "json",
        "toml",
        "sh",
        "bash",
        "shell",
        "c",
        "h",
    ] {
        let got = lines(lang, &["x".to_string()]);
        assert!(got.is_some(), "{lang}");
    }
    assert!(lines("no-such-language", &["x".to_string()]).is_none());
    assert!(lines("", &["x".to_string()]).is_none());
    assert_eq!(lang_of_path("src/main.rs"), "rs");
}

#[test]
fn multi_line_constructs_carry_over_and_big_blocks_stay_plain() {
    let block = [
        "/* start".to_string(),
        "still comment */ int x;".to_string(),
    ];
    let got = lines("c", &block).unwrap_or_default();
    assert_eq!(style_of_word(&got[1], "still"), Some(theme::SYN_COMMENT));
    assert_eq!(style_of_word(&got[1], "int"), Some(theme::SYN_KEYWORD));
    let many = vec!["x = 1".to_string(); MAX_LINES + 1];
    assert!(lines("py", &many).is_none());
    let wide = vec!["y".repeat(MAX_BYTES)];
    assert!(lines("py", &wide).is_none());
}

#[test]
fn a_hunk_is_coloured_on_both_sides() {
    use super::Side::{Both, New, Old};
    let texts = [
        "def f():".to_string(),
        "    return 1".to_string(),
        "    return 2".to_string(),
    ];
    let got = hunk("src/calc.py", &texts, &[Both, Old, New]);
    assert_eq!(got.len(), 3);
    let first = got[0].as_ref().expect("coloured");
    assert_eq!(style_of_word(first, "def"), Some(theme::SYN_KEYWORD));
    let removed = got[1].as_ref().expect("removed lines are coloured too");
    assert_eq!(style_of_word(removed, "1"), Some(theme::SYN_NUMBER));
    let third = got[2].as_ref().expect("coloured");
    assert_eq!(style_of_word(third, "2"), Some(theme::SYN_NUMBER));
    assert!(
        hunk("notes.unknown", &texts, &[Both; 3])
            .iter()
            .all(Option::is_none)
    );
}
