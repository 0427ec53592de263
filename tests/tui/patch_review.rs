//! Reviewing a multi-file `apply_patch` hunk by hunk in the App: every file
//! with its hunks in the diff pane, `j`/`k` across hunks and `]`/`[` across
//! files, Space toggling, and `y` sending each file's accepted hunks; plus
//! snapshots of the review at 80x24 and 120x40.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use stepwise::agent::{ApprovalAction, Decision, FileHunks};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;
use stepwise::tui::App;
use tokio::sync::oneshot::Receiver;

fn forty() -> String {
    (1..=40).map(|i| format!("line {i}\n")).collect()
}

/// `a.py` and `b.py` with two hunks each, and a new `c.md` (one hunk).
pub fn patch_action() -> ApprovalAction {
    let two = |tag: &str| {
        forty()
            .replace("line 2\n", &format!("line 2 {tag}\n"))
            .replace("line 30\n", &format!("line 30 {tag}\n"))
    };
    ApprovalAction::Patch {
        files: vec![
            FileDiff::compute("a.py", Some(&forty()), &two("alpha")),
            FileDiff::compute("b.py", Some(&forty()), &two("beta")),
            FileDiff::compute("c.md", None, "# new notes\n"),
        ],
    }
}

fn at_patch() -> (App, Receiver<Decision>) {
    let mut app = app();
    explored(&mut app);
    let rx = propose(&mut app, 4, ToolName::APPLY_PATCH, patch_action());
    draw(&mut app, 120, 40);
    (app, rx)
}

#[test]
fn one_hunk_rejected_in_each_file_sends_the_others_file_by_file() {
    let (mut app, mut rx) = at_patch();
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("file 1/3 · hunk 1/2 · 5 of 5 accepted"),
        "{shown}"
    );
    assert!(
        shown.contains("a.py · hunk 1/2"),
        "title names the file: {shown}"
    );
    assert!(shown.contains("]/[ file"), "{shown}");
    // Reject a.py's second hunk: j, Space.
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    // Jump to b.py, reject its first hunk.
    press(&mut app, KeyCode::Char(']'));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("file 2/3 · hunk 1/2 · 4 of 5 accepted"),
        "{shown}"
    );
    assert!(
        shown.contains("✗ hunk 2/2 rejected"),
        "per-file numbering: {shown}"
    );
    press(&mut app, KeyCode::Char(' '));
    // `[` goes back a file, `]` twice reaches the new file and stops there.
    press(&mut app, KeyCode::Char('['));
    assert_eq!(app.approvals().review().cursor, 0);
    for _ in 0..3 {
        press(&mut app, KeyCode::Char(']'));
    }
    assert_eq!(app.approvals().review().cursor, 4);
    assert_eq!(
        app.approvals().review().accepted,
        [true, false, false, true, true]
    );
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Apply patch to 3 files (+3 −2 accepted)"),
        "{shown}"
    );
    assert!(undecided(&mut rx));
    press(&mut app, KeyCode::Char('y'));
    let file = |p: &str, a: &[usize]| FileHunks {
        path: p.into(),
        accepted: a.to_vec(),
    };
    assert_eq!(
        rx.try_recv().ok(),
        Some(Decision::ApprovePatchHunks {
            files: vec![file("a.py", &[0]), file("b.py", &[1]), file("c.md", &[0])]
        })
    );
    let said: Vec<String> = app.conversation().texts().map(str::to_string).collect();
    assert!(
        said.iter()
            .any(|l| l.contains("approved 3 selected hunk(s)") && l.contains("a.py: 1")),
        "{said:?}"
    );
}

#[test]
fn an_untouched_patch_is_a_plain_approval_and_all_rejected_declines() {
    let (mut app, mut rx) = at_patch();
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
    let (mut app, mut rx) = at_patch();
    for _ in 0..5 {
        press(&mut app, KeyCode::Char(' '));
        press(&mut app, KeyCode::Char('j'));
    }
    press(&mut app, KeyCode::Char('y'));
    assert!(matches!(
        rx.try_recv().ok(),
        Some(Decision::Decline { reason: Some(r) }) if r.contains("every hunk")
    ));
}

#[test]
fn snapshot_multi_file_patch_review() {
    for (w, h) in [(80, 24), (120, 40)] {
        let (mut app, rx) = at_patch();
        keep_open(rx);
        draw(&mut app, w, h);
        press(&mut app, KeyCode::Char(']'));
        press(&mut app, KeyCode::Char(' '));
        let term = draw(&mut app, w, h);
        assert_snapshot!(format!("patch_review_{w}x{h}"), term.backend());
    }
}
