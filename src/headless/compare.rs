//! `exec --models a,b,c` (and `--attempts N`): the same task tried by
//! several models side by side. Each attempt is a session of its own, with
//! its own model, its own stage (so every attempt starts from the same
//! workspace and none writes it), its own sandboxed test runs and its own
//! receipt; attempts run in parallel up to `--parallel`. At the end a table
//! compares them (text, or one JSON line with `--json`): the gate, the
//! tests, steps, tokens, cost, wall time, files changed and the size of the
//! diff. The user opens an attempt's changeset with `stepwise stage show`
//! and applies exactly one with `stepwise stage apply` (the others of the
//! comparison are discarded then).
//!
//! What must stay true: no attempt writes the workspace; an attempt's
//! figures are its own session's; a model named `provider:model` is asked
//! at that provider's address with that provider's own key variable.

use super::{EXIT_ANSWERED, EXIT_NOT_ANSWERED, EXIT_USAGE, fail, out};
use crate::agent::{AgentEvent, ApprovalAction, Decision, FinishReason, LoopSettings, Session};
use crate::config::Config;
use crate::config::flags::ExecArgs;
use crate::config::providers::Provider;
use crate::present::one_line;
use crate::tools::Workspace;
use crate::tools::stage::Store;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// One attempt's figures.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Row {
    pub attempt: usize,
    pub model: String,
    pub stage: Option<String>,
    pub gate_passed: bool,
    pub tests: Option<String>,
    pub steps: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tokens_cached: u64,
    pub cost_usd: Option<f64>,
    pub wall_secs: f64,
    pub files_changed: usize,
    pub diff_lines: usize,
    pub finish: String,
}

/// The configuration an attempt with `name` runs on: `provider:model`
/// switches to that provider's address and key variable.
fn attempt_config(config: &Config, name: &str) -> Result<Config, String> {
    let mut c = config.clone();
    match name.split_once(':') {
        Some((provider, model)) if !provider.contains('/') => {
            let provider = <Provider as clap::ValueEnum>::from_str(provider, true)
                .map_err(|_| format!("--models: {provider:?} is not a provider"))?;
            let preset = provider.preset();
            c.provider = provider;
            c.base_url = preset.base_url.to_string();
            c.api_key = preset.key_var.and_then(crate::config::ApiKey::from_env_var);
            c.model = model.to_string();
        }
        _ => c.model = name.to_string(),
    }
    Ok(c)
}

