//! `stepwise exec`: one task in plain terminal output (or JSON lines), with
//! approvals answered by `--yes`, a `[y/N]` prompt on a terminal, or declined
//! when no one can answer. The wording of event lines comes from `present`
//! (shared with the TUI); this module only adds marks and colors.

use crate::agent::{
    AgentEvent, ApprovalAction, ApprovalRequest, CallStatus, Decision, EventReceiver, FinishReason,
    Receipt,
};
use crate::config::Config;
use crate::config::flags::ExecArgs;
use crate::diff::{FileDiff, LineKind};
use crate::present::{self, Tone};
use crate::setup;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Print a line to stdout; a closed pipe (`exec ... | head`) is not worth a panic.
fn out(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", crate::tools::scrub::text(line));
    let _ = stdout.flush();
}

/// Exit codes of `exec`.
pub const EXIT_ANSWERED: i32 = 0;
pub const EXIT_NOT_ANSWERED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

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
        eprintln!("stepwise: {e}");
        return EXIT_USAGE;
    }
    let prepared = match setup::prepare(&config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("stepwise: {e}");
            return EXIT_USAGE;
        }
    };
    let Some(task) = args.task_text().or(prepared.task.clone()) else {
        eprintln!("stepwise: exec needs a TASK (or --demo / --script with a task)");
        return EXIT_USAGE;
    };
    let mut prepared = prepared;
    if let Some(notice) = &prepared.notice {
        if args.json {
            out(&serde_json::json!({"event": "notice", "text": notice, "workspace": prepared.workspace})
                .to_string());
        } else {
            out(notice);
        }
    }
    let policy = if args.yes {
        ApprovalPolicy::ApproveAll
    } else if std::io::stdin().is_terminal() {
        ApprovalPolicy::AskOnTerminal
    } else {
        ApprovalPolicy::DeclineAll
    };
    let printer = Printer {
        json: args.json,
        color: !args.json && std::io::stdout().is_terminal(),
        policy,
        in_text: false,
        max_steps: config.max_steps,
        last_message: String::new(),
        started: Instant::now(),
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
    let reason = prepared.session.run_task(&task, &events, cancel).await;
    drop(events);
    let _ = printing.await;
    print_changed_files(&prepared.session.session_diffs(), args.json);
    exit_code(&reason)
}

/// The summary of what the session changed, printed at the end of `exec`.
fn print_changed_files(diffs: &[FileDiff], json: bool) {
    if json {
        let files: Vec<_> = diffs
            .iter()
            .map(|d| serde_json::json!({"path": d.path, "added": d.added, "removed": d.removed, "created": d.new_file}))
            .collect();
        out(&serde_json::json!({"event": "changed_files", "files": files}).to_string());
        return;
    }
    if diffs.is_empty() {
        out("No files changed.");
        return;
    }
    out("Changed files:");
    for d in diffs {
        let created = if d.new_file { " (new)" } else { "" };
        out(&format!("  {}{created} {}", d.path, d.stat()));
    }
}

pub fn exit_code(reason: &FinishReason) -> i32 {
    match reason {
        FinishReason::Answered => EXIT_ANSWERED,
        _ => EXIT_NOT_ANSWERED,
    }
}

struct Printer {
    json: bool,
    color: bool,
    policy: ApprovalPolicy,
    /// Streamed assistant text is open on the current line.
    in_text: bool,
    max_steps: u32,
    /// The last complete assistant text, already shown as it streamed.
    last_message: String,
    /// When the task started (for the finish line).
    started: Instant,
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

impl Printer {
    async fn run(mut self, mut inbox: EventReceiver) {
        while let Some(event) = inbox.recv().await {
            if self.json {
                self.line(&json_line(&event));
            }
            match event {
                AgentEvent::ApprovalRequested(request) => self.approve(request).await,
                other if !self.json => self.human(other),
                _ => {}
            }
        }
        self.end_text();
    }

