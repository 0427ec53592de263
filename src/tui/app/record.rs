//! Every decision on record: declines (with the typed reason), approvals for
//! the whole task, the user's own version, a selection of hunks and each
//! auto-approved step become one short line of the conversation, so the
//! conversation alone says what the user allowed. A discarded edited version
//! is kept there whole.
//!
//! What must stay true: one line per decision, built only from what the
//! user decided and the call's own tool and target (sanitized when drawn).

use crate::agent::Decision;
use crate::tools::ToolId;
use crate::tui::app::App;
use crate::tui::app::parts::AutoRun;
use crate::tui::approval::Answered;
use crate::tui::panes::line_kind::Kind;

/// The line a decline leaves (`call`: `tool target`), live or restored.
pub(in crate::tui) fn declined_line(call: &str, reason: Option<&str>) -> String {
    match reason.filter(|r| !r.is_empty()) {
        Some(r) => format!("You declined {call}: \"{r}\""),
        None => format!("You declined {call}"),
    }
}

/// The line an approval of the user's own version leaves, live or restored.
pub(in crate::tui) fn edited_line(call: &str) -> String {
    format!("You approved your edited version for {call}")
}

/// Exactly what an approval for the task covers: one built-in tool, or one
/// tool of one MCP server (never "every mcp call": approvals are per tool).
fn every_call_of(tool: &ToolId) -> String {
    match tool {
        ToolId::Mcp { server, tool } => {
            format!("every call of {tool} on MCP server {server} (no other of its tools)")
        }
        other => format!("every {other} call"),
    }
}

impl App {
    /// The call's target as the tool-call pane shows it.
    fn target_of(&self, call_id: &str) -> String {
        self.calls
            .rows()
            .iter()
            .find(|r| r.call_id == call_id)
            .map(|r| r.target.clone())
            .unwrap_or_default()
    }

    /// `tool target`, or just `tool` when the call has no target.
    fn call_label(&self, tool: &ToolId, call_id: &str) -> String {
        let target = self.target_of(call_id);
        if target.is_empty() {
            tool.to_string()
        } else {
            format!("{tool} {target}")
        }
    }

    /// The line an answer leaves in the conversation (a plain `y` leaves none:
    /// the tool call's own row and result say it).
    pub(in crate::tui) fn record_answer(&mut self, answered: &Answered) {
        if answered.undo {
            return;
        }
        let call = self.call_label(&answered.tool, &answered.call_id);
        let (kind, text) = match &answered.decision {
            Decision::Decline { reason } => {
                (Kind::Declined, declined_line(&call, reason.as_deref()))
            }
            Decision::ApproveToolForTask => (
                Kind::Approved,
                format!(
                    "You approved {} for the rest of this task (F3 revokes)",
                    every_call_of(&answered.tool)
                ),
            ),
            Decision::ApproveEdited { .. } => (Kind::Approved, edited_line(&call)),
            Decision::ApproveHunks { accepted } => (
                Kind::Approved,
                format!("You approved {} selected hunk(s) of {call}", accepted.len()),
            ),
            Decision::ApprovePatchHunks { files } => {
                let parts: Vec<String> = files
                    .iter()
                    .map(|f| format!("{}: {}", f.path, f.accepted.len()))
                    .collect();
                let n: usize = files.iter().map(|f| f.accepted.len()).sum();
                let text = format!(
                    "You approved {n} selected hunk(s) of {call} ({})",
                    parts.join(", ")
                );
                (Kind::Approved, text)
            }
            _ => return,
        };
        self.conversation.push_entry(kind, &text);
    }

    /// A step the core ran without asking, because its tool was approved for
    /// the task.
    pub(in crate::tui) fn record_auto_approved(&mut self, call_id: &str) {
        let Some(tool) = self
            .calls
            .rows()
            .iter()
            .find(|r| r.call_id == call_id)
            .map(|r| r.tool.clone())
        else {
            return;
        };
        let call = self.call_label(&tool, call_id);
        // Consecutive steps of the same tool fold into the line before.
        let mut run = match self.facts.auto_run.take() {
            Some(run)
                if run.tool == tool
                    && self.conversation.last_entry(Kind::Approved) == Some(run.text.as_str()) =>
            {
                run
            }
            _ => AutoRun {
                tool: tool.clone(),
                calls: Vec::new(),
                text: String::new(),
            },
        };
        run.calls.push(call);
        let folded = run.calls.len() > 1;
        run.text = match folded {
            false => format!(
                "Auto-approved {} ({tool} is approved for this task)",
                run.calls[0]
            ),
            true => format!(
                "Auto-approved {} steps: {} ({tool} is approved for this task)",
                run.calls.len(),
                run.calls.join(", ")
            ),
        };
        match folded {
            true => self
                .conversation
                .replace_last_entry(Kind::Approved, &run.text),
            false => self.conversation.push_entry(Kind::Approved, &run.text),
        }
        self.facts.auto_run = Some(run);
    }

    /// The user discards their own edited version: keep it, whole, in the
    /// conversation, so nothing they typed is lost.
    pub(in crate::tui) fn record_discarded_edit(&mut self) {
        let Some(request) = self.approvals.current() else {
            return;
        };
        let Some((path, content)) = self.approvals.review().editable(&request.action) else {
            return;
        };
        let mut lines = vec![(
            Kind::Declined,
            format!("You discarded your edited version of {path}; it was:"),
        )];
        lines.extend(content.lines().map(|l| (Kind::Code, l.to_string())));
        self.conversation.push_lines(&lines);
    }
}
