//! Keeping only the hunks of a prepared patch the user accepted, file by
//! file: a file with no accepted hunk leaves the patch (untouched on disk),
//! a new or deleted file is one hunk, and a partly accepted file gets the
//! content its accepted hunks give (checked again like any patched file).
//!
//! What must stay true: the result never holds a change the user rejected,
//! and a selection that cannot be built exactly is refused, never
//! approximated (a file mixing CRLF and LF is approved or rejected whole).

use crate::diff::{self, FileDiff};
use crate::tools::edits::edit::{is_crlf, to_lf};
use crate::tools::edits::patch_apply::{PreparedPatch, prepare_edit};
use crate::tools::workspace::PathError;
use serde_json::{Value, json};

/// The accepted part of a patch, and what was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Selected {
    pub patch: PreparedPatch,
    /// Each rejected hunk: `{"path", "hunk", "lines"}` (the lines quoted).
    pub rejected: Vec<Value>,
    /// Files left untouched: every hunk of them was rejected.
    pub untouched: Vec<String>,
}

/// Keep the hunks `accepted(path)` names (indices into that file's diff
/// hunks) of every file. A file with no hunks at all (an empty file made or
/// deleted) follows the rest: it is kept when some hunk was accepted, or
/// when the patch has no hunk at all. `Ok(None)` when nothing at all is left
/// to write.
pub fn select_hunks(
    patch: &PreparedPatch,
    accepted: impl Fn(&str) -> Vec<usize>,
) -> Result<Option<Selected>, PathError> {
    let mut out = Selected {
        patch: PreparedPatch {
            edits: Vec::new(),
            deletes: Vec::new(),
            warnings: patch.warnings.clone(),
        },
        rejected: Vec::new(),
        untouched: Vec::new(),
    };
    for edit in &patch.edits {
        let mask = mask(&edit.diff, &accepted(&edit.diff.path));
        out.rejected.extend(rejected(&edit.diff, &mask));
        if mask.iter().all(|&a| a) {
            out.patch.edits.push(edit.clone());
            continue;
        }
        if !mask.iter().any(|&a| a) {
            out.untouched.push(edit.diff.path.clone());
            continue;
        }
        let old = edit.old.as_deref().unwrap_or("");
        if old.contains("\r\n") && !is_crlf(old) {
            return Err(PathError(format!(
                "{} mixes CRLF and LF line endings: its hunks can be approved only all together",
                edit.diff.path
            )));
        }
        let mut partial = diff::apply_hunks(&to_lf(old), &to_lf(&edit.new), &mask);
        if is_crlf(old) {
            partial = partial.replace('\n', "\r\n");
        }
        let revised = prepare_edit(edit.path.clone(), edit.old.clone(), partial)?;
        out.patch.edits.push(revised);
    }
    for delete in &patch.deletes {
        let mask = mask(&delete.diff, &accepted(&delete.diff.path));
        out.rejected.extend(rejected(&delete.diff, &mask));
        if mask.iter().all(|&a| a) {
            out.patch.deletes.push(delete.clone());
        } else {
            out.untouched.push(delete.diff.path.clone());
        }
    }
    let hunks = |d: &FileDiff| !d.hunks.is_empty();
    let any_hunk =
        patch.edits.iter().any(|e| hunks(&e.diff)) || patch.deletes.iter().any(|d| hunks(&d.diff));
    let accepted_hunk = out.patch.edits.iter().any(|e| hunks(&e.diff))
        || out.patch.deletes.iter().any(|d| hunks(&d.diff));
    if any_hunk && !accepted_hunk {
        // Every hunk rejected: the empty files do not go in on their own.
        return Ok(None);
    }
    let nothing = out.patch.edits.is_empty() && out.patch.deletes.is_empty();
    Ok((!nothing).then_some(out))
}

/// Which hunks of `diff` are accepted.
fn mask(diff: &FileDiff, accepted: &[usize]) -> Vec<bool> {
    (0..diff.hunks.len())
        .map(|i| accepted.contains(&i))
        .collect()
}

