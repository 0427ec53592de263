//! The step loop: one model reply is one decision; each tool call is a step;
//! writes and test runs wait for approval; a final answer passes the completion
//! gate only when tests have passed after the last change. The conversation
//! lives here and persists across tasks; the gate and step counter are per task.
//! Asking the model is in `request`, one tool call in `execute` and `approve`,
//! the task's approvals in `task_scopes`.

use super::contract::{AgentEvent, EventSender, FinishReason};
use super::history::carry::Carried;
use super::history::changes::ChangeLog;
use super::model::protocol::{self, Action};
use super::model::repeats::{self, RepeatWatch, Verdict};
use super::model::retry::RetryPolicy;
use super::model::rules::Rules;
use super::step::scopes::{Revoker, ScopePolicy, TaskApprovals};
pub(super) use super::task::Task;
use crate::config::models::{ModelInfo, ModelTable};
use crate::config::{Config, Protocol};
use crate::llm::{ChatMessage, ChatModel, ModelReply, Role, TokenUsage};
use crate::tools::reading::snapshot::Snapshot;
use crate::tools::{Registry, TestCommands, ToolId, Workspace};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Why `/continue` of a conversation without a task does nothing.
pub const NOTHING_TO_CONTINUE: &str = "nothing to continue: send a task first";

/// Repair requests per step when a reply cannot be understood.
pub const MAX_REPAIRS: u32 = 2;

/// How every gate refusal starts (a restored session knows one by it).
pub const GATE_REFUSED: &str = "Final answer refused:";

/// Settings of the loop itself.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    pub max_steps: u32,
    pub test_timeout: Duration,
    pub protocol: Protocol,
    pub retry: RetryPolicy,
    /// Compact the conversation when the next request is estimated above this many tokens.
    pub context_limit: u64,
    /// Prices of the model, when known (for cost estimates).
    pub pricing: Option<ModelInfo>,
    /// Stop a task once its estimated cost reaches this (US dollars).
    pub max_cost: Option<f64>,
    /// Tools and paths that may never be approved for a whole task.
    pub scope_policy: ScopePolicy,
    /// How test runs are confined.
    pub sandbox: crate::tools::sandbox::Policy,
    /// `[test_commands]` of the configuration (added to those found in the project).
    pub test_commands: Vec<(String, Vec<String>)>,
    /// Prices of every known model, for the model `/model` switches to.
    pub model_table: ModelTable,
    /// The MCP servers to start (`[mcp.servers]`).
    pub mcp: crate::config::mcp::McpSettings,
    /// The same call with the same result this many times in a row stops a task (0: never).
    pub max_repeats: u32,
    /// The tools the model may call (the built-in ones unless a test adds some).
    pub registry: Registry,
}

impl Default for LoopSettings {
    fn default() -> Self {
        LoopSettings {
            max_steps: 20,
            test_timeout: Duration::from_secs(30),
            protocol: Protocol::Tools,
            retry: RetryPolicy::default(),
            context_limit: 32768 * 70 / 100,
            pricing: None,
            max_cost: None,
            scope_policy: ScopePolicy::default(),
            sandbox: Default::default(),
            test_commands: Vec::new(),
            model_table: ModelTable::builtin(),
            mcp: Default::default(),
            max_repeats: 5,
            registry: Registry::default(),
        }
    }
}

impl From<&Config> for LoopSettings {
    fn from(c: &Config) -> Self {
        LoopSettings {
            max_steps: c.max_steps,
            test_timeout: c.test_timeout,
            protocol: c.protocol,
            retry: RetryPolicy {
                max_retries: c.max_retries,
                ..RetryPolicy::default()
            },
            context_limit: c.context_window * u64::from(c.context_budget) / 100,
            pricing: c.models.lookup(&c.model).cloned(),
            max_cost: c.max_cost,
            scope_policy: ScopePolicy::new(&c.no_auto_approve, &c.no_auto_approve_paths),
            sandbox: crate::tools::sandbox::Policy::new(&c.sandbox, &c.test_env),
            test_commands: c.test_commands.clone(),
            model_table: c.models.clone(),
            mcp: c.mcp.clone(),
            max_repeats: c.max_repeats,
            registry: Registry::default(),
        }
    }
}

