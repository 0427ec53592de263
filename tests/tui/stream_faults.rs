//! A model request that breaks: the partial reply stays on screen marked as
//! discarded, each retry line names its own error, the header counts down to
//! the next attempt, and when the retries run out `/continue` is offered.

use crate::support::tui::*;
use std::time::Duration;
use stepwise::agent::{AgentEvent, FinishReason};

fn retrying(retry: u32, error: &str) -> AgentEvent {
    AgentEvent::Retrying {
        retry,
        max_retries: 3,
        delay_ms: 2000,
        error: error.into(),
    }
}

#[test]
fn a_broken_stream_keeps_its_text_and_the_retries_count_down() {
    let mut app = app();
    explored(&mut app);
    feed(
        &mut app,
        vec![
            AgentEvent::ModelRequest { steps_done: 3 },
            AgentEvent::AssistantDelta {
                text: "I will add divi".into(),
            },
            retrying(1, "HTTP 500"),
        ],
    );
    let texts: Vec<String> = app.conversation().texts().map(str::to_string).collect();
    assert!(texts.iter().any(|t| t == "I will add divi"), "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("broke off: it is discarded")),
        "{texts:?}"
    );
    let header = screen(&draw(&mut app, 120, 40));
    assert!(header.contains("retrying in 2s"), "{header}");
    app.set_now(app.now() + Duration::from_millis(1200));
    assert!(screen(&draw(&mut app, 120, 40)).contains("retrying in 1s"));
    app.set_now(app.now() + Duration::from_millis(900));
    assert!(!screen(&draw(&mut app, 120, 40)).contains("retrying in"));

    app.update(Msg::Agent(retrying(2, "connection reset by the server")));
    let texts: Vec<String> = app.conversation().texts().map(str::to_string).collect();
    assert!(
        texts
            .iter()
            .any(|t| t == "connection reset by the server — retrying (2/3) in 2.0s"),
        "each retry names its own error: {texts:?}"
    );
    app.update(Msg::Agent(task_finished(
        FinishReason::Error("HTTP 500".into()),
        3,
    )));
    let texts: Vec<String> = app.conversation().texts().map(str::to_string).collect();
    assert!(
        texts.iter().any(|t| t.contains("/continue resumes")),
        "{texts:?}"
    );
}

#[test]
fn a_silent_model_shows_how_long_and_when_stepwise_gives_up() {
    let mut app = app();
    app.set_token_timeout(Duration::from_secs(600));
    explored(&mut app);
    feed(&mut app, vec![AgentEvent::ModelRequest { steps_done: 3 }]);
    let start = app.now();
    // A model thinking as usual: nothing shown, and a wake-up due when it would.
    app.set_now(start + Duration::from_secs(10));
    assert!(!screen(&draw(&mut app, 120, 40)).contains("no token"));
    assert_eq!(app.wake_at(), Some(start + Duration::from_secs(15)));
    app.set_now(start + Duration::from_secs(42));
    let header = screen(&draw(&mut app, 120, 40));
    assert!(
        header.contains("thinking · no token for 42s, gives up in 558s"),
        "{header}"
    );
    assert_eq!(app.wake_at(), Some(start + Duration::from_secs(43)));
    // A piece of the reply starts the count again.
    app.update(Msg::Agent(AgentEvent::AssistantDelta { text: "Hm".into() }));
    app.set_now(start + Duration::from_secs(50));
    assert!(!screen(&draw(&mut app, 120, 40)).contains("no token"));
}
