//! The input component and the key map: the ONE table of which key does
//! what in which layer (`keymap`, rows in `bindings`), the input box, the
//! `@` file picker and the `/` commands' table and menu. Routing keys to
//! the layers is the App's (`app::keys`); nothing here reads the App.

mod bindings;
pub mod input_box;
mod key_types;
pub mod keymap;
pub mod picker;
pub mod slash;

/// How long after the last key typed into the input the user still counts
/// as composing (a prompt that opens then waits for them).
pub const COMPOSING: std::time::Duration = std::time::Duration::from_secs(1);
