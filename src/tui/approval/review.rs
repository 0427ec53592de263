//! Reviewing an edit at its approval prompt: which hunks are accepted, the
//! hunk cursor, and the user's own edited version (from `$EDITOR`), turned
//! into the `Decision` the core receives when the user presses `y` (a
//! patch's files: `files`).

use crate::agent::{ApprovalAction, Decision};
use crate::diff::{FileDiff, LineKind, apply_hunks};

/// The review state of the open approval request.
#[derive(Debug, Default)]
pub struct Review {
    /// One entry per hunk of the diff under review.
    pub accepted: Vec<bool>,
    /// The hunk the cursor is on.
    pub cursor: usize,
    /// The user's version, when they edited the proposal.
    pub edited: Option<Edited>,
    /// Grows with each edited version, so the diff pane lays it out again.
    pub generation: u64,
    /// For a patch: each file's first hunk (flat index) and hunk count.
    pub files: Vec<(usize, usize)>,
}

/// The user's version of a proposal and its diff against the original.
#[derive(Debug)]
pub struct Edited {
    pub content: String,
    pub diff: FileDiff,
}

impl Review {
    /// Every hunk accepted, cursor on the first.
    pub fn new(action: &ApprovalAction) -> Review {
        let files = Review::file_spans(action);
        let hunks = match action {
            ApprovalAction::Edit { diff, .. } => diff.hunks.len(),
            _ => files.iter().map(|(_, n)| n).sum(),
        };
        Review {
            accepted: vec![true; hunks],
            files,
            ..Review::default()
        }
    }

    /// Hunks can be chosen one by one (an edit or a patch with several of them).
    pub fn selectable(&self) -> bool {
        self.accepted.len() > 1
    }

    /// Accept or reject the hunk under the cursor.
    pub fn toggle(&mut self) {
        if self.selectable()
            && let Some(a) = self.accepted.get_mut(self.cursor)
        {
            *a = !*a;
        }
    }

    /// Move the cursor by `delta` hunks; whether it moved.
    pub fn move_cursor(&mut self, delta: isize) -> bool {
        let last = self.accepted.len().saturating_sub(1);
        let next = self.cursor.saturating_add_signed(delta).min(last);
        let moved = next != self.cursor;
        self.cursor = next;
        moved
    }

    pub fn accepted_count(&self) -> usize {
        self.accepted.iter().filter(|a| **a).count()
    }

    /// `+a −r` of the accepted hunks of `diff` only (what `y` would write).
    pub fn accepted_stat(&self, diff: &FileDiff) -> String {
        let (mut added, mut removed) = (0, 0);
        for (hunk, _) in diff
            .hunks
            .iter()
            .zip(&self.accepted)
            .filter(|(_, accepted)| **accepted)
        {
            for line in &hunk.lines {
                match line.kind {
                    LineKind::Added => added += 1,
                    LineKind::Removed => removed += 1,
                    LineKind::Context => {}
                }
            }
        }
        format!("+{added} \u{2212}{removed}")
    }

    /// Anything other than the proposal as it stands would be written.
    pub fn modified(&self) -> bool {
        self.edited.is_some() || self.accepted.iter().any(|a| !a)
    }

    /// The diffs under review: the user's edited version, or the proposal.
    pub fn diffs<'a>(&'a self, action: &'a ApprovalAction) -> Vec<&'a FileDiff> {
        match (action, &self.edited) {
            (_, Some(e)) => vec![&e.diff],
            (ApprovalAction::Edit { diff, .. }, None) => vec![diff],
            (
                ApprovalAction::Undo { files }
                | ApprovalAction::Patch { files }
                | ApprovalAction::KeepRunOutput { files, .. }
                | ApprovalAction::ApplyStage { files, .. },
                None,
            ) => files.iter().collect(),
            (ApprovalAction::Delete { diff, .. }, None) => vec![diff],
            (ApprovalAction::RunTests { .. } | ApprovalAction::McpCall { .. }, None) => Vec::new(),
        }
    }

