//! The full-screen terminal UI. Data flows one way: terminal events and the
//! core's events go into one `App` (a state machine, no terminal inside);
//! the run loop here carries out the App's `Effect`s and draws the state on
//! demand, coalescing requests and capping the frame rate.
//!
//! - `app` (state), `agent_events` (core events), `input` (keys, mouse,
//!   paste), `commands` (slash commands), `approval` (the queue), `review`
//!   (hunks, edited versions) and `approving` (the prompt's keys, decisions)
//! - panes: `header`, `conversation` (+ `receipt`), `tool_calls`,
//!   `diff_pane`/`diff_view` (+ `inline` word highlights, `live` previews),
//!   `prompt_bar`, `input_box`, overlays `detail`, `session_diff`, `help`;
//!   `layout` places them, `view` draws them
//! - `text` (sanitizing, wrapping), `scroll`, `terminal` (setup/restore,
//!   handing the terminal to `editor`, logs)

pub mod app;
pub mod approval;
pub mod input;
pub mod overlays;
pub mod panes;
pub mod render;
pub mod term;

pub use app::{App, Effect, Focus, Overlay, TaskState};
pub use render::view::draw;
use term::{editor, frame, signals, terminal};

use crate::agent::{AgentCommand, AgentEvent, AgentHandle, spawn_agent};
use crate::config::{Config, ConfigError};
use crate::setup;
use crossterm::event::{Event, EventStream, MouseEventKind};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::IsTerminal;
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
    } = prepared;
    let mut app = App::new(model_label, display_path(&workspace));
    // The header names the rules file from the start (each task reads it again).
    app.rules = crate::agent::rules::load(&workspace).files;
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
                if p == ConfigError::MissingKey {
                    app.notice(FIRST_CONTACT);
                }
                app.set_config_error(p.to_string());
                None
            }
            None => {
                if let Some(task) = &task {
                    app.prefill(task);
                }
                let agent = spawn_agent(session, events);
                #[cfg(debug_assertions)]
                let agent = debug_hooks::maybe_panicking(agent);
                Some(agent)
            }
        };
        (inbox, agent)
    };
    let code = runtime.block_on(run_app(app, agent, inbox));
    drop(lock);
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
        AgentHandle {
            commands,
            task,
            approvals: real.approvals,
        }
    }
}

/// What a newcomer without a key is told on the first screen.
const FIRST_CONTACT: &str = "Welcome to stepwise. No API key is set, so no model can be reached yet. Pick one:
  1. Put `OPENAI_API_KEY=sk-...` in a `.env` file in this folder (optionally also `OPENAI_BASE_URL=...` and `STEPWISE_MODEL=...`; see `.env.example`), then start stepwise again.
  2. Try it without a key: `stepwise --demo` plays a scripted model on a copy of the workspace.
  3. Use a local server, which needs no key, e.g. Ollama: `stepwise --base-url http://localhost:11434/v1 --model qwen2.5-coder`.
Press Ctrl+C to quit.";

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
    if let Some(AgentHandle { commands, task, .. }) = agent {
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
                    // The header shows exactly what the core auto-approves.
                    if let Some(a) = agent.as_deref() {
                        app.sync_scopes(a.approvals.list());
                    }
                    frames.request();
                }
                None => inbox_open = false,
            },
            _ = clock.tick(), if app.is_running() => frames.request(),
            // A live preview held back by its throttle is due.
            _ = sleep_until(app.live.next_refresh()), if app.live.next_refresh().is_some() => {
                frames.request();
            }
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
                Effect::ShowDiff => send(app, agent.as_deref(), AgentCommand::ShowDiff),
                Effect::Compact => send(app, agent.as_deref(), AgentCommand::Compact),
                Effect::Undo { all, cancel } => {
                    send(app, agent.as_deref(), AgentCommand::Undo { all, cancel })
                }
                Effect::RevokeApprovals(tools) => {
                    if let Some(a) = &agent {
                        for tool in tools {
                            a.approvals.revoke(tool);
                        }
                    }
                }
                Effect::EditProposal {
                    serial,
                    path,
                    content,
                } => {
                    let result =
                        edit_outside(term, &mut keys, app.mouse_capture, &path, &content).await?;
                    app.now = Instant::now();
                    app.edit_finished(serial, result);
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

/// Send a command to the core, or say why it cannot run.
fn send(app: &mut App, agent: Option<&AgentHandle>, command: AgentCommand) {
    let sent = agent.is_some_and(|a| a.commands.send(command).is_ok());
    if !sent {
        app.undo = None;
        app.cancel = None;
        app.flash = Some("The agent is not running: fix the problem shown above first.".into());
    }
}

/// Hand the terminal to the user's editor for `content`, then take it back.
/// The key reader is replaced so it cannot swallow keys meant for the editor.
async fn edit_outside(
    term: &mut Term,
    keys: &mut EventStream,
    mouse: bool,
    path: &str,
    content: &str,
) -> Result<Result<String, String>, String> {
    drop(std::mem::replace(keys, EventStream::new()));
    terminal::suspend();
    let argv = editor::from_env();
    tracing::info!(editor = ?argv.first(), "editing a proposal");
    let result = editor::edit(path, content, &argv).await;
    terminal::resume(mouse).map_err(|e| format!("cannot take the terminal back: {e}"))?;
    // The screen is blank again: draw a blank frame so that the next one is
    // drawn in full (`Terminal::clear` would query the cursor position).
    term.draw(|_| {})
        .map_err(|e| format!("cannot redraw the terminal: {e}"))?;
    Ok(result)
}

/// Sleep until `at` (forever for `None`; the branch is disabled then anyway).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
