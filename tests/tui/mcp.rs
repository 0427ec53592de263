//! An MCP call's prompt shows the server, the tool and the arguments as
//! formatted JSON (sanitized), and `a` offers that one tool by its full name.

use crate::support::tui::*;
use stepwise::agent::{ApprovalAction, Decision};
use stepwise::tools::ToolId;

#[test]
fn an_mcp_prompt_shows_server_tool_and_arguments() {
    let mut app = app();
    explored(&mut app);
    let arguments = "{\n  \"path\": \"notes\u{1b}]0;evil\u{7}\",\n  \"depth\": 2\n}".to_string();
    let mut rx = propose(
        &mut app,
        5,
        ToolId::mcp("files", "list_directory"),
        ApprovalAction::McpCall {
            server: "files".into(),
            tool: "list_directory".into(),
            arguments,
        },
    );
    let shown = screen(&draw(&mut app, 120, 40));
    for row in [
        "MCP call · step 5",
        "Server     files",
        "Tool       list_directory",
        "Arguments  {",
        "\"depth\": 2",
        "Call list_directory of MCP server files",
        "yes to every mcp__files__list_directory this task",
    ] {
        assert!(shown.contains(row), "{row}:\n{shown}");
    }
    assert!(!shown.contains('\u{1b}'), "{shown}");
    assert!(undecided(&mut rx));
    press(&mut app, crossterm::event::KeyCode::Char('y'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::Approve));
}

#[test]
fn approving_one_mcp_tool_for_the_task_names_that_tool_and_its_server() {
    let mut app = app();
    explored(&mut app);
    let mut rx = propose(
        &mut app,
        5,
        ToolId::mcp("files", "list_directory"),
        ApprovalAction::McpCall {
            server: "files".into(),
            tool: "list_directory".into(),
            arguments: "{}".into(),
        },
    );
    press(&mut app, crossterm::event::KeyCode::Char('a'));
    press(&mut app, crossterm::event::KeyCode::Char('a'));
    assert_eq!(rx.try_recv().ok(), Some(Decision::ApproveToolForTask));
    let all: Vec<&str> = app.conversation().texts().collect();
    assert!(
        all.contains(&"You approved every call of list_directory on MCP server files (no other of its tools) for the rest of this task (F3 revokes)"),
        "{all:#?}"
    );
}
