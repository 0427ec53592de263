//! Everything the core tells its consumer, in order: one `AgentEvent` per
//! thing that happened. Events are plain data (serializable for `exec --json`
//! and the transcript) except `ApprovalRequested`, whose reply must be answered.

use super::approval::ApprovalRequest;
use super::receipt::Receipt;
pub use crate::agent::history::git::GitStatus;
use crate::diff::FileDiff;
use crate::llm::TokenUsage;
use crate::tools::ToolId;
use crate::tools::calls::registry::LivePreview;
use serde::Serialize;
use tokio::sync::mpsc;

/// The stream of events of a session.
pub type EventSender = mpsc::UnboundedSender<AgentEvent>;
pub type EventReceiver = mpsc::UnboundedReceiver<AgentEvent>;

/// What a proposed call does, from its plan (front ends show it and pick
/// their words by it, never by the tool's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// Reads the workspace; runs without approval.
    Read,
    /// Changes files (an edit or a patch).
    Edit,
    /// Runs a test command.
    Execute,
    /// Calls a tool of an MCP server.
    External,
    /// Refused before it was planned (unknown tool, bad arguments).
    Other,
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
    /// The model refused the task (a refusal stop reason, or OpenAI's
    /// `refusal` field): its words, never taken as an answer.
    Refused(String),
}

/// One thing that happened in a session.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// Sent once when the agent is spawned: the project rule files the
    /// system prompt will include (each task reads them again).
    SessionReady {
        rules: Vec<String>,
        /// How this session's test runs are confined, in a word or two
        /// (`sandboxed`, `sandbox: no network isolation`, `not sandboxed`).
        sandbox: String,
        /// Which limits bound a run as a whole (`memory, processes and disk
        /// for the whole run`, or where they are per process only).
        limits: String,
    },
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
        tool: ToolId,
        /// How the tool's arguments can be previewed (from its registry entry).
        preview: LivePreview,
        fragment: String,
    },
    /// The current content of the file that streaming edit `index` targets
    /// (`None`: it does not exist yet), to diff the preview against.
    LiveEditBase {
        index: usize,
        tool: ToolId,
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
        tool: ToolId,
        kind: CallKind,
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
        tool: ToolId,
        status: CallStatus,
        summary: String,
        /// What the model reads: test output in it has no escape sequence.
        result: serde_json::Value,
        /// A test run's output with its colour sequences (SGR only, see
        /// `tools::testing::ansi`), for a front end to style; never serialized.
        #[serde(skip)]
        coloured_output: Option<String>,
    },
    /// The model's reply broke the JSON protocol, or was cut at the output
    /// token limit (`cut_at_limit`); it is asked to repair it.
    ProtocolRepair {
        attempt: u32,
        error: String,
        cut_at_limit: bool,
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
    /// Whether tasks work in a stage changed (`/stage`), or the session
    /// starts staged: the stage's name (`None`: step by step) and what to
    /// tell the user.
    StageChanged {
        stage: Option<String>,
        message: String,
    },
    /// A staged task's changeset was reviewed: what was written into the
    /// workspace, what was not (with why), and whether the stage is kept
    /// (declined, or conflicts left in it) or gone.
    StageReviewed {
        stage: String,
        written: Vec<String>,
        not_written: Vec<String>,
        kept: bool,
    },
    /// The cumulative diff of the session (`/diff`).
    SessionDiff {
        files: Vec<FileDiff>,
        /// Branch and other dirty files, when the workspace is in a git repository.
        git: Option<GitStatus>,
    },
    /// The files the session has changed so far, from its change log
    /// (patches and edits count, reverted files do not, a resumed session
    /// keeps its earlier ones). Sent when a session is restored and after
    /// each command that changed the set.
    SessionFiles {
        files: Vec<String>,
    },
    /// An undo ended: these files were reverted, or it was refused or declined.
    UndoFinished {
        reverted: Vec<String>,
        error: Option<String>,
    },
    Error {
        message: String,
    },
    /// `/continue` was refused: the conversation has no task yet. Nothing
    /// else is sent for it (no `TaskStarted`, no `TaskFinished`).
    ResumeRefused {
        message: String,
    },
    /// The tools approved for the rest of the task changed (a grant, a
    /// revoke, or the task's end): this is the whole set now.
    ScopesChanged {
        approved: Vec<ToolId>,
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
    /// `/model NAME`: requests from now on ask for this model (the header
    /// shows it, the transcript records it).
    ModelChanged {
        model: String,
    },
    /// The server's models (`/model` alone): their names sorted, or why the
    /// list could not be read (scrubbed like every server message).
    ModelsListed {
        /// The model requests ask for now.
        current: String,
        models: Vec<String>,
        error: Option<String>,
    },
    /// A session was brought back from its transcript (`stepwise resume`,
    /// `--continue`): its conversation as the user saw it and its totals.
    /// Sent once, right after `SessionReady`.
    SessionRestored {
        /// The transcript's name (what `stepwise resume NAME` takes).
        session: String,
        entries: Vec<RestoredEntry>,
        tasks: u32,
        steps: u32,
        /// Tokens of the whole session so far.
        usage: TokenUsage,
        /// Estimated cost of the session so far, when prices were known.
        cost_usd: Option<f64>,
    },
    /// An MCP server started, failed, or stopped; `tools` is what it offers now.
    McpServer(crate::mcp::ServerReport),
    /// Sent after `SessionRestored` when the session's last task was still
    /// running when its process stopped (killed, crashed, the machine went
    /// down): the files it had changed, kept for `/diff` and `/undo`.
    TaskCutOff {
        files: Vec<String>,
    },
}

/// One line of a restored conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RestoredEntry {
    /// A task the user gave.
    User { text: String },
    /// The model's text.
    Assistant { text: String },
    /// A tool the model called, with its arguments (JSON text), and how it
    /// ended as its result says: `status` (`None`: no result was recorded,
    /// e.g. the task was interrupted), `detail` (the error or the reason
    /// given for a decline; empty when it went well) and `edited` (the user
    /// approved their own version of the edit), and `output`.
    Tool {
        name: String,
        arguments: String,
        call_id: String,
        call_kind: CallKind,
        target: String,
        status: Option<CallStatus>,
        detail: String,
        summary: String,
        edited: bool,
        /// The end of a failed call's output (a failing test run's last
        /// lines, as the live conversation showed them); empty otherwise.
        output: String,
    },
    /// A final answer the completion gate refused, with its reason.
    Gate { text: String },
    /// Something stepwise itself told the model (a protocol repair, the end
    /// of the step budget, an interrupt, an undo).
    Notice { text: String },
}
