//! The approval round-trip: what the core asks the user (`ApprovalRequest`,
//! carrying a `oneshot` reply and a description of the action) and what the
//! front end answers (`Decision`). A dropped reply always counts as a decline.

use crate::diff::FileDiff;
use crate::tools::ToolId;
use serde::Serialize;
use tokio::sync::oneshot;

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Approve,
    /// Approve this call and every later call of the same tool in this task
    /// (a plain approval when the request does not allow it).
    ApproveToolForTask,
    /// Apply only these hunks of an edit (indices into its diff's hunks).
    ApproveHunks {
        accepted: Vec<usize>,
    },
    /// Write this content instead of the proposal: the user edited it. (The
    /// content is not logged; the written diff is in the tool result.)
    ApproveEdited {
        #[serde(skip)]
        content: String,
    },
    Decline {
        reason: Option<String>,
    },
    /// Apply only these hunks of each file of a patch (indices into each
    /// file's diff hunks). A file not listed, or listed with no hunk, is
    /// left untouched; a new or deleted file is one hunk.
    ApprovePatchHunks {
        files: Vec<FileHunks>,
    },
}

/// The hunks of one file of a patch the user accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileHunks {
    /// The file's path as the patch's diff names it.
    pub path: String,
    /// Indices into that file's diff hunks.
    pub accepted: Vec<usize>,
}

/// What would happen if approved: the approval's shape. Front ends draw
/// shapes and never look at a tool's name: file changes (`Edit`, `Patch`,
/// `Delete`, `Undo`), a command (`RunTests`) or an external call (`McpCall`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalAction {
    /// Write a file; the diff is exactly what would change.
    Edit {
        path: String,
        diff: FileDiff,
        /// The complete proposed content (for editing before accepting).
        #[serde(skip)]
        proposed: String,
        /// The file's current content (`None`: it would be created), to diff
        /// a version the user edited against.
        #[serde(skip)]
        original: Option<String>,
    },
    /// Apply a patch: one multi-file diff (deletions are asked again one by one).
    Patch { files: Vec<FileDiff> },
    /// Delete a file (part of a patch); always asked explicitly.
    Delete { path: String, diff: FileDiff },
    /// Revert stepwise's own changes (`/undo`): each file goes back to these diffs.
    Undo { files: Vec<FileDiff> },
    /// Keep in the workspace what a test run wrote into its layer: these
    /// files, created, changed or deleted (hunk choices cut it like a
    /// patch). `code`: the files change what runs (source, configuration,
    /// scripts): only a person's explicit choice keeps them, never an
    /// automatic approval ([`needs_a_person`](Self::needs_a_person)).
    KeepRunOutput { files: Vec<FileDiff>, code: bool },
    /// Write a staged task's changeset into the workspace, once its tests
    /// passed in the stage (hunk choices cut it like a patch). `conflicts`:
    /// files changed in the workspace since the stage took them, never
    /// written, whatever is chosen. Only a person applies it (`--apply` is
    /// that choice in `exec`). `patch`: the whole changeset as a patch file
    /// that `git apply` takes.
    ApplyStage {
        stage: String,
        files: Vec<FileDiff>,
        conflicts: Vec<String>,
        #[serde(skip)]
        patch: String,
    },
    /// Run a test command (program and arguments, no shell).
    RunTests {
        command: Vec<String>,
        /// The sandbox state the run would get, e.g. `sandboxed`.
        sandbox: String,
    },
    /// Call a tool of an MCP server with these arguments.
    McpCall {
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The arguments as formatted JSON (shown sanitized by the front end).
        arguments: String,
    },
}

