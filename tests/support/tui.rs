//! Scenario builders for the TUI tests: the core's events of the calculator
//! task (list, read, three edits, a test run, the answer) fed to an `App`
//! without any terminal, and helpers to type keys and draw into a `TestBackend`.
#![allow(dead_code)]

mod drive;

use crossterm::event::KeyCode;
pub use drive::*;
use serde_json::json;
use stepwise::agent::{
    AgentCommand, AgentEvent, ApprovalAction, ApprovalRequest, CallKind, CallStatus, Decision,
    FinishReason,
};
use stepwise::diff::FileDiff;
use stepwise::llm::TokenUsage;
use stepwise::tools::{ToolId, ToolName};
pub use stepwise::tui::Msg;
use stepwise::tui::{App, Effect};
use tokio::sync::oneshot;

pub const TASK: &str = "Add a divide(a, b) function to calculator.py that raises ValueError on division by zero, with tests.";

pub const CALCULATOR: &str = "\"\"\"A tiny calculator: the sample project stepwise works on by default.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a + b\n\n\ndef subtract(a, b):\n    \"\"\"Return a minus b.\"\"\"\n    return a - b\n";

pub const DIVIDE: &str = "\n\ndef divide(a, b):\n    \"\"\"Return a divided by b; dividing by zero raises ValueError.\"\"\"\n    if b == 0:\n        raise ValueError(\"cannot divide by zero\")\n    return a / b\n";

pub fn app() -> App {
    App::new("gpt-4.1-mini", "~/projects/calculator")
}

/// Type a task and press Enter; returns the task the run loop was asked to start.
pub fn submit(app: &mut App, text: &str) -> Option<String> {
    type_text(app, text);
    press(app, KeyCode::Enter);
    app.take_effects().into_iter().find_map(|e| match e {
        Effect::Agent(AgentCommand::RunTask { task, .. }) => Some(task),
        _ => None,
    })
}

pub fn feed(app: &mut App, events: Vec<AgentEvent>) {
    for e in events {
        app.update(Msg::Agent(e));
    }
}

pub fn calculator_diff() -> FileDiff {
    let new = format!("{CALCULATOR}{DIVIDE}");
    FileDiff::compute("calculator.py", Some(CALCULATOR), &new)
}

/// Leave a request open for the rest of the test, as a core still waiting would.
pub fn keep_open(rx: oneshot::Receiver<Decision>) {
    std::mem::forget(rx);
}

/// The end of a task (fields the UI does not use are left empty).
pub fn task_finished(reason: FinishReason, steps: u32) -> AgentEvent {
    AgentEvent::TaskFinished {
        reason,
        steps,
        usage: TokenUsage::default(),
        cost_usd: None,
    }
}

fn usage() -> AgentEvent {
    AgentEvent::Usage(TokenUsage {
        prompt_tokens: 1200,
        completion_tokens: 80,
        cached_tokens: 0,
        cache_write_tokens: 0,
    })
}

/// A step calling a read-only tool that succeeds.
pub fn read_step(
    step: u32,
    tool: &str,
    target: &str,
    summary: &str,
    result: serde_json::Value,
) -> Vec<AgentEvent> {
    let id = format!("call_{step}");
    vec![
        AgentEvent::ModelRequest {
            steps_done: step - 1,
        },
        usage(),
        AgentEvent::StepStarted {
            step,
            max_steps: 20,
        },
        AgentEvent::ToolCallProposed {
            step,
            call_id: id.clone(),
            tool: tool.into(),
            kind: CallKind::Read,
            target: target.into(),
            arguments: json!({"path": target}),
            diff: None,
            needs_approval: false,
        },
        AgentEvent::ToolRunning {
            step,
            call_id: id.clone(),
            auto_approved: false,
        },
        AgentEvent::ToolFinished {
            step,
            call_id: id,
            tool: tool.into(),
            status: CallStatus::Ok,
            summary: summary.into(),
            result,
            coloured_output: None,
        },
    ]
}

