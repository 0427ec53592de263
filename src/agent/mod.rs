//! The agent core: the step loop, the model protocols and the events it emits.
//! It knows nothing of terminals; the headless printer and the TUI both consume
//! the same events and answer the same approval requests.

mod budget;
mod changes;
mod compact;
mod context;
pub mod events;
mod execute;
mod git;
pub mod live;
mod prompt;
pub mod protocol;
mod request;
mod retry;
mod review;
mod revise;
pub mod rules;
mod runner;
pub mod scopes;
mod session;

pub use events::{
    AgentEvent, ApprovalAction, ApprovalRequest, CallStatus, Decision, EventReceiver, EventSender,
    FileStat, FinishReason, GitStatus, Receipt, TestReceipt,
};
pub use retry::RetryPolicy;
pub use runner::{AgentCommand, AgentHandle, spawn_agent};
pub use session::{LoopSettings, MAX_REPAIRS, Session};
