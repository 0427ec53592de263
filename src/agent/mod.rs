//! The agent core: the step loop, the model protocols and the events it emits.
//! It knows nothing of terminals; the headless printer and the TUI both consume
//! the same events and answer the same approval requests. Everything a front
//! end may use is in `contract` (re-exported here); the session owns its
//! state, including the task's approvals, and changes it only on commands.
//!
//! The step loop and its task are here (`session`, `task`, `runner`,
//! `staged`); what they use is grouped by what it serves: `model` (the
//! conversation with the model), `step` (carrying out and approving one
//! step) and `history` (what the session changed, saving and restoring it).

pub mod contract;
pub mod history;
pub mod model;
mod runner;
mod session;
mod staged;
pub mod step;
mod task;

pub use history::restore::{CUT_OFF, RUNNING};

pub use contract::{
    AgentCommand, AgentEvent, ApprovalAction, ApprovalRequest, CallKind, CallStatus, Decision,
    EventReceiver, EventSender, FileHunks, FileStat, FinishReason, GitStatus, Receipt,
    RestoredEntry, TestReceipt, ToolId,
};
pub use model::retry::RetryPolicy;
pub use runner::{AgentHandle, spawn_agent};
pub use session::{LoopSettings, MAX_REPAIRS, Session};
