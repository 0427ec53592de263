//! Syntax colours that wait for a frame: the code blocks of rendered
//! entries, coloured only once their lines are in view.
//!
//! In the real app (grammars off the UI thread, `highlight_warm`) a block
//! in view whose grammar is ready is coloured whole on the UI's `worker`:
//! a frame only hands its lines over and later takes the result, so no
//! frame pays for colouring (the patterns a grammar compiles on the lines
//! its warm-up did not reach included). A block whose language has no
//! answer yet is left plain and asks for no frame; the answer's message
//! brings the next one. Otherwise (tests, or no worker thread), a frame
//! colours about [`SLICE`] of the blocks in view, and always at least
//! [`MIN_LINES`] lines, so a block finishes in a bounded number of frames
//! however slow the machine. Pushing an entry, restoring a session and
//! streaming never colour.
//!
//! What must stay true: a block is shown plain until all of it is coloured,
//! then all at once (a grammar error leaves it plain, as before); the blocks
//! of one entry share the budget of [`highlight::MAX_LINES`] lines, decided
//! in order the first time one of them is drawn; lines are addressed by
//! their index in the conversation, so whoever replaces lines from `n` on
//! must call [`Pending::drop_from`] with `n`.

use super::CodeBlock;
use crate::tui::render::highlight::{self, Highlighter};
use crate::tui::render::highlight_warm::Grammars;
use crate::tui::render::worker;
use ratatui::text::Span;
use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// About how long one frame may spend colouring.
pub const SLICE: Duration = Duration::from_millis(1);
/// Lines a frame colours even when `SLICE` is already spent.
pub const MIN_LINES: usize = 16;

