//! What a test run wrote, offered in the App: the diff pane titles it as
//! the run's, every file with its hunks, the prompt says what `y` keeps,
//! and hunk choices go back as a patch's, file by file.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use stepwise::agent::{ApprovalAction, Decision, FileHunks};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;

fn offer() -> ApprovalAction {
    ApprovalAction::KeepRunOutput {
        files: vec![
            FileDiff::compute("Cargo.lock", None, "version = 4\n"),
            FileDiff::compute("report.txt", Some("old\n"), "new\n"),
        ],
        code: false,
    }
}

#[test]
fn a_runs_output_is_reviewed_like_a_patch_and_kept_file_by_file() {
    let mut app = app();
    explored(&mut app);
    let mut rx = propose(&mut app, 4, ToolName::RUN_TESTS, offer());
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Written by the test run · 2 files · step 4"),
        "{shown}"
    );
    assert!(
        shown.contains("Keep what the test run wrote: Cargo.lock (+1 −0), report.txt (+1 −1)"),
        "{shown}"
    );
    assert!(shown.contains("+version = 4"), "{shown}");
    // Reject report.txt's one hunk: `]` to it, Space.
    press(&mut app, KeyCode::Char(']'));
    press(&mut app, KeyCode::Char(' '));
    assert!(undecided(&mut rx));
    press(&mut app, KeyCode::Char('y'));
    let file = |p: &str, a: &[usize]| FileHunks {
        path: p.into(),
        accepted: a.to_vec(),
    };
    assert_eq!(
        rx.try_recv().ok(),
        Some(Decision::ApprovePatchHunks {
            files: vec![file("Cargo.lock", &[0]), file("report.txt", &[])]
        })
    );
}

/// A staged task's changeset: titled as the tested changeset, every file
/// with its hunks, conflicts named in the prompt, and hunk choices go
/// back file by file as a patch's.
#[test]
fn a_staged_changeset_is_reviewed_hunk_by_hunk_with_its_conflicts_named() {
    let mut app = app();
    explored(&mut app);
    let changeset = ApprovalAction::ApplyStage {
        stage: "1796-1-0".into(),
        files: vec![
            FileDiff::compute("calc.py", Some("a - b\n"), "a + b\n"),
            FileDiff::compute("CHANGES.md", None, "- add adds\n"),
        ],
        conflicts: vec!["notes.txt".into()],
        patch: String::new(),
    };
    let mut rx = propose(&mut app, 5, ToolName::WRITE_FILE, changeset);
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Staged changeset (tests passed) · 2 files · step 5"),
        "{shown}"
    );
    assert!(
        shown.contains("not its conflicts, changed in the workspace meanwhile: notes.txt"),
        "{shown}"
    );
    // Keep calc.py, reject CHANGES.md: `]` to it, Space, then y.
    press(&mut app, KeyCode::Char(']'));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('y'));
    let file = |p: &str, a: &[usize]| FileHunks {
        path: p.into(),
        accepted: a.to_vec(),
    };
    assert_eq!(
        rx.try_recv().ok(),
        Some(Decision::ApprovePatchHunks {
            files: vec![file("calc.py", &[0]), file("CHANGES.md", &[])]
        })
    );
}
