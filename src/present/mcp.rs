//! How MCP servers read in English, for both front ends: the line sent when
//! a server's state changes, and the lines of `/mcp` (each server, its
//! state and its tools). Server names and messages are untrusted: every line
//! passes `one_line`.

use super::one_line;
use crate::mcp::{ServerReport, ServerState};

/// The line for a server's change of state.
pub fn server_line(r: &ServerReport) -> String {
    let server = one_line(&r.server);
    let text = match r.state {
        ServerState::Starting => format!("MCP server {server} is starting"),
        ServerState::Running => {
            let mut line = format!("MCP server {server} started: {}", tools_text(&r.tools));
            if let Some(note) = &r.message {
                line.push_str(&format!(" ({note})"));
            }
            line
        }
        ServerState::Failed => format!(
            "MCP server {server} failed: {}; its tools are not offered",
            r.message.as_deref().unwrap_or("no reason given")
        ),
        ServerState::Stopped => format!(
            "MCP server {server} stopped: {}; its tools are no longer offered",
            r.message.as_deref().unwrap_or("it exited")
        ),
    };
    one_line(&text).into_owned()
}

/// The lines of `/mcp`: one per server, or a line saying none is configured.
pub fn list_lines(reports: &[ServerReport]) -> Vec<String> {
    if reports.is_empty() {
        return vec![
            "No MCP servers: add [mcp.servers.NAME] command = [...] to stepwise.toml".into(),
        ];
    }
    reports
        .iter()
        .map(|r| {
            let mut line = format!("{}: {}", r.server, r.state.as_str());
            if r.state == ServerState::Running {
                line.push_str(&format!(", {}", tools_text(&r.tools)));
            }
            if let Some(note) = &r.message {
                line.push_str(&format!(" — {note}"));
            }
            one_line(&line).into_owned()
        })
        .collect()
}

fn tools_text(tools: &[String]) -> String {
    match tools.len() {
        0 => "no tools".into(),
        1 => format!("1 tool ({})", tools[0]),
        n => format!("{n} tools ({})", tools.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(state: ServerState, tools: &[&str], message: Option<&str>) -> ServerReport {
        ServerReport {
            server: "t".into(),
            state,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            message: message.map(str::to_string),
        }
    }

    #[test]
    fn server_lines_say_the_state_and_what_it_means_for_its_tools() {
        let up = report(ServerState::Running, &["mcp__t__echo", "mcp__t__add"], None);
        assert_eq!(
            server_line(&up),
            "MCP server t started: 2 tools (mcp__t__echo, mcp__t__add)"
        );
        let down = report(ServerState::Stopped, &[], Some("it exited\u{1b}[2J"));
        let line = server_line(&down);
        assert!(
            line.contains("no longer offered") && !line.contains('\u{1b}'),
            "{line}"
        );
        let failed = report(ServerState::Failed, &[], Some("cannot start x"));
        assert!(server_line(&failed).contains("failed: cannot start x"));
        assert_eq!(
            list_lines(&[up])[0],
            "t: running, 2 tools (mcp__t__echo, mcp__t__add)"
        );
        assert!(list_lines(&[])[0].contains("[mcp.servers.NAME]"));
    }
}
