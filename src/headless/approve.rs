//! How `exec` answers an approval: `--yes` approves, a terminal is asked
//! `[y/N]` on stderr, and without either the request is declined and
//! counted, so the run cannot end as a success (see `headless::run`).
//!
//! What must stay true: the prompt shows the action on one sanitized line;
//! a request no one could answer is always declined, never approved.

use super::ApprovalPolicy;
use super::printer::Printer;
use crate::agent::{ApprovalAction, ApprovalRequest, Decision};
use crate::present::one_line;
use std::io::{BufRead, Write};

/// Why `--yes` keeps no code a test run wrote.
const NOT_BY_YES: &str =
    "code a test run wrote is never kept by --yes (only a person's explicit choice keeps it)";

/// The reason sent to the model when no one could approve.
const UNATTENDED: &str =
    "no one could approve (stdin is not a terminal); rerun with --yes to approve";

impl Printer {
    pub(super) async fn approve(&mut self, request: ApprovalRequest) {
        // Multi-file actions show their diffs here (an edit's was shown with its step).
        if !self.json {
            match &request.action {
                ApprovalAction::Patch { files }
                | ApprovalAction::Undo { files }
                | ApprovalAction::KeepRunOutput { files, .. }
                | ApprovalAction::ApplyStage { files, .. } => {
                    for diff in files {
                        self.print_diff(diff);
                    }
                }
                ApprovalAction::Delete { diff, .. } => self.print_diff(diff),
                ApprovalAction::McpCall { arguments, .. } => {
                    for line in arguments.lines() {
                        let line = format!("  {}", crate::present::content_line(line));
                        self.line(&self.paint(super::style::DIM, &line));
                    }
                }
                ApprovalAction::Edit { .. } | ApprovalAction::RunTests { .. } => {}
            }
        }
        if let ApprovalAction::ApplyStage { patch, .. } = &request.action
            && let Some(decision) = self.staged_decision(patch)
        {
            let _ = request.reply.send(decision);
            return;
        }
        let decision = match self.policy {
            // Code a test run wrote is kept only by a person's choice.
            ApprovalPolicy::ApproveAll if request.action.needs_a_person() => Decision::Decline {
                reason: Some(NOT_BY_YES.into()),
            },
            ApprovalPolicy::ApproveAll => Decision::Approve,
            ApprovalPolicy::DeclineAll => {
                self.declined_unattended += 1;
                Decision::Decline {
                    reason: Some(UNATTENDED.into()),
                }
            }
            ApprovalPolicy::AskOnTerminal => {
                let prompt = format!("{}? [y/N] ", one_line(&request.action.prompt()));
                self.end_text();
                {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "{prompt}");
                    let _ = err.flush();
                }
                let mut reply = request.reply;
                let read = tokio::task::spawn_blocking(|| {
                    let mut line = String::new();
                    std::io::stdin().lock().read_line(&mut line).map(|_| line)
                });
                let decision = tokio::select! {
                    line = read => match line {
                        Ok(Ok(l)) if matches!(l.trim(), "y" | "Y" | "yes") => Decision::Approve,
                        _ => Decision::Decline { reason: None },
                    },
                    // The task was interrupted while waiting.
                    _ = reply.closed() => return,
                };
                let _ = reply.send(decision);
                return;
            }
        };
        let _ = request.reply.send(decision);
    }
}

impl Printer {
    /// A staged changeset: written to `--patch-out`; applied by `--apply`
    /// when the answer's tests passed; else kept in the stage, unless a
    /// person at the terminal is asked (`None`).
    fn staged_decision(&mut self, patch: &str) -> Option<Decision> {
        if let Some(file) = self.staged.patch_out.clone() {
            match std::fs::write(&file, patch) {
                Ok(()) => {
                    let line = format!(
                        "The staged changeset is in {} (git apply applies it).",
                        file.display()
                    );
                    self.note(&line);
                }
                Err(e) => {
                    let line = format!("cannot write the patch to {}: {e}", file.display());
                    self.note(&line);
                }
            }
        }
        if self.staged.apply && self.tests_passed {
            return Some(Decision::Approve);
        }
        if self.staged.apply {
            return Some(Decision::Decline {
                reason: Some(NOT_APPLIED_UNTESTED.into()),
            });
        }
        match self.policy {
            ApprovalPolicy::AskOnTerminal => None,
            _ => Some(Decision::Decline {
                reason: Some(KEPT_IN_STAGE.into()),
            }),
        }
    }

    /// A line on stderr in human mode (stdout stays the event stream in JSON mode).
    fn note(&mut self, line: &str) {
        self.end_text();
        let line = crate::present::one_line(line);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    }
}

/// Why `--apply` did not write a changeset.
const NOT_APPLIED_UNTESTED: &str =
    "--apply writes a staged changeset only when its tests passed; it stays in the stage";

/// Why `exec --stage` without `--apply` writes nothing.
const KEPT_IN_STAGE: &str = "kept in the stage (exec writes a changeset only with --apply)";
