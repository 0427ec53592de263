//! Live previews of edits while the model is still streaming their
//! arguments. Fragments are only appended as they arrive; the preview diff is
//! computed at frame time, at most every `REFRESH` per call, by reading the
//! partial JSON (`content` of a `write_file`; `old`/`new` of a
//! `replace_text`) against the file's content sent by the core, or the
//! `patch` of an `apply_patch` read as a diff by itself (`live_patch`). The final
//! proposal (or a new request, or a retry) replaces the previews.
//!
//! A preview of more than `INLINE_PREVIEW_BYTES` is computed on the UI's
//! worker from a copy of the arguments and the file, so no frame waits for
//! a diff of thousands of lines (nor for the diff pane's items of it: the
//! worker builds those too, `take_prepared`); its result is picked up by the first
//! refresh after it is ready (`next_refresh` asks for one every `POLL`
//! meanwhile). What must stay true: the preview shown is always the
//! from-scratch preview of some arguments received, the newest once the
//! stream stops (one computation at a time per call; fragments that arrive
//! meanwhile mark it dirty for the next); rendering never waits or locks.

use crate::agent::model::live::partial_field;
use crate::diff::{FileDiff, LineKind};
use crate::tools::ToolId;
use crate::tools::calls::registry::LivePreview;
use crate::tui::panes::diff::live_patch::partial_patch;
use crate::tui::panes::diff::source::Source;
use crate::tui::panes::diff::view::DiffKey;
use crate::tui::render::worker;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// Shortest time between two recomputations of one preview.
pub const REFRESH: Duration = Duration::from_millis(100);
/// Arguments plus file content above this get no live preview.
pub const MAX_PREVIEW_BYTES: usize = 2 * 1024 * 1024;
/// Previews of up to this much (arguments plus file content) are computed
/// on the frame, well under a millisecond; larger ones on the UI's worker.
pub const INLINE_PREVIEW_BYTES: usize = 64 * 1024;
/// How often a frame looks for a preview computed on the worker.
pub const POLL: Duration = Duration::from_millis(8);

/// One streaming tool call.
#[derive(Debug)]
pub struct LiveCall {
    pub index: usize,
    pub tool: ToolId,
    /// How its arguments are previewed, as the core said (a patch is
    /// previewed from its arguments alone, see `live_patch`).
    pub kind: LivePreview,
    args: String,
    /// Path and current content (`None`: a new file), once the core sent them.
    base: Option<Arc<Base>>,
    dirty: bool,
    computed_at: Option<Instant>,
    pub preview: Option<FileDiff>,
    /// An `apply_patch`'s files and hunks so far (it needs no base).
    pub files: Vec<FileDiff>,
    /// Why there is no preview yet, when there is none.
    pub note: Option<&'static str>,
    /// Grows with each recomputed preview.
    pub generation: u64,
    /// A preview being computed on the worker, and when a frame last looked.
    job: Option<(Receiver<Prepared>, Instant)>,
    /// The diff pane's items for `preview`, built with it on the worker
    /// (taken by the pane when it shows this generation).
    prepared: Option<Source>,
}

