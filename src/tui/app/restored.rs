//! A session brought back from its transcript renders like a live one: the
//! user's tasks and the model's text in the conversation, each call as a row
//! of the Tool calls pane (with how it ended), the decisions on record
//! (declines with their reason, the user's own versions), failed calls with
//! their reason, gate refusals as `⊘` lines and stepwise's own notes as
//! notices, never as the user's turns; the session's totals go into the
//! counters, so the header and the exit summary count the whole session.
//!
//! What must stay true: every string passes the conversation pane's own
//! sanitizing (`push_entry`) or the rows' (when drawn), like any other
//! event's.

use crate::agent::{CallStatus, RestoredEntry};
use crate::llm::TokenUsage;
use crate::present;
use crate::tools::ToolId;
use crate::tui::app::App;
use crate::tui::app::record::{declined_line, edited_line};
use crate::tui::panes::line_kind::Kind;
use crate::tui::panes::tool_calls::{CallRow, RowStatus};

impl App {
    pub(super) fn session_restored(
        &mut self,
        session: &str,
        entries: &[RestoredEntry],
        (tasks, steps): (u32, u32),
        usage: TokenUsage,
        cost_usd: Option<f64>,
    ) {
        self.conversation
            .push_entry(Kind::Notice, &present::restored_line(session, tasks, steps));
        let mut step = 0;
        for entry in entries {
            match entry {
                RestoredEntry::User { text } => {
                    step = 0;
                    self.conversation.new_turn();
                    self.conversation.push_entry(Kind::User, text);
                }
                RestoredEntry::Assistant { text } => {
                    self.conversation.push_entry(Kind::Assistant, text)
                }
                RestoredEntry::Gate { text } => self.conversation.push_entry(Kind::Gate, text),
                RestoredEntry::Notice { text } => self.conversation.push_entry(Kind::Notice, text),
                RestoredEntry::Tool { .. } => {
                    step += 1;
                    self.restored_call(step, entry);
                }
            }
        }
        self.status.session_tokens = usage;
        self.status.session_cost = cost_usd;
    }

    /// A restored call: its row, and the line a live call would have left.
    fn restored_call(&mut self, step: u32, entry: &RestoredEntry) {
        let RestoredEntry::Tool {
            name,
            arguments,
            call_id,
            call_kind,
            target,
            status,
            detail,
            summary,
            edited,
            output,
        } = entry
        else {
            return;
        };
        let tool = ToolId::parse(name);
        let call = match target.is_empty() {
            true => tool.to_string(),
            false => format!("{tool} {target}"),
        };
        let shown = match status {
            Some(CallStatus::Failed) if summary.is_empty() => {
                present::one_line(detail).into_owned()
            }
            _ => summary.clone(),
        };
        let row_status = match status {
            Some(s) => RowStatus::from(*s),
            // Its result is gone (a compaction's stub): it was carried out,
            // how it ended is not known any more.
            None => RowStatus::Approved,
        };
        self.calls.propose(CallRow {
            step,
            call_id: call_id.clone(),
            tool: tool.clone(),
            kind: *call_kind,
            target: target.clone(),
            arguments: serde_json::from_str(arguments)
                .unwrap_or_else(|_| serde_json::Value::String(arguments.clone())),
            diff: None,
            status: row_status,
            summary: shown,
            result: None,
            auto_approved: false,
        });
        match status {
            Some(CallStatus::Declined) => {
                let reason = Some(detail.as_str());
                self.conversation
                    .push_entry(Kind::Declined, &declined_line(&call, reason));
            }
            Some(CallStatus::Failed) => {
                let result = serde_json::json!({ "error": detail });
                let line = present::failure_line(&tool.to_string(), target, summary, &result);
                let tail = match output.is_empty() {
                    true => Vec::new(),
                    false => output
                        .lines()
                        .map(crate::tui::render::ansi::spans)
                        .collect(),
                };
                self.conversation.push_failure(&line, tail);
            }
            _ if *edited => self
                .conversation
                .push_entry(Kind::Approved, &edited_line(&call)),
            _ => {}
        }
    }
}
