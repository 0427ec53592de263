//! The contents behind the session's change log, stored so memory grows with
//! what changed, not with file size × edits: the newest version of each file
//! is kept in full; an older version is the `before` of the next change to
//! the same file (when they are equal, as they are unless something else
//! wrote the file in between), and every `before` is a splice of its own
//! change's `after` (the bytes in the middle that differ).
//!
//! Must stay true: `before(i)` and `after(i)` return exactly the texts
//! recorded, whatever was truncated since; reading a version walks forward to
//! the newest version of its file (fine for `/diff` and `/undo`).

/// `to` rebuilt from `from`: keep `from[..prefix]` and the last `suffix`
/// bytes of `from`, with `middle` between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    pub prefix: usize,
    pub suffix: usize,
    pub middle: Box<str>,
}

impl Splice {
    pub fn between(from: &str, to: &str) -> Splice {
        let (a, b) = (from.as_bytes(), to.as_bytes());
        let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        while !(from.is_char_boundary(prefix) && to.is_char_boundary(prefix)) {
            prefix -= 1;
        }
        let room = a.len().min(b.len()) - prefix;
        let mut suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(room)
            .take_while(|(x, y)| x == y)
            .count();
        while !(from.is_char_boundary(a.len() - suffix) && to.is_char_boundary(b.len() - suffix)) {
            suffix -= 1;
        }
        Splice {
            prefix,
            suffix,
            middle: to[prefix..b.len() - suffix].into(),
        }
    }

    /// `apply`, for a splice that came from outside (a transcript): `None`
    /// when it does not fit `from` (out of range, or not on char boundaries).
    pub fn apply_checked(&self, from: &str) -> Option<String> {
        let end = from.len().checked_sub(self.suffix)?;
        (self.prefix <= end && from.is_char_boundary(self.prefix) && from.is_char_boundary(end))
            .then(|| self.apply(from))
    }

    fn apply(&self, from: &str) -> String {
        let end = from.len().saturating_sub(self.suffix).max(self.prefix);
        let mut out = String::with_capacity(self.prefix + self.middle.len() + self.suffix);
        out.push_str(from.get(..self.prefix).unwrap_or(from));
        out.push_str(&self.middle);
        out.push_str(from.get(end..).unwrap_or(""));
        out
    }
}

#[derive(Debug, Clone)]
enum Before {
    Absent,
    Full(Box<str>),
    /// A splice of this change's own `after`.
    FromAfter(Splice),
}

#[derive(Debug, Clone)]
enum After {
    Absent,
    Full(Box<str>),
    /// Equal to the `before` of the next change to the same path.
    NextBefore,
}

#[derive(Debug, Clone)]
struct Entry {
    task: u32,
    path: String,
    before: Before,
    after: After,
}

#[derive(Debug, Default)]
pub struct Versions {
    entries: Vec<Entry>,
}

impl Versions {
    pub fn push(&mut self, task: u32, path: &str, before: Option<&str>, after: Option<&str>) {
        let stored_before = match (before, after) {
            (None, _) => Before::Absent,
            (Some(b), Some(a)) => Before::FromAfter(Splice::between(a, b)),
            (Some(b), None) => Before::Full(b.into()),
        };
        if let Some(prev) = self.entries.iter_mut().rev().find(|e| e.path == path)
            && let After::Full(text) = &prev.after
            && Some(&**text) == before
        {
            prev.after = After::NextBefore;
        }
        self.entries.push(Entry {
            task,
            path: path.to_string(),
            before: stored_before,
            after: after.map_or(After::Absent, |a| After::Full(a.into())),
        });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// (task, path) of each change, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> {
        self.entries.iter().map(|e| (e.task, e.path.as_str()))
    }

    pub fn path(&self, i: usize) -> &str {
        &self.entries[i].path
    }

    /// The file's content before change `i` (`None`: it did not exist).
    pub fn before(&self, i: usize) -> Option<String> {
        match &self.entries[i].before {
            Before::Absent => None,
            Before::Full(text) => Some(text.to_string()),
            Before::FromAfter(splice) => self.after(i).map(|a| splice.apply(&a)),
        }
    }

    /// The file's content after change `i` (`None`: it deleted the file).
    pub fn after(&self, i: usize) -> Option<String> {
        let mut splices = Vec::new();
        let mut at = i;
        let base = loop {
            match &self.entries[at].after {
                After::Absent => break None,
                After::Full(text) => break Some(&**text),
                After::NextBefore => {
                    let path = &self.entries[at].path;
                    let next =
                        (at + 1..self.entries.len()).find(|&n| self.entries[n].path == *path);
                    let Some(next) = next else { break None };
                    match &self.entries[next].before {
                        Before::Absent => break None,
                        Before::Full(text) => break Some(&**text),
                        Before::FromAfter(splice) => {
                            splices.push(splice);
                            at = next;
                        }
                    }
                }
            }
        };
        let mut text = base?.to_string();
        for splice in splices.iter().rev() {
            text = splice.apply(&text);
        }
        Some(text)
    }

