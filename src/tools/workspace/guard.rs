//! The stale-write guard: remembers, per file, a SHA-256 of the content the
//! model last read or stepwise last wrote, and which of its lines the model
//! has seen (all of them, or the ranges of its partial reads). An edit is
//! allowed only while the file on disk still has that content, so an edit
//! made meanwhile by the user (in their editor, or by a test run) is never
//! overwritten unseen. A file the model never read may be created, but not
//! overwritten; a file read only in part may be edited only inside the lines
//! that were read, and replaced whole only after a read of all of it.

use crate::tools::workspace::path::{PathError, RelPath};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::{Mutex, PoisonError};

type Hash = [u8; 32];

fn hash(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

/// Which lines of a file the model has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Whole,
    /// 1-based inclusive line ranges, sorted and merged.
    Lines(Vec<RangeInclusive<usize>>),
}

impl Seen {
    fn covers(&self, lines: &RangeInclusive<usize>) -> bool {
        match self {
            Seen::Whole => true,
            Seen::Lines(ranges) => ranges
                .iter()
                .any(|r| r.start() <= lines.start() && lines.end() <= r.end()),
        }
    }

    fn describe(&self) -> String {
        match self {
            Seen::Whole => "all lines".into(),
            Seen::Lines(ranges) => {
                let parts: Vec<String> = ranges
                    .iter()
                    .map(|r| format!("{}-{}", r.start(), r.end()))
                    .collect();
                format!("lines {}", parts.join(", "))
            }
        }
    }
}

/// Sorted, merged (touching ranges join) copy of `ranges`.
fn merged(mut ranges: Vec<RangeInclusive<usize>>) -> Vec<RangeInclusive<usize>> {
    ranges.sort_by_key(|r| *r.start());
    let mut out: Vec<RangeInclusive<usize>> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if *r.start() <= last.end() + 1 => {
                *last = *last.start()..=(*last.end()).max(*r.end());
            }
            _ => out.push(r),
        }
    }
    out
}

#[derive(Debug, Clone)]
struct Known {
    hash: Hash,
    seen: Seen,
}

/// What the model knows about each file of the workspace.
#[derive(Debug, Default)]
pub struct EditGuard {
    seen: Mutex<HashMap<RelPath, Known>>,
}

impl EditGuard {
    /// The model was shown all of these bytes, or stepwise just wrote them.
    pub fn remember(&self, rel: &RelPath, bytes: &[u8]) {
        let known = Known {
            hash: hash(bytes),
            seen: Seen::Whole,
        };
        self.lock().insert(rel.clone(), known);
    }

    /// The model was shown lines `lines` (1-based) of a file holding `bytes`
    /// in `total` lines. Reads of the same content add up.
    pub fn remember_lines(
        &self,
        rel: &RelPath,
        bytes: &[u8],
        lines: RangeInclusive<usize>,
        total: usize,
    ) {
        if *lines.start() <= 1 && *lines.end() >= total {
            return self.remember(rel, bytes);
        }
        let h = hash(bytes);
        let mut map = self.lock();
        let seen = match map.get(rel) {
            Some(Known {
                hash,
                seen: Seen::Whole,
            }) if *hash == h => Seen::Whole,
            Some(Known {
                hash,
                seen: Seen::Lines(before),
            }) if *hash == h => {
                let all = merged(before.iter().cloned().chain([lines]).collect());
                match &all[..] {
                    [only] if *only.start() <= 1 && *only.end() >= total => Seen::Whole,
                    _ => Seen::Lines(all),
                }
            }
            _ => Seen::Lines(vec![lines]),
        };
        map.insert(rel.clone(), Known { hash: h, seen });
    }

