//! Reading a tool call's arguments while they are still streaming in: a
//! tolerant scanner for the top-level string fields of a partial JSON object,
//! so a front end can show an edit's diff building up before the call ends.
//! Whatever the text (cut anywhere, malformed, any Unicode), the scanner
//! answers `None` or a partial value and never panics: one bad reply must not
//! end the session (proptest below, `fuzz/fuzz_targets/live_scanner.rs`).

use crate::agent::contract::{AgentEvent, EventSender};
use crate::tools::calls::registry::LivePreview;
use crate::tools::reading::files::MAX_FILE_BYTES;
use crate::tools::{Registry, Workspace};

/// Up to this length the arguments are scanned for the path at every
/// fragment; beyond it (a long `content` streamed before its `path`), only
/// when a fragment brings a `"path"` key or the path's value is still
/// arriving, so the work stays linear in the arguments' length.
const PATH_SEARCH_LIMIT: usize = 64 * 1024;
/// The key whose arrival is watched for past `PATH_SEARCH_LIMIT`.
const PATH_KEY: &str = "\"path\"";

/// Forwards streaming tool-call arguments as events, and once an edit's path
/// is known, sends the file's current content so the preview can be diffed.
pub(in crate::agent) struct LiveCalls<'a> {
    events: &'a EventSender,
    workspace: &'a Workspace,
    registry: &'a Registry,
    calls: Vec<LiveCall>,
}

/// One streaming call: its arguments so far, whether its base was sent, and
/// whether its path's value was seen arriving but not complete yet.
struct LiveCall {
    index: usize,
    buffer: String,
    based: bool,
    path_pending: bool,
}

impl<'a> LiveCalls<'a> {
    pub(in crate::agent) fn new(
        events: &'a EventSender,
        workspace: &'a Workspace,
        registry: &'a Registry,
    ) -> Self {
        LiveCalls {
            events,
            workspace,
            registry,
            calls: Vec::new(),
        }
    }

    pub(in crate::agent) fn on_fragment(&mut self, index: usize, tool: &str, fragment: &str) {
        let preview = self.registry.live_preview(tool);
        let _ = self.events.send(AgentEvent::ToolCallStreaming {
            index,
            tool: self.registry.identify(tool),
            preview,
            fragment: fragment.to_string(),
        });
        // An edit of one file is diffed against that file's content.
        if !matches!(preview, LivePreview::WriteFile | LivePreview::ReplaceText) {
            return;
        }
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(p) => p,
            None => {
                self.calls.push(LiveCall {
                    index,
                    buffer: String::new(),
                    based: false,
                    path_pending: false,
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position];
        if call.based || call.buffer.len() > crate::tools::MAX_ARGUMENTS_BYTES {
            return;
        }
        call.buffer.push_str(fragment);
        if call.buffer.len() > PATH_SEARCH_LIMIT && !call.path_pending {
            // The key may be split across fragments: look a little further back.
            let from = call
                .buffer
                .len()
                .saturating_sub(fragment.len() + PATH_KEY.len());
            let from = (from..call.buffer.len())
                .find(|i| call.buffer.is_char_boundary(*i))
                .unwrap_or(call.buffer.len());
            if !call.buffer[from..].contains(PATH_KEY) {
                return;
            }
        }
        let found = partial_field(&call.buffer, "path");
        call.path_pending = found.as_ref().is_some_and(|p| !p.complete);
        let Some(path) = found.filter(|p| p.complete) else {
            return;
        };
        call.based = true;
        // Read through the same confinement as the tools; a refused path gets no preview.
        let Ok(rel) = Workspace::check(&path.value) else {
            return;
        };
        let old = match self.workspace.read_bytes(&rel, MAX_FILE_BYTES) {
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => Some(text),
                Err(_) => return,
            },
            Ok(None) => None,
            Err(_) => return,
        };
        let _ = self.events.send(AgentEvent::LiveEditBase {
            index,
            tool: self.registry.identify(tool),
            path: path.value,
            old,
        });
    }
}

/// A top-level string field of a partial JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialField {
    pub value: String,
    /// The closing quote has arrived.
    pub complete: bool,
}

/// The value of top-level string field `key` in the (possibly cut) JSON
/// object text `text`, as far as it has arrived.
pub fn partial_field(text: &str, key: &str) -> Option<PartialField> {
    let mut s = Scanner { text, pos: 0 };
    s.ws();
    if !s.eat('{') {
        return None;
    }
    loop {
        s.ws();
        if s.eat('}') {
            return None;
        }
        let name = s.string()?;
        if !name.complete {
            return None;
        }
        s.ws();
        if !s.eat(':') {
            return None;
        }
        s.ws();
        if s.peek() == Some('"') {
            let value = s.string()?;
            if name.value == key {
                return Some(value);
            }
            if !value.complete {
                return None;
            }
        } else {
            s.skip_scalar()?;
        }
        s.ws();
        if !s.eat(',') {
            return None;
        }
    }
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// Skip whitespace, Unicode included (models emit U+00A0 and friends):
    /// the cursor moves by the character's UTF-8 length, never into one.
    fn ws(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    /// Skip a number, `true`, `false`, `null`, or a nested value, up to `,` or `}`.
    fn skip_scalar(&mut self) -> Option<()> {
        let mut depth = 0i32;
        let mut in_string = false;
        let mut escaped = false;
        for (i, c) in self.text[self.pos..].char_indices() {
            if in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' | '[' => depth += 1,
                '}' | ']' if depth > 0 => depth -= 1,
                ',' | '}' if depth == 0 => {
                    self.pos += i;
                    return Some(());
                }
                _ => {}
            }
        }
        None
    }

    /// A JSON string at the cursor, decoded as far as it goes.
    fn string(&mut self) -> Option<PartialField> {
        if !self.eat('"') {
            return None;
        }
        let mut value = String::new();
        let rest = &self.text[self.pos..];
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Some(PartialField {
                        value,
                        complete: true,
                    });
                }
                '\\' => {
                    let Some((_, e)) = chars.next() else { break };
                    match e {
                        'n' => value.push('\n'),
                        't' => value.push('\t'),
                        'r' => value.push('\r'),
                        'b' => value.push('\u{8}'),
                        'f' => value.push('\u{c}'),
                        'u' => {
                            let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                            if hex.len() < 4 {
                                break;
                            }
                            let code = u32::from_str_radix(&hex, 16).ok()?;
                            // Surrogate pairs are rare in code; show a replacement.
                            value.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        other => value.push(other),
                    }
                }
                c => value.push(c),
            }
        }
        self.pos = self.text.len();
        Some(PartialField {
            value,
            complete: false,
        })
    }
}

