//! The contract between the core and its front ends (headless printer, TUI,
//! tests): the events the core emits, the commands it accepts, the approval
//! round-trip and the receipt. Front ends depend on this module only; it
//! depends on no front end. Tools are named by `ToolId` (a built-in tool, an
//! MCP server's tool, or an unknown name the model used), which serializes
//! as the string the model uses.

mod approval;
mod commands;
mod events;
mod receipt;

pub use crate::tools::ToolId;
pub use approval::{ApprovalAction, ApprovalRequest, Decision, FileHunks};
pub use commands::AgentCommand;
pub use events::{
    AgentEvent, CallKind, CallStatus, EventReceiver, EventSender, FinishReason, GitStatus,
    RestoredEntry,
};
pub use receipt::{FileStat, Receipt, TestReceipt};