    /// stepwise wrote `new` over `old` (`None`: created it). What the model
    /// had seen of `old` carries over line by line; the lines it wrote count
    /// as seen.
    pub fn remember_written(&self, rel: &RelPath, old: Option<&str>, new: &str) {
        let before = self.lock().get(rel).map(|k| k.seen.clone());
        let (Some(old), Some(Seen::Lines(ranges))) = (old, before) else {
            return self.remember(rel, new.as_bytes());
        };
        let seen_old = Seen::Lines(ranges);
        let diff = similar::TextDiff::from_lines(old, new);
        let mut seen_new: Vec<RangeInclusive<usize>> = Vec::new();
        for op in diff.ops() {
            let (old_range, new_range) = (op.old_range(), op.new_range());
            if op.tag() == similar::DiffTag::Equal {
                for (o, n) in old_range.zip(new_range) {
                    if seen_old.covers(&((o + 1)..=(o + 1))) {
                        seen_new.push((n + 1)..=(n + 1));
                    }
                }
            } else if !new_range.is_empty() {
                seen_new.push((new_range.start + 1)..=new_range.end);
            }
        }
        let total = new.lines().count();
        let known = Known {
            hash: hash(new.as_bytes()),
            seen: match &merged(seen_new)[..] {
                // An empty file has no line left to be unseen.
                _ if total == 0 => Seen::Whole,
                [only] if *only.start() <= 1 && *only.end() >= total => Seen::Whole,
                all => Seen::Lines(all.to_vec()),
            },
        };
        self.lock().insert(rel.clone(), known);
    }

    /// The file does not exist (any more): nothing is known about it.
    pub fn forget(&self, rel: &RelPath) {
        self.lock().remove(rel);
    }

    /// Whether an edit of `rel`, whose current content on disk is `current`
    /// (`None`: the file does not exist), may go ahead.
    pub fn check(&self, rel: &RelPath, current: Option<&[u8]>) -> Result<(), PathError> {
        let known = self.lock().get(rel).map(|k| k.hash);
        let path = rel.display();
        match (known, current) {
            (None, None) => Ok(()),
            (Some(h), Some(bytes)) if h == hash(bytes) => Ok(()),
            (None, Some(_)) => Err(PathError(format!(
                "{path} already exists and you have not read it; nothing was written. \
                 Call read_file on {path} first, then make your edit against what it holds now"
            ))),
            (Some(_), Some(_)) => Err(PathError(format!(
                "{path} changed on disk since you last read it (someone edited it); nothing was written, \
                 and their edit is kept. Call read_file on {path} again and redo your edit against its current content"
            ))),
            (Some(_), None) => Err(PathError(format!(
                "{path} was deleted since you last read it; nothing was written. \
                 Call list_files to see what exists now before recreating it"
            ))),
        }
    }

    /// [`check`](Self::check), and an existing file must have been read whole.
    pub fn check_whole(&self, rel: &RelPath, current: Option<&[u8]>) -> Result<(), PathError> {
        self.check(rel, current)?;
        match self.lock().get(rel).map(|k| k.seen.clone()) {
            Some(seen @ Seen::Lines(_)) if current.is_some() => Err(PathError(format!(
                "you have read only {} of {}; replacing it whole would drop lines you have not seen. \
                 Read the rest with read_file (offset/limit), or change the part you read with replace_text",
                seen.describe(),
                rel.display()
            ))),
            _ => Ok(()),
        }
    }

