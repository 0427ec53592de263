//! Drawing the state: `layout` places the panes, `view` draws a frame,
//! `header` and `prompt_bar` are the chrome around the panes, and `text`
//! sanitizes and wraps untrusted text for every pane; `highlight` gives code
//! its syntax colours (`highlight_warm` readies their grammars off the UI
//! thread) and `theme` names every colour; `worker` is the one thread that
//! computes what drawing needs but no frame should wait for. `ansi` turns a
//! program's colours into the theme's styles.

pub mod ansi;
pub mod chrome;
pub mod header;
pub mod highlight;
pub mod highlight_warm;
pub mod layout;
pub mod prompt_bar;
pub mod text;
pub mod theme;
pub mod view;
pub mod worker;
