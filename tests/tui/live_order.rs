//! Live previews whatever order the arguments stream in: a `write_file`
//! whose `content` arrives before its `path` still shows its diff building
//! up once the path is known.

use crate::support::tui::*;
use std::time::Duration;
use stepwise::agent::AgentEvent;

#[test]
fn a_write_whose_content_streams_before_its_path_still_previews() {
    let mut app = app();
    explored(&mut app);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 3 }));
    let stream = |app: &mut stepwise::tui::App, fragment: &str| {
        app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
            index: 0,
            tool: "write_file".into(),
            preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
            fragment: fragment.into(),
        }))
    };
    stream(
        &mut app,
        r#"{"content": "\"\"\"A tiny calculator: the sample project stepwise works on by default.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return the total of a and b.\"\"\"\n", "#,
    );
    stream(&mut app, r#""path": "calculator.py""#);
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "write_file".into(),
        path: "calculator.py".into(),
        old: Some(CALCULATOR.into()),
    }));
    app.set_now(app.now() + Duration::from_millis(150));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("streaming… (incomplete)"), "{shown}");
    assert!(
        shown.contains("+    \"\"\"Return the total of a and b.\"\"\""),
        "{shown}"
    );
}
