//! How the core's events read in English, once for every front end: the
//! receipt, retry, compaction, repair, rules and finish lines, a failed
//! call's line and the end of its output, the token line and elapsed times. Pure functions returning plain text (and, for the
//! receipt, whether a line reports a problem); the headless printer prints
//! them as they are, the TUI styles them. This module must stay free of any
//! terminal or UI crate: it depends on the contract only.
//!
//! It hands on the one sanitizer (`sanitize`, owned by `crate::text`):
//! every string that came from the model, a file, a test run or a server
//! goes through it before any front end shows it.

pub mod mcp;
mod restored;
mod stage;

pub use crate::text::numbers::{self, thousands};
pub use crate::text::sanitize::{
    content_line, json_safe, one_line, sanitize, screen_line, visible,
};
pub use crate::text::tail::{FAILURE_TAIL_LINES, output_tail};
pub use restored::{cut_off_line, restored_entry_text, restored_line, restored_tool_line};
pub use stage::stage_reviewed_line;

use crate::agent::{FinishReason, Receipt};
use crate::llm::TokenUsage;
use std::time::Duration;

/// The line a failed or refused call leaves, in both front ends: what was
/// called and why it failed. A test run says its summary (its output follows,
/// see [`output_tail`]); any other call says its error whole.
pub fn failure_line(tool: &str, target: &str, summary: &str, result: &serde_json::Value) -> String {
    let call = match target.is_empty() {
        true => tool.to_string(),
        false => format!("{tool} {target}"),
    };
    let error = result.get("error").and_then(|e| e.as_str());
    let why = match (result.get("output"), error) {
        (None, Some(error)) if !error.is_empty() => error,
        _ => summary,
    };
    format!("{call} failed: {why}")
}

/// The heading of a receipt: it says who computed it.
pub const RECEIPT_HEADING: &str = "Receipt — computed by stepwise, not the model";

/// What one receipt line is, for styling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Heading,
    Normal,
    /// The tests did not pass.
    Problem,
}

/// One line of a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptLine {
    pub tone: Tone,
    pub text: String,
}

impl ReceiptLine {
    fn new(tone: Tone, text: impl Into<String>) -> Self {
        ReceiptLine {
            tone,
            text: text.into(),
        }
    }
}

/// The receipt's line for an answer given without any tool call.
pub const NO_TOOL_USED: &str = "note   no tool was used: nothing was read, changed or tested";

/// The receipt's line for changes accepted where no test command exists.
pub const NO_TEST_COMMAND: &str =
    "tests  unverified: no test command (this workspace has none; the change was not tested)";

