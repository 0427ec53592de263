//! The real terminal as the run loop's `Host`: the process's signals, mouse
//! capture on stdout, and handing the terminal to the user's editor (the key
//! reader is replaced so it cannot swallow keys meant for the editor).

use super::{EditRequest, Host};
use crate::tui::term::{editor, signals::Signals, terminal};
use crossterm::event::EventStream;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::future::Future;

pub type Backend = CrosstermBackend<std::io::Stdout>;

pub struct RealHost {
    signals: Signals,
}

impl RealHost {
    pub fn new() -> std::io::Result<Self> {
        Ok(RealHost {
            signals: Signals::new()?,
        })
    }
}

impl Host<Backend, EventStream> for RealHost {
    fn is_active(&self) -> bool {
        terminal::is_active()
    }

    fn signal(&mut self) -> impl Future<Output = i32> {
        self.signals.recv()
    }

    /// The bell, and a desktop notification where the terminal shows OSC 9
    /// (others ignore it). `text` is the App's own sanitized line.
    fn notify(&mut self, text: &str) {
        use std::io::Write;
        let text: String = text.chars().filter(|c| !c.is_control()).collect();
        let mut out = std::io::stdout();
        let _ = write!(out, "\x07\x1b]9;{text}\x07");
        let _ = out.flush();
    }

    fn set_mouse_capture(&mut self, on: bool) {
        if let Err(e) = terminal::set_mouse_capture(on) {
            tracing::warn!(%e, "cannot switch mouse capture");
        }
    }

    async fn edit(
        &mut self,
        term: &mut Terminal<Backend>,
        events: &mut EventStream,
        request: EditRequest,
    ) -> Result<Result<String, String>, String> {
        drop(std::mem::replace(events, EventStream::new()));
        terminal::suspend();
        let argv = editor::from_env();
        tracing::info!(editor = ?argv.first(), "editing a proposal");
        let result = editor::edit(&request.path, &request.content, &argv).await;
        terminal::resume(request.mouse)
            .map_err(|e| format!("cannot take the terminal back: {e}"))?;
        // The screen is blank again: draw a blank frame so that the next one
        // is drawn in full (`Terminal::clear` would query the cursor position).
        term.draw(|_| {})
            .map_err(|e| format!("cannot redraw the terminal: {e}"))?;
        Ok(result)
    }
}
