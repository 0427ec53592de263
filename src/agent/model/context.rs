//! Token and cost accounting, and keeping requests inside the context budget:
//! cutting a new tool result to what is left of the budget, eliding old tool
//! results first, then summarizing older turns with a model call. A
//! compaction is reported only when it removed something. At start-up, a
//! window too small for the system prompt, the tools and one step is a
//! configuration error.

use crate::agent::contract::{AgentEvent, EventSender};
use crate::agent::model::budget;
use crate::agent::model::compact::{self, KEEP_RECENT, estimate_tokens};
use crate::agent::session::{Session, Task};
use crate::llm::{ChatMessage, ChatRequest, Role, StreamDelta, TokenUsage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Tokens a tool result may always use, however full the context is (its
/// head and the note saying it was cut).
const MIN_RESULT_TOKENS: u64 = 256;
/// What one step needs besides the system prompt and the tools: the task,
/// a call and a result cut to its floor.
pub const ONE_STEP_TOKENS: u64 = 2 * MIN_RESULT_TOKENS;

/// Characters of each message shown to the summarizer.
const SUMMARY_MESSAGE_CHARS: usize = 2_000;

const SUMMARIZE_PROMPT: &str = "You compress the history of a coding agent's session. Summarize the conversation below in at most 300 words: the user's requests, what was learned about the files, what was changed, test results, and anything still open. Plain text, no preamble.";

impl Session {
    /// Account a request's usage (and cost, when prices are known).
    pub(in crate::agent) fn record_usage(&mut self, t: &mut Task<'_>, usage: TokenUsage) {
        t.usage.add(&usage);
        self.session_usage.add(&usage);
        self.usage_base = Some((
            self.history.len(),
            usage.prompt_tokens + usage.completion_tokens,
        ));
        t.emit(AgentEvent::Usage(usage));
        if let Some(cost) = self.settings.pricing.as_ref().and_then(|p| p.cost(&usage)) {
            t.cost += cost;
            self.session_cost += cost;
            t.emit(AgentEvent::Cost {
                request_usd: cost,
                task_usd: t.cost,
                session_usd: self.session_cost,
            });
        }
    }

    /// At start-up: whether a window of `window` tokens can hold the system
    /// prompt (with the project's rules), the tools and one step; if not, a
    /// configuration error naming the numbers (such a window otherwise
    /// overflows at the first request, silently on some servers).
    pub fn check_context_window(&self, window: u64) -> Result<(), String> {
        let rules = crate::agent::model::rules::load(&self.workspace);
        let system = estimate_tokens(&[ChatMessage::system(self.system_prompt(&rules))]);
        let tools = (self.tools.as_ref()).map_or(0, |t| t.to_string().len() as u64 / 4);
        let needed = system + tools + ONE_STEP_TOKENS;
        if window >= needed {
            return Ok(());
        }
        Err(format!(
            "the context window of {window} tokens cannot hold the system prompt (about {system} tokens), the tool definitions (about {tools}) and one step ({ONE_STEP_TOKENS}): it needs at least {needed}. Give the server a larger context size and set --context-window (or context_window) to it."
        ))
    }

    /// Estimated tokens of the next request: the server's last count plus an
    /// estimate of what was added since (or a full estimate).
    pub fn estimated_context(&self) -> u64 {
        let tools = self
            .tools
            .as_ref()
            .map_or(0, |t| t.to_string().len() as u64 / 4);
        match self.usage_base {
            Some((len, tokens)) if len <= self.history.len() => {
                tokens + estimate_tokens(&self.history[len..])
            }
            _ => estimate_tokens(&self.history) + tools,
        }
    }

    /// Compact when the next request would pass the budget. It compacts to
    /// three quarters of the budget, so that it does not happen again at the
    /// next step (each compaction also invalidates the server's prompt cache).
    pub(in crate::agent) async fn keep_within_context(&mut self, t: &Task<'_>) {
        let limit = self.settings.context_limit;
        if self.estimated_context() <= limit {
            return;
        }
        self.compact_to(limit / 4 * 3, Some(t.events), Some(t.cancel))
            .await;
    }

    /// `/compact`: elide every old tool result now.
    pub async fn compact_now(&mut self, events: &EventSender) {
        self.compact_to(0, Some(events), None).await;
    }

    /// The server said the request does not fit: compact to half of the
    /// estimate (the server's window is smaller than we thought). True when
    /// something was removed, so that trying again can make a difference.
    pub(in crate::agent) async fn compact_after_overflow(&mut self, t: &Task<'_>) -> bool {
        let target = (self.estimated_context() / 2).min(self.settings.context_limit / 4 * 3);
        self.compact_to(target.max(1), Some(t.events), Some(t.cancel))
            .await
            > 0
    }

    /// The text of a tool result to record: cut, for the tools whose results
    /// can grow without bound, so the next request stays inside the budget
    /// (a floor of `MIN_RESULT_TOKENS` always goes, with its note).
    pub(in crate::agent) fn fit_tool_result(
        &self,
        call_id: &str,
        tool: &str,
        body: &Value,
    ) -> String {
        let room = self
            .settings
            .context_limit
            .saturating_sub(self.estimated_context())
            .max(MIN_RESULT_TOKENS);
        budget::fit_result(self.registry.cut(tool), body, |text| {
            estimate_tokens(&[ChatMessage::tool_result(call_id, text)]) <= room
        })
    }

    /// Compact to `limit` tokens (0: elide everything elidable); returns how
    /// many messages were elided or summarized, and reports it when not 0.
    async fn compact_to(
        &mut self,
        limit: u64,
        events: Option<&EventSender>,
        cancel: Option<&CancellationToken>,
    ) -> usize {
        let before = self.estimated_context();
        let tools = before.saturating_sub(estimate_tokens(&self.history));
        let elided = compact::compact(
            &mut self.history,
            limit.saturating_sub(tools),
            &self.registry,
        );
        self.usage_base = None;
        let mut summarized = 0;
        if limit > 0 && self.estimated_context() > limit {
            summarized = self.summarize_older_turns(cancel).await;
        }
        let removed = elided.elided + summarized;
        if let Some(events) = events.filter(|_| removed > 0) {
            let _ = events.send(AgentEvent::Compacted {
                before_tokens: before,
                after_tokens: self.estimated_context(),
                elided: elided.elided,
                summarized,
            });
        }
        removed
    }

    /// Replace the turns between the system prompt and the recent ones by a
    /// summary written by the model; the current task message stays. Returns
    /// how many messages were summarized (0 when the model call failed).
    async fn summarize_older_turns(&mut self, cancel: Option<&CancellationToken>) -> usize {
        let mut cut = self.history.len().saturating_sub(KEEP_RECENT);
        // Never separate tool results from the call that asked for them.
        while cut > 1 && self.history[cut].role == Role::Tool {
            cut -= 1;
        }
        if cut <= 2 {
            return 0;
        }
        let task_index = self.history[..cut]
            .iter()
            .rposition(|m| m.role == Role::User && !is_stepwise_note(m));
        let transcript: String = self.history[1..cut]
            .iter()
            .map(|m| {
                let text: String = m
                    .content
                    .as_deref()
                    .unwrap_or("")
                    .chars()
                    .take(SUMMARY_MESSAGE_CHARS)
                    .collect();
                let calls: Vec<String> = m
                    .tool_calls
                    .iter()
                    .map(|c| format!("{}({})", c.function.name, c.function.arguments))
                    .collect();
                format!("{:?}: {text} {}\n", m.role, calls.join(", "))
            })
            .collect();
        let messages = [
            ChatMessage::system(SUMMARIZE_PROMPT),
            ChatMessage::user(transcript),
        ];
        let mut ignore = |_: StreamDelta<'_>| {};
        let request = self.model.complete(
            ChatRequest {
                messages: &messages,
                tools: None,
            },
            &mut ignore,
        );
        // An interrupt must not wait for a slow summary.
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        let reply = tokio::select! {
            r = request => r,
            _ = cancel.cancelled() => return 0,
        };
        let Ok(reply) = reply else {
            return 0;
        };
        let mut replacement = vec![ChatMessage::user(format!(
            "[stepwise] Summary of the earlier conversation (compacted to fit the context window):\n{}",
            reply.content.trim()
        ))];
        if let Some(i) = task_index.filter(|&i| i >= 1) {
            replacement.push(self.history[i].clone());
        }
        let removed = cut - 1;
        self.history.splice(1..cut, replacement);
        self.usage_base = None;
        removed
    }
}

fn is_stepwise_note(m: &ChatMessage) -> bool {
    m.content
        .as_deref()
        .is_some_and(|c| c.starts_with("[stepwise]") || c.starts_with("Tool result for"))
}
