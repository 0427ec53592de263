//! Syntax colours of diff hunks computed on the UI's worker, so that
//! no frame waits for a grammar (the first lines of a language can take
//! tens of milliseconds while its patterns compile). A hunk is shown plain
//! until its colours arrive; the view picks them up at its next layout.
//!
//! What must stay true: the colours a hunk gets are exactly
//! `highlight::hunk` of its lines (the same function, only elsewhere);
//! nothing here blocks: results are taken with `try_recv`.

use crate::tui::render::{highlight, worker};
use ratatui::text::Span;
use std::sync::mpsc::{Receiver, TryRecvError};

/// Each line's syntax spans (`None`: plain), as `highlight::hunk` gives them.
pub type Colours = Vec<Option<Vec<Span<'static>>>>;

#[derive(Debug, Default)]
pub struct SyntaxJobs {
    pending: Vec<(usize, Receiver<Colours>)>,
}

impl SyntaxJobs {
    /// Colour hunk `hunk` (lines `texts` of a file at `path`, `sides`
    /// as `highlight::hunk` takes them) on the worker; when it has no thread,
    /// the colours are computed here and returned.
    pub fn start(
        &mut self,
        hunk: usize,
        path: &str,
        texts: &[String],
        sides: Vec<highlight::Side>,
    ) -> Option<Colours> {
        let (p, t, n) = (path.to_string(), texts.to_vec(), sides.clone());
        match worker::compute(worker::Lane::Colours, move || highlight::hunk(&p, &t, &n)) {
            Some(rx) => {
                self.pending.push((hunk, rx));
                None
            }
            None => Some(highlight::hunk(path, texts, &sides)),
        }
    }

    /// The hunks whose colours arrived since the last call, with them.
    pub fn finished(&mut self) -> Vec<(usize, Colours)> {
        let mut done = Vec::new();
        self.pending.retain(|(hunk, rx)| match rx.try_recv() {
            Ok(colours) => {
                done.push((*hunk, colours));
                false
            }
            Err(TryRecvError::Empty) => true,
            // The job is gone without a result: the hunk stays plain.
            Err(TryRecvError::Disconnected) => false,
        });
        done
    }

    /// Whether some hunk still waits for its colours.
    pub fn pending(&self) -> bool {
        !self.pending.is_empty()
    }
}