    /// Every change newest first, with its texts: `f(i, task, path, before,
    /// after, chained)`, where `chained` says `before` is the `after` of the
    /// previous change to the same path. One backward walk per file, so only
    /// a version or two of each file is in memory at a time (not one per edit).
    pub fn walk_back(&self, mut f: impl FnMut(usize, u32, &str, Option<&str>, Option<&str>, bool)) {
        let mut chained = vec![false; self.entries.len()];
        let mut last_shares: std::collections::HashMap<&str, bool> = Default::default();
        for (i, e) in self.entries.iter().enumerate() {
            chained[i] = last_shares.get(e.path.as_str()) == Some(&true);
            last_shares.insert(&e.path, matches!(e.after, After::NextBefore));
        }
        // The `before` of the newest change seen so far of each path.
        let mut next_before: std::collections::HashMap<&str, Option<String>> = Default::default();
        for (i, e) in self.entries.iter().enumerate().rev() {
            let after = match &e.after {
                After::Absent => None,
                After::Full(text) => Some(text.to_string()),
                After::NextBefore => next_before.remove(e.path.as_str()).flatten(),
            };
            let before = match &e.before {
                Before::Absent => None,
                Before::Full(text) => Some(text.to_string()),
                Before::FromAfter(splice) => after.as_deref().map(|a| splice.apply(a)),
            };
            f(
                i,
                e.task,
                &e.path,
                before.as_deref(),
                after.as_deref(),
                chained[i],
            );
            next_before.insert(&e.path, before);
        }
    }

    /// Keep the first `keep` changes; versions they share with dropped ones
    /// are kept in full first.
    pub fn truncate(&mut self, keep: usize) {
        for i in 0..keep.min(self.entries.len()) {
            if !matches!(self.entries[i].after, After::NextBefore) {
                continue;
            }
            let path = &self.entries[i].path;
            let dropped = !(i + 1..keep).any(|n| self.entries[n].path == *path);
            if dropped {
                self.entries[i].after = match self.after(i) {
                    Some(text) => After::Full(text.into()),
                    None => After::Absent,
                };
            }
        }
        self.entries.truncate(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splices_rebuild_exactly_including_multibyte_edges() {
        for (a, b) in [
            ("abc", "abXc"),
            ("héllo wörld", "héllo wörld!"),
            ("ééé", "éè é"),
            ("", "new"),
            ("old", ""),
            ("same", "same"),
            ("aaaa", "aa"),
            ("a€b", "a£b"),
        ] {
            assert_eq!(Splice::between(a, b).apply(a), b, "{a:?} -> {b:?}");
            assert_eq!(Splice::between(b, a).apply(b), a, "{b:?} -> {a:?}");
        }
    }

    #[test]
    fn the_backward_walk_gives_every_version_and_says_which_are_chained() {
        let mut v = Versions::default();
        v.push(1, "a", Some("v0"), Some("v1"));
        v.push(1, "b", None, Some("new"));
        v.push(2, "a", Some("v1"), Some("v2"));
        v.push(2, "a", Some("by hand"), Some("v3"));
        v.push(3, "b", Some("new"), None);
        let mut seen = Vec::new();
        v.walk_back(|i, task, path, before, after, chained| {
            assert_eq!(before.map(str::to_string), v.before(i));
            assert_eq!(after.map(str::to_string), v.after(i));
            seen.push((i, task, path.to_string(), chained));
        });
        let chained: Vec<bool> = seen.iter().rev().map(|s| s.3).collect();
        assert_eq!(chained, [false, false, true, false, true]);
        assert_eq!(
            seen.iter().map(|s| s.0).collect::<Vec<_>>(),
            [4, 3, 2, 1, 0]
        );
    }

    #[test]
    fn a_splice_from_outside_is_checked_before_it_is_applied() {
        let s = Splice::between("héllo", "hallo");
        assert_eq!(s.apply_checked("héllo").as_deref(), Some("hallo"));
        let bad = |prefix, suffix| Splice {
            prefix,
            suffix,
            middle: "x".into(),
        };
        assert_eq!(bad(2, 0).apply_checked("héllo"), None, "inside é");
        assert_eq!(bad(9, 0).apply_checked("héllo"), None);
        assert_eq!(bad(3, 4).apply_checked("héllo"), None, "overlapping");
    }

    #[test]
    fn every_version_reads_back_and_shared_ones_are_not_copied() {
        let mut v = Versions::default();
        let mut texts = vec![String::from("start\n")];
        for i in 0..50 {
            let next = format!("{}line {i}\n", texts[i]);
            v.push(1, "f.txt", Some(&texts[i]), Some(&next));
            texts.push(next);
        }
        // Something else wrote the file: that version is kept as it was.
        v.push(2, "f.txt", Some("outside\n"), None);
        v.push(2, "g.txt", None, Some("g\n"));
        for i in 0..50 {
            assert_eq!(v.before(i).as_deref(), Some(texts[i].as_str()));
            assert_eq!(v.after(i).as_deref(), Some(texts[i + 1].as_str()));
        }
        assert_eq!(v.before(50).as_deref(), Some("outside\n"));
        assert_eq!(v.after(50), None);
        let full = v
            .entries
            .iter()
            .filter(|e| matches!(e.after, After::Full(_)))
            .count();
        assert_eq!(
            full, 2,
            "only the last version before the outside write, and g.txt"
        );
        v.truncate(20);
        assert_eq!(v.after(19).as_deref(), Some(texts[20].as_str()));
        assert_eq!(v.before(0).as_deref(), Some("start\n"));
        v.push(3, "f.txt", Some(&texts[20]), Some("x"));
        assert_eq!(v.after(19).as_deref(), Some(texts[20].as_str()));
        assert_eq!(v.after(20).as_deref(), Some("x"));
    }
}
