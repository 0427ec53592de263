//! The configuration of one ACP session: the command line's flags and the
//! files layered for the client's `cwd`, the project file's guarded values
//! applied only in a trusted folder (trust is asked through a permission
//! request when no answer is remembered), and the client's `mcpServers`
//! joined to the configured ones.
//!
//! What must stay true: never the home folder or `/` as a workspace (the
//! command line's own check, `setup::too_broad`); the same trust rules as the other front ends
//! (`--trust`, a remembered answer bound to exactly these values, else the
//! question); anything but an allow runs with the project's guarded values
//! withheld; the client's servers pass the same checks as `[mcp.servers]`
//! (names, commands, no provider key passed on) and are governed like them
//! (every call waits for approval); only stdio servers are accepted.

use super::permission;
use super::rpc::{Outbox, RpcError};
use crate::config::dotenv::DotEnv;
use crate::config::flags::Options;
use crate::config::mcp::{McpServerSettings, McpSettings};
use crate::config::trust::{self, Answer, Pending, TrustStore};
use crate::config::{Config, ResumeFrom};
use agent_client_protocol_schema::v1::{McpServer, RequestPermissionRequest};
use std::path::Path;

/// What `stepwise acp` was started with: the command line, to layer again
/// for each session's folder.
#[derive(Debug, Clone)]
pub struct Start {
    pub matches: clap::ArgMatches,
    pub options: Options,
}

/// The configuration of a session on `cwd` (resuming `resume`, when given).
/// `asking` is the session id the trust question names.
pub(super) async fn session_config(
    start: &Start,
    out: &Outbox,
    asking: &str,
    cwd: &Path,
    servers: &[McpServer],
    resume: Option<&str>,
) -> Result<Config, RpcError> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(RpcError::invalid_params(format!(
            "cwd {} is not an absolute path to a folder",
            cwd.display()
        )));
    }
    if let Some(what) = crate::setup::too_broad(cwd) {
        return Err(RpcError::invalid_params(format!(
            "refusing to use {what} as the workspace: open a project folder"
        )));
    }
    let mut options = start.options.clone();
    options.workspace = Some(cwd.to_path_buf());
    let first = crate::config::resolve(&start.matches, &options, false)
        .map_err(RpcError::invalid_params)?;
    let shown_file = first.project;
    let pending = trust::pending(first.withheld, cwd, &DotEnv::default(), cwd);
    let mut trusted = true;
    for p in &pending {
        if decide(start, out, asking, p).await == Answer::Declined {
            trusted = false;
            tracing::warn!(
                "not applying what {} says about where requests go or what runs (folder not trusted)",
                p.folder.display()
            );
        }
    }
    let trust_project = trusted && !pending.is_empty();
    let mut resolved = crate::config::resolve(&start.matches, &options, trust_project)
        .map_err(RpcError::invalid_params)?;
    if trust_project && !start.options.trust && resolved.project != shown_file {
        // The file changed while the client was asked: what was trusted is
        // not what it says now, so none of it applies.
        tracing::warn!(
            "the project file in {} changed while its trust was asked; its guarded values are not applied",
            cwd.display()
        );
        resolved = crate::config::resolve(&start.matches, &options, false)
            .map_err(RpcError::invalid_params)?;
    }
    let mut config = resolved.config;
    config.task = None;
    config.resume = resume.map(|name| ResumeFrom::Named(name.to_string()));
    let joined = client_servers(servers).map_err(RpcError::invalid_params)?;
    for server in joined {
        if config.mcp.servers.iter().any(|s| s.name == server.name) {
            return Err(RpcError::invalid_params(format!(
                "the client's MCP server {:?} has the name of a configured one",
                server.name
            )));
        }
        config.mcp.servers.push(server);
    }
    config
        .validate()
        .map_err(|e| RpcError::invalid_params(e.to_string()))?;
    Ok(config)
}

/// Whether the folder of `pending` is trusted: `--trust`, a remembered
/// answer, else the client's answer (remembered when it says so).
async fn decide(start: &Start, out: &Outbox, asking: &str, pending: &Pending) -> Answer {
    if start.options.trust {
        return Answer::Trusted;
    }
    let mut store = TrustStore::load();
    if let Some(answer) = store.answer(pending) {
        return answer;
    }
    let options = permission::trust_options();
    let request = RequestPermissionRequest::new(
        asking.to_string(),
        permission::trust_call(&format!("trust-{asking}"), pending),
        options.clone(),
    );
    let reply = out.request("session/request_permission", request).await;
    let (answer, remember) = permission::trust_answer(permission::choice(&reply, &options));
    if remember && let Err(e) = store.remember(pending, answer) {
        tracing::warn!("cannot remember the trust answer: {e}");
    }
    answer
}

/// The client's servers as configured servers, checked like `[mcp.servers]`.
fn client_servers(servers: &[McpServer]) -> Result<Vec<McpServerSettings>, String> {
    let mut table = toml::Table::new();
    for server in servers {
        let McpServer::Stdio(stdio) = server else {
            return Err("only stdio MCP servers are supported (mcpCapabilities offers neither http nor sse)".into());
        };
        let mut command = vec![toml::Value::String(stdio.command.display().to_string())];
        command.extend(stdio.args.iter().cloned().map(toml::Value::String));
        let env: toml::Table = (stdio.env.iter())
            .map(|v| (v.name.clone(), toml::Value::String(v.value.clone())))
            .collect();
        let mut entry = toml::Table::new();
        entry.insert("command".into(), toml::Value::Array(command));
        entry.insert("env".into(), toml::Value::Table(env));
        if table
            .insert(stdio.name.clone(), toml::Value::Table(entry))
            .is_some()
        {
            return Err(format!("two MCP servers are named {:?}", stdio.name));
        }
    }
    let mut root = toml::Table::new();
    root.insert("servers".into(), toml::Value::Table(table));
    McpSettings::from_toml(&toml::Value::Table(root))
        .map(|m| m.servers)
        .map_err(|e| format!("mcpServers {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn servers(value: serde_json::Value) -> Vec<McpServer> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_client_server_is_checked_like_a_configured_one() {
        let ok = client_servers(&servers(json!([{
            "name": "files", "command": "/usr/bin/python3", "args": ["srv.py"],
            "env": [{"name": "TOKEN_DIR", "value": "/tmp"}]
        }])))
        .unwrap();
        assert_eq!(ok[0].name, "files");
        assert_eq!(ok[0].command, ["/usr/bin/python3", "srv.py"]);
        assert_eq!(ok[0].env.get("TOKEN_DIR").map(String::as_str), Some("/tmp"));
        assert!(ok[0].read_only.is_empty(), "every call waits for approval");
        let bad_name = client_servers(&servers(json!([{
            "name": "a b", "command": "/bin/x", "args": [], "env": []
        }])));
        assert!(bad_name.is_err());
        let twice = client_servers(&servers(json!([
            {"name": "a", "command": "/bin/x", "args": [], "env": []},
            {"name": "a", "command": "/bin/y", "args": [], "env": []}
        ])));
        assert!(twice.is_err());
        let http = client_servers(&servers(json!([
            {"type": "http", "name": "h", "url": "http://127.0.0.1:1", "headers": []}
        ])));
        assert!(http.unwrap_err().contains("stdio"));
    }
}