/// A conversation with one model about one workspace.
pub struct Session {
    pub(super) settings: LoopSettings,
    pub(super) model: Arc<dyn ChatModel>,
    pub(super) workspace: Workspace,
    pub(super) history: Vec<ChatMessage>,
    pub(super) tools: Option<Value>,
    pub(super) json_ids: u64,
    /// History length and token count of the last request the server measured.
    pub(super) usage_base: Option<(usize, u64)>,
    pub(super) session_usage: TokenUsage,
    pub(super) session_cost: f64,
    /// Tools approved for the rest of the current task (owned here; front
    /// ends learn of changes from `ScopesChanged` events).
    pub(super) approvals: TaskApprovals,
    /// Revocations sent by a front end, applied before each tool call.
    pub(super) revocations: mpsc::UnboundedReceiver<Vec<ToolId>>,
    pub(super) revoker: Revoker,
    /// Every edit applied in this session, for `/diff`, `/undo` and receipts.
    pub(super) changes: ChangeLog,
    /// Tasks run so far (the current task's number while one runs).
    pub(super) tasks: u32,
    /// The workspace's test commands (found again at each task).
    pub(super) test_commands: TestCommands,
    /// The last task, if it stopped without an accepted answer (for `/continue`).
    pub(super) carried: Option<Carried>,
    /// The files after the last test run (unchanged files are not read again).
    pub(super) snapshot: Option<Snapshot>,
    /// Counters and the sink for resumable checkpoints (`saved`).
    pub(super) saved: super::history::saved::Bookkeeping,
    /// The MCP servers (their tools are called as `mcp_call` says).
    pub(super) mcp: crate::mcp::Hub,
    /// The tools the model may call (MCP tools join through `mcp_call`).
    pub(super) registry: crate::tools::Registry,
    /// Tasks work in a stage (`staged`); its stage is the workspace's.
    pub(super) staged: bool,
    /// Where this session keeps its stages.
    pub(super) store: Option<crate::tools::stage::Store>,
}

impl Session {
    pub fn new(
        mut settings: LoopSettings,
        model: Arc<dyn ChatModel>,
        workspace: Workspace,
    ) -> Self {
        // What the file tools refuse, a test run may not read either.
        settings.sandbox.deny = workspace.deny().clone();
        let test_commands = TestCommands::detect(&workspace, &settings.test_commands);
        let registry = settings.registry.clone();
        let tools =
            (settings.protocol == Protocol::Tools).then(|| registry.schemas(&test_commands));
        let (revoke_tx, revocations) = mpsc::unbounded_channel();
        let mcp_hub = crate::mcp::Hub::new(&settings.mcp, workspace.root().to_path_buf());
        let mut session = Session {
            settings,
            model,
            workspace,
            history: Vec::new(),
            tools,
            json_ids: 0,
            usage_base: None,
            session_usage: TokenUsage::default(),
            session_cost: 0.0,
            approvals: TaskApprovals::default(),
            revocations,
            revoker: Revoker(revoke_tx),
            changes: ChangeLog::default(),
            tasks: 0,
            test_commands,
            carried: None,
            snapshot: None,
            saved: Default::default(),
            mcp: mcp_hub,
            registry,
            staged: false,
            store: None,
        };
        session.clear();
        session
    }

    /// Start a new conversation.
    pub fn clear(&mut self) {
        self.carried = None;
        self.history = vec![ChatMessage::system(self.system_prompt(&Rules::default()))];
    }

