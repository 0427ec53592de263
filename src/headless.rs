//! `stepwise exec`: one task in plain terminal output (or JSON lines), with
//! approvals answered by `--yes`, a `[y/N]` prompt on a terminal, or declined
//! when no one can answer. The wording of event lines comes from `present`
//! (shared with the TUI); the printer (`headless/printer.rs`) adds marks and
//! colors (`headless/style.rs`), `headless/json.rs` owns the `--json` schema.
//!
//! What must stay true: every untrusted string is sanitized by `present`
//! before it is printed, on stdout and stderr; the exit code says what
//! happened (0 only for an accepted answer with nothing declined for want
//! of a terminal, 130 after Ctrl+C, 2 for usage errors).

mod approve;
pub mod compare;
pub mod json;
pub mod models;
mod printer;
pub mod stages;
pub mod style;

use crate::agent::FinishReason;
use crate::config::Config;
use crate::config::flags::ExecArgs;
use crate::diff::FileDiff;
use crate::present::{one_line, sanitize};
use crate::setup;
use printer::Printer;
use std::io::{IsTerminal, Write};
use style::Style;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Print a line to stdout, the key's value scrubbed; a closed pipe
/// (`exec ... | head`) is not worth a panic.
fn out(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", crate::tools::scrub::text(line));
    let _ = stdout.flush();
}

/// Print an error to stderr, sanitized (it may quote a file or a server).
fn fail(message: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "stepwise: {}",
        crate::tools::scrub::text(&sanitize(message))
    );
}

/// Exit codes of `exec`.
pub const EXIT_ANSWERED: i32 = 0;
pub const EXIT_NOT_ANSWERED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
/// Interrupted by Ctrl+C (SIGINT): 128 + 2, as shells expect.
pub const EXIT_INTERRUPTED: i32 = 130;

/// What `exec` says when approvals were declined for want of a terminal.
pub const UNATTENDED_HINT: &str = "declined because stdin is not a terminal; pass --yes to approve, or run on a terminal to be asked";

/// How approval requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    ApproveAll,
    AskOnTerminal,
    DeclineAll,
}

/// Run one task and return the process exit code.
pub async fn run(config: Config, args: ExecArgs) -> i32 {
    if let Err(e) = config.validate() {
        fail(&e.to_string());
        return EXIT_USAGE;
    }
    if !args.models.is_empty() || args.attempts > 1 {
        let Some(task) = args.task_text() else {
            fail("a comparison needs a TASK");
            return EXIT_USAGE;
        };
        // Each attempt makes its own session and stage; the workspace's
        // lock is held for all of them.
        let step_config = crate::config::Config {
            review: crate::config::Review::Step,
            ..config.clone()
        };
        let prepared = match setup::prepare(&step_config) {
            Ok(p) => p,
            Err(e) => {
                fail(&e);
                return EXIT_USAGE;
            }
        };
        let code = compare::run(config, args, task).await;
        drop(prepared);
        return code;
    }
    let staged = config.review == crate::config::Review::Staged;
    if (args.apply || args.patch_out.is_some()) && !staged {
        fail("--apply and --patch-out act on a staged changeset: add --stage");
        return EXIT_USAGE;
    }
    let mut prepared = match setup::prepare(&config) {
        Ok(p) => p,
        Err(e) => {
            fail(&e);
            return EXIT_USAGE;
        }
    };
    let Some(task) = args.task_text().or(prepared.task.clone()) else {
        fail("exec needs a TASK (or --demo / --script with a task)");
        return EXIT_USAGE;
    };
    if let Some(notice) = &prepared.notice {
        if args.json {
            out(&json::notice_line(notice, &prepared.workspace));
        } else {
            out(&sanitize(notice));
        }
    }
    let policy = if args.yes {
        ApprovalPolicy::ApproveAll
    } else if std::io::stdin().is_terminal() {
        ApprovalPolicy::AskOnTerminal
    } else {
        ApprovalPolicy::DeclineAll
    };
    let color = !args.json
        && style::use_color(
            config.color,
            std::io::stdout().is_terminal(),
            std::env::var("NO_COLOR").ok().as_deref(),
            std::env::var("TERM").ok().as_deref(),
        );
    let mut printer = Printer::new(args.json, Style { color }, policy, config.max_steps);
    printer.staged = printer::StagedOutput {
        apply: args.apply,
        patch_out: args.patch_out.clone(),
    };
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let (events, inbox) = mpsc::unbounded_channel();
    let decided_by = match policy {
        ApprovalPolicy::ApproveAll => "--yes",
        ApprovalPolicy::AskOnTerminal => "user",
        ApprovalPolicy::DeclineAll => "no terminal (declined)",
    };
    let inbox = prepared.events_for_front_end(inbox, decided_by);
    let printing = tokio::spawn(printer.run(inbox));
    if !args.json {
        // How test runs are confined, printed before any of them runs (the
        // JSON stream carries it on each run_tests approval instead).
        let _ = events.send(crate::agent::AgentEvent::SessionReady {
            rules: prepared.session.rule_files(),
            sandbox: prepared.session.sandbox_state(),
            limits: prepared.session.sandbox_limits(),
        });
    }
    for restored in prepared.session.restored_events() {
        let _ = events.send(restored);
    }
    let reason = prepared.session.run_task(&task, &events, cancel).await;
    prepared.session.checkpoint();
    drop(events);
    let declined = printing.await.unwrap_or(0);
    let session = prepared.resume_name.as_ref().and_then(|r| r.ready());
    print_changed_files(&prepared.session.session_diffs(), args.json, session);
    if let Some(name) = session {
        let (_, command) = setup::resume_commands(&config, name);
        fail(&format!("to continue this session: {command}"));
    }
    if declined > 0 {
        if args.json {
            out(&json::unattended_line(declined, UNATTENDED_HINT));
        }
        let what = if declined == 1 {
            "approval"
        } else {
            "approvals"
        };
        fail(&format!("{declined} {what} {UNATTENDED_HINT}"));
    }
    exit_code(&reason, declined)
}

/// The summary of what the session changed, printed at the end of `exec`.
fn print_changed_files(diffs: &[FileDiff], json: bool, session: Option<&str>) {
    if json {
        out(&json::changed_files_line(diffs, session));
        return;
    }
    if diffs.is_empty() {
        out("No files changed.");
        return;
    }
    out("Changed files:");
    for d in diffs {
        let created = if d.new_file { " (new)" } else { "" };
        out(&format!("  {}{created} {}", one_line(&d.path), d.stat()));
    }
}

/// The exit code of a task that ended for `reason` after `declined`
/// approvals no one could answer: a task that had to decline is never a
/// success, whatever the model answered afterwards.
pub fn exit_code(reason: &FinishReason, declined: u32) -> i32 {
    match reason {
        FinishReason::Cancelled => EXIT_INTERRUPTED,
        FinishReason::Answered if declined == 0 => EXIT_ANSWERED,
        _ => EXIT_NOT_ANSWERED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_say_what_happened() {
        assert_eq!(exit_code(&FinishReason::Answered, 0), 0);
        assert_eq!(
            exit_code(&FinishReason::Answered, 1),
            1,
            "declined is not success"
        );
        assert_eq!(exit_code(&FinishReason::Cancelled, 0), 130);
        assert_eq!(exit_code(&FinishReason::BudgetExhausted, 0), 1);
        assert_eq!(exit_code(&FinishReason::Error("x".into()), 2), 1);
    }
}
