//! The words about keys and approvals name what is configured and what was
//! approved: the provider's own key variable (never `OPENAI_API_KEY` for
//! another provider), in the first screen without a key and after a 401.

use crate::support::tui::*;
use stepwise::agent::AgentEvent;

#[test]
fn a_refused_key_names_the_configured_providers_variable() {
    let mut app = app();
    app.set_key_var(Some("GROQ_API_KEY"));
    // As the core words it: it names the variable already.
    feed(
        &mut app,
        vec![AgentEvent::Error {
            message:
                "the server refused the request (HTTP 401): Invalid API Key (check GROQ_API_KEY)"
                    .into(),
        }],
    );
    // A server's bare 401 gets the hint, with the same variable.
    feed(
        &mut app,
        vec![AgentEvent::Error {
            message: "the server refused the request (HTTP 401): unauthorized".into(),
        }],
    );
    let all: Vec<&str> = app.conversation().texts().collect();
    let all = all.join("\n");
    assert!(!all.contains("OPENAI_API_KEY"), "{all}");
    assert!(
        all.contains("unauthorized — check GROQ_API_KEY (in .env or the environment)"),
        "{all}"
    );
}

#[test]
fn the_first_screen_without_a_key_names_the_providers_variable() {
    let mut app = app();
    app.welcome_without_key("anthropic", "ANTHROPIC_API_KEY");
    let shown = screen(&draw(&mut app, 200, 30));
    assert!(
        shown.contains("No API key is set for provider anthropic"),
        "{shown}"
    );
    assert!(shown.contains("`ANTHROPIC_API_KEY=...`"), "{shown}");
    assert!(!shown.contains("OPENAI_API_KEY"), "{shown}");
}