    pub fn history(&self) -> &[ChatMessage] {
        &self.history
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The project rule files a task would include now (e.g. `AGENTS.md`).
    /// How this session's test runs are confined, in a word or two.
    pub fn sandbox_state(&self) -> String {
        crate::tools::sandbox::state(&self.settings.sandbox).label()
    }

    /// Which limits bound this session's test runs as a whole.
    pub fn sandbox_limits(&self) -> String {
        crate::tools::sandbox::state(&self.settings.sandbox).limits_line()
    }

    pub fn rule_files(&self) -> Vec<String> {
        super::model::rules::load(&self.workspace).files
    }

    /// Whether the conversation has a task to continue.
    pub fn has_user_turn(&self) -> bool {
        self.history.iter().any(|m| m.role == Role::User)
    }

    pub fn model_label(&self) -> String {
        self.model.label()
    }

    /// Run one task to its end. Every outcome is also sent as `TaskFinished`.
    pub async fn run_task(
        &mut self,
        task: &str,
        events: &EventSender,
        cancel: CancellationToken,
    ) -> FinishReason {
        self.run(Some(task), events, cancel).await
    }

    /// Go on from where the last task stopped (after an error or interrupt),
    /// without a new message from the user. A conversation without a task is
    /// not resumed: `ResumeRefused` is sent and nothing else happens.
    pub async fn resume(
        &mut self,
        events: &EventSender,
        cancel: CancellationToken,
    ) -> FinishReason {
        if !self.has_user_turn() {
            let message = NOTHING_TO_CONTINUE.to_string();
            let _ = events.send(AgentEvent::ResumeRefused {
                message: message.clone(),
            });
            return FinishReason::Error(message);
        }
        self.run(None, events, cancel).await
    }

    async fn run(
        &mut self,
        task: Option<&str>,
        events: &EventSender,
        cancel: CancellationToken,
    ) -> FinishReason {
        let mut t = Task {
            events,
            cancel: &cancel,
            step: 0,
            limit: self.settings.max_steps,
            changed_since_tests: false,
            usage: TokenUsage::default(),
            cost: 0.0,
            last_tests: None,
            tool_used: false,
            changed_by_tests: Vec::new(),
            kept_out: Vec::new(),
            repeats: RepeatWatch::default(),
            made_by: Default::default(),
            run_rewrites: None,
            rewritten_by_every_run: Vec::new(),
            mcp_server: None,
        };
        // Resuming goes on with the same task: its gate, changes and steps.
        let carried = self.carried.take().filter(|_| task.is_none());
        match carried {
            Some(carried) => carried.restore(&mut t, self.settings.max_steps),
            None => self.tasks += 1,
        }
        self.end_scopes(events);
        let rules = self.refresh_rules();
        t.emit(AgentEvent::TaskStarted {
            task: task.unwrap_or("(continue)").to_string(),
            max_steps: t.limit,
            rules: rules.files,
        });
        if let Some(task) = task {
            self.history.push(ChatMessage::user(task));
        }
        if let Err(message) = self.stage_for_task(task.unwrap_or("(continue)")) {
            t.emit(AgentEvent::Error {
                message: message.clone(),
            });
            let reason = FinishReason::Error(message);
            t.emit(AgentEvent::TaskFinished {
                reason: reason.clone(),
                steps: 0,
                usage: t.usage,
                cost_usd: None,
            });
            return reason;
        }
        self.note_running();
        let reason = self.drive(&mut t).await;
        if reason != FinishReason::Answered {
            self.carried = Some(Carried::from_task(&t));
        }
        self.end_scopes(events);
        match &reason {
            FinishReason::BudgetExhausted => {
                let text = format!(
                    "The step budget of {} steps ran out before the task was finished.",
                    self.settings.max_steps
                );
                t.emit(AgentEvent::Error {
                    message: text.clone(),
                });
                protocol::record_feedback(&mut self.history, &text);
            }
            FinishReason::CostLimit => {
                let text = format!(
                    "The cost limit of ${:.2} was reached (estimated ${:.4}) before the task was finished.",
                    self.settings.max_cost.unwrap_or(0.0),
                    t.cost
                );
                t.emit(AgentEvent::Error {
                    message: text.clone(),
                });
                protocol::record_feedback(&mut self.history, &text);
            }
            FinishReason::Cancelled => {
                protocol::record_feedback(&mut self.history, "The user interrupted the task.");
            }
            FinishReason::Answered | FinishReason::Error(_) | FinishReason::Refused(_) => {}
        }
        self.note_finished(t.step, &reason);
        t.emit(AgentEvent::TaskFinished {
            reason: reason.clone(),
            steps: t.step,
            usage: t.usage,
            cost_usd: self.settings.pricing.as_ref().map(|_| t.cost),
        });
        reason
    }

    async fn drive(&mut self, t: &mut Task<'_>) -> FinishReason {
        loop {
            if t.cancel.is_cancelled() {
                return FinishReason::Cancelled;
            }
            if t.step >= t.limit {
                return FinishReason::BudgetExhausted;
            }
            if let Some(max) = self.settings.max_cost
                && t.cost >= max
            {
                return FinishReason::CostLimit;
            }
            self.keep_within_context(t).await;
            let (reply, actions) = match self.next_reply(t).await {
                Ok(r) => r,
                Err(reason) => return reason,
            };
            // A change not yet on disk goes there now that the model's time
            // counts towards the checkpoints' budget.
            self.checkpoint_if_behind();
            for (index, action) in actions.into_iter().enumerate() {
                let stop = if t.cancel.is_cancelled() {
                    Some(FinishReason::Cancelled)
                } else if t.step >= t.limit {
                    Some(FinishReason::BudgetExhausted)
                } else {
                    None
                };
                if let Some(reason) = stop {
                    self.answer_remaining(&reply, index, &reason);
                    return reason;
                }
                t.step += 1;
                t.emit(AgentEvent::StepStarted {
                    step: t.step,
                    max_steps: t.limit,
                });
                match action {
                    Action::Final { text } => {
                        self.late_mcp_writes(t);
                        // Without any test command the gate cannot be met: the
                        // answer is accepted, and its receipt says it is untested.
                        if t.changed_since_tests && !self.test_commands.is_empty() {
                            let reason = format!(
                                "{GATE_REFUSED} files were changed in this task and run_tests has not passed since the last change. Run the tests, fix any failure, then answer."
                            );
                            t.emit(AgentEvent::GateRefused {
                                step: t.step,
                                reason: reason.clone(),
                            });
                            protocol::record_feedback(
                                &mut self.history,
                                &serde_json::json!({"success": false, "error": reason}).to_string(),
                            );
                        } else {
                            let receipt = self.receipt(t);
                            t.emit(AgentEvent::FinalAnswer {
                                text,
                                receipt: receipt.clone(),
                            });
                            if self.staged {
                                self.review_stage(t, &receipt).await;
                            }
                            return FinishReason::Answered;
                        }
                    }
                    Action::Tool {
                        call_id,
                        name,
                        arguments,
                    } => {
                        t.tool_used = true;
                        let changes_before = self.changes.len();
                        let output = self.execute(t, &call_id, &name, &arguments).await;
                        let mut text = self.fit_tool_result(&call_id, &name, &output.body);
                        let verdict = (t.repeats).observe(
                            &name,
                            &arguments,
                            &text,
                            self.settings.max_repeats,
                        );
                        if verdict == Verdict::Note {
                            text = format!("{text}\n{}", repeats::NOTE);
                        }
                        protocol::record_tool_result(
                            self.settings.protocol,
                            &mut self.history,
                            &call_id,
                            &name,
                            &output,
                            text,
                        );
                        if self.changes.len() != changes_before {
                            // On disk after each change, so a killed process loses none.
                            self.checkpoint_soon();
                        }
                        if let Verdict::Stop(times) = verdict {
                            let message = format!(
                                "the model repeats itself: it made the same {name} call with the same result {times} times in a row (max_repeats = {times}; 0 turns this off)"
                            );
                            t.emit(AgentEvent::Error {
                                message: message.clone(),
                            });
                            let reason = FinishReason::Error(message);
                            self.answer_remaining(&reply, index + 1, &reason);
                            return reason;
                        }
                    }
                }
            }
        }
    }

    /// Native calls left in a reply still need an answer, or the next request is invalid.
    fn answer_remaining(&mut self, reply: &ModelReply, answered: usize, reason: &FinishReason) {
        if self.settings.protocol != Protocol::Tools {
            return;
        }
        let why = match reason {
            FinishReason::BudgetExhausted => "not executed: the step budget ran out",
            FinishReason::Error(_) | FinishReason::Refused(_) => "not executed: the task stopped",
            _ => "not executed: the user interrupted the task",
        };
        let body = serde_json::json!({"success": false, "error": why}).to_string();
        for id in protocol::unanswered_call_ids(&reply.tool_calls, answered) {
            self.history
                .push(ChatMessage::tool_result(id, body.clone()));
        }
    }
}