/// The receipt of an accepted answer: heading, tests, files, diff hash (and
/// a note when no tool was used at all).
pub fn receipt_lines(receipt: &Receipt) -> Vec<ReceiptLine> {
    let mut out = vec![ReceiptLine::new(Tone::Heading, RECEIPT_HEADING)];
    match &receipt.tests {
        Some(t) => {
            let code = t
                .exit_code
                .map_or("no exit code".to_string(), |c| format!("exit {c}"));
            let summary = if t.summary.is_empty() {
                String::new()
            } else {
                format!(" · {}", t.summary)
            };
            let tone = if t.passed {
                Tone::Normal
            } else {
                Tone::Problem
            };
            let text = format!("tests  {} → {code}{summary}", t.command);
            out.push(ReceiptLine::new(tone, text));
            if !t.sandbox.is_empty() {
                let tone = if t.sandbox == "sandboxed" {
                    Tone::Normal
                } else {
                    Tone::Problem
                };
                out.push(ReceiptLine::new(tone, format!("run    {}", t.sandbox)));
            }
        }
        None if receipt.no_test_command => {
            out.push(ReceiptLine::new(Tone::Problem, NO_TEST_COMMAND));
        }
        None => out.push(ReceiptLine::new(
            Tone::Normal,
            "tests  not run in this task",
        )),
    }
    let files = if receipt.files.is_empty() {
        "no file changed in this task".to_string()
    } else {
        receipt
            .files
            .iter()
            .map(|f| {
                let new = if f.created { " (new)" } else { "" };
                let by =
                    f.by.as_ref()
                        .map(|b| format!(" (via {b})"))
                        .unwrap_or_default();
                format!("{} +{} \u{2212}{}{new}{by}", f.path, f.added, f.removed)
            })
            .collect::<Vec<_>>()
            .join(" · ")
    };
    out.push(ReceiptLine::new(Tone::Normal, format!("files  {files}")));
    if !receipt.changed_by_tests.is_empty() {
        let what = crate::tools::reading::snapshot::describe(&receipt.changed_by_tests);
        let text = format!("runs   the test runs themselves {what}");
        out.push(ReceiptLine::new(Tone::Problem, text));
    }
    if !receipt.kept_out.is_empty() {
        let text = format!(
            "runs   kept out of the workspace: {}",
            receipt.kept_out.join(" · ")
        );
        out.push(ReceiptLine::new(Tone::Problem, text));
    }
    if !receipt.tests_changed.is_empty() {
        let what: Vec<String> = receipt
            .tests_changed
            .iter()
            .map(|c| format!("{} ({})", c.path, c.what))
            .collect();
        let text = format!("tests  changed: {}", what.join(" · "));
        out.push(ReceiptLine::new(Tone::Problem, text));
    }
    if !receipt.rewritten_by_every_run.is_empty() {
        let text = format!(
            "runs   rewritten by every test run: {}",
            receipt.rewritten_by_every_run.join(", ")
        );
        out.push(ReceiptLine::new(Tone::Problem, text));
    }
    // A hash of no change says nothing.
    if !receipt.files.is_empty() {
        let diff = format!("diff   #{}", receipt.diff_hash);
        out.push(ReceiptLine::new(Tone::Normal, diff));
    }
    if receipt.no_tool_used {
        out.push(ReceiptLine::new(Tone::Problem, NO_TOOL_USED));
    }
    out
}

/// A request failed and will be sent again.
pub fn retry_line(retry: u32, max_retries: u32, delay_ms: u64, error: &str) -> String {
    let secs = delay_ms as f64 / 1000.0;
    format!("{error} — retrying ({retry}/{max_retries}) in {secs:.1}s")
}

/// Old tool results were shortened (and turns maybe summarized).
pub fn compaction_line(before: u64, after: u64, elided: usize, summarized: usize) -> String {
    format!(
        "Context compacted to fit the model: {before} → {after} tokens ({elided} old tool results shortened, {summarized} turns summarized)"
    )
}

/// The model's reply broke the protocol, or was cut at the output token
/// limit, and a repair was requested.
pub fn repair_line(attempt: u32, error: &str, cut_at_limit: bool) -> String {
    if cut_at_limit {
        format!(
            "The model's reply was cut at the output token limit, so nothing in it was carried out; it is asked to go on in shorter steps (repair request {attempt})"
        )
    } else {
        format!("The model's reply was not understood (repair request {attempt}): {error}")
    }
}

/// The project rules a task follows, if any.
pub fn rules_line(rules: &[String]) -> Option<String> {
    (!rules.is_empty()).then(|| format!("Following the project rules in {}", rules.join(", ")))
}

/// How a task ended, e.g. `Done in 3 steps · 0:12`.
pub fn finish_line(reason: &FinishReason, steps: u32, elapsed: Duration) -> String {
    let plural = if steps == 1 { "" } else { "s" };
    let secs = elapsed_text(elapsed);
    match reason {
        FinishReason::Answered => format!("Done in {steps} step{plural} · {secs}"),
        FinishReason::BudgetExhausted => {
            format!("Stopped: the step budget ran out after {steps} step{plural} · {secs}")
        }
        FinishReason::CostLimit => format!(
            "Stopped: the cost limit (--max-cost) was reached after {steps} step{plural} · {secs}"
        ),
        FinishReason::Cancelled => {
            format!("Interrupted after {steps} step{plural} · {secs}. The conversation is kept.")
        }
        FinishReason::Error(_) => {
            format!("Stopped by an error after {steps} step{plural} · {secs}")
        }
        FinishReason::Refused(_) => {
            format!("Stopped: the model refused the task after {steps} step{plural} · {secs}")
        }
    }
}