/// A block's colours, ready: its first line's index and its rows.
pub type Coloured = (usize, Vec<Vec<Span<'static>>>);

#[derive(Debug)]
struct Job {
    /// Index of the block's first code line in the conversation.
    line: usize,
    lang: String,
    /// Its lines (shared with the worker when it colours them).
    lines: Arc<[String]>,
    run: Option<(Highlighter, Vec<Vec<Span<'static>>>)>,
    /// Its colours on the way from the worker (`None` in them: a grammar error).
    sent: Option<Receiver<Option<Vec<Vec<Span<'static>>>>>>,
}

impl Job {
    fn span(&self) -> Range<usize> {
        self.line..self.line + self.lines.len()
    }
}

/// One entry's blocks, in order.
#[derive(Debug)]
struct Group {
    jobs: Vec<Job>,
    /// Whether the budget has picked the blocks that get colours.
    picked: bool,
}

impl Group {
    fn span(&self) -> Range<usize> {
        let start = self.jobs.first().map_or(0, |j| j.line);
        start..self.jobs.last().map_or(0, |j| j.span().end)
    }

    /// Keep the blocks the budget allows (known language, in order);
    /// false, and nothing picked, while a language waits for its grammar.
    fn pick(&mut self, grammars: &mut Grammars) -> bool {
        let answers: Vec<Option<bool>> = (self.jobs.iter())
            .map(|j| grammars.known(&j.lang, &j.lines))
            .collect();
        if answers.contains(&None) {
            return false;
        }
        self.picked = true;
        let mut left = highlight::MAX_LINES;
        let mut answers = answers.into_iter();
        self.jobs.retain(|j| {
            let keep = answers.next() == Some(Some(true)) && j.lines.len() <= left;
            if keep {
                left -= j.lines.len();
            }
            keep
        });
        true
    }
}

#[derive(Debug, Default)]
pub struct Pending {
    groups: Vec<Group>,
    /// The last step stopped with visible work left (a frame should follow).
    due: bool,
    /// The grammars that may be used, and the warm-ups wanted.
    pub grammars: Grammars,
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

impl Pending {
    /// An entry whose lines start at conversation line `base` has `blocks`.
    pub fn add(&mut self, base: usize, blocks: Vec<CodeBlock>) {
        if blocks.is_empty() {
            return;
        }
        self.want(&blocks);
        let jobs = blocks
            .into_iter()
            .map(|b| Job {
                line: base + b.at,
                lang: b.lang,
                lines: b.lines.into(),
                run: None,
                sent: None,
            })
            .collect();
        self.groups.push(Group {
            jobs,
            picked: false,
        });
    }

    /// Blocks that appeared (maybe still streaming): their grammars will
    /// be wanted soon.
    pub fn want(&mut self, blocks: &[CodeBlock]) {
        for b in blocks {
            self.grammars.want(&b.lang, &b.lines);
        }
    }

    /// Lines from `line` on were replaced: forget their blocks.
    pub fn drop_from(&mut self, line: usize) {
        self.groups.retain(|g| g.span().start < line);
        for g in &mut self.groups {
            g.jobs.retain(|j| j.span().end <= line);
        }
        self.groups.retain(|g| !g.jobs.is_empty());
    }

    /// Whether colouring that is in view is left for the next frame.
    pub fn is_due(&self) -> bool {
        self.due
    }

    /// Blocks not coloured yet (in view or not).
    pub fn waiting(&self) -> usize {
        self.groups.iter().map(|g| g.jobs.len()).sum()
    }

    /// One frame's slice of work on the blocks with lines in `visible`;
    /// the blocks finished by it.
    pub fn step(&mut self, visible: Range<usize>) -> Vec<Coloured> {
        self.step_with(visible, SLICE)
    }

    /// `step` with a time budget of `slice` (zero: `MIN_LINES` lines only).
    pub fn step_with(&mut self, visible: Range<usize>, slice: Duration) -> Vec<Coloured> {
        let started = Instant::now();
        let mut lines = 0;
        let mut done = Vec::new();
        self.due = false;
        for g in self.groups.iter_mut() {
            if !overlaps(&g.span(), &visible) {
                continue;
            }
            if !g.picked && !g.pick(&mut self.grammars) {
                continue;
            }
            let mut i = 0;
            while i < g.jobs.len() {
                let job = &mut g.jobs[i];
                if !overlaps(&job.span(), &visible) {
                    i += 1;
                    continue;
                }
                if lines >= MIN_LINES && started.elapsed() >= slice {
                    self.due = true;
                    break;
                }
                let progress = match self.grammars.is_off_thread() {
                    true => {
                        on_worker(job).unwrap_or_else(|| advance(job, &mut lines, started, slice))
                    }
                    false => advance(job, &mut lines, started, slice),
                };
                match progress {
                    Progress::More => {
                        self.due = true;
                        i += 1;
                    }
                    Progress::Done(rows) => {
                        done.push((job.line, rows));
                        g.jobs.remove(i);
                    }
                    Progress::Failed => {
                        g.jobs.remove(i);
                    }
                }
            }
        }
        self.groups.retain(|g| !g.jobs.is_empty());
        done
    }
}

enum Progress {
    More,
    Done(Vec<Vec<Span<'static>>>),
    Failed,
}

/// Colour `job` on the worker: hand it over the first time, then see
/// whether its colours came; `None` when there is no worker thread (colour
/// it here).
fn on_worker(job: &mut Job) -> Option<Progress> {
    let Some(sent) = &job.sent else {
        if job.run.is_some() {
            return None;
        }
        let (lang, lines) = (job.lang.clone(), Arc::clone(&job.lines));
        let colour = move || {
            let mut h = Highlighter::new(&lang);
            lines.iter().map(|l| h.as_mut()?.line(l)).collect()
        };
        job.sent = Some(worker::compute(worker::Lane::Colours, colour)?);
        return Some(Progress::More);
    };
    Some(match sent.try_recv() {
        Ok(Some(rows)) => Progress::Done(rows),
        Ok(None) | Err(TryRecvError::Disconnected) => Progress::Failed,
        Err(TryRecvError::Empty) => Progress::More,
    })
}

/// Colour lines of `job` until it is done or the frame's budget is spent.
fn advance(job: &mut Job, lines: &mut usize, started: Instant, slice: Duration) -> Progress {
    if job.run.is_none() {
        match Highlighter::new(&job.lang) {
            Some(h) => job.run = Some((h, Vec::with_capacity(job.lines.len()))),
            None => return Progress::Failed,
        }
    }
    let Some((h, out)) = job.run.as_mut() else {
        return Progress::Failed;
    };
    while out.len() < job.lines.len() {
        if *lines >= MIN_LINES && started.elapsed() >= slice {
            return Progress::More;
        }
        match h.line(&job.lines[out.len()]) {
            Some(spans) => out.push(spans),
            None => return Progress::Failed,
        }
        *lines += 1;
    }
    Progress::Done(std::mem::take(out))
}
