//! The contract between the core and its front ends (headless printer, TUI,
//! tests): the events the core emits, the commands it accepts, the approval
//! round-trip and the receipt. Front ends depend on this module only; it
//! depends on no front end. Tool names are typed (`ToolName`, or `ToolRef`
//! where the model may have named an unknown tool) and serialize as the
//! strings the model uses.

mod approval;
mod commands;
mod events;
mod receipt;
mod tool_ref;

pub use approval::{ApprovalAction, ApprovalRequest, Decision, FileHunks};
pub use commands::AgentCommand;
pub use events::{
    AgentEvent, CallStatus, EventReceiver, EventSender, FinishReason, GitStatus, RestoredEntry,
};
pub use receipt::{FileStat, Receipt, TestReceipt};
pub use tool_ref::ToolRef;
