//! The summary printed on the normal screen when the UI closes.

use crate::support::tui::*;
use std::path::Path;

#[test]
fn the_exit_summary_says_how_it_ended_what_changed_and_where_things_are() {
    let mut app = app();
    assert_eq!(
        app.exit_summary(None, None),
        [
            "stepwise: No task was run.",
            "Files changed: none",
            "Tokens: none reported"
        ]
    );
    finished(&mut app);
    let lines = app.exit_summary(
        Some(Path::new("/w/.stepwise/sessions/1.jsonl")),
        Some(Path::new("/tmp/stepwise-demo-x\x1b]0;t\x07")),
    );
    assert!(
        lines[0].starts_with("stepwise: Last task: Done in 6 steps"),
        "{lines:?}"
    );
    assert_eq!(lines[1], "Files changed: calculator.py");
    assert!(lines[2].starts_with("Tokens: "), "{lines:?}");
    assert_eq!(lines[3], "Transcript: /w/.stepwise/sessions/1.jsonl");
    assert!(lines[4].starts_with("The demo worked on a temporary copy: /tmp/stepwise-demo-x"));
    assert!(
        lines
            .iter()
            .all(|l| !l.contains('\x1b') && !l.contains('\x07')),
        "no raw control bytes reach the normal screen: {lines:?}"
    );
}

#[test]
fn the_exit_summary_lists_the_change_logs_files_patched_resumed_and_undone() {
    use stepwise::agent::AgentEvent;
    let mut app = app();
    // A resumed session: its earlier changes (one by a patch) come from the
    // core's change log, with no tool-call row or diff behind them here.
    app.update(Msg::Agent(AgentEvent::SessionFiles {
        files: vec!["calculator.py".into(), "notes.md".into()],
    }));
    assert_eq!(
        app.exit_summary(None, None)[1],
        "Files changed: calculator.py, notes.md"
    );
    // After an undo the core says notes.md is no longer changed.
    app.update(Msg::Agent(AgentEvent::SessionFiles {
        files: vec!["calculator.py".into()],
    }));
    assert_eq!(
        app.exit_summary(None, None)[1],
        "Files changed: calculator.py"
    );
}
