//! What a `tools/call` answer becomes for the model: its text content only
//! (other content is named, e.g. `[image omitted]`), capped in size, with
//! control characters made visible. The key is scrubbed later, where every
//! tool result leaves the core.
//!
//! What must stay true: the text passed on is at most `MAX_RESULT_BYTES`
//! plus a one-line note; `isError: true` is kept so the call counts as failed.

use crate::text::sanitize::sanitize;
use serde_json::Value;

/// Largest result text passed to the model.
pub const MAX_RESULT_BYTES: usize = 32 * 1024;

/// A call's answer, ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallText {
    pub text: String,
    /// The server said the call failed (`isError: true`).
    pub is_error: bool,
}

/// Read a `tools/call` result (as JSON, so an unusual block cannot fail the whole answer).
pub fn call_text(result: &Value) -> CallText {
    let mut parts: Vec<String> = Vec::new();
    let blocks = result.get("content").and_then(Value::as_array);
    for block in blocks.into_iter().flatten() {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        match (kind, block.get("text").and_then(Value::as_str)) {
            ("text", Some(text)) => parts.push(text.to_string()),
            ("resource_link", _) => parts.push("[resource link omitted]".into()),
            (other, _) => parts.push(format!("[{} omitted]", sanitize(&short(other)))),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        parts.push(structured.to_string());
    }
    let text = cap(&sanitize(&parts.join("\n")));
    CallText {
        text,
        is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
    }
}

fn short(kind: &str) -> String {
    kind.chars().take(32).collect()
}

/// At most `MAX_RESULT_BYTES` (on a character boundary), with a note when cut.
fn cap(text: &str) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text.to_string();
    }
    let mut end = MAX_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cut: the result was {} bytes; only the first {MAX_RESULT_BYTES} are shown]",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_text_is_kept_capped_and_made_visible() {
        let r = call_text(&json!({"content": [
            {"type": "text", "text": "hello\u{1b}[2J"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///x"}
        ]}));
        assert_eq!(
            r.text,
            "hello\u{241b}[2J\n[image omitted]\n[resource link omitted]"
        );
        assert!(!r.is_error);
        let failed =
            call_text(&json!({"content": [{"type": "text", "text": "no"}], "isError": true}));
        assert!(failed.is_error);
        let big = call_text(
            &json!({"content": [{"type": "text", "text": "é".repeat(MAX_RESULT_BYTES)}]}),
        );
        assert!(
            big.text.len() < MAX_RESULT_BYTES + 100 && big.text.contains("[cut: the result was")
        );
        let structured = call_text(&json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(structured.text, r#"{"sum":3}"#);
    }
}
