//! One server's connection through `rmcp`: start the program as a child
//! process (argument array, no shell, minimal environment, the workspace as
//! its folder), run the `initialize` handshake, list its tools, and send
//! calls, each bounded by the server's timeout.
//!
//! What must stay true: the child sees only the allowlisted variables (as
//! test runs do) plus its configured `env`, never the API key; its stderr is
//! kept (the last lines, for error messages), never shown raw; the server
//! runs in its own process group, and dropping the connection kills that
//! group at once (a hung server, or what `npx` started, never outlives the
//! session).

use crate::config::API_KEY_VAR;
use crate::config::mcp::McpServerSettings;
use crate::config::providers::is_key_var;
use crate::text::sanitize::one_line;
use crate::tools::sandbox::env::allowed;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, JsonObject, ListToolsRequest, ServerResult,
};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// Lines of the server's stderr kept for error messages.
const STDERR_LINES: usize = 5;

/// How long a server that is gone may take to close its stderr, so that
/// its last words are in the message (a child it left may hold it open).
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// A started server.
pub struct Connection {
    service: RunningService<RoleClient, ()>,
    /// The server's process group (its pid).
    group: Option<u32>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Becomes `true` once the server's stderr is read to its end.
    stderr_read: tokio::sync::watch::Receiver<bool>,
    timeout: Duration,
}

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The server did not answer in time (it may still be running).
    Timeout(Duration),
    /// The connection is gone: the server exited or broke the protocol.
    Gone(String),
    /// The server answered with a JSON-RPC error.
    Refused(String),
}

/// Where a server starts: its `cwd`, else stepwise's config folder (made if
/// missing), else `/`; never the workspace, whose files (a `mcp_server.py`,
/// a `node_modules/.bin` entry) would shadow the server's own and run first.
fn server_dir(settings: &McpServerSettings, workspace: &Path) -> std::path::PathBuf {
    if let Some(cwd) = &settings.cwd {
        return cwd.clone();
    }
    let config = directories::ProjectDirs::from("", "", "stepwise")
        .map(|dirs| dirs.config_dir().to_path_buf())
        .filter(|dir| std::fs::create_dir_all(dir).is_ok())
        .filter(|dir| !dir.starts_with(workspace));
    config.unwrap_or_else(|| std::path::PathBuf::from("/"))
}

impl Connection {
    /// Start the server and shake hands, within its timeout.
    pub async fn start(settings: &McpServerSettings, root: &Path) -> Result<Connection, String> {
        let timeout = Duration::from_secs(settings.timeout_secs);
        let (program, args) = settings
            .command
            .split_first()
            .ok_or_else(|| "its command is empty".to_string())?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(server_dir(settings, root))
            .env_clear()
            .process_group(0);
        for (name, value) in std::env::vars_os() {
            if name.to_str().is_some_and(|n| allowed(n, &[])) {
                command.env(name, value);
            }
        }
        for name in &settings.env_vars {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        for (name, value) in &settings.env {
            // No provider's key, whatever the configuration names.
            if !name.eq_ignore_ascii_case(API_KEY_VAR) && !is_key_var(name) {
                command.env(name, value);
            }
        }
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", one_line(program)))?;
        let group = transport.id();
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let (read_to_end, stderr_read) = tokio::sync::watch::channel(false);
        match stderr {
            Some(stderr) => {
                let kept = kept.clone();
                tokio::spawn(async move {
                    keep_stderr(stderr, kept).await;
                    let _ = read_to_end.send(true);
                });
            }
            None => {
                let _ = read_to_end.send(true);
            }
        }
        let service = match tokio::time::timeout(timeout, ().serve(transport)).await {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                kill_group(group);
                return Err(with_stderr(format!("the handshake failed: {e}"), &kept));
            }
            Err(_) => {
                kill_group(group);
                let what = format!(
                    "it did not answer `initialize` within {}s",
                    timeout.as_secs()
                );
                return Err(with_stderr(what, &kept));
            }
        };
        Ok(Connection {
            service,
            group,
            stderr: kept,
            stderr_read,
            timeout,
        })
    }

