//! Driving an `App` the way the run loop does: keys and the editor's result
//! as messages, and drawing into a `TestBackend` to read the screen.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use stepwise::agent::Decision;
use stepwise::tui::{App, Msg};
use tokio::sync::oneshot::Receiver;
use tokio::sync::oneshot::error::TryRecvError;

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn press(app: &mut App, code: KeyCode) {
    app.update(Msg::from(key(code)));
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.update(Msg::from(key(KeyCode::Char(c))));
    }
}

/// The editor closed on approval `serial` with `result`.
pub fn edited(app: &mut App, serial: u64, result: Result<String, String>) {
    app.update(Msg::Edited { serial, result });
}

/// Draw the app into a test terminal of the given size.
pub fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    term.draw(|f| stepwise::tui::prepare_and_draw(f, app))
        .expect("draw");
    drain_colouring(app, &mut term);
    term
}

/// Draw frames while code in view still waits for its syntax colours, as
/// the run loop does (each frame colours a slice, or looks for what a
/// worker coloured), so a screen is settled.
pub fn drain_colouring(app: &mut App, term: &mut Terminal<TestBackend>) {
    let waited = std::time::Instant::now();
    while waited.elapsed() < std::time::Duration::from_secs(30) {
        if !app.colouring_due() {
            return;
        }
        term.draw(|f| stepwise::tui::prepare_and_draw(f, app))
            .expect("draw");
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    panic!("colouring did not finish in 30 s");
}

/// The screen as text, one line per row.
pub fn screen(term: &Terminal<TestBackend>) -> String {
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Whether the request behind `rx` is still waiting for an answer.
pub fn undecided(rx: &mut Receiver<Decision>) -> bool {
    matches!(rx.try_recv(), Err(TryRecvError::Empty))
}

/// The screen row showing `needle`, and the column where it starts.
pub fn find(text: &str, needle: &str) -> Option<(u16, u16)> {
    text.lines().enumerate().find_map(|(y, row)| {
        row.find(needle)
            .map(|b| (row[..b].chars().count() as u16, y as u16))
    })
}
