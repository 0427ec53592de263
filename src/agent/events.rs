//! Everything the core tells its consumer (headless printer, TUI, tests), and
//! the approval round-trip: a request carrying a `oneshot` reply.

use crate::diff::FileDiff;
use crate::llm::TokenUsage;
use crate::tools::ToolName;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

/// The stream of events of a session.
pub type EventSender = mpsc::UnboundedSender<AgentEvent>;
pub type EventReceiver = mpsc::UnboundedReceiver<AgentEvent>;

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Approve,
    /// Approve this call and every later call of the same tool in this task.
    ApproveToolForTask,
    Decline {
        reason: Option<String>,
    },
}

/// What would happen if approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalAction {
    /// Write a file; the diff is exactly what would change.
    Edit { path: String, diff: FileDiff },
    /// Run a test command (program and arguments, no shell).
    RunTests { command: Vec<String> },
}

impl ApprovalAction {
    /// One line for a prompt, e.g. `Write calculator.py (+4 −0)` or `Run python3 -m pytest -q`.
    pub fn prompt(&self) -> String {
        match self {
            ApprovalAction::Edit { path, diff } => {
                let verb = if diff.new_file { "Create" } else { "Write" };
                format!("{verb} {path} ({})", diff.stat())
            }
            ApprovalAction::RunTests { command } => format!("Run {}", command.join(" ")),
        }
    }
}

/// A pending approval. Dropping `reply` counts as a decline.
#[derive(Debug, Serialize)]
pub struct ApprovalRequest {
    pub step: u32,
    pub call_id: String,
    pub tool: ToolName,
    pub action: ApprovalAction,
    #[serde(skip)]
    pub reply: oneshot::Sender<Decision>,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    Failed,
    Declined,
}

/// Why a task ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", content = "detail", rename_all = "snake_case")]
pub enum FinishReason {
    /// The final answer passed the completion gate.
    Answered,
    /// The step budget ran out.
    BudgetExhausted,
    /// The user interrupted the task.
    Cancelled,
    /// The task's estimated cost reached `--max-cost`.
    CostLimit,
    /// The model could not be reached or did not follow the protocol.
    Error(String),
}

/// One thing that happened in a session.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    TaskStarted {
        task: String,
        max_steps: u32,
        /// Project rule files added to the system prompt (e.g. `AGENTS.md`).
        rules: Vec<String>,
    },
    /// A request to the model is about to be sent (the UI shows "thinking").
    ModelRequest {
        /// Steps already taken in this task.
        steps_done: u32,
    },
    /// A piece of assistant text as it streams in.
    AssistantDelta {
        text: String,
    },
    /// The complete assistant text of one reply (also sent when it was streamed).
    AssistantMessage {
        text: String,
    },
    Usage(TokenUsage),
    /// A request failed transiently and will be sent again after `delay_ms`.
    /// Assistant text streamed by the failed attempt is void: drop it.
    Retrying {
        retry: u32,
        max_retries: u32,
        delay_ms: u64,
        error: String,
    },
    /// A step begins: one tool call or one final answer.
    StepStarted {
        step: u32,
        max_steps: u32,
    },
    /// The model asked for a tool call. `diff` is set for edits that could be computed.
    ToolCallProposed {
        step: u32,
        call_id: String,
        tool: String,
        /// The key argument (path or runner), empty when the arguments did not parse.
        target: String,
        arguments: serde_json::Value,
        diff: Option<FileDiff>,
        needs_approval: bool,
    },
    ApprovalRequested(ApprovalRequest),
    /// An approved (or auto-approved) action is being carried out.
    ToolRunning {
        step: u32,
        call_id: String,
        /// True when the approval came from an earlier "approve for task".
        auto_approved: bool,
    },
    ToolFinished {
        step: u32,
        call_id: String,
        tool: String,
        status: CallStatus,
        summary: String,
        result: serde_json::Value,
    },
    /// The model's reply broke the JSON protocol; it is asked to repair it.
    ProtocolRepair {
        attempt: u32,
        error: String,
    },
    /// A final answer was refused because tests have not passed since the last change.
    GateRefused {
        step: u32,
        reason: String,
    },
    FinalAnswer {
        text: String,
    },
    Error {
        message: String,
    },
    TaskFinished {
        reason: FinishReason,
        steps: u32,
        /// Tokens of the whole task.
        usage: TokenUsage,
        /// Estimated cost of the task, when the model's prices are known.
        cost_usd: Option<f64>,
    },
    /// The estimated cost so far (sent after each request when prices are known).
    Cost {
        request_usd: f64,
        task_usd: f64,
        session_usd: f64,
    },
    /// Older tool results were replaced by stubs (and older turns maybe
    /// summarized) to stay inside the context window.
    Compacted {
        before_tokens: u64,
        after_tokens: u64,
        elided: usize,
        summarized: usize,
    },
}
