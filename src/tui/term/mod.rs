//! The real terminal: setup and restore (`terminal`), signals, the frame
//! clock, and handing the terminal to the user's editor (`editor`).

pub mod background;
pub mod editor;
pub mod frame;
pub mod host;
pub mod signals;
pub mod terminal;
