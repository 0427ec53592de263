//! A resumed session renders like a live one: decisions and the user's own
//! versions on record, failed calls with their reason, gate refusals as `⊘`
//! lines, every call a row of the Tool calls pane, and none of stepwise's
//! own messages shown as the user's turn.

use crate::support::tui::*;
use stepwise::agent::{AgentEvent, CallKind, CallStatus, RestoredEntry};
use stepwise::llm::TokenUsage;

fn call(
    id: &str,
    name: &str,
    target: &str,
    status: CallStatus,
    detail: &str,
    edited: bool,
) -> RestoredEntry {
    RestoredEntry::Tool {
        name: name.into(),
        arguments: format!("{{\"path\":\"{target}\"}}"),
        call_id: id.into(),
        call_kind: if name == "read_file" {
            CallKind::Read
        } else {
            CallKind::Edit
        },
        target: target.into(),
        status: Some(status),
        detail: detail.into(),
        summary: String::new(),
        edited,
        output: String::new(),
    }
}

#[test]
fn a_restored_session_shows_decisions_failures_gate_refusals_and_its_calls() {
    let mut app = app();
    app.update(Msg::Agent(AgentEvent::SessionRestored {
        session: "s1".into(),
        entries: vec![
            RestoredEntry::User {
                text: "the task".into(),
            },
            call(
                "c1",
                "read_file",
                "calculator.py",
                CallStatus::Ok,
                "",
                false,
            ),
            call(
                "c2",
                "write_file",
                "a.txt",
                CallStatus::Declined,
                "not that file",
                false,
            ),
            call("c3", "write_file", "b.txt", CallStatus::Ok, "", true),
            call(
                "c4",
                "read_file",
                "../x",
                CallStatus::Failed,
                "path escapes the workspace",
                false,
            ),
            RestoredEntry::Tool {
                name: "run_tests".into(),
                arguments: "{}".into(),
                call_id: "c5".into(),
                call_kind: CallKind::Execute,
                target: String::new(),
                status: Some(CallStatus::Failed),
                detail: "1 failed (exit 1)".into(),
                summary: "1 failed".into(),
                edited: false,
                output: "Traceback (most recent call last):\nAssertionError: 1 != 2".into(),
            },
            RestoredEntry::Gate {
                text: "Final answer refused: run the tests".into(),
            },
            RestoredEntry::Notice {
                text: "The user interrupted the task.".into(),
            },
        ],
        tasks: 1,
        steps: 5,
        usage: TokenUsage::default(),
        cost_usd: None,
    }));
    let shown = screen(&draw(&mut app, 140, 40));
    for line in [
        "⊘ You declined write_file a.txt: \"not that file\"",
        "✓ You approved your edited version for write_file b.txt",
        "✗ read_file ../x failed: path escapes the workspace",
        "⊘ Final answer refused: run the tests",
        "✗ run_tests failed: 1 failed (exit 1)",
        "│ AssertionError: 1 != 2",
        "· The user interrupted the task.",
    ] {
        assert!(shown.contains(line), "{line}:\n{shown}");
    }
    assert!(
        !shown.contains("[stepwise]") && !shown.contains("called "),
        "{shown}"
    );
    let rows: Vec<&str> = app
        .calls()
        .rows()
        .iter()
        .map(|r| r.target.as_str())
        .collect();
    assert_eq!(rows, ["calculator.py", "a.txt", "b.txt", "../x", ""]);
}

#[test]
fn a_restored_call_whose_result_was_compacted_is_not_shown_as_declined() {
    let mut app = app();
    let mut compacted = call("c1", "write_file", "a.txt", CallStatus::Ok, "", false);
    if let RestoredEntry::Tool { status, .. } = &mut compacted {
        *status = None;
    }
    app.update(Msg::Agent(AgentEvent::SessionRestored {
        session: "s1".into(),
        entries: vec![
            RestoredEntry::User {
                text: "the task".into(),
            },
            compacted,
        ],
        tasks: 1,
        steps: 1,
        usage: TokenUsage::default(),
        cost_usd: None,
    }));
    let rows = app.calls().rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].status,
        stepwise::tui::panes::tool_calls::RowStatus::Approved
    );
    let shown: Vec<String> = app.conversation().texts().map(str::to_string).collect();
    assert!(!shown.iter().any(|t| t.contains("declined")), "{shown:?}");
}
