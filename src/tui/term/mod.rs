//! The real terminal: setup and restore (`terminal`), signals, the frame
//! clock, and handing the terminal to the user's editor (`editor`); the
//! start-up question for its background (`background`) and the keys typed
//! while it waited for the answer (`typed`); the input's history kept in
//! the workspace's `.stepwise/` (`history`).

pub mod background;
pub mod editor;
pub mod frame;
pub mod history;
pub mod signals;
pub mod terminal;
pub mod typed;