impl ApprovalAction {
    /// One line for a prompt, e.g. `Write calculator.py (+4 −0)` or `Run python3 -m pytest -q`.
    pub fn prompt(&self) -> String {
        match self {
            ApprovalAction::Edit { path, diff, .. } => {
                let verb = if diff.new_file { "Create" } else { "Write" };
                format!("{verb} {path} ({})", diff.stat())
            }
            ApprovalAction::RunTests { command, sandbox } if sandbox.is_empty() => {
                format!("Run {}", command.join(" "))
            }
            ApprovalAction::RunTests { command, sandbox } => {
                format!("Run {} ({sandbox})", command.join(" "))
            }
            ApprovalAction::Patch { files } => {
                let names: Vec<String> = files
                    .iter()
                    .map(|d| format!("{} ({})", d.path, d.stat()))
                    .collect();
                format!("Apply patch to {}", names.join(", "))
            }
            ApprovalAction::Delete { path, diff } => {
                format!("DELETE {path} (\u{2212}{} lines)", diff.removed)
            }
            ApprovalAction::Undo { files } => {
                let names: Vec<String> = files
                    .iter()
                    .map(|d| {
                        if d.added == 0 && d.removed > 0 && d.hunks.iter().all(|h| h.new_len == 0) {
                            format!("delete {}", d.path)
                        } else {
                            format!("restore {} ({})", d.path, d.stat())
                        }
                    })
                    .collect();
                format!("Undo: {}", names.join(", "))
            }
            ApprovalAction::McpCall { server, tool, .. } => {
                format!("Call {tool} of MCP server {server}")
            }
            ApprovalAction::KeepRunOutput { files, code } => {
                let names: Vec<String> = files
                    .iter()
                    .map(
                        |d| match d.hunks.iter().all(|h| h.new_len == 0) && d.removed > 0 {
                            true => format!("delete {}", d.path),
                            false => format!("{} ({})", d.path, d.stat()),
                        },
                    )
                    .collect();
                let what = match code {
                    true => "code the test run wrote",
                    false => "what the test run wrote",
                };
                format!("Keep {what}: {}", names.join(", "))
            }
            ApprovalAction::ApplyStage {
                files, conflicts, ..
            } => {
                let names: Vec<String> = files
                    .iter()
                    .map(|d| format!("{} ({})", d.path, d.stat()))
                    .collect();
                // Conflicts first: a long list of files must not hide them.
                match conflicts.len() {
                    0 => format!("Apply the staged changeset: {}", names.join(", ")),
                    _ => format!(
                        "Apply the staged changeset (not its conflicts, changed in the workspace meanwhile: {}): {}",
                        conflicts.join(", "),
                        names.join(", ")
                    ),
                }
            }
        }
    }

    /// The files of a multi-file change whose hunks can be chosen one by
    /// one (a patch, what a test run wrote); `None` for anything else.
    pub fn hunk_files(&self) -> Option<&[FileDiff]> {
        match self {
            ApprovalAction::Patch { files }
            | ApprovalAction::KeepRunOutput { files, .. }
            | ApprovalAction::ApplyStage { files, .. } => Some(files),
            _ => None,
        }
    }

    /// Whether only a person may approve this (never `--yes` or another
    /// automatic approval): code a test run wrote, a staged changeset.
    pub fn needs_a_person(&self) -> bool {
        matches!(
            self,
            ApprovalAction::KeepRunOutput { code: true, .. } | ApprovalAction::ApplyStage { .. }
        )
    }
}

/// A pending approval. Dropping `reply` counts as a decline.
#[derive(Debug, Serialize)]
pub struct ApprovalRequest {
    pub step: u32,
    pub call_id: String,
    /// The tool asking (for `/undo`, `write_file`).
    pub tool: ToolId,
    pub action: ApprovalAction,
    /// Whether "approve this tool for the rest of the task" may be offered;
    /// configuration can forbid it for some tools and paths.
    pub allow_for_task: bool,
    #[serde(skip)]
    pub reply: oneshot::Sender<Decision>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_run_prompt_names_the_sandbox_state() {
        let command = vec!["python3".to_string(), "-m".into(), "pytest".into()];
        let asked = ApprovalAction::RunTests {
            command: command.clone(),
            sandbox: "sandbox: no network isolation".into(),
        };
        assert_eq!(
            asked.prompt(),
            "Run python3 -m pytest (sandbox: no network isolation)"
        );
        let unknown = ApprovalAction::RunTests {
            command,
            sandbox: String::new(),
        };
        assert_eq!(unknown.prompt(), "Run python3 -m pytest");
    }
}
