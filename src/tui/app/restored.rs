//! A session brought back from its transcript: the old conversation goes
//! into the transcript pane (the user's tasks, the model's text, the tools it
//! called) and the session's totals into the counters, so the header and the
//! exit summary count the whole session.
//!
//! What must stay true: every string passes the conversation pane's own
//! sanitizing (`push_entry`), like any other event's.

use crate::agent::RestoredEntry;
use crate::llm::TokenUsage;
use crate::present;
use crate::tui::app::App;
use crate::tui::panes::line_kind::Kind;

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
        for entry in entries {
            match entry {
                RestoredEntry::User { text } => {
                    self.conversation.new_turn();
                    self.conversation.push_entry(Kind::User, text);
                }
                RestoredEntry::Assistant { text } => {
                    self.conversation.push_entry(Kind::Assistant, text)
                }
                RestoredEntry::Tool {
                    name, arguments, ..
                } => self
                    .conversation
                    .push_entry(Kind::Notice, &present::restored_tool_line(name, arguments)),
            }
        }
        self.session_tokens = usage;
        self.session_cost = cost_usd;
    }
}