    fn paint(&self, color: &str, text: &str) -> String {
        if self.color {
            format!("{color}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    fn line(&mut self, text: &str) {
        self.end_text();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", crate::tools::scrub::text(text));
        let _ = out.flush();
    }

    fn end_text(&mut self) {
        if self.in_text {
            self.in_text = false;
            out("");
        }
    }

    fn human(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TaskStarted {
                task,
                max_steps,
                rules,
            } => self.task_started(&task, max_steps, &rules),
            AgentEvent::AssistantMessage { text } => self.last_message = text,
            AgentEvent::AssistantDelta { text } => {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{text}");
                let _ = out.flush();
                self.in_text = !text.ends_with('\n');
            }
            AgentEvent::ToolCallProposed {
                step,
                tool,
                target,
                diff,
                ..
            } => {
                let max = self.max_steps;
                self.line(&self.paint(BOLD, &format!("[Step {step}/{max}] {tool} {target}")));
                if let Some(diff) = diff {
                    self.print_diff(&diff);
                }
            }
            AgentEvent::StepStarted { .. }
            | AgentEvent::ModelRequest { .. }
            | AgentEvent::Usage(_)
            | AgentEvent::Cost { .. }
            | AgentEvent::ToolCallStreaming { .. }
            | AgentEvent::SessionDiff { .. }
            | AgentEvent::UndoFinished { .. }
            | AgentEvent::LiveEditBase { .. }
            | AgentEvent::ToolRunning { .. }
            | AgentEvent::SessionReady { .. }
            | AgentEvent::ScopesChanged { .. }
            | AgentEvent::ApprovalRequested(_) => {}
            AgentEvent::ToolFinished {
                status,
                summary,
                result,
                ..
            } => self.tool_finished(status, &summary, &result),
            AgentEvent::Retrying {
                retry,
                max_retries,
                delay_ms,
                error,
            } => {
                let text = present::retry_line(retry, max_retries, delay_ms, &error);
                self.line(&format!("  {} {text}", self.paint(RED, "!")))
            }
            AgentEvent::Compacted {
                before_tokens,
                after_tokens,
                elided,
                summarized,
            } => {
                let text =
                    present::compaction_line(before_tokens, after_tokens, elided, summarized);
                self.line(&self.paint(DIM, &format!("  {text}")));
            }
            AgentEvent::ProtocolRepair { attempt, error } => {
                let text = present::repair_line(attempt, &error);
                self.line(&format!("  {} {text}", self.paint(RED, "!")))
            }
            AgentEvent::GateRefused { reason, .. } => {
                self.line(&format!("  {} {reason}", self.paint(RED, "gate:")))
            }
            AgentEvent::FinalAnswer { text, receipt } => self.final_answer(&text, &receipt),
            AgentEvent::Error { message } | AgentEvent::ResumeRefused { message } => {
                self.line(&format!("{} {message}", self.paint(RED, "error:")))
            }
            AgentEvent::TaskFinished {
                reason,
                steps,
                usage,
                cost_usd,
            } => {
                let text = present::finish_line(&reason, steps, self.started.elapsed());
                self.line(&self.paint(DIM, &text));
                self.line(&self.paint(DIM, &present::usage_line(&usage, cost_usd)));
            }
        }
    }

    fn task_started(&mut self, task: &str, max_steps: u32, rules: &[String]) {
        self.max_steps = max_steps;
        self.started = Instant::now();
        self.line(&format!("{} {task}", self.paint(BOLD, "Task:")));
        if let Some(text) = present::rules_line(rules) {
            self.line(&self.paint(DIM, &text));
        }
    }

    fn final_answer(&mut self, text: &str, receipt: &Receipt) {
        // The answer usually streamed in already; don't print it twice.
        if text.trim() == self.last_message.trim() {
            self.line(&self.paint(GREEN, "✓ Final answer accepted."));
        } else {
            self.line(&self.paint(BOLD, "Final answer:"));
            self.line(text);
        }
        for line in present::receipt_lines(receipt) {
            let color = if line.tone == Tone::Problem { RED } else { DIM };
            self.line(&self.paint(color, &line.text));
        }
    }

    /// The result line of a call; a failure shows the end of its output or its error.
    fn tool_finished(&mut self, status: CallStatus, summary: &str, result: &serde_json::Value) {
        let (mark, color) = match status {
            CallStatus::Ok => ("✓", GREEN),
            CallStatus::Failed => ("✗", RED),
            CallStatus::Declined => ("⊘ declined:", RED),
        };
        self.line(&format!("  {} {summary}", self.paint(color, mark)));
        if status != CallStatus::Failed {
            return;
        }
        if let Some(output) = result.get("output").and_then(|o| o.as_str()) {
            let lines: Vec<&str> = output.lines().collect();
            let tail = &lines[lines.len().saturating_sub(15)..];
            for l in tail {
                self.line(&format!("    {}", self.paint(DIM, l)));
            }
        } else if let Some(error) = result.get("error").and_then(|e| e.as_str()) {
            self.line(&format!("    {}", self.paint(DIM, error)));
        }
    }

    fn print_diff(&mut self, diff: &FileDiff) {
        self.line(&self.paint(DIM, &format!("  {} {}", diff.path, diff.stat())));
        for hunk in &diff.hunks {
            self.line(&self.paint(CYAN, &format!("  {}", hunk.header())));
            for l in &hunk.lines {
                let (sign, color) = match l.kind {
                    LineKind::Context => (' ', DIM),
                    LineKind::Added => ('+', GREEN),
                    LineKind::Removed => ('-', RED),
                };
                self.line(&format!(
                    "  {}",
                    self.paint(color, &format!("{sign}{}", l.text))
                ));
            }
        }
    }

    async fn approve(&mut self, request: ApprovalRequest) {
        // Multi-file actions show their diffs here (an edit's was shown with its step).
        if !self.json {
            match &request.action {
                ApprovalAction::Patch { files } | ApprovalAction::Undo { files } => {
                    for diff in files {
                        self.print_diff(diff);
                    }
                }
                ApprovalAction::Delete { diff, .. } => self.print_diff(diff),
                ApprovalAction::Edit { .. } | ApprovalAction::RunTests { .. } => {}
            }
        }
        let decision = match self.policy {
            ApprovalPolicy::ApproveAll => Decision::Approve,
            ApprovalPolicy::DeclineAll => Decision::Decline {
                reason: Some(
                    "no one could approve (stdin is not a terminal); rerun with --yes to approve"
                        .into(),
                ),
            },
            ApprovalPolicy::AskOnTerminal => {
                let prompt = format!("{}? [y/N] ", request.action.prompt());
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

fn json_line(event: &AgentEvent) -> String {
    serde_json::to_string(event).unwrap_or_else(|e| {
        format!("{{\"event\":\"error\",\"message\":\"unserializable event: {e}\"}}")
    })
}
