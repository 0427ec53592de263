//! MCP servers in the full-screen UI: each change of a server's state is one
//! line in the conversation (a failure or a stop as an error), and `/mcp`
//! lists every server known so far with its state and tools. The UI learns
//! of servers only from `McpServer` events; wording is `present::mcp`'s.

use crate::mcp::{ServerReport, ServerState};
use crate::present;
use crate::tui::app::App;
use crate::tui::panes::line_kind::Kind;

impl App {
    /// A server changed state: remember it and say so.
    pub(in crate::tui) fn mcp_server(&mut self, report: ServerReport) {
        let kind = match report.state {
            ServerState::Failed | ServerState::Stopped => Kind::Error,
            ServerState::Starting | ServerState::Running => Kind::Notice,
        };
        self.conversation
            .push_entry(kind, &present::mcp::server_line(&report));
        match self
            .facts
            .mcp
            .iter_mut()
            .find(|r| r.server == report.server)
        {
            Some(known) => *known = report,
            None => self.facts.mcp.push(report),
        }
    }

    /// `/mcp`: the servers, their state and their tools.
    pub(in crate::tui) fn list_mcp(&mut self) {
        for line in present::mcp::list_lines(&self.facts.mcp) {
            self.conversation.push_entry(Kind::Notice, &line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentEvent;

    fn shown(app: &App) -> String {
        app.conversation.texts().collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn servers_are_reported_and_listed_by_mcp() {
        let mut app = App::new("m", "/w");
        app.run_command("mcp");
        assert!(shown(&app).contains("No MCP servers"), "{}", shown(&app));
        app.on_agent(AgentEvent::McpServer(ServerReport {
            server: "t".into(),
            state: ServerState::Running,
            tools: vec!["mcp__t__echo".into()],
            message: None,
        }));
        assert!(shown(&app).contains("MCP server t started: 1 tool (mcp__t__echo)"));
        app.on_agent(AgentEvent::McpServer(ServerReport {
            server: "t".into(),
            state: ServerState::Stopped,
            tools: vec![],
            message: Some("the server exited".into()),
        }));
        app.run_command("mcp");
        let text = shown(&app);
        assert!(text.contains("t: stopped — the server exited"), "{text}");
    }
}
