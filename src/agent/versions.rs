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
#[derive(Debug, Clone)]
struct Splice {
    prefix: usize,
    suffix: usize,
    middle: Box<str>,
}

impl Splice {
    fn between(from: &str, to: &str) -> Splice {
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
