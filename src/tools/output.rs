//! The uniform result of a tool call: the `{success, ...}` JSON object sent
//! back to the model, and a one-line summary for displays.

use serde::Serialize;
use serde_json::{Value, json};

/// The result of one tool call: the JSON object sent to the model and a one-line summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutput {
    pub success: bool,
    /// One line for displays, e.g. `2 files`, `+4 −0`, `4 passed`, `exit 1`.
    pub summary: String,
    /// `{"success": true, ...payload}` or `{"success": false, "error": ...}`.
    pub body: Value,
}

impl ToolOutput {
    pub fn ok(summary: impl Into<String>, payload: Value) -> Self {
        let mut body = json!({"success": true});
        if let (Value::Object(b), Value::Object(p)) = (&mut body, payload) {
            b.extend(p);
        }
        ToolOutput {
            success: true,
            summary: summary.into(),
            body,
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        ToolOutput {
            success: false,
            summary: first_line(&message),
            body: json!({"success": false, "error": message}),
        }
    }

    /// A failed call that still carries a payload (e.g. a failing test run).
    pub fn failed(summary: impl Into<String>, error: impl Into<String>, payload: Value) -> Self {
        let mut out = Self::ok(summary, payload);
        out.success = false;
        out.body["success"] = Value::Bool(false);
        out.body["error"] = Value::String(error.into());
        out
    }

    /// The text sent back to the model.
    pub fn to_model_text(&self) -> String {
        self.body.to_string()
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_bodies_have_the_success_flag() {
        let ok = ToolOutput::ok("2 files", json!({"files": ["a", "b"]}));
        assert_eq!(ok.body, json!({"success": true, "files": ["a", "b"]}));
        let err = ToolOutput::error("nope\nmore");
        assert_eq!(err.body, json!({"success": false, "error": "nope\nmore"}));
        assert_eq!(err.summary, "nope");
    }
}
