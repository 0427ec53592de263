//! The agent core: the step loop, the model protocols and the events it emits.
//! It knows nothing of terminals; the headless printer and the TUI both consume
//! the same events and answer the same approval requests. Everything a front
//! end may use is in `contract` (re-exported here); the session owns its
//! state, including the task's approvals, and changes it only on commands.

mod approve;
mod budget;
mod carry;
mod changes;
mod changes_store;
mod compact;
mod context;
pub mod contract;
mod execute;
mod git;
pub mod live;
mod mcp_call;
mod prompt;
pub mod protocol;
mod repeats;
mod request;
mod restore;
pub use restore::{CUT_OFF, RUNNING};
mod retry;
mod review;
mod revise;
pub mod rules;
mod run_output;
mod runner;
pub mod saved;
pub mod scopes;
mod session;
mod staged;
mod switch;
mod task;
mod task_scopes;
mod versions;

pub use contract::{
    AgentCommand, AgentEvent, ApprovalAction, ApprovalRequest, CallKind, CallStatus, Decision,
    EventReceiver, EventSender, FileHunks, FileStat, FinishReason, GitStatus, Receipt,
    RestoredEntry, TestReceipt, ToolId,
};
pub use retry::RetryPolicy;
pub use runner::{AgentHandle, spawn_agent};
pub use session::{LoopSettings, MAX_REPAIRS, Session};
