//! What the diff pane shows at the prompt of an MCP call: the server, the
//! tool and the arguments as formatted JSON, one row per line, in place of
//! a diff (drawn by `test_run::render`, like the rows of a test run).
//!
//! What must stay true: every row comes from the request, and every line of
//! the arguments passes the sanitizer (they are the model's text).

use crate::agent::ApprovalAction;
use crate::tui::render::text::sanitize;

/// `(label, value)` rows for an MCP call request, if that is what `action` is.
pub fn rows(action: &ApprovalAction) -> Option<Vec<(&'static str, String)>> {
    let ApprovalAction::McpCall {
        server,
        tool,
        arguments,
    } = action
    else {
        return None;
    };
    let mut rows = vec![("Server", sanitize(server)), ("Tool", sanitize(tool))];
    for (i, line) in arguments.lines().enumerate() {
        let label = if i == 0 { "Arguments" } else { "" };
        rows.push((label, sanitize(line)));
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_show_line_by_line_and_sanitized() {
        let action = ApprovalAction::McpCall {
            server: "t".into(),
            tool: "echo".into(),
            arguments: "{\n  \"text\": \"hi\u{1b}]52;c;x\u{7}\"\n}".into(),
        };
        let rows = rows(&action).unwrap();
        assert_eq!(rows[0], ("Server", "t".to_string()));
        assert_eq!(rows[2], ("Arguments", "{".to_string()));
        assert!(rows[3].1.contains("\"text\"") && !rows[3].1.contains('\u{1b}'));
        assert_eq!(rows.len(), 5);
    }
}
