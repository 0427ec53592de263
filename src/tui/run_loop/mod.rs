//! The run loop: waits on the terminal's events, the core's events, signals
//! and the frame clock; feeds every event to `App::update` as a `Msg`;
//! carries out the App's effects in ONE executor (`execute`); and draws on
//! demand, coalescing requests and capping the frame rate.
//!
//! It is generic over the ratatui backend, the terminal event stream and the
//! `Host` (signals, mouse capture, the editor hand-off), so tests drive the
//! real loop on a `TestBackend` with scripted keys and a fake agent channel;
//! `real_host` is the real terminal's `Host`.
//!
//! What must stay true: one failure policy for the agent. A command the
//! agent cannot take because its channel closed means the agent is gone:
//! `App::agent_died` says so once, however many commands fail after. With no
//! agent at all (it never started: the configuration problem is on screen
//! and the App refuses tasks), commands are dropped.

pub mod real_host;

#[cfg(test)]
mod grammar_tests;
#[cfg(test)]
mod tests;

use crate::agent::{AgentCommand, AgentEvent, AgentHandle};
use crate::tui::app::{App, Effect, Msg};
use crate::tui::term::frame::FrameClock;
use crate::tui::view::prepare_and_draw;
use crossterm::event::{Event, MouseEventKind};
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Shortest time between two frames (a cap of about 60 frames per second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Exit code of a normal quit.
pub const EXIT_OK: i32 = 0;
/// Core events taken at once before a frame (one frame for all of them).
const BATCH: usize = 1024;

/// What the loop needs from its surroundings besides drawing and events.
pub trait Host<B: Backend, S> {
    /// Whether drawing is still allowed (false once the terminal was restored).
    fn is_active(&self) -> bool;
    /// The number of the next terminating signal.
    fn signal(&mut self) -> impl Future<Output = i32>;
    /// Switch mouse capture on or off.
    fn set_mouse_capture(&mut self, on: bool);
    /// Get the user's attention: an approval waits and the terminal is not
    /// focused. Nothing by default (test hosts).
    fn notify(&mut self, _text: &str) {}
    /// Hand the terminal to the user's editor for `content`, then take it
    /// back: the editor's result, or a fatal error for the loop.
    fn edit(
        &mut self,
        term: &mut Terminal<B>,
        events: &mut S,
        request: EditRequest,
    ) -> impl Future<Output = Result<Result<String, String>, String>>;
}

/// A proposal to open in the editor.
#[derive(Debug, Clone)]
pub struct EditRequest {
    pub path: String,
    pub content: String,
    /// Mouse capture to restore afterwards.
    pub mouse: bool,
}

/// What the loop does after an effect.
enum Next {
    Continue,
    Exit(i32),
}

/// The loop: returns the exit code, or a message for a fatal error.
pub async fn event_loop<B, S, H>(
    term: &mut Terminal<B>,
    host: &mut H,
    events: &mut S,
    app: &mut App,
    mut agent: Option<&mut AgentHandle>,
    mut inbox: mpsc::UnboundedReceiver<AgentEvent>,
) -> Result<i32, String>
where
    B: Backend,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
    H: Host<B, S>,
{
    let mut clock = tokio::time::interval(Duration::from_secs(1));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut inbox_open = true;
    let mut frames = FrameClock::new(FRAME_INTERVAL, Instant::now());
    // Results of work done off the loop (the `@` picker's file list, grammars).
    let (files, mut listed) = mpsc::unbounded_channel::<Msg>();
    loop {
        let agent_alive = agent.is_some();
        tokio::select! {
            biased;
            _ = sleep_until(frames.due()), if frames.due().is_some() => {
                if !host.is_active() {
                    return Err("the terminal was restored after a crash".into());
                }
                app.set_now(Instant::now());
                term.draw(|frame| prepare_and_draw(frame, app)).map_err(|e| format!("cannot draw: {e}"))?;
                frames.drawn(Instant::now());
                if app.colouring_due() {
                    frames.request();
                }
            }
            joined = async {
                match agent.as_deref_mut() {
                    Some(a) => (&mut a.task).await,
                    None => std::future::pending().await,
                }
            }, if agent_alive => {
                app.interrupt();
                return Err(agent_ended(joined));
            }
            signal = host.signal() => {
                tracing::info!(signal, "signal received");
                app.request_quit();
                return Ok(128 + signal);
            }
            event = events.next() => match event {
                Some(Ok(event)) => {
                    let moved = matches!(&event, Event::Mouse(m) if m.kind == MouseEventKind::Moved);
                    app.set_now(Instant::now());
                    app.update(Msg::Terminal(event));
                    if !moved {
                        frames.request();
                    }
                }
                Some(Err(e)) => return Err(format!("cannot read the terminal: {e}")),
                None => return Err("the terminal closed".into()),
            },
            event = inbox.recv(), if inbox_open => match event {
                Some(event) => {
                    core_events(app, event, &mut inbox);
                    frames.request();
                }
                None => inbox_open = false,
            },
            Some(msg) = listed.recv() => {
                app.set_now(Instant::now());
                app.update(msg);
                frames.request();
            }
            _ = clock.tick(), if app.is_running() => frames.request(),
            // A prompt finished arming, or a quit confirmation ran out.
            _ = sleep_until(app.wake_at()), if app.wake_at().is_some() => {
                app.set_now(Instant::now());
                frames.request();
            }
            // A live preview held back by its throttle is due.
            _ = sleep_until(app.live_refresh_due()), if app.live_refresh_due().is_some() => {
                frames.request();
            }
        }
        for effect in app.take_effects() {
            let next = execute(effect, term, host, events, app, agent.as_deref(), &files).await?;
            if let Next::Exit(code) = next {
                return Ok(code);
            }
            frames.request();
        }
    }
}

/// Why the agent task ended, for the message the UI closes with.
fn agent_ended(joined: Result<(), tokio::task::JoinError>) -> String {
    let why = match joined {
        Err(e) if e.is_panic() => "the agent task panicked".to_string(),
        Err(e) => format!("the agent task ended: {e}"),
        Ok(()) => "the agent task ended".to_string(),
    };
    format!("{why}; the UI has closed (see the message above and the log)")
}

/// `first` and whatever else is already waiting: one frame for all of it.
fn core_events(app: &mut App, first: AgentEvent, inbox: &mut mpsc::UnboundedReceiver<AgentEvent>) {
    app.set_now(Instant::now());
    app.update(Msg::Agent(first));
    for _ in 0..BATCH {
        match inbox.try_recv() {
            Ok(event) => app.update(Msg::Agent(event)),
            Err(_) => break,
        }
    }
}

/// Carry out one effect of the App.
async fn execute<B, S, H>(
    effect: Effect,
    term: &mut Terminal<B>,
    host: &mut H,
    events: &mut S,
    app: &mut App,
    agent: Option<&AgentHandle>,
    files: &mpsc::UnboundedSender<Msg>,
) -> Result<Next, String>
where
    B: Backend,
    H: Host<B, S>,
{
    let command = match effect {
        // The core owns the approvals; its `ScopesChanged` updates the header.
        Effect::Agent(command) => command,
        Effect::EditProposal {
            serial,
            path,
            content,
        } => {
            let mouse = app.mouse_capture();
            let request = EditRequest {
                path,
                content,
                mouse,
            };
            let result = host.edit(term, events, request).await?;
            app.set_now(Instant::now());
            app.update(Msg::Edited { serial, result });
            return Ok(Next::Continue);
        }
        Effect::SetMouseCapture(on) => {
            host.set_mouse_capture(on);
            return Ok(Next::Continue);
        }
        Effect::Notify(text) => {
            host.notify(&text);
            return Ok(Next::Continue);
        }
        Effect::ListFiles(source) => {
            list_files(source, files.clone());
            return Ok(Next::Continue);
        }
        Effect::WarmGrammar { lang, sample } => {
            warm_grammar(lang, sample, files.clone());
            return Ok(Next::Continue);
        }
        Effect::Quit => return Ok(Next::Exit(EXIT_OK)),
    };
    send(app, agent, command);
    Ok(Next::Continue)
}

/// Compile a grammar on a blocking thread; its answer comes back into the
/// loop as a `Msg` (which asks for a frame), so no frame waits for it.
fn warm_grammar(lang: String, sample: Vec<String>, to_loop: mpsc::UnboundedSender<Msg>) {
    tokio::task::spawn_blocking(move || {
        let known = crate::tui::render::highlight_warm::warm(&lang, &sample);
        let _ = to_loop.send(Msg::GrammarReady { lang, known });
    });
}

/// Walk the workspace for the `@` picker on a blocking thread; the list
/// comes back into the loop as a `Msg`, so no frame waits for the disk.
fn list_files(source: crate::tui::input::picker::FileSource, to_loop: mpsc::UnboundedSender<Msg>) {
    tokio::task::spawn_blocking(move || {
        let cap = crate::tools::reading::file_index::MAX_FILES;
        let (files, more) = crate::tools::reading::file_index::workspace_files(&source.0, cap);
        let _ = to_loop.send(Msg::Files { files, more });
    });
}

/// The failure policy: a closed channel means the agent is gone (said once).
fn send(app: &mut App, agent: Option<&AgentHandle>, command: AgentCommand) {
    let Some(agent) = agent else {
        tracing::warn!("no agent to take a command");
        return;
    };
    if agent.commands.send(command).is_err() {
        app.agent_died("it no longer accepts commands");
    }
}

/// Sleep until `at` (forever for `None`; the branch is disabled then anyway).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
