//! The real run loop colours a code block once its grammar is ready off
//! the UI thread, with no key pressed: the worker's answer alone brings the
//! frame. A backend watches the frames it is given; the only terminal event
//! (Ctrl+D) comes after it saw the block coloured.

use super::tests::FakeHost;
use super::{EXIT_OK, event_loop};
use crate::agent::AgentEvent;
use crate::tui::app::App;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures_util::stream::{self, StreamExt};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Size};
use std::sync::Arc;
use tokio::sync::{Notify, mpsc};

/// Whether `fn` and `main` of `fn main` differ in colour (None: not shown).
fn coloured(buf: &Buffer) -> Option<bool> {
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(x) = row.find("fn main") {
            let x = u16::try_from(x).ok()?;
            return Some(buf[(x, y)].fg != buf[(x + 3, y)].fg);
        }
    }
    None
}

/// A `TestBackend` that records each frame's colouring of the block.
struct Watching {
    inner: TestBackend,
    frames: Vec<Option<bool>>,
    seen: Arc<Notify>,
}

impl Backend for Watching {
    type Error = <TestBackend as Backend>::Error;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(
        &mut self,
        c: I,
    ) -> Result<(), Self::Error> {
        self.inner.draw(c)?;
        let now = coloured(self.inner.buffer());
        if now == Some(true) {
            self.seen.notify_one();
        }
        self.frames.push(now);
        Ok(())
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }
}

#[tokio::test]
async fn the_grammar_s_answer_alone_brings_the_frame_that_colours_the_block() {
    let mut app = App::new("m", "~/w");
    app.set_grammars_off_thread();
    let seen = Arc::new(Notify::new());
    let backend = Watching {
        inner: TestBackend::new(80, 24),
        frames: Vec::new(),
        seen: seen.clone(),
    };
    let mut term = Terminal::new(backend).unwrap();
    let (core, inbox) = mpsc::unbounded_channel();
    let text = "```rust\nfn main() {\n    let x = 1;\n}\n```\n".to_string();
    core.send(AgentEvent::AssistantDelta { text }).unwrap();
    core.send(AgentEvent::AssistantMessage {
        text: String::new(),
    })
    .unwrap();
    let quit = async move {
        seen.notified().await;
        Ok(Event::Key(KeyEvent::new(
            KeyCode::Char('d'),
            KeyModifiers::CONTROL,
        )))
    };
    let mut events = stream::once(quit).chain(stream::pending()).boxed();
    let mut host = FakeHost::quiet();
    let run = event_loop(&mut term, &mut host, &mut events, &mut app, None, inbox);
    let code = tokio::time::timeout(std::time::Duration::from_secs(20), run).await;
    assert_eq!(code.ok(), Some(Ok(EXIT_OK)), "coloured, then quit");
    let frames = &term.backend().frames;
    let first_shown = frames.iter().position(Option::is_some).unwrap();
    assert_eq!(
        frames[first_shown],
        Some(false),
        "shown plain first: {frames:?}"
    );
    assert!(frames.contains(&Some(true)), "{frames:?}");
}
