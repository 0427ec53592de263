//! The `@` file picker in the App: an `@` starting a word asks the run loop
//! for the workspace's files, typing filters them, Up/Down select,
//! Enter/Tab insert the path with a space, Esc leaves the `@` typed, and an
//! `@` inside a word (an email address) never opens it; plus snapshots.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use stepwise::tools::Workspace;
use stepwise::tui::{App, Effect, Msg};

fn files() -> Vec<String> {
    [
        "README.md",
        "calculator.py",
        "docs/guide.md",
        "test_calculator.py",
    ]
    .map(String::from)
    .to_vec()
}

/// An app with a workspace to list, the `@` typed and the files listed.
fn picking(before: &str) -> App {
    let mut app = app();
    let ws = crate::support::copy_workspace();
    app.set_file_source(Workspace::open(ws.path()).unwrap());
    type_text(&mut app, before);
    app.take_effects();
    type_text(&mut app, "@");
    let asked = app.take_effects();
    assert!(
        asked.iter().any(|e| matches!(e, Effect::ListFiles(_))),
        "the files are listed off the UI thread: {asked:?}"
    );
    assert!(app.picker().is_some());
    app.update(Msg::Files {
        files: files(),
        more: false,
    });
    app
}

#[test]
fn typing_filters_down_selects_and_enter_inserts_the_path_and_a_space() {
    let mut app = picking("look at ");
    assert_eq!(app.picker().unwrap().shown().len(), 4);
    type_text(&mut app, "calc");
    assert_eq!(
        app.picker().unwrap().shown(),
        ["calculator.py", "test_calculator.py"]
    );
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert!(app.picker().is_none());
    assert_eq!(app.input().text(), "look at test_calculator.py ");
    assert!(
        !app.take_effects().iter().any(|e| matches!(
            e,
            Effect::Agent(stepwise::agent::AgentCommand::RunTask { .. })
        )),
        "Enter inserted, it did not send"
    );
}

#[test]
fn tab_inserts_too_and_esc_leaves_what_was_typed() {
    let mut app = picking("");
    type_text(&mut app, "gui");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.input().text(), "docs/guide.md ");
    let mut app = picking("see ");
    type_text(&mut app, "re");
    press(&mut app, KeyCode::Esc);
    assert!(app.picker().is_none());
    assert_eq!(app.input().text(), "see @re");
}

#[test]
fn an_at_inside_a_word_does_not_open_it_and_deleting_the_at_closes_it() {
    let mut app = app();
    let ws = crate::support::copy_workspace();
    app.set_file_source(Workspace::open(ws.path()).unwrap());
    type_text(&mut app, "mail bob@example.com");
    assert!(app.picker().is_none());
    assert!(
        !app.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::ListFiles(_)))
    );
    let mut app = picking("x ");
    type_text(&mut app, "ca");
    for _ in 0..3 {
        press(&mut app, KeyCode::Backspace);
    }
    assert!(app.picker().is_none(), "the @ is gone");
    assert_eq!(app.input().text(), "x ");
}

#[test]
fn snapshot_file_picker() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = picking("explain ");
        type_text(&mut app, "calc");
        press(&mut app, KeyCode::Down);
        let term = draw(&mut app, w, h);
        assert_snapshot!(format!("file_picker_{w}x{h}"), term.backend());
    }
}
