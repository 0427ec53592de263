//! The full-screen terminal UI. Data flows one way: terminal events and the
//! core's events go into one `App` (a state machine, no terminal inside);
//! the run loop here carries out the App's `Effect`s and draws the state on
//! demand, coalescing requests and capping the frame rate.
//!
//! - `app` (state and core events), `input` (keys, mouse, paste), `approval`
//! - panes: `header`, `conversation`, `tool_calls`, `diff_view`, `input_box`,
//!   `detail`, `help`; `layout` places them, `view` draws them
//! - `text` (sanitizing, wrapping), `scroll`, `terminal` (setup/restore, logs)

pub mod agent_events;
pub mod app;
pub mod approval;
pub mod conversation;
pub mod detail;
pub mod diff_view;
pub mod frame;
pub mod header;
pub mod help;
pub mod input;
pub mod input_box;
pub mod layout;
pub mod markdown;
pub mod scroll;
pub mod terminal;
pub mod text;
pub mod tool_calls;
pub mod view;

pub use app::{App, Effect, Focus, Overlay, TaskState};
pub use view::draw;

use crate::agent::{AgentCommand, AgentEvent, AgentHandle, LoopSettings, Session, spawn_agent};
use crate::config::{Config, ConfigError};
use crate::llm::HttpModel;
use crate::tools::Workspace;
use crossterm::event::{Event, EventStream, MouseEventKind};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Shortest time between two frames (a cap of about 60 frames per second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Exit codes.
const EXIT_OK: i32 = 0;
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
    let workspace = match Workspace::open(&config.workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!(
                "stepwise: cannot open workspace {}: {e}",
                config.workspace.display()
            );
            return EXIT_USAGE;
        }
    };
    let log = terminal::init_logging();
    tracing::info!(log = ?log, model = %config.model, "stepwise tui starting");

    let mut app = App::new(config.model.clone(), display_path(&config.workspace));
    let (events, inbox) = mpsc::unbounded_channel();
    let agent = match problem {
        Some(p) => {
            app.set_config_error(p.to_string());
            None
        }
        None => match HttpModel::new(&config.base_url, &config.model, config.api_key.clone()) {
            Ok(model) => {
                let session = Session::new(LoopSettings::from(&config), Arc::new(model), workspace);
                let _entered = runtime.enter();
                Some(spawn_agent(session, events))
            }
            Err(e) => {
                app.set_config_error(e.to_string());
                None
            }
        },
    };
    runtime.block_on(run_app(app, agent, inbox))
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
) -> i32 {
    if let Err(e) = terminal::enter() {
        eprintln!("stepwise: cannot set up the terminal: {e}");
        return EXIT_FAILURE;
    }
    let guard = terminal::Guard;
    let code = match Terminal::new(CrosstermBackend::new(std::io::stdout())) {
        Ok(mut term) => event_loop(&mut term, &mut app, agent.as_mut(), inbox).await,
        Err(e) => Err(format!("cannot use the terminal: {e}")),
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
    if let Some(AgentHandle { commands, task }) = agent {
        drop(commands);
        if !task.is_finished() {
            let _ = tokio::time::timeout(Duration::from_secs(3), task).await;
        }
    }
    tracing::info!(code, "stepwise tui exiting");
    code
}

type Term = Terminal<CrosstermBackend<std::io::Stdout>>;

/// The loop: returns the exit code, or a message for a fatal error.
async fn event_loop(
    term: &mut Term,
    app: &mut App,
    mut agent: Option<&mut AgentHandle>,
    mut inbox: mpsc::UnboundedReceiver<AgentEvent>,
) -> Result<i32, String> {
    let mut keys = EventStream::new();
    let mut signals = signals::Signals::new().map_err(|e| format!("cannot watch signals: {e}"))?;
    let mut clock = tokio::time::interval(Duration::from_secs(1));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut inbox_open = true;
    let mut frames = frame::FrameClock::new(FRAME_INTERVAL, Instant::now());
    loop {
        let agent_alive = agent.is_some();
        tokio::select! {
            biased;
            _ = sleep_until(frames.due()), if frames.due().is_some() => {
                if !terminal::is_active() {
                    return Err("the terminal was restored after a crash".into());
                }
                app.now = Instant::now();
                term.draw(|frame| draw(frame, app)).map_err(|e| format!("cannot draw: {e}"))?;
                frames.drawn(Instant::now());
            }
            joined = async {
                match agent.as_deref_mut() {
                    Some(a) => (&mut a.task).await,
                    None => std::future::pending().await,
                }
            }, if agent_alive => {
                let why = match joined {
                    Err(e) if e.is_panic() => "the agent task panicked".to_string(),
                    Err(e) => format!("the agent task ended: {e}"),
                    Ok(()) => "the agent task ended".to_string(),
                };
                app.interrupt();
                return Err(format!("{why}; the UI has closed (see the message above and the log)"));
            }
            signal = signals.recv() => {
                tracing::info!(signal, "signal received");
                app.request_quit();
                return Ok(128 + signal);
            }
            event = keys.next() => match event {
                Some(Ok(event)) => {
                    let moved = matches!(&event, Event::Mouse(m) if m.kind == MouseEventKind::Moved);
                    app.now = Instant::now();
                    app.on_terminal(event);
                    if !moved {
                        frames.request();
                    }
                }
                Some(Err(e)) => return Err(format!("cannot read the terminal: {e}")),
                None => return Err("the terminal closed".into()),
            },
            event = inbox.recv(), if inbox_open => match event {
                Some(event) => {
                    app.now = Instant::now();
                    app.on_agent(event);
                    // Take whatever else is already waiting: one frame for all of it.
                    for _ in 0..1024 {
                        match inbox.try_recv() {
                            Ok(event) => app.on_agent(event),
                            Err(_) => break,
                        }
                    }
                    frames.request();
                }
                None => inbox_open = false,
            },
            _ = clock.tick(), if app.is_running() => frames.request(),
        }
        for effect in app.take_effects() {
            match effect {
                Effect::RunTask { task, cancel } => {
                    let sent = agent.as_ref().is_some_and(|a| {
                        a.commands
                            .send(AgentCommand::RunTask { task, cancel })
                            .is_ok()
                    });
                    if !sent {
                        app.agent_died("it no longer accepts tasks");
                    }
                }
                Effect::Resume { cancel } => {
                    let sent = agent
                        .as_ref()
                        .is_some_and(|a| a.commands.send(AgentCommand::Resume { cancel }).is_ok());
                    if !sent {
                        app.agent_died("it no longer accepts tasks");
                    }
                }
                Effect::ClearConversation => {
                    if let Some(a) = &agent {
                        let _ = a.commands.send(AgentCommand::ClearConversation);
                    }
                }
                Effect::SetMouseCapture(on) => {
                    if let Err(e) = terminal::set_mouse_capture(on) {
                        tracing::warn!(%e, "cannot switch mouse capture");
                    }
                }
                Effect::Quit => return Ok(EXIT_OK),
            }
            frames.request();
        }
    }
}

/// Sleep until `at` (forever for `None`; the branch is disabled then anyway).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// SIGTERM, SIGHUP and SIGINT end the app cleanly (terminal restored).
#[cfg(unix)]
mod signals {
    use tokio::signal::unix::{Signal, SignalKind, signal};

    pub struct Signals {
        term: Signal,
        hup: Signal,
        int: Signal,
    }

    impl Signals {
        pub fn new() -> std::io::Result<Self> {
            Ok(Signals {
                term: signal(SignalKind::terminate())?,
                hup: signal(SignalKind::hangup())?,
                int: signal(SignalKind::interrupt())?,
            })
        }

        /// The number of the next signal.
        pub async fn recv(&mut self) -> i32 {
            tokio::select! {
                _ = self.term.recv() => 15,
                _ = self.hup.recv() => 1,
                _ = self.int.recv() => 2,
            }
        }
    }
}

#[cfg(not(unix))]
mod signals {
    pub struct Signals;

    impl Signals {
        pub fn new() -> std::io::Result<Self> {
            Ok(Signals)
        }

        pub async fn recv(&mut self) -> i32 {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}
