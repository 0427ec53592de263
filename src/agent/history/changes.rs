//! What stepwise changed in this session: every applied edit with the file's
//! content before and after, the cumulative diff since the session started,
//! and undo (last change or all), which refuses to clobber a file someone else
//! changed since stepwise wrote it.
//!
//! Memory grows with what changed, not with file size × edits: contents are
//! kept by `versions` (the newest of each file in full, older ones as
//! splices). Must stay true: every content read back is byte-exact.

use crate::agent::history::versions::Versions;
use crate::diff::FileDiff;
use crate::tools::reading::files::MAX_FILE_BYTES;
use crate::tools::{RelPath, Workspace};

/// One file of an undo: what it is now and what it goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoStep {
    pub path: String,
    /// Content to restore; `None` deletes the file (the session created it).
    pub restore: Option<String>,
    /// From the current content to the restored one.
    pub diff: FileDiff,
}

/// A checked undo, ready to ask for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPlan {
    pub steps: Vec<UndoStep>,
    /// How many recorded changes the undo reverts.
    pub changes: usize,
}

/// A path with its content before the first and after the last change (`None`: absent).
type NetChange<'a> = (&'a str, Option<String>, Option<String>);

#[derive(Debug, Default)]
pub struct ChangeLog {
    applied: Versions,
}

impl ChangeLog {
    pub fn record(&mut self, task: u32, path: &str, before: Option<&str>, after: Option<&str>) {
        self.applied.push(task, path, before, after);
    }

    /// Per changed path (in first-change order): the content before the first
    /// change among the changes `keep` selects and after the last one.
    fn net(&self, keep: impl Fn(u32) -> bool) -> Vec<NetChange<'_>> {
        let mut out: Vec<(&str, usize, usize)> = Vec::new();
        for (i, (task, path)) in self.applied.iter().enumerate() {
            if !keep(task) {
                continue;
            }
            match out.iter_mut().find(|(p, _, _)| *p == path) {
                Some(entry) => entry.2 = i,
                None => out.push((path, i, i)),
            }
        }
        out.into_iter()
            .map(|(path, first, last)| (path, self.applied.before(first), self.applied.after(last)))
            .collect()
    }

    /// Every recorded change in order: its path, the content before and
    /// after it (`None`: absent).
    pub fn each(&self) -> Vec<(String, Option<String>, Option<String>)> {
        (0..self.applied.len())
            .map(|i| {
                let path = self.applied.path(i).to_string();
                (path, self.applied.before(i), self.applied.after(i))
            })
            .collect()
    }

    /// What a task changed: each path with its content before the task's
    /// first change and after its last (`None`: absent).
    pub fn task_contents(&self, task: u32) -> Vec<(String, Option<String>, Option<String>)> {
        self.net(|t| t == task)
            .into_iter()
            .map(|(path, before, after)| (path.to_string(), before, after))
            .collect()
    }

    /// What a task changed, as diffs from before its first edit to after its last.
    pub fn task_diffs(&self, task: u32) -> Vec<FileDiff> {
        self.net(|t| t == task)
            .into_iter()
            .map(|(path, before, after)| {
                FileDiff::compute(path, before.as_deref(), after.as_deref().unwrap_or(""))
            })
            .filter(|d| !d.is_empty())
            .collect()
    }

    /// Each file the session's changes leave different from before its
    /// first one, in first-change order (an undone change is gone from the
    /// log, and a file changed back to what it was is not changed).
    pub fn changed_paths(&self) -> Vec<String> {
        self.net(|_| true)
            .into_iter()
            .filter(|(_, before, after)| before != after)
            .map(|(path, _, _)| path.to_string())
            .collect()
    }

    /// The cumulative diff since the session started: each changed file's
    /// original content against what is on disk now.
    pub fn session_diffs(&self, ws: &Workspace) -> Vec<FileDiff> {
        self.net(|_| true)
            .into_iter()
            .map(|(path, before, _)| {
                let now = read_now(ws, path);
                let mut diff =
                    FileDiff::compute(path, before.as_deref(), now.as_deref().unwrap_or(""));
                if now.is_none() {
                    diff.path = format!("{path} (deleted)");
                }
                diff
            })
            .filter(|d| !d.is_empty())
            .collect()
    }

    /// Plan reverting the last change, or every change of the session.
    pub fn plan_undo(&self, ws: &Workspace, all: bool) -> Result<UndoPlan, String> {
        let (targets, changes) = if all {
            (self.net(|_| true), self.applied.len())
        } else {
            let last = self.applied.len().checked_sub(1).ok_or_else(|| {
                "nothing to undo: stepwise has not changed any file in this session".to_string()
            })?;
            (
                vec![(
                    self.applied.path(last),
                    self.applied.before(last),
                    self.applied.after(last),
                )],
                1,
            )
        };
        if targets.is_empty() {
            return Err(
                "nothing to undo: stepwise has not changed any file in this session".into(),
            );
        }
        let mut steps = Vec::new();
        for (path, restore, written) in targets {
            let now = read_now(ws, path);
            if now != written {
                return Err(format!(
                    "undo refused: {path} was changed on disk since stepwise wrote it; that change is kept (nothing was reverted)"
                ));
            }
            steps.push(UndoStep {
                path: path.to_string(),
                diff: FileDiff::compute(path, written.as_deref(), restore.as_deref().unwrap_or("")),
                restore,
            });
        }
        Ok(UndoPlan { steps, changes })
    }

    /// Carry out an approved plan. Files are restored one by one; on a failure
    /// the files already restored stay restored and the error says which failed.
    pub fn apply_undo(&mut self, ws: &Workspace, plan: &UndoPlan) -> Result<Vec<String>, String> {
        let mut done = Vec::new();
        for step in &plan.steps {
            let rel = Workspace::check(&step.path).map_err(|e| e.0)?;
            let result = match &step.restore {
                Some(content) => ws.write_atomic(&rel, content.as_bytes()),
                None => ws.remove_file(&rel),
            };
            result.map_err(|e| {
                format!(
                    "undo of {} failed: {} (reverted so far: {})",
                    step.path,
                    e.0,
                    done.join(", ")
                )
            })?;
            if let Some(content) = &step.restore {
                ws.guard().remember(&rel, content.as_bytes());
            } else {
                ws.guard().forget(&rel);
            }
            done.push(step.path.clone());
        }
        let keep = self.applied.len().saturating_sub(plan.changes);
        self.applied.truncate(keep);
        Ok(done)
    }

    /// How many changes are recorded.
    pub fn len(&self) -> usize {
        self.applied.len()
    }

    /// Every change newest first with its texts (for the transcript; see
    /// `changes_store` and `Versions::walk_back`).
    pub fn walk_back(&self, f: impl FnMut(usize, u32, &str, Option<&str>, Option<&str>, bool)) {
        self.applied.walk_back(f);
    }
}

fn read_now(ws: &Workspace, path: &str) -> Option<String> {
    let rel: RelPath = Workspace::check(path).ok()?;
    let bytes = ws.read_bytes(&rel, MAX_FILE_BYTES * 10).ok()??;
    String::from_utf8(bytes).ok()
}
