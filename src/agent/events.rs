//! Everything the core tells its consumer (headless printer, TUI, tests), and
//! the approval round-trip: a request carrying a `oneshot` reply.

pub use super::git::GitStatus;
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
    /// Approve this call and every later call of the same tool in this task
    /// (a plain approval when the request does not allow it).
    ApproveToolForTask,
    /// Apply only these hunks of an edit (indices into its diff's hunks).
    ApproveHunks {
        accepted: Vec<usize>,
    },
    /// Write this content instead of the proposal: the user edited it. (The
    /// content is not logged; the written diff is in the tool result.)
    ApproveEdited {
        #[serde(skip)]
        content: String,
    },
    Decline {
        reason: Option<String>,
    },
}

/// What would happen if approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalAction {
    /// Write a file; the diff is exactly what would change.
    Edit {
        path: String,
        diff: FileDiff,
        /// The complete proposed content (for editing before accepting).
        #[serde(skip)]
        proposed: String,
        /// The file's current content (`None`: it would be created), to diff
        /// a version the user edited against.
        #[serde(skip)]
        original: Option<String>,
    },
    /// Apply a patch: one multi-file diff (deletions are asked again one by one).
    Patch { files: Vec<FileDiff> },
    /// Delete a file (part of a patch); always asked explicitly.
    Delete { path: String, diff: FileDiff },
    /// Revert stepwise's own changes (`/undo`): each file goes back to these diffs.
    Undo { files: Vec<FileDiff> },
    /// Run a test command (program and arguments, no shell).
    RunTests { command: Vec<String> },
}

impl ApprovalAction {
    /// One line for a prompt, e.g. `Write calculator.py (+4 −0)` or `Run python3 -m pytest -q`.
    pub fn prompt(&self) -> String {
        match self {
            ApprovalAction::Edit { path, diff, .. } => {
                let verb = if diff.new_file { "Create" } else { "Write" };
                format!("{verb} {path} ({})", diff.stat())
            }
            ApprovalAction::RunTests { command } => format!("Run {}", command.join(" ")),
            ApprovalAction::Patch { files } => {
                let names: Vec<String> = files
                    .iter()
                    .map(|d| format!("{} ({})", d.path, d.stat()))
                    .collect();
                format!("Apply patch to {}", names.join(", "))
            }
            ApprovalAction::Delete { path, diff } => {
                format!("DELETE {path} (\u{2212}{} lines)", diff.removed)
            }
            ApprovalAction::Undo { files } => {
                let names: Vec<String> = files
                    .iter()
                    .map(|d| {
                        if d.added == 0 && d.removed > 0 && d.hunks.iter().all(|h| h.new_len == 0) {
                            format!("delete {}", d.path)
                        } else {
                            format!("restore {} ({})", d.path, d.stat())
                        }
                    })
                    .collect();
                format!("Undo: {}", names.join(", "))
            }
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
    /// Whether "approve this tool for the rest of the task" may be offered;
    /// configuration can forbid it for some tools and paths.
    pub allow_for_task: bool,
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

/// What stepwise itself checked when it accepted a final answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// The task's last test run, if it ran tests.
    pub tests: Option<TestReceipt>,
    /// Files the task changed (net, from before its first edit to after its last).
    pub files: Vec<FileStat>,
    /// Short SHA-256 of the workspace diff since the session started.
    pub diff_hash: String,
    /// The task ended with a final answer in its first step and no tool was
    /// called: nothing was looked at or checked.
    pub no_tool_used: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestReceipt {
    pub command: String,
    pub exit_code: Option<i32>,
    /// The runner's summary line, e.g. `5 passed`.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStat {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub created: bool,
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
    /// More of the arguments (JSON text) of tool call `index` of the reply
    /// still streaming in; a front end may show a live preview (see `agent::live`).
    ToolCallStreaming {
        index: usize,
        tool: String,
        fragment: String,
    },
    /// The current content of the file that streaming edit `index` targets
    /// (`None`: it does not exist yet), to diff the preview against.
    LiveEditBase {
        index: usize,
        tool: String,
        path: String,
        old: Option<String>,
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
    /// The final answer passed the gate; the receipt is computed by stepwise,
    /// not written by the model.
    FinalAnswer {
        text: String,
        receipt: Receipt,
    },
    /// The cumulative diff of the session (`/diff`).
    SessionDiff {
        files: Vec<FileDiff>,
        /// Branch and other dirty files, when the workspace is in a git repository.
        git: Option<GitStatus>,
    },
    /// An undo ended: these files were reverted, or it was refused or declined.
    UndoFinished {
        reverted: Vec<String>,
        error: Option<String>,
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