/// The task typed, started, and the first three (read-only) steps done.
pub fn explored(app: &mut App) {
    submit(app, TASK);
    app.update(Msg::Agent(AgentEvent::TaskStarted {
        task: TASK.into(),
        max_steps: 20,
        rules: vec![],
    }));
    feed(
        app,
        read_step(
            1,
            "list_files",
            ".",
            "2 files",
            json!({"success": true, "files": ["calculator.py", "test_calculator.py"]}),
        ),
    );
    feed(
        app,
        read_step(
            2,
            "read_file",
            "calculator.py",
            "11 lines",
            json!({"success": true, "path": "calculator.py", "content": CALCULATOR}),
        ),
    );
    feed(
        app,
        read_step(
            3,
            "read_file",
            "test_calculator.py",
            "21 lines",
            json!({"success": true, "path": "test_calculator.py", "content": "import unittest\n\tindented\twith tabs\x1b[31m\n"}),
        ),
    );
}

/// A proposal that needs approval, with its request; returns the decision receiver.
pub fn propose(
    app: &mut App,
    step: u32,
    tool: impl Into<ToolId>,
    action: ApprovalAction,
) -> oneshot::Receiver<Decision> {
    propose_scoped(app, step, tool, action, true)
}

/// A proposal whose request may (or may not) be approved for the whole task.
pub fn propose_scoped(
    app: &mut App,
    step: u32,
    tool: impl Into<ToolId>,
    action: ApprovalAction,
    allow_for_task: bool,
) -> oneshot::Receiver<Decision> {
    let tool: ToolId = tool.into();
    let id = format!("call_{step}");
    let (kind, target, diff) = match &action {
        ApprovalAction::Edit { path, diff, .. } => {
            (CallKind::Edit, path.clone(), Some(diff.clone()))
        }
        ApprovalAction::RunTests { .. } => (CallKind::Execute, "unittest".to_string(), None),
        ApprovalAction::Undo { files }
        | ApprovalAction::Patch { files }
        | ApprovalAction::KeepRunOutput { files, .. }
        | ApprovalAction::ApplyStage { files, .. } => {
            (CallKind::Edit, "files".to_string(), files.first().cloned())
        }
        ApprovalAction::Delete { path, diff } => (CallKind::Edit, path.clone(), Some(diff.clone())),
        ApprovalAction::McpCall { server, .. } => (CallKind::External, server.clone(), None),
    };
    feed(
        app,
        vec![
            AgentEvent::ModelRequest {
                steps_done: step - 1,
            },
            usage(),
            AgentEvent::StepStarted {
                step,
                max_steps: 20,
            },
            AgentEvent::ToolCallProposed {
                step,
                call_id: id.clone(),
                tool: tool.clone(),
                kind,
                target,
                arguments: json!({"path": "calculator.py"}),
                diff,
                needs_approval: true,
            },
        ],
    );
    let (reply, answer) = oneshot::channel();
    app.update(Msg::Agent(AgentEvent::ApprovalRequested(ApprovalRequest {
        step,
        call_id: id,
        tool,
        action,
        allow_for_task,
        reply,
    })));
    // The user reads the prompt before answering it (it ignores keys while it arms).
    settle(app);
    answer
}

/// Let the open prompt finish arming, as a user who reads it first would
/// (and who stopped typing a moment ago, so the prompt has the keys).
pub fn settle(app: &mut App) {
    app.set_now(app.now() + stepwise::tui::approval::ARMING);
    if app.composing() && app.input().is_empty() {
        let rest = stepwise::tui::input::COMPOSING - stepwise::tui::approval::ARMING;
        app.set_now(app.now() + rest);
    }
}

/// A 40-line file and a proposal changing it in three far-apart places
/// (line 2 changed, a line added after line 20, line 38 removed).
pub fn three_hunks() -> (String, String) {
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 20\n", "line 20\nline twenty-and-a-half\n")
        .replace("line 38\n", "");
    (old, new)
}

/// Step 4 proposes the three-hunk edit of `notes.txt`.
pub fn three_hunk_request(app: &mut App, allow_for_task: bool) -> oneshot::Receiver<Decision> {
    let (old, new) = three_hunks();
    let diff = FileDiff::compute("notes.txt", Some(&old), &new);
    assert_eq!(diff.hunks.len(), 3);
    propose_scoped(
        app,
        4,
        ToolName::WRITE_FILE,
        ApprovalAction::Edit {
            path: "notes.txt".into(),
            diff,
            proposed: new,
            original: Some(old),
        },
        allow_for_task,
    )
}