/// Run the comparison; returns the exit code (0 when an attempt met the
/// gate with its tests passing).
pub async fn run(config: Config, args: ExecArgs, task: String) -> i32 {
    let mut names: Vec<String> = match args.models.is_empty() {
        true => vec![config.model.clone()],
        false => args.models.clone(),
    };
    names.retain(|n| !n.trim().is_empty());
    let attempts: Vec<String> = names
        .iter()
        .flat_map(|n| std::iter::repeat_n(n.clone(), args.attempts.max(1) as usize))
        .collect();
    let store = match Store::user() {
        Ok(store) => store,
        Err(e) => {
            fail(&format!("cannot keep stages: {e}"));
            return EXIT_USAGE;
        }
    };
    let group = format!("compare-{}-{}", std::process::id(), now_secs());
    let mut sessions = Vec::new();
    for (i, name) in attempts.iter().enumerate() {
        match attempt_session(&config, name, &store, &task, &group) {
            Ok(session) => sessions.push((i + 1, name.clone(), session)),
            Err(e) => {
                fail(&format!("attempt {} ({name}): {e}", i + 1));
                return EXIT_USAGE;
            }
        }
    }
    if !args.json {
        out(&format!(
            "Comparing {} attempts on one task, {} at a time, each in a stage of its own:",
            sessions.len(),
            args.parallel.max(1)
        ));
    }
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let gate = Arc::new(Semaphore::new(args.parallel.max(1) as usize));
    let mut running = Vec::new();
    for (attempt, model, session) in sessions {
        let (gate, task, cancel) = (gate.clone(), task.clone(), cancel.clone());
        running.push(tokio::spawn(async move {
            let _slot = gate.acquire_owned().await;
            one_attempt(attempt, model, session, &task, cancel).await
        }));
    }
    let mut rows = Vec::new();
    for handle in running {
        match handle.await {
            Ok(row) => {
                if !args.json {
                    out(&format!(
                        "  attempt {} ({}) finished: {}",
                        row.attempt,
                        one_line(&row.model),
                        row.finish
                    ));
                }
                rows.push(row);
            }
            Err(e) => fail(&format!("an attempt stopped: {e}")),
        }
    }
    if args.json {
        out(&json!({"v": 1, "event": "comparison", "attempts": rows}).to_string());
    } else {
        for line in table(&rows) {
            out(&line);
        }
        out(
            "`stepwise stage show STAGE` prints an attempt's changeset; `stepwise stage apply STAGE` writes exactly that one and discards the others.",
        );
    }
    match rows.iter().any(|r| r.gate_passed) {
        true => EXIT_ANSWERED,
        false => EXIT_NOT_ANSWERED,
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn attempt_session(
    config: &Config,
    name: &str,
    store: &Store,
    task: &str,
    group: &str,
) -> Result<Session, String> {
    let c = attempt_config(config, name)?;
    let model = crate::setup::http_model(&c)?;
    let workspace = Workspace::open(&c.workspace)
        .map_err(|e| format!("cannot open workspace {}: {e}", c.workspace.display()))?
        .with_deny_paths(&c.deny_paths)?;
    let mut session = Session::new(LoopSettings::from(&c), model, workspace);
    session.enter_attempt_stage(store.clone(), task, group)?;
    Ok(session)
}

/// Run one attempt to its end, answering its one review by keeping the
/// changeset in its stage; returns its row.
async fn one_attempt(
    attempt: usize,
    model: String,
    mut session: Session,
    task: &str,
    cancel: CancellationToken,
) -> Row {
    let started = Instant::now();
    let mut row = Row {
        attempt,
        model,
        stage: session.stage_name(),
        ..Row::default()
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let collector = tokio::spawn(async move {
        let mut seen = Row::default();
        while let Some(event) = rx.recv().await {
            match event {
                AgentEvent::ApprovalRequested(request) => {
                    if let ApprovalAction::ApplyStage { files, .. } = &request.action {
                        seen.files_changed = files.len();
                        seen.diff_lines = files.iter().map(|d| d.added + d.removed).sum();
                    }
                    let _ = request.reply.send(Decision::Decline {
                        reason: Some("kept in the stage for the comparison".into()),
                    });
                }
                AgentEvent::FinalAnswer { receipt, .. } => {
                    seen.gate_passed = receipt.tests.as_ref().is_some_and(|t| t.passed);
                    seen.tests = receipt.tests.as_ref().map(|t| t.summary.clone());
                }
                AgentEvent::TaskFinished {
                    steps,
                    usage,
                    cost_usd,
                    ..
                } => {
                    seen.steps = steps;
                    seen.tokens_in = usage.prompt_tokens;
                    seen.tokens_out = usage.completion_tokens;
                    seen.tokens_cached = usage.cached_tokens;
                    seen.cost_usd = cost_usd;
                }
                _ => {}
            }
        }
        seen
    });
    let reason = session.run_task(task, &tx, cancel).await;
    drop(tx);
    if let Ok(seen) = collector.await {
        row = Row {
            attempt: row.attempt,
            model: row.model,
            stage: row.stage,
            ..seen
        };
    }
    row.gate_passed &= reason == FinishReason::Answered;
    row.finish = match &reason {
        FinishReason::Answered if row.gate_passed => "answered, tests passed".into(),
        FinishReason::Answered => "answered without a passing test run".into(),
        FinishReason::BudgetExhausted => "step budget ran out".into(),
        FinishReason::CostLimit => "cost limit reached".into(),
        FinishReason::Cancelled => "interrupted".into(),
        FinishReason::Error(e) | FinishReason::Refused(e) => format!("stopped: {}", one_line(e)),
    };
    row.wall_secs = started.elapsed().as_secs_f64();
    row
}

/// The comparison as a text table.
pub fn table(rows: &[Row]) -> Vec<String> {
    let header = [
        "#", "model", "gate", "tests", "steps", "in", "out", "cached", "cost", "time", "files",
        "diff", "stage",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.attempt.to_string(),
                one_line(&r.model).into_owned(),
                if r.gate_passed { "passed" } else { "not met" }.to_string(),
                r.tests.clone().unwrap_or_else(|| "-".into()),
                r.steps.to_string(),
                r.tokens_in.to_string(),
                r.tokens_out.to_string(),
                r.tokens_cached.to_string(),
                r.cost_usd.map_or("-".into(), |c| format!("${c:.4}")),
                format!("{:.1}s", r.wall_secs),
                r.files_changed.to_string(),
                format!("{} lines", r.diff_lines),
                r.stage.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |row: Vec<String>| -> String {
        row.iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    std::iter::once(line(header.iter().map(|h| h.to_string()).collect()))
        .chain(cells.into_iter().map(line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lines_up_each_attempts_figures() {
        let rows = [
            Row {
                attempt: 1,
                model: "model-a".into(),
                gate_passed: true,
                tests: Some("2 passed".into()),
                steps: 4,
                tokens_in: 1200,
                tokens_out: 80,
                cost_usd: Some(0.0123),
                files_changed: 1,
                diff_lines: 2,
                stage: Some("1-2-0".into()),
                ..Row::default()
            },
            Row {
                attempt: 2,
                model: "model-b".into(),
                ..Row::default()
            },
        ];
        let t = table(&rows);
        assert_eq!(t.len(), 3);
        assert!(t[0].starts_with("#  model    gate"), "{}", t[0]);
        assert!(t[1].contains("model-a  passed   2 passed"), "{}", t[1]);
        assert!(t[1].contains("$0.0123"), "{}", t[1]);
        assert!(t[2].contains("model-b  not met  -"), "{}", t[2]);
        assert_eq!(serde_json::to_value(&rows[0]).unwrap()["diff_lines"], 2);
    }

    #[test]
    fn a_provider_prefix_switches_address_and_key_variable() {
        let config = crate::config::validate::tests::config("http://127.0.0.1:9/v1", None);
        let c = attempt_config(&config, "anthropic:claude-x").unwrap();
        assert_eq!(c.model, "claude-x");
        assert_eq!(c.provider, Provider::Anthropic);
        assert!(c.base_url.contains("anthropic"), "{}", c.base_url);
        // An OpenRouter-style name with a slash is one model name.
        let c = attempt_config(&config, "meta/llama:free").unwrap();
        assert_eq!(c.model, "meta/llama:free");
        assert!(attempt_config(&config, "nosuch:m").is_err());
    }
}
