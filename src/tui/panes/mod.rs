//! The panes: the conversation (with its light `markdown` and the `receipt`
//! under a final answer), the tool-call rows, and the diff pane (rows, word
//! highlights, live previews). `scroll` is the follow-the-bottom position
//! every scrolling view shares; `wrap_cache` wraps the conversation lazily.

pub mod conversation;
pub mod diff;
pub mod line_kind;
pub mod markdown;
pub mod receipt;
pub mod scroll;
pub mod tool_calls;
pub mod wrap_cache;
