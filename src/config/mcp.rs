//! The `[mcp]` table of `stepwise.toml`: the MCP servers a session starts,
//! each an argument array (no shell) with its extra environment (literal
//! `env` values, and `env_vars`: names passed on from the user's own
//! environment, so a token need not be written in a file), its working
//! folder (`cwd`; by default stepwise's own config folder, never the
//! workspace), the tools that need no approval, and the seconds one call may take.
//!
//! What must stay true: a server's name is a short `[A-Za-z0-9_-]` word (it
//! becomes part of the tool names the model sees); a command is a non-empty
//! argument array; an unknown key is an error naming it; every number passes
//! `ranges`. Whether a project file may set the table at all is the settings
//! row's guard, not decided here.

use super::ranges;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Longest server name (tool names are `mcp__<server>__<tool>`, at most 64 bytes).
pub const MAX_SERVER_NAME: usize = 16;
/// Seconds a call may take when `timeout_secs` is not set.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSettings {
    pub name: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Variables set for the server on top of the minimal environment.
    pub env: BTreeMap<String, String>,
    /// Tools (their names on the server) that run without approval.
    pub read_only: Vec<String>,
    /// Seconds one call, or the start, may take.
    pub timeout_secs: u64,
    /// Where it starts (`None`: stepwise's config folder, not the workspace,
    /// so a repository's files cannot shadow the server's own modules).
    pub cwd: Option<std::path::PathBuf>,
    /// Variables passed on from stepwise's environment, by name (never a
    /// provider's key).
    pub env_vars: Vec<String>,
}

/// The `[mcp]` table: the servers in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpSettings {
    pub servers: Vec<McpServerSettings>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    #[serde(default)]
    servers: BTreeMap<String, RawServer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    read_only: Vec<String>,
    timeout_secs: Option<u64>,
    cwd: Option<std::path::PathBuf>,
    #[serde(default)]
    env_vars: Vec<String>,
}

/// Whether `name` may name a server or a tool: `[A-Za-z0-9_-]`, 1..=`max` bytes.
pub fn valid_name(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl McpSettings {
    /// Read the table, checking names, commands and timeouts.
    pub fn from_toml(value: &toml::Value) -> Result<Self, String> {
        let raw: RawTable = value
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| format!("is not valid: {}", e.message()))?;
        let mut servers = Vec::new();
        for (name, server) in raw.servers {
            // No `__` and no `_` at the end: `mcp__<server>__<tool>` then
            // names one server's tool only (`a_` + `b` would meet `a` + `_b`).
            if !valid_name(&name, MAX_SERVER_NAME) || name.contains("__") || name.ends_with('_') {
                return Err(format!(
                    "has a server named {name:?}: use 1 to {MAX_SERVER_NAME} letters, digits, `-` or `_` (no `__`, not ending in `_`)"
                ));
            }
            if server.command.first().is_none_or(|p| p.trim().is_empty()) {
                return Err(format!(
                    "has servers.{name}.command empty: give the program and its arguments, e.g. [\"python3\", \"server.py\"]"
                ));
            }
            let timeout_secs = server.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
            ranges::MCP_TIMEOUT
                .check(i128::from(timeout_secs))
                .map_err(|why| {
                    format!("has servers.{name}.timeout_secs = {timeout_secs}, which {why}")
                })?;
            if let Some(key) = server
                .env_vars
                .iter()
                .find(|v| super::providers::is_key_var(v))
            {
                return Err(format!(
                    "has servers.{name}.env_vars naming {key}: a provider's key is never passed to a server"
                ));
            }
            if let Some(cwd) = server.cwd.as_ref().filter(|c| !c.is_absolute()) {
                return Err(format!(
                    "has servers.{name}.cwd = {:?}: give an absolute folder",
                    cwd.display().to_string()
                ));
            }
            servers.push(McpServerSettings {
                name,
                command: server.command,
                env: server.env,
                read_only: server.read_only,
                timeout_secs,
                cwd: server.cwd,
                env_vars: server.env_vars,
            });
        }
        Ok(McpSettings { servers })
    }

    /// One line for `--print-config` (the environment's values are not shown).
    pub fn shown(&self) -> String {
        if self.servers.is_empty() {
            return "no servers".into();
        }
        let servers: Vec<String> = self
            .servers
            .iter()
            .map(|s| {
                let mut line = format!("{} = {:?}", s.name, s.command);
                if !s.env.is_empty() {
                    let names: Vec<&str> = s.env.keys().map(String::as_str).collect();
                    line.push_str(&format!(" env {}", names.join(" ")));
                }
                if !s.env_vars.is_empty() {
                    line.push_str(&format!(" env_vars {}", s.env_vars.join(" ")));
                }
                if let Some(cwd) = &s.cwd {
                    line.push_str(&format!(" cwd {}", cwd.display()));
                }
                if !s.read_only.is_empty() {
                    line.push_str(&format!(" read-only {}", s.read_only.join(" ")));
                }
                line.push_str(&format!(" timeout {}s", s.timeout_secs));
                line
            })
            .collect();
        servers.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        toml::Value::Table(toml::from_str(text).unwrap())
    }

    #[test]
    fn servers_are_argument_arrays_with_checked_names_and_timeouts() {
        let s = McpSettings::from_toml(&table(
            "[servers.t]\ncommand = [\"python3\", \"s.py\"]\nenv = { A = \"hidden-value\" }\nread_only = [\"echo\"]\n",
        ))
        .unwrap();
        assert_eq!(s.servers.len(), 1);
        assert_eq!(s.servers[0].timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert_eq!(s.servers[0].read_only, ["echo"]);
        let shown = s.shown();
        assert!(
            shown.contains("env A") && !shown.contains("hidden-value"),
            "{shown}"
        );
        for bad in [
            "[servers.t]\ncommand = \"python3 s.py\"\n",
            "[servers.t]\ncommand = []\n",
            "[servers.\"a b\"]\ncommand = [\"x\"]\n",
            "[servers.a__b]\ncommand = [\"x\"]\n",
            // `a_` + tool `b` would read as `a` + tool `_b`.
            "[servers.a_]\ncommand = [\"x\"]\n",
            "[servers.t]\ncommand = [\"x\"]\ntimeout_secs = 0\n",
            "[servers.t]\ncommand = [\"x\"]\nshell = true\n",
            "[servers.t]\ncommand = [\"x\"]\nenv_vars = [\"OPENAI_API_KEY\"]\n",
            "[servers.t]\ncommand = [\"x\"]\ncwd = \"relative/dir\"\n",
        ] {
            assert!(McpSettings::from_toml(&table(bad)).is_err(), "{bad}");
        }
    }
}
