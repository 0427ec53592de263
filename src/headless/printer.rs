//! The printer of `exec`: one line (or block) per event, in English from
//! `present`, with marks and colors. Every string that came from the model,
//! a file, a test run or a server goes through the sanitizer in `present`
//! first: names, paths, summaries and errors with `one_line` (so nothing
//! can start a line of its own), multi-line texts with `sanitize`, lines of
//! content with `content_line`.
//!
//! What must stay true: nothing untrusted is written without one of those
//! three; only `Style::paint` adds escape sequences.

use super::style::{BOLD, CYAN, DIM, GREEN, RED, Style};
use super::{ApprovalPolicy, json, out};
use crate::agent::{AgentEvent, CallStatus, EventReceiver, Receipt};
use crate::diff::{FileDiff, LineKind};
use crate::present::{self, Tone, content_line, one_line, sanitize};
use std::time::Instant;

pub(super) struct Printer {
    pub(super) json: bool,
    pub(super) style: Style,
    pub(super) policy: ApprovalPolicy,
    /// Streamed assistant text of the open line, not yet printed: a line is
    /// printed when it is complete, so a secret split across chunks is
    /// scrubbed whole.
    pending_text: String,
    pub(super) max_steps: u32,
    /// The last complete assistant text, already shown as it streamed.
    pub(super) last_message: String,
    /// When the task started (for the finish line).
    pub(super) started: Instant,
    /// Approvals declined because no one could answer them.
    pub(super) declined_unattended: u32,
    /// What to do with a staged changeset (`--apply`, `--patch-out`).
    pub(super) staged: StagedOutput,
    /// The last accepted answer's tests passed.
    pub(super) tests_passed: bool,
}

/// `exec`'s choices for a staged changeset.
#[derive(Debug, Clone, Default)]
pub(super) struct StagedOutput {
    pub(super) apply: bool,
    pub(super) patch_out: Option<std::path::PathBuf>,
}

impl Printer {
    pub(super) fn new(json: bool, style: Style, policy: ApprovalPolicy, max_steps: u32) -> Self {
        Printer {
            json,
            style,
            policy,
            pending_text: String::new(),
            max_steps,
            last_message: String::new(),
            started: Instant::now(),
            declined_unattended: 0,
            staged: StagedOutput::default(),
            tests_passed: false,
        }
    }

    /// Print every event until the core is done; returns how many approvals
    /// were declined for want of anyone to answer them.
    pub(super) async fn run(mut self, mut inbox: EventReceiver) -> u32 {
        while let Some(event) = inbox.recv().await {
            if self.json {
                self.line(&json::event_line(&event));
            }
            if let AgentEvent::FinalAnswer { receipt, .. } = &event {
                self.tests_passed = receipt.tests.as_ref().is_some_and(|t| t.passed);
            }
            match event {
                AgentEvent::ApprovalRequested(request) => self.approve(request).await,
                other if !self.json => self.human(other),
                _ => {}
            }
        }
        self.end_text();
        self.declined_unattended
    }

    pub(super) fn paint(&self, color: &str, text: &str) -> String {
        self.style.paint(color, text)
    }

    pub(super) fn line(&mut self, text: &str) {
        self.end_text();
        out(text);
    }

    pub(super) fn end_text(&mut self) {
        if !self.pending_text.is_empty() {
            let rest = std::mem::take(&mut self.pending_text);
            out(&sanitize(&rest));
        }
    }

    /// Streamed text: every line it completes is printed, scrubbed whole.
    fn stream_text(&mut self, text: &str) {
        self.pending_text.push_str(text);
        while let Some(end) = self.pending_text.find('\n') {
            let line: String = self.pending_text.drain(..=end).collect();
            out(&sanitize(line.trim_end_matches('\n')));
        }
    }

    /// A problem line: a red mark, then untrusted text on one line.
    fn problem(&mut self, indent: &str, mark: &str, text: &str) {
        let line = format!("{indent}{} {}", self.paint(RED, mark), one_line(text));
        self.line(&line);
    }

