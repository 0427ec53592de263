//! The slash commands and `?`: one table gives the help's Commands section,
//! the `/` menu (filtered as the user types, Tab completes) and the unknown
//! command's message; `/model` alone shows the model and the server's list;
//! `?` opens help anywhere, except in a draft, where it is text.

use crate::support::tui::*;
use crossterm::event::KeyCode;
use stepwise::agent::{AgentCommand, AgentEvent};
use stepwise::tui::Overlay;
use stepwise::tui::input::slash::SLASH;
use stepwise::tui::{Effect, Msg};

#[test]
fn the_help_lists_every_slash_command_with_model_and_mcp() {
    let mut app = app();
    app.update(Msg::Agent(AgentEvent::TaskStarted {
        task: "x".into(),
        max_steps: 20,
        rules: vec![],
    }));
    press(&mut app, KeyCode::F(1));
    let shown = screen(&draw(&mut app, 120, 60));
    for s in SLASH {
        assert!(shown.contains(s.usage), "{}:\n{shown}", s.usage);
    }
    assert!(
        shown.contains("/model  /model NAME") && shown.contains("/mcp"),
        "{shown}"
    );
}

#[test]
fn typing_a_slash_opens_a_menu_that_filters_and_tab_completes() {
    let mut app = app();
    type_text(&mut app, "/");
    let shown = screen(&draw(&mut app, 120, 40));
    for s in SLASH {
        assert!(shown.contains(s.usage), "{}:\n{shown}", s.usage);
    }
    type_text(&mut app, "m");
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("/model  /model NAME") && shown.contains("/mcp"),
        "{shown}"
    );
    assert!(!shown.contains("/diff"), "only what matches /m:\n{shown}");
    type_text(&mut app, "o");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.input().text(), "/model");
    type_text(&mut app, " x");
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        !shown.contains("/ commands"),
        "arguments close the menu:\n{shown}"
    );
}

#[test]
fn model_alone_shows_the_model_and_asks_the_server_for_its_list() {
    let mut app = app();
    type_text(&mut app, "/model");
    press(&mut app, KeyCode::Enter);
    assert!(
        app.take_effects()
            .iter()
            .any(|e| matches!(e, Effect::Agent(AgentCommand::ListModels))),
        "the core is asked"
    );
    feed(
        &mut app,
        vec![AgentEvent::ModelsListed {
            current: "gpt-4.1-mini".into(),
            models: vec!["gpt-4.1".into(), "gpt-4.1-mini".into()],
            error: None,
        }],
    );
    let all: Vec<&str> = app.conversation().texts().collect();
    let all = all.join("\n");
    assert!(
        all.contains("Model: gpt-4.1-mini. Asking the server"),
        "{all}"
    );
    assert!(
        all.contains("The server offers 2 model(s): gpt-4.1, gpt-4.1-mini"),
        "{all}"
    );
    assert!(!all.contains("Unknown command"), "{all}");
}

#[test]
fn question_mark_opens_help_at_a_prompt_but_stays_text_in_a_draft() {
    let mut app = app();
    explored(&mut app);
    keep_open(run_tests_request(&mut app, 4));
    type_text(&mut app, "?");
    assert!(
        matches!(app.overlay(), Some(Overlay::Help)),
        "help at the prompt"
    );
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());
    // A draft: `?` is part of it.
    let mut app = crate::support::tui::app();
    explored(&mut app);
    type_text(&mut app, "why");
    keep_open(run_tests_request(&mut app, 4));
    type_text(&mut app, "?");
    assert!(app.overlay().is_none());
    assert!(app.input().text().ends_with('?'), "{}", app.input().text());
}

#[test]
fn question_mark_opens_help_over_a_tool_calls_details_too() {
    let mut app = app();
    explored(&mut app);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Enter);
    assert!(
        matches!(app.overlay(), Some(Overlay::Detail(_))),
        "details open"
    );
    type_text(&mut app, "?");
    assert!(matches!(app.overlay(), Some(Overlay::Help)));
}

#[test]
fn slash_mouse_turns_mouse_capture_off_and_on_like_f2() {
    let mut app = app();
    type_text(&mut app, "/mouse");
    press(&mut app, KeyCode::Enter);
    assert!(!app.mouse_capture());
    let effects = app.take_effects();
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::SetMouseCapture(false))),
        "{effects:?}"
    );
    let shown = screen(&draw(&mut app, 100, 24));
    assert!(shown.contains("mouse off"), "{shown}");
    type_text(&mut app, "/mouse");
    press(&mut app, KeyCode::Enter);
    assert!(app.mouse_capture());
}