    /// The `tools` array of `tools/list` (first page), as JSON.
    pub async fn list_tools(&self) -> Result<Vec<Value>, String> {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::default());
        let answer =
            match tokio::time::timeout(self.timeout, self.service.send_request(request)).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => return Err(self.with_stderr(format!("`tools/list` failed: {e}"))),
                Err(_) => {
                    let what = format!(
                        "it did not answer `tools/list` within {}s",
                        self.timeout.as_secs()
                    );
                    return Err(self.with_stderr(what));
                }
            };
        let value = match answer {
            ServerResult::ListToolsResult(list) => {
                serde_json::to_value(list).unwrap_or(Value::Null)
            }
            ServerResult::CustomResult(raw) => raw.0,
            _ => Value::Null,
        };
        match value.get("tools") {
            Some(Value::Array(tools)) => Ok(tools.clone()),
            _ => Err("its `tools/list` answer has no `tools` array".into()),
        }
    }

    /// One `tools/call`; the answer as JSON.
    pub async fn call(&self, tool: &str, arguments: JsonObject) -> Result<Value, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        match tokio::time::timeout(self.timeout, self.service.send_request(request)).await {
            Err(_) => Err(CallError::Timeout(self.timeout)),
            Ok(Ok(ServerResult::CallToolResult(result))) => {
                Ok(serde_json::to_value(result).unwrap_or(Value::Null))
            }
            Ok(Ok(ServerResult::CustomResult(raw))) => Ok(raw.0),
            Ok(Ok(_)) => Err(CallError::Refused(
                "the server answered with something that is not a tool result".into(),
            )),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                Err(CallError::Refused(one_line(&e.message).into_owned()))
            }
            Ok(Err(e)) if self.is_closed() => {
                // Its last stderr lines may still be in the pipe.
                let mut read = self.stderr_read.clone();
                let _ = tokio::time::timeout(STDERR_DRAIN, read.wait_for(|done| *done)).await;
                Err(CallError::Gone(self.with_stderr(e.to_string())))
            }
            Ok(Err(e)) => Err(CallError::Refused(one_line(&e.to_string()).into_owned())),
        }
    }

    /// The server exited or its connection broke.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.is_transport_closed()
    }

    /// A message with the server's last stderr line, if it wrote one.
    pub fn with_stderr(&self, message: String) -> String {
        with_stderr(message, &self.stderr)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        kill_group(self.group);
    }
}

/// Kill a server's process group now (rmcp's own cleanup is a spawned task,
/// which never runs when the process is exiting).
fn kill_group(group: Option<u32>) {
    let pid = group
        .and_then(|g| i32::try_from(g).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

fn with_stderr(message: String, kept: &Mutex<VecDeque<String>>) -> String {
    let last = kept.lock().ok().and_then(|lines| lines.back().cloned());
    match last {
        Some(line) => format!("{message} (its stderr: {line})"),
        None => message,
    }
}

async fn keep_stderr(
    stderr: impl tokio::io::AsyncRead + Unpin,
    kept: Arc<Mutex<VecDeque<String>>>,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        // At most STDERR_LINE_BYTES of a line are kept: a server that never
        // writes a newline cannot grow it without bound.
        let room = (STDERR_LINE_BYTES + 1).saturating_sub(line.len()) as u64;
        let mut part = Vec::new();
        let read = (&mut reader).take(room).read_until(b'\n', &mut part).await;
        let Ok(n) = read else { return };
        let ended = part.last() == Some(&b'\n');
        line.extend_from_slice(&part);
        if n == 0 || ended || line.len() > STDERR_LINE_BYTES {
            keep_line(&String::from_utf8_lossy(&line), &kept);
            line.clear();
            if !ended && n > 0 {
                skip_to_newline(&mut reader).await;
            }
        }
        if n == 0 {
            return;
        }
    }
}

/// Longest part of a stderr line read.
const STDERR_LINE_BYTES: usize = 4096;

async fn skip_to_newline(reader: &mut (impl AsyncBufReadExt + Unpin)) {
    loop {
        let Ok(buf) = reader.fill_buf().await else {
            return;
        };
        if buf.is_empty() {
            return;
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(at) => return reader.consume(at + 1),
            None => {
                let all = buf.len();
                reader.consume(all);
            }
        }
    }
}

fn keep_line(line: &str, kept: &Mutex<VecDeque<String>>) {
    let line: String = one_line(line.trim()).chars().take(200).collect();
    if line.is_empty() {
        return;
    }
    if let Ok(mut kept) = kept.lock() {
        if kept.len() == STDERR_LINES {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::ReadBuf;

    /// `x` without end and never a newline, yielding between reads.
    struct Endless(u64);

    impl tokio::io::AsyncRead for Endless {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            self.0 += 1;
            if self.0.is_multiple_of(2) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let len = buf.remaining().min(1024);
            buf.put_slice(&vec![b'x'; len]);
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_stderr_line_that_never_ends_is_kept_cut_instead_of_growing() {
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let task = tokio::spawn(keep_stderr(Endless(0), kept.clone()));
        tokio::time::sleep(Duration::from_millis(100)).await;
        task.abort();
        let kept = kept.lock().unwrap().clone();
        assert_eq!(kept.len(), 1, "the first part is kept at once");
        assert_eq!(kept[0].len(), 200);
    }

    #[tokio::test]
    async fn after_a_cut_line_the_next_line_is_kept_whole() {
        let mut input = vec![b'y'; 10_000];
        input.extend_from_slice(b" tail\nnext line\nlast");
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        keep_stderr(&input[..], kept.clone()).await;
        let kept: Vec<String> = kept.lock().unwrap().iter().cloned().collect();
        assert_eq!(kept.len(), 3, "{kept:?}");
        assert!(kept[0].starts_with("yyy") && kept[0].len() == 200);
        assert_eq!(kept[1..], ["next line", "last"]);
    }
}