    /// [`check`](Self::check), and `lines` (1-based) of the existing file
    /// must lie inside what the model read.
    pub fn check_lines(
        &self,
        rel: &RelPath,
        current: &[u8],
        lines: RangeInclusive<usize>,
    ) -> Result<(), PathError> {
        self.check(rel, Some(current))?;
        match self.lock().get(rel).map(|k| k.seen.clone()) {
            Some(seen) if !seen.covers(&lines) => Err(PathError(format!(
                "the edit touches lines {}-{} of {}, but you have read only {}; nothing was written. \
                 Call read_file with offset {} and a limit covering those lines first",
                lines.start(),
                lines.end(),
                rel.display(),
                seen.describe(),
                lines.start()
            ))),
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RelPath, Known>> {
        // The map holds plain hashes: a panic elsewhere cannot leave it half-updated.
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Workspace;

    #[test]
    fn states_and_their_verdicts() {
        let guard = EditGuard::default();
        let rel = Workspace::check("a.py").unwrap();
        assert!(guard.check(&rel, None).is_ok(), "creating an unknown file");
        let never = guard.check(&rel, Some(b"x")).unwrap_err().0;
        assert!(never.contains("not read it"), "{never}");
        guard.remember(&rel, b"x");
        assert!(guard.check(&rel, Some(b"x")).is_ok());
        let changed = guard.check(&rel, Some(b"y")).unwrap_err().0;
        assert!(changed.contains("read_file") && changed.contains("changed"));
        assert!(guard.check(&rel, None).unwrap_err().0.contains("deleted"));
        guard.forget(&rel);
        assert!(guard.check(&rel, None).is_ok());
        let same = Workspace::check("./sub/../a.py").unwrap();
        guard.remember(&rel, b"z");
        assert!(
            guard.check(&same, Some(b"z")).is_ok(),
            "keys are normalized"
        );
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn partial_reads_allow_edits_only_inside_what_was_read() {
        let guard = EditGuard::default();
        let rel = Workspace::check("big.txt").unwrap();
        let text = numbered(100);
        guard.remember_lines(&rel, text.as_bytes(), 10..=20, 100);
        assert!(guard.check_lines(&rel, text.as_bytes(), 12..=15).is_ok());
        let outside = guard
            .check_lines(&rel, text.as_bytes(), 19..=22)
            .unwrap_err()
            .0;
        assert!(
            outside.contains("lines 10-20") && outside.contains("offset 19"),
            "{outside}"
        );
        let whole = guard
            .check_whole(&rel, Some(text.as_bytes()))
            .unwrap_err()
            .0;
        assert!(whole.contains("only lines 10-20"), "{whole}");
        // Reads of the same content add up; all of them make the whole file.
        guard.remember_lines(&rel, text.as_bytes(), 21..=100, 100);
        assert!(guard.check_lines(&rel, text.as_bytes(), 19..=22).is_ok());
        guard.remember_lines(&rel, text.as_bytes(), 1..=9, 100);
        assert!(guard.check_whole(&rel, Some(text.as_bytes())).is_ok());
        // A read of changed content starts over.
        let changed = numbered(101);
        guard.remember_lines(&rel, changed.as_bytes(), 50..=60, 101);
        assert!(
            guard
                .check_lines(&rel, changed.as_bytes(), 10..=11)
                .is_err()
        );
    }

    #[test]
    fn a_file_written_empty_may_be_edited_again() {
        let guard = EditGuard::default();
        let rel = Workspace::check("empty.txt").unwrap();
        guard.remember(&rel, b"old\n");
        guard.remember_written(&rel, Some("old\n"), "");
        assert!(guard.check_whole(&rel, Some(b"")).is_ok());
    }

    #[test]
    fn what_was_seen_follows_an_edit() {
        let guard = EditGuard::default();
        let rel = Workspace::check("big.txt").unwrap();
        let old = numbered(100);
        guard.remember_lines(&rel, old.as_bytes(), 50..=60, 100);
        // Two lines inserted before line 55: the lines read move down by two.
        let new = old.replace("line 55\n", "new a\nnew b\nline 55\n");
        guard.remember_written(&rel, Some(&old), &new);
        assert!(guard.check_lines(&rel, new.as_bytes(), 50..=62).is_ok());
        assert!(guard.check_lines(&rel, new.as_bytes(), 63..=63).is_err());
        assert!(guard.check_whole(&rel, Some(new.as_bytes())).is_err());
        // A file read whole stays read whole.
        guard.remember(&rel, new.as_bytes());
        guard.remember_written(&rel, Some(&new), "short\n");
        assert!(guard.check_whole(&rel, Some(b"short\n")).is_ok());
    }
}