#[cfg(test)]
mod tests {

    /// The events the scanner sends for `fragments` of call 0 of `tool`.
    fn bases(fragments: &[&str]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 0\n").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let registry = Registry::default();
        let mut live = LiveCalls::new(&tx, &ws, &registry);
        for f in fragments {
            live.on_fragment(0, "write_file", f);
        }
        let mut out = Vec::new();
        while let Ok(e) = rx.try_recv() {
            if let AgentEvent::LiveEditBase { path, old, .. } = e {
                out.push(format!("{path}={}", old.unwrap_or_default().trim()));
            }
        }
        out
    }

    #[test]
    fn a_content_streamed_before_its_path_still_gets_a_base() {
        assert_eq!(
            bases(&[r#"{"content": "y = 1\n", "pa"#, r#"th": "a."#, r#"py"}"#]),
            ["a.py=x = 0"]
        );
        // Far past the always-scanned length, the path key split across fragments.
        let long = format!(r#"{{"content": "{}", "pa"#, "z".repeat(200_000));
        let mut fragments: Vec<&str> = long
            .as_bytes()
            .chunks(100)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        fragments.extend([r#"th": "a"#, r#".py", "#]);
        assert_eq!(bases(&fragments), ["a.py=x = 0"]);
    }
    use super::*;

    fn field(text: &str, key: &str) -> Option<(String, bool)> {
        partial_field(text, key).map(|f| (f.value, f.complete))
    }

    #[test]
    fn fields_are_read_as_far_as_they_arrived() {
        let full = r#"{"path": "calc.py", "content": "def f():\n    return \"x\"\n"}"#;
        for cut in 0..=full.len() {
            let Some(part) = full.get(..cut) else {
                continue;
            };
            if let Some((value, _)) = field(part, "content") {
                assert!(
                    "def f():\n    return \"x\"\n".starts_with(&value),
                    "{cut}: {value:?}"
                );
            }
        }
        assert_eq!(field(full, "path"), Some(("calc.py".into(), true)));
        assert_eq!(field(&full[..35], "content"), Some(("def".into(), false)));
        assert_eq!(field(r#"{"path": "ca"#, "path"), Some(("ca".into(), false)));
    }

    #[test]
    fn keys_inside_values_and_other_types_do_not_confuse_it() {
        let text =
            r#"{"content": "\"path\": \"evil\"", "n": 3, "o": {"a": [1, "}"]}, "path": "real.py"}"#;
        assert_eq!(field(text, "path"), Some(("real.py".into(), true)));
        assert_eq!(
            field(r#"{"content": "x\u00e9y"#, "content"),
            Some(("xéy".into(), false))
        );
        assert_eq!(
            field(r#"{"content": "ab\"#, "content"),
            Some(("ab".into(), false))
        );
        assert_eq!(
            field(r#"{"content": "ab\u00"#, "content"),
            Some(("ab".into(), false))
        );
        assert_eq!(field("not json", "path"), None);
        assert_eq!(field(r#"{"other": "x"}"#, "path"), None);
    }

    #[test]
    fn unicode_whitespace_between_tokens_is_skipped() {
        let text = "{\u{a0}\"path\"\u{2003}:\u{a0}\"a.py\"\u{3000},\"content\": \"x";
        assert_eq!(field(text, "path"), Some(("a.py".into(), true)));
        assert_eq!(field(text, "content"), Some(("x".into(), false)));
        assert_eq!(field("\u{a0}{\u{a0}", "path"), None);
    }

    proptest::proptest! {
        #[test]
        fn any_text_cut_anywhere_never_panics(
            text in "\\PC*",
            cut in 0usize..64,
            key in "[a-z]{0,6}",
        ) {
            let _ = partial_field(&text, &key);
            let boundary = (0..=cut.min(text.len())).rev().find(|&i| text.is_char_boundary(i));
            if let Some(b) = boundary {
                let _ = partial_field(&text[..b], &key);
            }
        }

        #[test]
        fn json_like_text_with_unicode_whitespace_never_panics(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("{".to_string()),
                    proptest::strategy::Just("}".to_string()),
                    proptest::strategy::Just("\"path\"".to_string()),
                    proptest::strategy::Just(":".to_string()),
                    proptest::strategy::Just(",".to_string()),
                    proptest::strategy::Just("\\u00".to_string()),
                    proptest::strategy::Just("\\".to_string()),
                    proptest::strategy::Just("\"".to_string()),
                    "[\u{a0}\u{2003}\u{3000}\u{85} \t\n]{1,3}",
                    "\\PC{0,4}",
                ],
                0..24,
            ),
        ) {
            let text: String = parts.concat();
            for (i, _) in text.char_indices() {
                let _ = partial_field(&text[..i], "path");
            }
            let _ = partial_field(&text, "path");
        }
    }
}