/// The file a call edits: its path and content (`None`: a new file).
type Base = (String, Option<String>);
/// A preview diff, or why there is none yet.
type Computed = (Option<FileDiff>, Option<&'static str>);
/// A preview computed on the worker, with the diff pane's items for it.
type Prepared = (Computed, Option<Source>);

impl LiveCall {
    pub fn path(&self) -> Option<&str> {
        self.base.as_ref().map(|b| b.0.as_str())
    }

    /// Whether there is something to show: the file is known, or it is a
    /// patch (which carries its own diff).
    fn ready(&self) -> bool {
        self.base.is_some() || self.kind == LivePreview::Patch
    }

    /// The diffs to show, if any arrived.
    pub fn diffs(&self) -> Vec<&FileDiff> {
        self.preview.iter().chain(&self.files).collect()
    }
}

#[derive(Debug, Default)]
pub struct LivePreviews {
    calls: Vec<LiveCall>,
}

impl LivePreviews {
    /// More of call `index`'s arguments.
    pub fn fragment(&mut self, index: usize, tool: &ToolId, kind: LivePreview, fragment: &str) {
        if kind == LivePreview::None {
            return;
        }
        let call = self.call(index, tool);
        call.kind = kind;
        call.args.push_str(fragment);
        call.dirty = true;
    }

    /// The file call `index` edits, as it is now.
    pub fn base(&mut self, index: usize, tool: &ToolId, path: String, old: Option<String>) {
        let call = self.call(index, tool);
        call.base = Some(Arc::new((path, old)));
        call.dirty = true;
    }

    fn call(&mut self, index: usize, tool: &ToolId) -> &mut LiveCall {
        let at = match self.calls.iter().position(|c| c.index == index) {
            Some(at) => at,
            None => {
                self.calls.push(LiveCall {
                    index,
                    tool: tool.clone(),
                    kind: LivePreview::None,
                    args: String::new(),
                    base: None,
                    dirty: false,
                    computed_at: None,
                    preview: None,
                    files: Vec::new(),
                    note: None,
                    generation: 0,
                    job: None,
                    prepared: None,
                });
                self.calls.len() - 1
            }
        };
        &mut self.calls[at]
    }

    /// Forget every preview (the proposal arrived, or the reply is void).
    pub fn clear(&mut self) {
        // A long edit's arguments, preview and items: freed off the UI thread.
        if !self.calls.is_empty() {
            worker::free(std::mem::take(&mut self.calls));
        }
    }

    /// The preview to show: the newest call whose file is known (or patch).
    pub fn shown(&self) -> Option<&LiveCall> {
        self.calls.iter().rev().find(|c| c.ready())
    }

    /// Recompute the previews that changed, unless one was computed less
    /// than `REFRESH` ago (a large one is queued on the worker, and picked up
    /// by a later refresh). Returns whether any preview changed.
    pub fn refresh(&mut self, now: Instant) -> bool {
        let mut changed = false;
        for call in &mut self.calls {
            if let Some((job, polled)) = &mut call.job {
                match job.try_recv() {
                    Ok((computed, prepared)) => {
                        call.job = None;
                        changed |= call.show(computed);
                        call.prepared = prepared;
                    }
                    Err(TryRecvError::Empty) => {
                        *polled = now;
                        continue;
                    }
                    // The job is gone without a result: compute again.
                    Err(TryRecvError::Disconnected) => {
                        call.job = None;
                        call.dirty = true;
                        call.computed_at = None;
                    }
                }
            }
            let due = call
                .computed_at
                .is_none_or(|at| now.saturating_duration_since(at) >= REFRESH);
            if !call.dirty || !due || !call.ready() {
                continue;
            }
            call.dirty = false;
            call.computed_at = Some(now);
            if call.kind == LivePreview::Patch {
                (call.files, call.note) = compute_patch(call);
                call.generation += 1;
                changed = true;
                continue;
            }
            let size = call.args.len()
                + call
                    .base
                    .as_ref()
                    .map_or(0, |b| b.1.as_ref().map_or(0, String::len));
            if size > INLINE_PREVIEW_BYTES && size <= MAX_PREVIEW_BYTES {
                // The file is shared with the job, not copied: it never changes.
                let (kind, args, base) = (call.kind, call.args.clone(), call.base.clone());
                let job = move || {
                    let computed = compute(kind, &args, base.as_deref());
                    let prepared = computed.0.as_ref().map(|d| Source::new(&[d], false));
                    (computed, prepared)
                };
                if let Some(rx) = worker::compute(worker::Lane::Bulk, job) {
                    call.job = Some((rx, now));
                    continue;
                }
            }
            let computed = compute(call.kind, &call.args, call.base.as_deref());
            changed |= call.show(computed);
        }
        changed
    }

    /// When a frame should refresh the previews next: a throttled preview
    /// is due, or a frame should look for one computed on the worker.
    pub fn next_refresh(&self) -> Option<Instant> {
        let throttled = self
            .calls
            .iter()
            .filter(|c| c.dirty && c.ready() && c.job.is_none())
            .filter_map(|c| c.computed_at.map(|at| at + REFRESH));
        let polls = self
            .calls
            .iter()
            .filter_map(|c| c.job.as_ref())
            .map(|(_, at)| *at + POLL);
        throttled.chain(polls).min()
    }

    /// The diff pane's items for the preview `key` names, when the worker
    /// built them with it (a diff of one file, without headers).
    pub fn take_prepared(&mut self, key: DiffKey) -> Option<Source> {
        let DiffKey::Live { index, generation } = key else {
            return None;
        };
        let call = self.calls.iter_mut().find(|c| c.index == index)?;
        let prepared = call.prepared.take()?;
        if call.generation != generation || !call.files.is_empty() {
            worker::free(prepared);
            return None;
        }
        Some(prepared)
    }

    /// Whether a preview is being computed on the worker.
    pub fn computing(&self) -> bool {
        self.calls.iter().any(|c| c.job.is_some())
    }
}

impl LiveCall {
    /// Show a computed preview; always a change.
    fn show(&mut self, (preview, note): Computed) -> bool {
        if let Some(unused) = self.prepared.take() {
            // Never shown (another call's preview was): freed off the UI thread.
            worker::free(unused);
        }
        if let Some(old) = std::mem::replace(&mut self.preview, preview) {
            worker::free(old);
        }
        self.note = note;
        self.generation += 1;
        true
    }
}

/// The files and hunks of a patch so far, or why there are none yet.
fn compute_patch(call: &LiveCall) -> (Vec<FileDiff>, Option<&'static str>) {
    if call.args.len() > MAX_PREVIEW_BYTES {
        return (Vec::new(), Some("too large to preview while it streams"));
    }
    let Some(patch) = partial_field(&call.args, "patch") else {
        return (Vec::new(), Some("waiting for the patch…"));
    };
    let files = partial_patch(&patch.value);
    let note = files.is_empty().then_some("waiting for a complete hunk");
    (files, note)
}

/// The preview diff of a call previewed as `kind` with arguments `args` so
/// far against `base` (the file's path and content), or why there is none yet.
fn compute(kind: LivePreview, args: &str, base: Option<&Base>) -> Computed {
    let Some((path, old)) = base else {
        return (None, None);
    };
    if args.len() + old.as_ref().map_or(0, String::len) > MAX_PREVIEW_BYTES {
        return (None, Some("too large to preview while it streams"));
    }
    let old_lf = old.as_ref().map(|o| o.replace("\r\n", "\n"));
    match kind {
        LivePreview::WriteFile => {
            let Some(content) = partial_field(args, "content") else {
                return (None, Some("waiting for the new content…"));
            };
            let mut diff = FileDiff::compute(path, old_lf.as_deref(), &content.value);
            if !content.complete {
                trim_unstreamed(&mut diff);
            }
            (Some(diff), None)
        }
        LivePreview::ReplaceText => {
            let Some(base) = old_lf else {
                return (None, Some("the file does not exist"));
            };
            match partial_field(args, "old") {
                Some(f) if f.complete => {
                    let found = base.match_indices(f.value.as_str()).count();
                    if f.value.is_empty() || found != 1 {
                        return (None, Some("the text to replace is not found exactly once"));
                    }
                    let new = partial_field(args, "new").map_or(String::new(), |n| n.value);
                    let preview = base.replacen(f.value.as_str(), &new, 1);
                    (Some(FileDiff::compute(path, Some(&base), &preview)), None)
                }
                _ => (None, Some("waiting for the text to replace…")),
            }
        }
        LivePreview::Patch | LivePreview::None => (None, None),
    }
}

/// A `write_file` still streaming has not sent the rest of the file yet: an
/// old line is only shown as removed once a later old line was matched (so
/// the new content has gone past it); the others are not there *yet*.
fn trim_unstreamed(diff: &mut FileDiff) {
    let matched = diff
        .hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .filter(|l| l.kind == LineKind::Context)
        .filter_map(|l| l.old_no)
        .max()
        .unwrap_or(0);
    let mut dropped = 0;
    for hunk in &mut diff.hunks {
        // Where the streamed text stops is no end of the file.
        hunk.lines.retain(|l| !l.is_no_newline_marker());
        let before = hunk.lines.len();
        hunk.lines
            .retain(|l| l.kind != LineKind::Removed || l.old_no.is_some_and(|n| n < matched));
        dropped += before - hunk.lines.len();
        hunk.old_len = hunk
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Added)
            .count();
    }
    diff.removed -= dropped;
    diff.hunks
        .retain(|h| h.lines.iter().any(|l| l.kind != LineKind::Context));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How the core says a built-in tool is previewed.
    fn preview(tool: &str) -> LivePreview {
        crate::tools::Registry::default().live_preview(tool)
    }

    fn at(ms: u64, t0: Instant) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn a_write_builds_up_and_is_throttled() {
        let t0 = Instant::now();
        let mut live = LivePreviews::default();
        live.fragment(
            0,
            &ToolId::parse("write_file"),
            preview("write_file"),
            r#"{"path": "a.py", "content": "x = 1\ny"#,
        );
        assert!(!live.refresh(t0), "no base yet");
        live.base(
            0,
            &ToolId::parse("write_file"),
            "a.py".into(),
            Some("x = 1\ny = 2\nz = 3\n".into()),
        );
        assert!(live.refresh(t0));
        let diff = live
            .shown()
            .and_then(|c| c.preview.clone())
            .expect("preview");
        // Only what streamed: `y` is added; `y = 2` and `z = 3` are not removed yet.
        assert_eq!((diff.added, diff.removed), (1, 0), "{diff:?}");
        live.fragment(
            0,
            &ToolId::parse("write_file"),
            preview("write_file"),
            " = 5\\nz = 3\\n\"}",
        );
        assert!(!live.refresh(at(50, t0)), "throttled");
        assert_eq!(live.next_refresh(), Some(at(100, t0)));
        assert!(live.refresh(at(100, t0)));
        let diff = live
            .shown()
            .and_then(|c| c.preview.clone())
            .expect("preview");
        assert_eq!((diff.added, diff.removed), (1, 1));
        assert_eq!(live.next_refresh(), None);
        live.clear();
        assert!(live.shown().is_none());
    }

    #[test]
    fn a_replacement_needs_its_old_text_once() {
        let t0 = Instant::now();
        let mut live = LivePreviews::default();
        live.base(
            1,
            &ToolId::parse("replace_text"),
            "c.py".into(),
            Some("a\nb\nc\n".into()),
        );
        live.fragment(
            1,
            &ToolId::parse("replace_text"),
            preview("replace_text"),
            r#"{"path": "c.py", "old": "b\n"#,
        );
        live.refresh(t0);
        assert!(
            live.shown()
                .is_some_and(|c| c.preview.is_none() && c.note.is_some())
        );
        live.fragment(
            1,
            &ToolId::parse("replace_text"),
            preview("replace_text"),
            r#"", "new": "B\nB2\n"#,
        );
        live.refresh(at(200, t0));
        let diff = live
            .shown()
            .and_then(|c| c.preview.clone())
            .expect("preview");
        assert_eq!((diff.added, diff.removed), (2, 1));
    }

    #[test]
    fn other_tools_are_ignored() {
        let mut live = LivePreviews::default();
        live.fragment(0, &ToolId::parse("run_tests"), preview("run_tests"), "{}");
        assert!(live.calls.is_empty());
    }
}
