//! The configuration of one ACP session: the command line's flags and the
//! files layered for the client's `cwd`, the project file's guarded values
//! applied only in a trusted folder (when no answer is remembered, trust is
//! asked through a permission request on the session, at its first
//! prompt: `trust.rs`), and the client's `mcpServers` joined to the
//! configured ones.
//!
//! What must stay true: never the home folder or `/` as a workspace (the
//! command line's own check, `setup::too_broad`); the same trust rules as the other front ends
//! (`--trust`, `--untrusted`, a remembered answer bound to exactly these values, else the
//! question); anything but an allow runs with the project's guarded values
//! withheld; the client's servers pass the same checks as `[mcp.servers]`
//! (names, commands, no provider key passed on) and are governed like them
//! (every call waits for approval); only stdio servers are accepted.

use super::rpc::RpcError;
use crate::config::dotenv::DotEnv;
use crate::config::flags::Options;
use crate::config::mcp::{McpServerSettings, McpSettings};
use crate::config::trust::{self, Answer, Pending, TrustStore};
use crate::config::{Config, ResumeFrom};
use agent_client_protocol_schema::v1::McpServer;
use std::path::{Path, PathBuf};

/// What `stepwise acp` was started with: the command line, to layer again
/// for each session's folder.
#[derive(Debug, Clone)]
pub struct Start {
    pub matches: clap::ArgMatches,
    pub options: Options,
}

/// Where a session stands with its folder's guarded values.
pub(super) enum Trust {
    /// Nothing to ask or to say: applied (`--trust`, a remembered yes), or none.
    Settled,
    /// To be asked on the session, at its first prompt; withheld until then.
    Ask(Question),
    /// Withheld (a remembered no): said at the first prompt.
    Withheld(Vec<Pending>),
}

/// A trust question waiting for the session's first prompt: what it asks
/// about, and what to build the trusted configuration from.
pub(super) struct Question {
    pub pending: Vec<Pending>,
    /// The project file as it was when the question was framed.
    shown: Option<toml::Table>,
    cwd: PathBuf,
    servers: Vec<McpServer>,
}

/// The configuration of a session on `cwd` (resuming `resume`, when
/// given), with the project's guarded values applied only when the folder
/// is trusted already; otherwise they are withheld and [`Trust`] says
/// whether to ask. Nothing is asked here: `session/new` answers at once.
pub(super) fn session_config(
    start: &Start,
    cwd: &Path,
    servers: &[McpServer],
    resume: Option<ResumeFrom>,
) -> Result<(Config, Trust), RpcError> {
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
    let options = options_for(start, cwd);
    let first = crate::config::resolve(&start.matches, &options, false)
        .map_err(RpcError::invalid_params)?;
    let pending = trust::pending(first.withheld, cwd, &DotEnv::default(), cwd);
    let store = TrustStore::load();
    let answers: Vec<Option<Answer>> = (pending.iter())
        .map(|p| match (start.options.trust, start.options.untrusted) {
            (true, _) => Some(Answer::Trusted),
            // Withheld without asking, and nothing remembered.
            (_, true) => Some(Answer::Declined),
            _ => store.answer(p),
        })
        .collect();
    let trust = if pending.is_empty() || answers.iter().all(|a| *a == Some(Answer::Trusted)) {
        Trust::Settled
    } else if answers.contains(&Some(Answer::Declined)) {
        for p in &pending {
            tracing::warn!(
                "not applying what {} says about where requests go or what runs (folder not trusted)",
                p.folder.display()
            );
        }
        Trust::Withheld(pending.clone())
    } else {
        Trust::Ask(Question {
            pending: pending.clone(),
            shown: first.project.clone(),
            cwd: cwd.to_path_buf(),
            servers: servers.to_vec(),
        })
    };
    let applied = !pending.is_empty() && matches!(trust, Trust::Settled);
    let resolved = crate::config::resolve(&start.matches, &options, applied)
        .map_err(RpcError::invalid_params)?;
    let config = finish(resolved.config, resume, servers)?;
    Ok((config, trust))
}

/// The configuration once the client trusted the folder: the project's
/// guarded values applied, unless the file changed since the question was
/// framed (`None`: what was trusted is not what it says now).
pub(super) fn trusted_config(
    start: &Start,
    question: &Question,
    resume: Option<ResumeFrom>,
) -> Result<Option<Config>, RpcError> {
    let options = options_for(start, &question.cwd);
    let resolved =
        crate::config::resolve(&start.matches, &options, true).map_err(RpcError::invalid_params)?;
    if resolved.project != question.shown {
        tracing::warn!(
            "the project file in {} changed while its trust was asked; its guarded values are not applied",
            question.cwd.display()
        );
        return Ok(None);
    }
    finish(resolved.config, resume, &question.servers).map(Some)
}

fn options_for(start: &Start, cwd: &Path) -> Options {
    let mut options = start.options.clone();
    options.workspace = Some(cwd.to_path_buf());
    options
}

/// A resolved configuration for a session: no task, what to resume, the
/// client's MCP servers joined.
fn finish(
    mut config: Config,
    resume: Option<ResumeFrom>,
    servers: &[McpServer],
) -> Result<Config, RpcError> {
    config.task = None;
    config.resume = resume;
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
