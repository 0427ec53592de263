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
                | ApprovalAction::KeepRunOutput { files, .. } => {
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