/// The rejected hunks of `diff`, quoted for the model.
fn rejected(diff: &FileDiff, mask: &[bool]) -> Vec<Value> {
    diff.hunks
        .iter()
        .zip(mask)
        .filter(|(_, accepted)| !**accepted)
        .map(|(hunk, _)| {
            let lines: Vec<String> = hunk.lines.iter().map(|l| l.unified()).collect();
            json!({"path": diff.path, "hunk": hunk.header(), "lines": lines.join("\n")})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::edits::edit::PreparedEdit;
    use crate::tools::edits::patch_apply::PreparedDelete;
    use crate::tools::workspace::Workspace;

    fn forty() -> String {
        (1..=40).map(|i| format!("l{i}\n")).collect()
    }

    fn edit(path: &str, old: &str, new: &str) -> PreparedEdit {
        let rel = Workspace::check(path).unwrap();
        prepare_edit(rel, Some(old.to_string()), new.to_string()).unwrap()
    }

    fn two_files() -> PreparedPatch {
        let a_new = forty().replace("l2\n", "L2\n").replace("l30\n", "L30\n");
        let b_old = forty().replace('\n', "\r\n");
        let b_new = b_old
            .replace("l5\r\n", "L5\r\n")
            .replace("l35\r\n", "L35\r\n");
        let gone = "bye\n".to_string();
        PreparedPatch {
            edits: vec![
                edit("a.txt", &forty(), &a_new),
                edit("b.txt", &b_old, &b_new),
            ],
            deletes: vec![PreparedDelete {
                path: Workspace::check("c.txt").unwrap(),
                diff: FileDiff::compute("c.txt", Some(&gone), ""),
                old: gone,
            }],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn an_empty_new_file_is_not_written_when_every_hunk_was_rejected() {
        let mut patch = two_files();
        patch.edits.push(edit_new("empty.txt"));
        assert_eq!(select_hunks(&patch, |_| vec![]).unwrap(), None);
        let some = select_hunks(&patch, |p| if p == "a.txt" { vec![0] } else { vec![] })
            .unwrap()
            .unwrap();
        assert!(some.patch.edits.iter().any(|e| e.diff.path == "empty.txt"));
        // A patch of nothing but an empty file goes in as approved.
        let only = PreparedPatch {
            edits: vec![edit_new("empty.txt")],
            deletes: Vec::new(),
            warnings: Vec::new(),
        };
        assert!(select_hunks(&only, |_| vec![]).unwrap().is_some());
    }

    fn edit_new(path: &str) -> PreparedEdit {
        let rel = Workspace::check(path).unwrap();
        prepare_edit(rel, None, String::new()).unwrap()
    }

    #[test]
    fn keeps_exactly_the_accepted_hunks_of_each_file() {
        let patch = two_files();
        let got = select_hunks(&patch, |p| match p {
            "a.txt" => vec![1],
            "b.txt" => vec![0],
            _ => vec![],
        })
        .unwrap()
        .unwrap();
        assert_eq!(got.patch.edits.len(), 2);
        assert_eq!(got.patch.edits[0].new, forty().replace("l30\n", "L30\n"));
        let b = forty().replace('\n', "\r\n").replace("l5\r\n", "L5\r\n");
        assert_eq!(got.patch.edits[1].new, b, "CRLF kept");
        assert!(got.patch.deletes.is_empty());
        assert_eq!(got.untouched, ["c.txt"]);
        let paths: Vec<&str> = got
            .rejected
            .iter()
            .map(|r| r["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, ["a.txt", "b.txt", "c.txt"]);
        assert!(got.rejected[0]["lines"].as_str().unwrap().contains("+L2"));
    }

    #[test]
    fn a_file_with_no_accepted_hunk_is_left_out_and_nothing_left_is_none() {
        let patch = two_files();
        let got = select_hunks(&patch, |p| if p == "c.txt" { vec![0] } else { vec![] })
            .unwrap()
            .unwrap();
        assert!(got.patch.edits.is_empty());
        assert_eq!(got.patch.deletes.len(), 1);
        assert_eq!(got.untouched, ["a.txt", "b.txt"]);
        assert_eq!(select_hunks(&patch, |_| vec![]).unwrap(), None);
    }

    #[test]
    fn a_mixed_line_ending_file_is_refused_in_part_but_not_whole() {
        let old = "l1\r\nl2\n".repeat(20);
        let new = old
            .replacen("l1\r\n", "X\r\n", 1)
            .replace("l2\nl1\r\nl2\n$", "");
        let new = format!("{new}tail\n");
        let patch = PreparedPatch {
            edits: vec![edit("m.txt", &old, &new)],
            deletes: Vec::new(),
            warnings: Vec::new(),
        };
        assert_eq!(patch.edits[0].diff.hunks.len(), 2);
        let err = select_hunks(&patch, |_| vec![0]).unwrap_err();
        assert!(err.0.contains("mixes CRLF"), "{}", err.0);
        let whole = select_hunks(&patch, |_| vec![0, 1]).unwrap().unwrap();
        assert_eq!(whole.patch, patch);
    }
}