    /// What to open in the editor: the file's path and the current version.
    pub fn editable<'a>(&'a self, action: &'a ApprovalAction) -> Option<(&'a str, &'a str)> {
        let ApprovalAction::Edit { path, proposed, .. } = action else {
            return None;
        };
        let content = self
            .edited
            .as_ref()
            .map_or(proposed.as_str(), |e| &e.content);
        Some((path, content))
    }

    /// Take the user's edited version: diff it against the original again;
    /// every hunk of the new diff starts accepted.
    pub fn set_edited(&mut self, action: &ApprovalAction, content: String) {
        let ApprovalAction::Edit { path, original, .. } = action else {
            return;
        };
        let old = original.as_deref().map(to_lf);
        let diff = FileDiff::compute(path, old.as_deref(), &to_lf(&content));
        self.accepted = vec![true; diff.hunks.len()];
        self.cursor = 0;
        self.generation += 1;
        self.edited = Some(Edited { content, diff });
    }

    /// What `y` means: the whole proposal, some of its hunks, or the user's
    /// version (with only its accepted hunks).
    pub fn decision(&self, action: &ApprovalAction) -> Decision {
        if !self.accepted.is_empty() && self.accepted_count() == 0 {
            return Decision::Decline {
                reason: Some("the user rejected every hunk".into()),
            };
        }
        let all = self.accepted.iter().all(|a| *a);
        match (&self.edited, action) {
            (None, _) if all => Decision::Approve,
            (
                None,
                ApprovalAction::Patch { .. }
                | ApprovalAction::KeepRunOutput { .. }
                | ApprovalAction::ApplyStage { .. },
            ) => self
                .patch_decision(action)
                .unwrap_or(Decision::Decline { reason: None }),
            (None, _) => Decision::ApproveHunks {
                accepted: (0..self.accepted.len())
                    .filter(|&i| self.accepted[i])
                    .collect(),
            },
            (Some(e), ApprovalAction::Edit { original, .. }) if !all => {
                let old = to_lf(original.as_deref().unwrap_or(""));
                Decision::ApproveEdited {
                    content: apply_hunks(&old, &to_lf(&e.content), &self.accepted),
                }
            }
            (Some(e), _) => Decision::ApproveEdited {
                content: e.content.clone(),
            },
        }
    }
}

/// `\r\n` as `\n`, as edits are diffed and shown.
fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three_hunks() -> (String, String, ApprovalAction) {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 20\n", "line twenty\n")
            .replace("line 38\n", "");
        let action = ApprovalAction::Edit {
            path: "f.txt".into(),
            diff: FileDiff::compute("f.txt", Some(&old), &new),
            proposed: new.clone(),
            original: Some(old.clone()),
        };
        (old, new, action)
    }

    #[test]
    fn y_means_all_some_or_none_of_the_hunks() {
        let (_, _, action) = three_hunks();
        let mut r = Review::new(&action);
        assert_eq!(r.decision(&action), Decision::Approve);
        r.move_cursor(1);
        r.toggle();
        assert!(r.modified());
        assert_eq!(
            r.decision(&action),
            Decision::ApproveHunks {
                accepted: vec![0, 2]
            }
        );
        for i in [0, 2] {
            r.cursor = i;
            r.toggle();
        }
        assert!(matches!(r.decision(&action), Decision::Decline { .. }));
    }

    #[test]
    fn an_edited_version_is_diffed_against_the_original_and_sent_whole() {
        let (old, new, action) = three_hunks();
        let mut r = Review::new(&action);
        let mine = new.replace("line twenty\n", "line 20 (kept)\n");
        r.set_edited(&action, mine.clone());
        assert_eq!(r.generation, 1);
        assert_eq!(r.diffs(&action)[0].hunks.len(), 3);
        assert_eq!(r.editable(&action).map(|e| e.1), Some(mine.as_str()));
        assert_eq!(
            r.decision(&action),
            Decision::ApproveEdited {
                content: mine.clone()
            }
        );
        r.cursor = 2;
        r.toggle();
        let expected = mine.replace("line 39\n", "line 38\nline 39\n");
        assert_eq!(
            r.decision(&action),
            Decision::ApproveEdited { content: expected }
        );
        assert!(old.contains("line 38\n"));
    }

    #[test]
    fn a_single_hunk_is_not_toggled() {
        let action = ApprovalAction::Edit {
            path: "a".into(),
            diff: FileDiff::compute("a", Some("x\n"), "y\n"),
            proposed: "y\n".into(),
            original: Some("x\n".into()),
        };
        let mut r = Review::new(&action);
        r.toggle();
        assert_eq!(r.decision(&action), Decision::Approve);
    }
}
