//! What drawing is made of, below every component: `layout` places the
//! panes, `chrome` draws their blocks, and `text` sanitizes and wraps
//! untrusted text for every pane; `highlight` gives code
//! its syntax colours (`highlight_warm` readies their grammars off the UI
//! thread) and `theme` names every colour; `worker` is the one thread that
//! computes what drawing needs but no frame should wait for. `ansi` turns a
//! program's colours into the theme's styles. Nothing here reads the App
//! (that is `view`, at the top).

pub mod ansi;
pub mod chrome;
pub mod highlight;
pub mod highlight_warm;
pub mod layout;
pub mod text;
pub mod theme;
pub mod worker;
