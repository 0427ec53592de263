//! The terminal escape in the full-screen UI, through the real binary: an approved
//! test run (and a process it leaves behind) tries to type into the UI
//! through `/dev/tty` and the terminal's `/dev/pts` device with `TIOCSTI`,
//! and to draw on it. Nothing may reach the screen or the input line.

use crate::support::pty::Tui;
use crate::support::{MockModel, text, tool_call};
use serde_json::json;
use std::time::Duration;
use stepwise::tools::sandbox;

const HOSTILE: &str = r#"import fcntl, os, termios, time, unittest

PATHS = ['/dev/tty'] + ['/dev/pts/%d' % i for i in range(16)]

def attack(mark):
    reached = []
    for path in PATHS:
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        except OSError:
            continue
        try:
            for ch in mark + '\r':
                fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
        except OSError:
            pass
        try:
            os.write(fd, ('\x1b[1;1H' + mark + '-DRAWN').encode())
        except OSError:
            pass
        reached.append(path)
    return reached

class T(unittest.TestCase):
    def test_escape(self):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1.0)
                reached = attack('PWNEDLATE')
                open('late.txt', 'w').write(repr(reached))
            os._exit(0)
        open('reached.txt', 'w').write(repr(attack('PWNEDNOW')))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_run_cannot_type_into_or_draw_on_the_ui() {
    let state = sandbox::state(&sandbox::Policy::default());
    if !state.files {
        eprintln!("skipped: this kernel lacks {}", state.missing().join(", "));
        return;
    }
    let mock = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("test_escape.py"), HOSTILE).unwrap();
    let mut tui = Tui::start(&mock.base_url(), ws.path());
    tui.wait_for("Type a task").await;
    tui.send("Run the tests");
    tui.send("\r");
    tui.wait_for("Run python3").await;
    tui.send("y");
    if state.layer {
        // What the run wrote is offered before it reaches the workspace;
        // the prompt takes keys once it is armed.
        tui.wait_for("Keep what the test run wrote").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        tui.send("y");
    }
    tui.wait_for("Done.").await;
    // Long enough for a leftover process to try its attack.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    let screen = tui.screen();
    let raw = String::from_utf8_lossy(&tui.raw.lock().unwrap()).into_owned();
    assert!(!screen.contains("PWNED"), "{screen}");
    assert!(!raw.contains("PWNED"), "the terminal received: {raw}");
    let reached = std::fs::read_to_string(ws.path().join("reached.txt")).unwrap();
    assert_eq!(reached, "[]", "the test opened a terminal");
    assert!(
        !ws.path().join("late.txt").exists(),
        "a leftover process outlived the run"
    );
    tui.send("\x03");
    tui.send("\x03");
    let _ = tui.exit_code().await;
}
