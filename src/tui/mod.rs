//! The full-screen terminal UI. Data flows one way: terminal events, the
//! core's events and the editor's results go into one `App` as a `Msg`
//! (`App::update`; a state machine, no terminal inside); the run loop
//! carries out the App's `Effect`s and draws the state on demand.
//!
//! The folders, in layers from the bottom up; a folder imports only from
//! the layers below it (or its own), so no two folders import each other
//! (`tests/core/architecture.rs` checks it):
//! 1. `render/`: what drawing is made of (layout, chrome, text hygiene,
//!    syntax colours in `highlight`, and `theme`, the only module that names
//!    colours; its palettes are resolved over each frame at the end of
//!    `draw`); `term/`: the real terminal (guard, signals, frame clock,
//!    editor hand-off, the start-up question for its background colour).
//! 2. The components, each owning its state and its updates, none reading
//!    the App: `panes/` (the conversation (+ markdown, receipt), the tool
//!    calls, the diff pane's rows, word highlights and live previews, and
//!    `scroll`), `input/` (the ONE key map (`keymap`, rows in `bindings`),
//!    the input box, the `@` picker, the `/` commands), `approval/` (the
//!    queue and the review of hunks), `overlays/` (help, a tool call's
//!    detail, the session diff).
//! 3. `app/`: the `App` composes the components; `Msg` and `update`, the
//!    key routing through the layers (`keys`: the stack of overlays in
//!    `layers`, each consuming a key or passing it down; then the prompt
//!    (`prompt`); then the focused pane), the router for core events
//!    (`agent`), the task's lifecycle (`task`), slash commands (`commands`)
//!    and the read-only inspection API (`inspect`).
//! 4. `view/`: `draw`, the App on screen (header, prompt bar, diff pane).
//! 5. `run_loop/`: the loop, generic over backend, event stream and `Host`
//!    (`real_host` for the real terminal), with one effect executor and one
//!    failure policy for the agent.
//!
//! This file starts it all: checks the terminal and configuration, spawns the
//! agent and runs the loop on the real terminal.

pub mod app;
pub mod approval;
pub mod input;
pub mod overlays;
pub mod panes;
pub mod render;
pub mod run_loop;
pub mod term;
pub mod view;

pub use app::{App, Effect, Focus, Msg, Overlay, TaskState};
use run_loop::real_host::RealHost;
use term::terminal;
pub use view::{draw, prepare_and_draw, relayout};

use crate::agent::{AgentEvent, AgentHandle, spawn_agent};
use crate::config::{Config, ConfigError};
use crate::setup;
use crossterm::event::EventStream;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::IsTerminal;
use std::time::Duration;
use tokio::sync::mpsc;

/// Exit codes (a normal quit is `run_loop::EXIT_OK`).
const EXIT_FAILURE: i32 = 1;
const EXIT_USAGE: i32 = 2;

/// Run the full-screen app and return the process exit code.
pub fn run(runtime: &tokio::runtime::Runtime, config: Config) -> i32 {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "stepwise: the full-screen UI needs a terminal; use `stepwise exec TASK` in scripts"
        );
        return EXIT_USAGE;
    }
    let problem = config.validate().err();
    if let Some(ConfigError::BadWorkspace(_)) = &problem {
        eprintln!(
            "stepwise: workspace folder {} does not exist or is not a folder",
            config.workspace.display()
        );
        return EXIT_USAGE;
    }
    let prepared = match setup::prepare(&config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("stepwise: {e}");
            return EXIT_USAGE;
        }
    };
    let log = terminal::init_logging();
    tracing::info!(log = ?log, model = %prepared.model_label, "stepwise tui starting");

    let setup::Prepared {
        session,
        model_label,
        workspace,
        notice,
        task,
        lock,
        audit,
        resume_name,
    } = prepared;
    let transcript =
        (audit.as_ref()).and_then(|log| log.lock().ok().map(|log| log.path().to_path_buf()));

    let demo_copy =
        matches!(config.model_source, crate::config::ModelSource::Demo).then(|| workspace.clone());
    let mut app = App::new(model_label, display_path(&workspace));
    // The input's history of earlier sessions in this workspace (not with --no-log).
    let keep_history = !matches!(config.log, crate::config::LogSetting::Off);
    if keep_history {
        app.set_history(term::history::load(&workspace));
    }
    app.set_test_timeout(config.test_timeout);
    app.set_token_timeout(config.token_timeout);
    app.set_key_var(config.provider.preset().key_var);
    app.set_grammars_off_thread();
    app.set_notify(config.notify);
    // The `@` picker lists files through the same confinement and deny list.
    match crate::tools::Workspace::open(&workspace)
        .map_err(|e| e.to_string())
        .and_then(|ws| ws.with_deny_paths(&config.deny_paths))
    {
        Ok(ws) => app.set_file_source(ws),
        Err(e) => tracing::warn!(error = %e, "no file list for the @ picker"),
    }
    if let Some(notice) = &notice {
        app.notice(notice);
    }
    // The transcript tee and the agent are tokio tasks: spawn them inside the
    // runtime, then leave its context before blocking on the UI.
    let (inbox, agent) = {
        let _entered = runtime.enter();
        let (events, from_core) = mpsc::unbounded_channel();
        let inbox = match audit {
            Some(log) => crate::audit::tee(from_core, log, "user"),
            None => from_core,
        };
        let agent = match problem {
            Some(p) => {
                if let ConfigError::MissingKey(var) = p {
                    app.welcome_without_key(config.provider.name(), var);
                }
                app.set_config_error(p.to_string());
                None
            }
            None => {
                // `stepwise "TASK"` starts at once; a script's task waits for Enter.
                match (&config.task, &task) {
                    (Some(given), _) => app.start_given_task(given),
                    (None, Some(scripted)) => app.prefill(scripted),
                    (None, None) => {}
                }
                let agent = spawn_agent(session, events);
                #[cfg(debug_assertions)]
                let agent = debug_hooks::maybe_panicking(agent);
                Some(agent)
            }
        };
        (inbox, agent)
    };
    let look = (config.theme, term::background::color_on(config.color));
    let (code, app) = runtime.block_on(run_app(app, agent, inbox, look));
    drop(lock);
    if let Some(app) = &app
        && keep_history
        && let Err(e) = term::history::save(&workspace, app.input().history())
    {
        tracing::warn!(error = %e, "the input history was not saved");
    }
    if let Some(app) = app {
        // Back on the normal screen: what happened, for the scrollback.
        for line in app.exit_summary(transcript.as_deref(), demo_copy.as_deref()) {
            println!("{line}");
        }
        // Only once there is something to resume (not after an idle session).
        if let Some(name) = resume_name.as_ref().and_then(|r| r.ready()) {
            let command = setup::resume_commands(&config, name).0;
            println!("{}", App::resume_line(&command));
        }
    }
    code
}

