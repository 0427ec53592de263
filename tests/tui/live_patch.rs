//! The live diff of an `apply_patch` whose `patch` argument is still
//! streaming: "waiting for a complete hunk" until one arrives, then the files
//! and hunks so far, recomputed at most every 100 ms, never an error.

use crate::support::tui::*;
use std::time::Duration;
use stepwise::agent::AgentEvent;
use stepwise::tui::App;

fn streaming(app: &mut App, fragment: &str) {
    app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
        index: 0,
        tool: "apply_patch".into(),
        preview: stepwise::tools::calls::registry::LivePreview::Patch,
        fragment: fragment.into(),
    }));
}

fn later(app: &mut App, ms: u64) {
    app.set_now(app.now() + Duration::from_millis(ms));
}

#[test]
fn a_streaming_patch_shows_its_files_and_hunks_as_they_arrive() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    streaming(
        &mut app,
        r#"{"patch": "--- a/calculator.py\n+++ b/calculator.py\n@@ -9,3 +9,4 @@\n def subtract"#,
    );
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("waiting for a complete hunk"), "{shown}");
    streaming(&mut app, r#"(a, b):\n+    \"\"\"Return a minus b.\"\"\"\n"#);
    // Throttled: the preview is not recomputed for every fragment.
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("waiting for a complete hunk"), "{shown}");
    later(&mut app, 150);
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(
        shown.contains("Patch · 1 file so far · streaming"),
        "{shown}"
    );
    assert!(shown.contains("━ calculator.py"), "{shown}");
    assert!(
        shown.contains("+    \"\"\"Return a minus b.\"\"\""),
        "{shown}"
    );
    assert!(shown.contains("still writing this edit"), "{shown}");
    streaming(
        &mut app,
        r#"--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+# Notes"#,
    );
    later(&mut app, 150);
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("Patch · 2 files so far"), "{shown}");
    assert!(
        shown.contains("+# Notes"),
        "the cut last line shows too: {shown}"
    );
}

#[test]
fn a_malformed_streaming_patch_only_waits() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    streaming(
        &mut app,
        r#"{"patch": "@@ nonsense\n-+-\n\u0000 --- +++ @@ -x +y @@\n"#,
    );
    later(&mut app, 150);
    let shown = screen(&draw(&mut app, 80, 24));
    assert!(shown.contains("waiting for a complete hunk"), "{shown}");
    assert!(
        !shown.contains("cannot be read") && !shown.contains("error:"),
        "{shown}"
    );
}