/// `m:ss`, or `h:mm:ss` from an hour on.
pub fn elapsed_text(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// `Tokens: 1234 in (200 cached, 16%) / 56 out · est. $0.0012`; tokens
/// written to a cache (Anthropic) are named after the cached ones.
pub fn usage_line(usage: &TokenUsage, cost_usd: Option<f64>) -> String {
    if *usage == TokenUsage::default() && cost_usd.is_none() {
        return "Tokens: none reported".into();
    }
    let mut line = format!("Tokens: {} in", usage.prompt_tokens);
    if let Some(percent) = usage.cached_percent() {
        line.push_str(&format!(" ({} cached, {percent}%)", usage.cached_tokens));
    }
    if usage.cache_write_tokens > 0 {
        line.push_str(&format!(
            " ({} written to the cache)",
            usage.cache_write_tokens
        ));
    }
    line.push_str(&format!(" / {} out", usage.completion_tokens));
    match cost_usd {
        Some(cost) => line.push_str(&format!(" · est. ${cost:.4}")),
        None => line.push_str(" · cost unknown for this model"),
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{FileStat, TestReceipt};

    #[test]
    fn a_cut_reply_is_not_called_misunderstood() {
        let cut = repair_line(1, "your last reply was cut off", true);
        assert!(cut.contains("output token limit"), "{cut}");
        assert!(!cut.contains("not understood"), "{cut}");
        let bad = repair_line(2, "no JSON object", false);
        assert!(bad.contains("not understood") && bad.contains("no JSON object"));
    }

    fn receipt(exit_code: Option<i32>) -> Receipt {
        Receipt {
            tests: Some(TestReceipt {
                command: "python3 -m pytest -q".into(),
                exit_code,
                summary: "5 passed".into(),
                sandbox: String::new(),
                passed: exit_code == Some(0),
                verified: crate::tools::testing::test_run::Verified::ExitCodeAndSummary,
            }),
            files: vec![FileStat {
                by: None,
                path: "calculator.py".into(),
                added: 4,
                removed: 1,
                created: true,
            }],
            diff_hash: "abc123".into(),
            no_tool_used: false,
            no_test_command: false,
            changed_by_tests: Vec::new(),
            kept_out: Vec::new(),
            rewritten_by_every_run: Vec::new(),
            tests_changed: Vec::new(),
        }
    }

    #[test]
    fn the_receipt_reads_the_same_everywhere() {
        let lines = receipt_lines(&receipt(Some(0)));
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                RECEIPT_HEADING,
                "tests  python3 -m pytest -q → exit 0 · 5 passed",
                "files  calculator.py +4 \u{2212}1 (new)",
                "diff   #abc123",
            ]
        );
        assert_eq!(lines[0].tone, Tone::Heading);
        let mut by_server = receipt(Some(0));
        by_server.files[0].by = Some("mcp filesystem".into());
        let files = &receipt_lines(&by_server)[2].text;
        assert_eq!(
            files,
            "files  calculator.py +4 \u{2212}1 (new) (via mcp filesystem)"
        );
        let mut unconfined = receipt(Some(0));
        if let Some(t) = unconfined.tests.as_mut() {
            t.sandbox = "not sandboxed".into();
        }
        let lines = receipt_lines(&unconfined);
        assert_eq!(lines[2].text, "run    not sandboxed");
        assert_eq!(lines[2].tone, Tone::Problem);
        assert_eq!(lines[1].tone, Tone::Normal);
        let bad = receipt_lines(&receipt(None));
        assert_eq!(bad[1].tone, Tone::Problem);
        assert!(bad[1].text.ends_with("→ no exit code · 5 passed"));
        let none = Receipt {
            tests: None,
            files: vec![],
            diff_hash: "0".into(),
            no_tool_used: true,
            no_test_command: false,
            changed_by_tests: Vec::new(),
            kept_out: Vec::new(),
            rewritten_by_every_run: Vec::new(),
            tests_changed: Vec::new(),
        };
        let texts: Vec<String> = receipt_lines(&none).into_iter().map(|l| l.text).collect();
        assert_eq!(texts[1], "tests  not run in this task");
        assert_eq!(texts[2], "files  no file changed in this task");
        assert!(
            !texts.iter().any(|t| t.starts_with("diff")),
            "no diff hash without changes: {texts:?}"
        );
        assert_eq!(texts.last().map(String::as_str), Some(NO_TOOL_USED));
        let untested = Receipt {
            no_test_command: true,
            changed_by_tests: Vec::new(),
            kept_out: Vec::new(),
            rewritten_by_every_run: Vec::new(),
            tests_changed: Vec::new(),
            no_tool_used: false,
            ..none
        };
        let touched = Receipt {
            changed_by_tests: vec![crate::tools::reading::snapshot::RunChange {
                path: "calculator.py".into(),
                change: crate::tools::reading::snapshot::Touch::Changed,
                before: None,
                after: None,
                contents_known: false,
            }],
            ..untested.clone()
        };
        let texts: Vec<String> = receipt_lines(&touched)
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert!(
            texts.contains(&"runs   the test runs themselves changed calculator.py".to_string()),
            "{texts:?}"
        );
        let lines = receipt_lines(&untested);
        assert_eq!(lines[1].text, NO_TEST_COMMAND);
        assert!(lines[1].text.contains("unverified: no test command"));
        assert_eq!(lines[1].tone, Tone::Problem);
    }

    #[test]
    fn event_lines_keep_their_wording() {
        assert_eq!(
            retry_line(1, 3, 1500, "HTTP 500"),
            "HTTP 500 — retrying (1/3) in 1.5s"
        );
        assert_eq!(
            retry_line(2, 3, 500, "HTTP 500"),
            "HTTP 500 — retrying (2/3) in 0.5s"
        );
        assert_eq!(
            compaction_line(9000, 3000, 4, 2),
            "Context compacted to fit the model: 9000 → 3000 tokens (4 old tool results shortened, 2 turns summarized)"
        );
        assert_eq!(rules_line(&[]), None);
        assert_eq!(
            rules_line(&["AGENTS.md".into()]).as_deref(),
            Some("Following the project rules in AGENTS.md")
        );
        let minute = Duration::from_secs(75);
        assert_eq!(
            finish_line(&FinishReason::Answered, 1, minute),
            "Done in 1 step · 1:15"
        );
        assert_eq!(
            finish_line(&FinishReason::Cancelled, 3, minute),
            "Interrupted after 3 steps · 1:15. The conversation is kept."
        );
        assert_eq!(
            finish_line(&FinishReason::Refused("no".into()), 0, minute),
            "Stopped: the model refused the task after 0 steps · 1:15"
        );
        assert_eq!(elapsed_text(Duration::from_secs(3725)), "1:02:05");
    }

    #[test]
    fn the_usage_line_says_what_is_known() {
        assert_eq!(
            usage_line(&TokenUsage::default(), None),
            "Tokens: none reported"
        );
        let usage = TokenUsage {
            prompt_tokens: 1234,
            completion_tokens: 56,
            cached_tokens: 200,
            cache_write_tokens: 0,
        };
        assert_eq!(
            usage_line(&usage, Some(0.0012)),
            "Tokens: 1234 in (200 cached, 16%) / 56 out · est. $0.0012"
        );
        assert!(usage_line(&usage, None).ends_with("cost unknown for this model"));
    }
}
