//! The App's look: the palette (or no colour) the front end picked at start
//! (`--theme`, `--color`, `NO_COLOR`, the terminal's background). Set once;
//! every frame is painted with it at the end of `draw`.

use super::App;
use crate::tui::render::theme::Look;

impl App {
    /// Paint the frames with `look` from now on.
    pub fn set_look(&mut self, look: Look) {
        self.term.look = look;
    }

    /// How frames are painted.
    pub fn look(&self) -> Look {
        self.term.look
    }
}
