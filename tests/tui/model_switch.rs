//! `/model NAME` through the App state machine: the command becomes a
//! `SetModel` effect (refused while a task runs), and the core's
//! `ModelChanged` puts the new name in the header.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use stepwise::agent::AgentEvent;
use stepwise::tui::Effect;

fn set_model_effects(app: &mut stepwise::tui::App) -> Vec<String> {
    app.take_effects()
        .into_iter()
        .filter_map(|e| match e {
            Effect::Agent(stepwise::agent::AgentCommand::SetModel(name)) => Some(name),
            _ => None,
        })
        .collect()
}

#[test]
fn slash_model_asks_the_core_and_the_header_follows_its_answer() {
    let mut app = app();
    type_text(&mut app, "/model claude-sonnet-4-5");
    press(&mut app, KeyCode::Enter);
    assert_eq!(set_model_effects(&mut app), ["claude-sonnet-4-5"]);
    assert_eq!(
        app.model(),
        "gpt-4.1-mini",
        "only the core's answer switches it"
    );
    app.update(Msg::Agent(AgentEvent::ModelChanged {
        model: "claude-sonnet-4-5".into(),
    }));
    assert_eq!(app.model(), "claude-sonnet-4-5");
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("claude-sonnet-4-5"), "{shown}");
    assert!(!shown.contains("gpt-4.1-mini"), "{shown}");
}

#[test]
fn slash_model_waits_for_a_running_task() {
    let mut app = app();
    assert!(submit(&mut app, TASK).is_some());
    type_text(&mut app, "/model other");
    press(&mut app, KeyCode::Enter);
    assert!(set_model_effects(&mut app).is_empty());
    let flash = app.flash().clone().unwrap_or_default();
    assert!(flash.contains("/model"), "{flash}");
}

fn set_staged_effects(app: &mut stepwise::tui::App) -> Vec<bool> {
    app.take_effects()
        .into_iter()
        .filter_map(|e| match e {
            Effect::Agent(stepwise::agent::AgentCommand::SetStaged(on)) => Some(on),
            _ => None,
        })
        .collect()
}

#[test]
fn slash_stage_toggles_through_the_core_and_the_header_says_staged() {
    let mut app = app();
    let before = screen(&draw(&mut app, 120, 40));
    assert!(!before.contains("staged"), "{before}");
    type_text(&mut app, "/stage");
    press(&mut app, KeyCode::Enter);
    assert_eq!(set_staged_effects(&mut app), [true]);
    app.update(Msg::Agent(AgentEvent::StageChanged {
        stage: Some("1796-1-0".into()),
        message: "Staged: this task works in the stage 1796-1-0.".into(),
    }));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("staged: review at the end"), "{shown}");
    // Toggled again: step by step, asked of the core.
    type_text(&mut app, "/stage");
    press(&mut app, KeyCode::Enter);
    assert_eq!(set_staged_effects(&mut app), [false]);
    app.update(Msg::Agent(AgentEvent::StageChanged {
        stage: None,
        message: "Step by step again.".into(),
    }));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(!shown.contains("staged:"), "{shown}");
}
