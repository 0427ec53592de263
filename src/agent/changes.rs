//! What stepwise changed in this session: every applied edit with the file's
//! content before and after, the cumulative diff since the session started,
//! and undo (last change or all), which refuses to clobber a file someone else
//! changed since stepwise wrote it.

use crate::diff::FileDiff;
use crate::tools::files::MAX_FILE_BYTES;
use crate::tools::{RelPath, Workspace};

/// One applied edit. Contents are exact (tools only edit UTF-8 text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub task: u32,
    pub path: String,
    /// `None`: the edit created the file.
    pub before: Option<String>,
    /// `None`: the change deleted the file.
    pub after: Option<String>,
}

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
type NetChange<'a> = (&'a str, Option<&'a str>, Option<&'a str>);

#[derive(Debug, Default)]
pub struct ChangeLog {
    applied: Vec<FileChange>,
}

impl ChangeLog {
    pub fn record(&mut self, task: u32, path: &str, before: Option<&str>, after: Option<&str>) {
        self.applied.push(FileChange {
            task,
            path: path.to_string(),
            before: before.map(str::to_string),
            after: after.map(str::to_string),
        });
    }

    /// Per changed path (in first-change order): the content before the first
    /// change among `changes` and after the last one.
    fn net<'a>(changes: impl Iterator<Item = &'a FileChange>) -> Vec<NetChange<'a>> {
        let mut out: Vec<NetChange<'a>> = Vec::new();
        for c in changes {
            match out.iter_mut().find(|(p, _, _)| *p == c.path) {
                Some(entry) => entry.2 = c.after.as_deref(),
                None => out.push((&c.path, c.before.as_deref(), c.after.as_deref())),
            }
        }
        out
    }

    /// What a task changed, as diffs from before its first edit to after its last.
    pub fn task_diffs(&self, task: u32) -> Vec<FileDiff> {
        Self::net(self.applied.iter().filter(|c| c.task == task))
            .into_iter()
            .map(|(path, before, after)| FileDiff::compute(path, before, after.unwrap_or("")))
            .filter(|d| !d.is_empty())
            .collect()
    }

    /// The cumulative diff since the session started: each changed file's
    /// original content against what is on disk now.
    pub fn session_diffs(&self, ws: &Workspace) -> Vec<FileDiff> {
        Self::net(self.applied.iter())
            .into_iter()
            .map(|(path, before, _)| {
                let now = read_now(ws, path);
                let mut diff = FileDiff::compute(path, before, now.as_deref().unwrap_or(""));
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
            (Self::net(self.applied.iter()), self.applied.len())
        } else {
            let last = self.applied.last().ok_or_else(|| {
                "nothing to undo: stepwise has not changed any file in this session".to_string()
            })?;
            (
                vec![(
                    last.path.as_str(),
                    last.before.as_deref(),
                    last.after.as_deref(),
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
            if now.as_deref() != written {
                return Err(format!(
                    "undo refused: {path} was changed on disk since stepwise wrote it; that change is kept (nothing was reverted)"
                ));
            }
            steps.push(UndoStep {
                path: path.to_string(),
                restore: restore.map(str::to_string),
                diff: FileDiff::compute(path, written, restore.unwrap_or("")),
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

    /// Every recorded change, in order (for the transcript; see `changes_store`).
    pub fn entries(&self) -> Vec<FileChange> {
        self.applied.clone()
    }
}

fn read_now(ws: &Workspace, path: &str) -> Option<String> {
    let rel: RelPath = Workspace::check(path).ok()?;
    let bytes = ws.read_bytes(&rel, MAX_FILE_BYTES * 10).ok()??;
    String::from_utf8(bytes).ok()
}
