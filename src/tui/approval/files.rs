//! Reviewing a patch that touches several files: the review's one flat list
//! of hunks (the order the diff pane lays them out) split back into files,
//! so keys can jump between files, the title and the prompt can say "file
//! 2/3, hunk 1/2", and `y` can send each file's own accepted hunks.
//!
//! What must stay true: the flat index `i` and `(file, hunk)` name the same
//! hunk the diff pane draws at position `i`; a file with no accepted hunk is
//! sent with none (the core leaves it untouched).

use crate::agent::{ApprovalAction, Decision, FileHunks};
use crate::tui::approval::review::Review;

/// Where a flat hunk index falls: its file, and its place in that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkPlace {
    pub file: usize,
    pub files: usize,
    pub hunk: usize,
    pub hunks: usize,
}

impl Review {
    /// The flat index of each file's first hunk, and its hunk count, for a
    /// patch; empty for anything else.
    pub fn file_spans(action: &ApprovalAction) -> Vec<(usize, usize)> {
        let Some(files) = action.hunk_files() else {
            return Vec::new();
        };
        let mut start = 0;
        files
            .iter()
            .map(|f| {
                let span = (start, f.hunks.len());
                start += f.hunks.len();
                span
            })
            .collect()
    }

    /// The patch has more than one file to move between.
    pub fn several_files(&self) -> bool {
        self.files.len() > 1
    }

    /// Where hunk `i` is, for a patch.
    pub fn place(&self, i: usize) -> Option<HunkPlace> {
        let file = self
            .files
            .iter()
            .rposition(|&(start, n)| start <= i && n > 0)?;
        let (start, hunks) = self.files[file];
        Some(HunkPlace {
            file,
            files: self.files.len(),
            hunk: i - start,
            hunks,
        })
    }

    /// Move the cursor to the first hunk of the file `delta` files away
    /// (files without hunks are skipped); whether it moved.
    pub fn move_file(&mut self, delta: isize) -> bool {
        let Some(here) = self.place(self.cursor) else {
            return false;
        };
        let mut file = here.file;
        loop {
            let Some(next) = file
                .checked_add_signed(delta)
                .filter(|f| *f < self.files.len())
            else {
                return false;
            };
            file = next;
            let (start, n) = self.files[file];
            if n > 0 {
                self.cursor = start;
                return true;
            }
        }
    }

    /// What `y` would write of a patch: how many files get a change, and
    /// `+a −r` of the accepted hunks of all of them.
    pub fn accepted_of_patch(&self, action: &ApprovalAction) -> (usize, String) {
        let Some(files) = action.hunk_files() else {
            return (0, String::new());
        };
        let (mut touched, mut added, mut removed) = (0, 0, 0);
        for (diff, &(start, n)) in files.iter().zip(&self.files) {
            let accepted = &self.accepted[start..start + n];
            touched += usize::from(accepted.iter().any(|a| *a));
            let (a, r) = stat_of(diff, accepted);
            added += a;
            removed += r;
        }
        (touched, format!("+{added} \u{2212}{removed}"))
    }

    /// `y` on a patch with some hunks rejected: each file's accepted hunks.
    pub(super) fn patch_decision(&self, action: &ApprovalAction) -> Option<Decision> {
        let files = action.hunk_files()?;
        let files = files
            .iter()
            .zip(&self.files)
            .map(|(diff, &(start, n))| FileHunks {
                path: diff.path.clone(),
                accepted: (0..n).filter(|&h| self.accepted[start + h]).collect(),
            })
            .collect();
        Some(Decision::ApprovePatchHunks { files })
    }
}

/// Lines added and removed by the hunks of `diff` marked accepted in `accepted`.
fn stat_of(diff: &crate::diff::FileDiff, accepted: &[bool]) -> (usize, usize) {
    use crate::diff::LineKind;
    let (mut added, mut removed) = (0, 0);
    for (hunk, _) in diff.hunks.iter().zip(accepted).filter(|(_, a)| **a) {
        for line in &hunk.lines {
            match line.kind {
                LineKind::Added => added += 1,
                LineKind::Removed => removed += 1,
                LineKind::Context => {}
            }
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::FileDiff;

    fn patch() -> ApprovalAction {
        let old: String = (1..=40).map(|i| format!("l{i}\n")).collect();
        let two = old.replace("l2\n", "x\n").replace("l30\n", "y\n");
        ApprovalAction::Patch {
            files: vec![
                FileDiff::compute("a", Some(&old), &two),
                FileDiff::compute("b", Some(&old), &two),
                FileDiff::compute("c", None, "new\n"),
            ],
        }
    }

    #[test]
    fn files_split_the_flat_hunks_and_the_cursor_jumps_between_them() {
        let action = patch();
        let mut r = Review::new(&action);
        assert_eq!(r.accepted.len(), 5);
        assert!(r.selectable() && r.several_files());
        assert_eq!(
            r.place(3).map(|p| (p.file, p.hunk, p.hunks)),
            Some((1, 1, 2))
        );
        assert!(r.move_file(1));
        assert_eq!(r.cursor, 2);
        assert!(r.move_file(1));
        assert_eq!(r.cursor, 4);
        assert!(!r.move_file(1), "no file after the last");
        assert!(r.move_file(-2));
        assert_eq!(r.cursor, 0);
    }

    #[test]
    fn y_sends_each_files_accepted_hunks() {
        let action = patch();
        let mut r = Review::new(&action);
        assert_eq!(r.decision(&action), Decision::Approve);
        for i in [1, 2, 4] {
            r.cursor = i;
            r.toggle();
        }
        let Decision::ApprovePatchHunks { files } = r.decision(&action) else {
            panic!("{:?}", r.decision(&action));
        };
        let got: Vec<(&str, &[usize])> = files
            .iter()
            .map(|f| (f.path.as_str(), f.accepted.as_slice()))
            .collect();
        assert_eq!(got, [("a", &[0][..]), ("b", &[1][..]), ("c", &[][..])]);
        assert_eq!(r.accepted_of_patch(&action), (2, "+2 −2".to_string()));
    }
}