    // One arm per event kind, each a line or two: clearer in one place than split.
    fn human(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TaskStarted {
                task,
                max_steps,
                rules,
            } => self.task_started(&task, max_steps, &rules),
            // How test runs are confined, said before the first one runs
            // (not only in the receipt, after the tests have run).
            AgentEvent::SessionReady {
                sandbox, limits, ..
            } => {
                let line = format!("tests  {}", one_line(&sandbox));
                let color = if sandbox == "sandboxed" { DIM } else { RED };
                self.line(&self.paint(color, &line));
                let line = format!("limit  {}", one_line(&limits));
                self.line(&self.paint(DIM, &line));
            }
            AgentEvent::AssistantMessage { text } => self.last_message = text,
            AgentEvent::AssistantDelta { text } => self.stream_text(&text),
            AgentEvent::ToolCallProposed {
                step,
                tool,
                target,
                diff,
                ..
            } => {
                let max = self.max_steps;
                let head = format!(
                    "[Step {step}/{max}] {} {}",
                    one_line(&tool.to_string()),
                    one_line(&target)
                );
                self.line(&self.paint(BOLD, &head));
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
            | AgentEvent::SessionFiles { .. }
            | AgentEvent::ModelsListed { .. }
            | AgentEvent::LiveEditBase { .. }
            | AgentEvent::ToolRunning { .. }
            | AgentEvent::ScopesChanged { .. }
            | AgentEvent::ModelChanged { .. }
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
            } => self.problem(
                "  ",
                "!",
                &present::retry_line(retry, max_retries, delay_ms, &error),
            ),
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
            AgentEvent::ProtocolRepair {
                attempt,
                error,
                cut_at_limit,
            } => {
                let line = present::repair_line(attempt, &error, cut_at_limit);
                self.problem("  ", "!", &line)
            }
            AgentEvent::GateRefused { reason, .. } => self.problem("  ", "gate:", &reason),
            AgentEvent::FinalAnswer { text, receipt } => self.final_answer(&text, &receipt),
            AgentEvent::StageChanged { message, .. } => self.line(&message),
            AgentEvent::StageReviewed {
                stage,
                written,
                not_written,
                kept,
            } => {
                let line =
                    crate::present::stage_reviewed_line(&stage, &written, &not_written, kept);
                self.line(&line);
            }
            AgentEvent::Error { message } | AgentEvent::ResumeRefused { message } => {
                self.problem("", "error:", &message)
            }
            AgentEvent::SessionRestored {
                session,
                tasks,
                steps,
                ..
            } => {
                let text = present::restored_line(&session, tasks, steps);
                self.line(&self.paint(DIM, &text));
            }
            AgentEvent::TaskCutOff { files } => {
                self.problem("", "!", &present::cut_off_line(&files))
            }
            AgentEvent::McpServer(report) => self.mcp_server(&report),
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

    /// A server's change of state, on stderr: a diagnostic, not the task's output.
    fn mcp_server(&mut self, report: &crate::mcp::ServerReport) {
        use crate::mcp::ServerState;
        self.end_text();
        let line = present::mcp::server_line(report);
        let shown = match report.state {
            ServerState::Failed | ServerState::Stopped => {
                format!("{} {line}", self.paint(RED, "mcp:"))
            }
            ServerState::Starting | ServerState::Running => self.paint(DIM, &line),
        };
        eprintln!("{}", crate::tools::scrub::text(&shown));
    }

    fn task_started(&mut self, task: &str, max_steps: u32, rules: &[String]) {
        self.max_steps = max_steps;
        self.started = Instant::now();
        let line = format!("{} {}", self.paint(BOLD, "Task:"), one_line(task));
        self.line(&line);
        if let Some(text) = present::rules_line(rules) {
            self.line(&self.paint(DIM, &one_line(&text)));
        }
    }

    fn final_answer(&mut self, text: &str, receipt: &Receipt) {
        // The answer usually streamed in already; don't print it twice.
        if text.trim() == self.last_message.trim() {
            self.line(&self.paint(GREEN, "✓ Final answer accepted."));
        } else {
            self.line(&self.paint(BOLD, "Final answer:"));
            self.line(&sanitize(text));
        }
        for line in present::receipt_lines(receipt) {
            let color = if line.tone == Tone::Problem { RED } else { DIM };
            self.line(&self.paint(color, &one_line(&line.text)));
        }
    }

    /// The result line of a call; a failure shows the end of its output or its error.
    fn tool_finished(&mut self, status: CallStatus, summary: &str, result: &serde_json::Value) {
        let (mark, color) = match status {
            CallStatus::Ok => ("✓", GREEN),
            CallStatus::Failed => ("✗", RED),
            CallStatus::Declined => ("⊘ declined:", RED),
        };
        let line = format!("  {} {}", self.paint(color, mark), one_line(summary));
        self.line(&line);
        if status != CallStatus::Failed {
            return;
        }
        let text = result
            .get("output")
            .and_then(|o| o.as_str())
            .or_else(|| result.get("error").and_then(|e| e.as_str()))
            .unwrap_or_default();
        for l in present::output_tail(text, present::FAILURE_TAIL_LINES) {
            let l = self.paint(DIM, &content_line(l));
            self.line(&format!("    {l}"));
        }
    }

    pub(super) fn print_diff(&mut self, diff: &FileDiff) {
        let head = format!("  {} {}", one_line(&diff.path), diff.stat());
        self.line(&self.paint(DIM, &head));
        for hunk in &diff.hunks {
            self.line(&self.paint(CYAN, &format!("  {}", hunk.header())));
            for l in &hunk.lines {
                let (sign, color) = match l.kind {
                    LineKind::Context => (' ', DIM),
                    LineKind::Added => ('+', GREEN),
                    LineKind::Removed => ('-', RED),
                };
                let text = format!("{sign}{}", content_line(&l.text));
                self.line(&format!("  {}", self.paint(color, &text)));
            }
        }
    }
}
