//! The real run loop on a `TestBackend`: scripted terminal events, a fake
//! agent channel, a host without signals or editor. No pseudo-terminal.

use super::{EXIT_OK, EditRequest, Host, event_loop};
use crate::agent::{AgentCommand, AgentEvent, AgentHandle};
use crate::tools::{ToolId, ToolName};
use crate::tui::app::App;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures_util::stream::{self, Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::future::Future;
use tokio::sync::mpsc;

/// Signals after `signal` (never when `None`); the editor is not there.
pub(super) struct FakeHost {
    pub(super) signal: Option<i32>,
    pub(super) mouse: Vec<bool>,
}

impl FakeHost {
    /// No signal, no editor.
    pub(super) fn quiet() -> FakeHost {
        FakeHost {
            signal: None,
            mouse: Vec::new(),
        }
    }
}

impl<B: ratatui::backend::Backend, S> Host<B, S> for FakeHost {
    fn is_active(&self) -> bool {
        true
    }

    fn signal(&mut self) -> impl Future<Output = i32> {
        let signal = self.signal;
        async move {
            match signal {
                Some(n) => n,
                None => std::future::pending().await,
            }
        }
    }

    fn set_mouse_capture(&mut self, on: bool) {
        self.mouse.push(on);
    }

    async fn edit(
        &mut self,
        _term: &mut Terminal<B>,
        _events: &mut S,
        _request: EditRequest,
    ) -> Result<Result<String, String>, String> {
        Ok(Err("no editor in this test".into()))
    }
}

fn key(code: KeyCode) -> std::io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn ctrl(c: char) -> std::io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

fn typed(text: &str) -> Vec<std::io::Result<Event>> {
    text.chars().map(|c| key(KeyCode::Char(c))).collect()
}

/// The scripted events, then a terminal that stays open and quiet.
fn script(
    events: Vec<std::io::Result<Event>>,
) -> impl Stream<Item = std::io::Result<Event>> + Unpin {
    stream::iter(events).chain(stream::pending())
}

/// An agent whose task never ends, and the other end of its command channel.
fn fake_agent() -> (AgentHandle, mpsc::UnboundedReceiver<AgentCommand>) {
    let (commands, inbox) = mpsc::unbounded_channel();
    let task = tokio::spawn(std::future::pending::<()>());
    let agent = AgentHandle { commands, task };
    (agent, inbox)
}

async fn run(
    app: &mut App,
    host: &mut FakeHost,
    agent: Option<&mut AgentHandle>,
    events: Vec<std::io::Result<Event>>,
) -> Result<i32, String> {
    let mut term = Terminal::new(TestBackend::new(100, 30)).map_err(|e| e.to_string())?;
    let (_events_tx, inbox) = mpsc::unbounded_channel::<AgentEvent>();
    let mut events = script(events);
    let run = event_loop(&mut term, host, &mut events, app, agent, inbox);
    tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .map_err(|_| "the loop did not end".to_string())?
}

fn host() -> FakeHost {
    FakeHost {
        signal: None,
        mouse: Vec::new(),
    }
}

#[tokio::test]
async fn a_typed_task_and_enter_send_run_task_to_the_agent() {
    let mut app = App::new("m", "~/w");
    let (mut agent, mut commands) = fake_agent();
    let mut events = typed("fix it");
    events.push(key(KeyCode::Enter));
    events.push(ctrl('c')); // interrupts the running task
    events.push(key(KeyCode::F(2))); // mouse capture off, through the host
    events.push(ctrl('d')); // quits
    let code = run(&mut app, &mut host(), Some(&mut agent), events).await;
    assert_eq!(code, Ok(EXIT_OK));
    match commands.try_recv() {
        Ok(AgentCommand::RunTask { task, cancel }) => {
            assert_eq!(task, "fix it");
            assert!(cancel.is_cancelled(), "Ctrl+C interrupted it");
        }
        other => panic!("expected RunTask, got {other:?}"),
    }
    assert!(app.quitting());
}

#[tokio::test]
async fn mouse_capture_goes_to_the_host_and_ctrl_c_quits_when_idle() {
    let mut app = App::new("m", "~/w");
    let mut host = host();
    let events = vec![key(KeyCode::F(2)), key(KeyCode::F(2)), ctrl('c')];
    let code = run(&mut app, &mut host, None, events).await;
    assert_eq!(code, Ok(EXIT_OK), "Ctrl+C when idle quits normally");
    assert_eq!(host.mouse, [false, true]);
}

#[tokio::test]
async fn a_failed_send_is_reported_once() {
    let mut app = App::new("m", "~/w");
    let (mut agent, commands) = fake_agent();
    drop(commands); // the agent stopped taking commands
    let mut events = typed("one");
    events.push(key(KeyCode::Enter));
    events.extend(typed("/compact"));
    events.push(key(KeyCode::Enter));
    events.extend(typed("two"));
    events.push(key(KeyCode::Enter));
    events.push(ctrl('c'));
    let code = run(&mut app, &mut host(), Some(&mut agent), events).await;
    assert_eq!(code, Ok(EXIT_OK), "nothing runs, so Ctrl+C quits");
    let said = app
        .conversation()
        .texts()
        .filter(|t| t.contains("The agent stopped unexpectedly"))
        .count();
    assert_eq!(said, 1);
    assert!(!app.is_running());
}

#[tokio::test]
async fn a_signal_ends_the_loop_with_128_plus_its_number() {
    let mut app = App::new("m", "~/w");
    let mut host = FakeHost {
        signal: Some(15),
        mouse: Vec::new(),
    };
    let code = run(&mut app, &mut host, None, Vec::new()).await;
    assert_eq!(code, Ok(128 + 15));
    assert!(app.quitting());
}

#[tokio::test]
async fn revoking_an_mcp_tool_sends_the_core_that_very_tool() {
    // It crossed this boundary as a string once and was dropped on the way,
    // so the core went on auto-approving the tool.
    let mut app = App::new("m", "~/w");
    let tool = ToolId::mcp("files", "write_file");
    app.update(crate::tui::app::Msg::Agent(AgentEvent::ScopesChanged {
        approved: vec![tool.clone()],
    }));
    let (mut agent, mut commands) = fake_agent();
    let events = vec![key(KeyCode::F(3)), ctrl('c')];
    let code = run(&mut app, &mut host(), Some(&mut agent), events).await;
    assert_eq!(code, Ok(EXIT_OK));
    match commands.try_recv() {
        Ok(AgentCommand::RevokeApprovals(tools)) => assert_eq!(tools, [tool]),
        other => panic!("expected RevokeApprovals, got {other:?}"),
    }
}

#[tokio::test]
async fn revoking_sends_the_core_a_typed_command_and_the_header_waits_for_its_answer() {
    let mut app = App::new("m", "~/w");
    app.update(crate::tui::app::Msg::Agent(AgentEvent::ScopesChanged {
        approved: vec![ToolName::WRITE_FILE.into()],
    }));
    let (mut agent, mut commands) = fake_agent();
    let events = vec![key(KeyCode::F(3)), ctrl('c')];
    let code = run(&mut app, &mut host(), Some(&mut agent), events).await;
    assert_eq!(code, Ok(EXIT_OK));
    match commands.try_recv() {
        Ok(AgentCommand::RevokeApprovals(tools)) => {
            assert_eq!(tools, [ToolId::from(ToolName::WRITE_FILE)])
        }
        other => panic!("expected RevokeApprovals, got {other:?}"),
    }
}
