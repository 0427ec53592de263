//! The uniform result of a tool call: the `{success, ...}` JSON object sent
//! back to the model, a one-line summary for displays, and whether the user
//! declined the call (typed, so nothing has to recognise a decline by its text).

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
    /// The user declined the call (not sent to the model as a field: the
    /// error text says so; this flag is for code that must know).
    #[serde(skip)]
    pub declined: bool,
    /// A test run's output with its colour sequences kept, for the user's
    /// eyes only: the body (what the model reads) has no escape at all.
    #[serde(skip)]
    pub coloured: Option<String>,
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
            declined: false,
            coloured: None,
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        ToolOutput {
            success: false,
            summary: first_line(&message),
            body: json!({"success": false, "error": message}),
            declined: false,
            coloured: None,
        }
    }

    /// A call the user declined: an error for the model, flagged as a decline.
    pub fn declined(message: impl Into<String>) -> Self {
        ToolOutput {
            declined: true,
            ..Self::error(message)
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
        assert!(!err.declined);
        let declined = ToolOutput::declined("The user declined this write_file call.");
        assert!(declined.declined && !declined.success);
        assert_eq!(
            declined.body["error"],
            "The user declined this write_file call."
        );
    }
}