pub fn write_calculator(app: &mut App) -> oneshot::Receiver<Decision> {
    let diff = calculator_diff();
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    app.update(Msg::Agent(AgentEvent::AssistantDelta {
        text: "I'll add `divide` after `subtract`.".into(),
    }));
    app.update(Msg::Agent(AgentEvent::AssistantMessage {
        text: "I'll add `divide` after `subtract`.".into(),
    }));
    propose(
        app,
        4,
        ToolName::REPLACE_TEXT,
        ApprovalAction::Edit {
            path: "calculator.py".into(),
            diff,
            proposed: format!("{CALCULATOR}{DIVIDE}"),
            original: Some(CALCULATOR.into()),
        },
    )
}

pub fn run_tests_request(app: &mut App, step: u32) -> oneshot::Receiver<Decision> {
    propose(
        app,
        step,
        ToolName::RUN_TESTS,
        ApprovalAction::RunTests {
            command: ["python3", "-m", "unittest", "discover", "-v"]
                .map(String::from)
                .to_vec(),
            sandbox: String::new(),
        },
    )
}

/// The tool's run after approval.
pub fn finish_call(
    app: &mut App,
    step: u32,
    tool: &str,
    status: CallStatus,
    summary: &str,
    result: serde_json::Value,
) {
    let id = format!("call_{step}");
    feed(
        app,
        vec![
            AgentEvent::ToolRunning {
                step,
                call_id: id.clone(),
                auto_approved: false,
            },
            AgentEvent::ToolFinished {
                step,
                call_id: id,
                tool: tool.into(),
                status,
                summary: summary.into(),
                result,
                coloured_output: None,
            },
        ],
    );
}

pub const ANSWER: &str = "Added `divide(a, b)` to calculator.py; it raises ValueError on zero.\n\n```python\ndivide(6, 3)  # 2.0\n```\nAll 6 tests pass.";

/// The whole task: write approved, tests approved and passing, final answer.
pub fn finished(app: &mut App) {
    explored(app);
    keep_open(write_calculator(app));
    app.answer(Decision::Approve);
    finish_call(
        app,
        4,
        "replace_text",
        CallStatus::Ok,
        "+7 −0",
        json!({"success": true, "path": "calculator.py"}),
    );
    keep_open(run_tests_request(app, 5));
    app.answer(Decision::Approve);
    finish_call(
        app,
        5,
        "run_tests",
        CallStatus::Ok,
        "6 tests OK",
        json!({"success": true, "command": "python3 -m unittest discover -v", "returncode": 0, "output": "test_adds (test_calculator.TestAdd) ... ok\n\nRan 6 tests in 0.001s\n\nOK\n"}),
    );
    feed(
        app,
        vec![
            AgentEvent::ModelRequest { steps_done: 5 },
            AgentEvent::AssistantDelta {
                text: ANSWER.into(),
            },
            AgentEvent::AssistantMessage {
                text: ANSWER.into(),
            },
            usage(),
            AgentEvent::StepStarted {
                step: 6,
                max_steps: 20,
            },
            AgentEvent::FinalAnswer {
                text: ANSWER.into(),
                receipt: stepwise::agent::Receipt {
                    tests: Some(stepwise::agent::TestReceipt {
                        command: "python3 -m pytest -q".into(),
                        exit_code: Some(0),
                        summary: "4 passed".into(),
                        sandbox: String::new(),
                        passed: true,
                        verified: stepwise::tools::testing::test_run::Verified::ExitCodeAndSummary,
                    }),
                    files: vec![stepwise::agent::FileStat {
                        by: None,
                        path: "calculator.py".into(),
                        added: 7,
                        removed: 0,
                        created: false,
                    }],
                    diff_hash: "0123456789ab".into(),
                    no_tool_used: false,
                    no_test_command: false,
                    changed_by_tests: Vec::new(),
                    kept_out: Vec::new(),
                    rewritten_by_every_run: Vec::new(),
                    tests_changed: Vec::new(),
                },
            },
            task_finished(FinishReason::Answered, 6),
            // The runner's word on what the session changed, after the task.
            AgentEvent::SessionFiles {
                files: vec!["calculator.py".into()],
            },
        ],
    );
}