/// Test hooks, compiled into debug builds only (the tests drive the debug binary).
#[cfg(debug_assertions)]
mod debug_hooks {
    use crate::agent::AgentHandle;
    use tokio::sync::mpsc;

    /// With `STEPWISE_DEBUG_PANIC_AGENT` set, the agent task panics on its
    /// first command, so a test can check the app ends cleanly and restores
    /// the terminal when the agent dies.
    pub fn maybe_panicking(real: AgentHandle) -> AgentHandle {
        if std::env::var_os("STEPWISE_DEBUG_PANIC_AGENT").is_none() {
            return real;
        }
        real.task.abort();
        let (commands, mut inbox) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            if inbox.recv().await.is_some() {
                panic!("debug hook: the agent task panicked on purpose");
            }
        });
        AgentHandle { commands, task }
    }
}

/// `~/...` for paths under the home folder, absolute otherwise.
fn display_path(path: &std::path::Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = abs.display().to_string();
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && shown.starts_with(&format!("{home}/")) => {
            format!("~{}", &shown[home.len()..])
        }
        _ => shown,
    }
}

async fn run_app(
    mut app: App,
    mut agent: Option<AgentHandle>,
    inbox: mpsc::UnboundedReceiver<AgentEvent>,
    (theme, color): (crate::config::ThemeChoice, bool),
) -> (i32, Option<App>) {
    if let Err(e) = terminal::enter() {
        eprintln!("stepwise: cannot set up the terminal: {e}");
        return (EXIT_FAILURE, None);
    }
    // In raw mode and before the event stream reads the terminal; keys
    // typed while it waited reach the App first, as if the stream read them.
    let mut typed = Vec::new();
    app.set_look(term::background::choose(theme, color, || {
        let (colour, keys) = term::background::query();
        typed = keys;
        colour
    }));
    app.set_now(std::time::Instant::now());
    for event in term::typed::events(&typed) {
        app.update(Msg::Terminal(event));
    }
    let guard = terminal::Guard;
    let code = match (
        Terminal::new(CrosstermBackend::new(std::io::stdout())),
        RealHost::new(),
    ) {
        (Ok(mut term), Ok(mut host)) => {
            let mut events = EventStream::new();
            let agent = agent.as_mut();
            run_loop::event_loop(&mut term, &mut host, &mut events, &mut app, agent, inbox).await
        }
        (Err(e), _) => Err(format!("cannot use the terminal: {e}")),
        (_, Err(e)) => Err(format!("cannot watch signals: {e}")),
    };
    drop(guard);
    let code = match code {
        Ok(code) => code,
        Err(message) => {
            tracing::error!(%message, "ui stopped");
            eprintln!("stepwise: {message}");
            EXIT_FAILURE
        }
    };
    // Let an interrupted task wind down (test processes killed) before exiting.
    if let Some(AgentHandle { commands, task, .. }) = agent {
        drop(commands);
        if !task.is_finished() {
            let _ = tokio::time::timeout(Duration::from_secs(3), task).await;
        }
    }
    tracing::info!(code, "stepwise tui exiting");
    (code, Some(app))
}
