//! The session's audit log: a JSONL transcript of every event and every
//! approval decision (and who made it) in `.stepwise/sessions/` of the
//! workspace. It sits between the core and the front end as a tee, so neither
//! needs to know about it. It never holds the API key: every string of every
//! record passes `tools::scrub` (the key's value and credential patterns).
//! Resumable checkpoints go into the same file (`resume::writer`); a resumed
//! session appends to its own transcript ([`AuditLog::append`]).

use crate::agent::{AgentEvent, Decision, EventReceiver};
use crate::tools::scrub;
use cap_std::fs::{Dir, OpenOptions};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tokio::sync::{mpsc, oneshot};

/// The transcripts' folder inside `.stepwise/`.
pub const SESSIONS: &str = "sessions";

/// A transcript shared by the tee and the checkpoint writer.
pub type SharedLog = Arc<Mutex<AuditLog>>;

/// An open transcript file.
pub struct AuditLog {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
}

impl AuditLog {
    /// Create `<timestamp>.jsonl` in `dir` (a capability; `shown` is its path
    /// for messages). An existing file is never reused or overwritten.
    pub fn create(dir: &Dir, shown: &Path) -> std::io::Result<AuditLog> {
        let stamp = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .replace(':', "-");
        let mut options = OpenOptions::new();
        options.create_new(true).append(true);
        let mut n = 1;
        loop {
            let name = match n {
                1 => format!("{stamp}.jsonl"),
                n => format!("{stamp}-{n}.jsonl"),
            };
            match dir.open_with(&name, &options) {
                Ok(file) => {
                    return Ok(AuditLog {
                        path: shown.join(name),
                        out: std::io::BufWriter::new(file.into_std()),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Open the existing `name` in `dir` to go on writing it (a resumed
    /// session). A last line cut off by a crash is ended first, so the next
    /// record starts on a line of its own.
    pub fn append(dir: &Dir, name: &str, shown: &Path) -> std::io::Result<AuditLog> {
        use std::io::{Read, Seek, SeekFrom};
        let mut options = OpenOptions::new();
        options.read(true).append(true);
        let mut file = dir.open_with(name, &options)?.into_std();
        let mut last = [0u8; 1];
        let len = file.seek(SeekFrom::End(0))?;
        if len > 0 {
            file.seek(SeekFrom::End(-1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(AuditLog {
            path: shown.join(name),
            out: std::io::BufWriter::new(file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record with a timestamp. Logging failures never stop the session.
    pub fn record(&mut self, mut value: Value) {
        if let Value::Object(map) = &mut value {
            map.insert(
                "ts".into(),
                json!(humantime::format_rfc3339_millis(SystemTime::now()).to_string()),
            );
        }
        let _ = writeln!(self.out, "{value}");
        let _ = self.out.flush();
    }
}

/// Who answers approvals in this front end (`user`, `--yes`, `no terminal`).
pub type DecidedBy = &'static str;

/// Put the log between the core's events and the front end. Streamed text
/// deltas are not logged (the complete message is). Approval replies are
/// intercepted so the decision and who made it are logged before the core sees it.
pub fn tee(mut from_core: EventReceiver, log: SharedLog, decided_by: DecidedBy) -> EventReceiver {
    let (to_front, front) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = from_core.recv().await {
            let event = match event {
                AgentEvent::ApprovalRequested(mut request) => {
                    write(
                        &log,
                        serde_json::to_value(&request)
                            .map(|v| json!({"event": "approval_requested", "request": v})),
                    );
                    let (reply, answer) = oneshot::channel();
                    let to_core = std::mem::replace(&mut request.reply, reply);
                    let call_id = request.call_id.clone();
                    tokio::spawn(relay_decision(
                        answer,
                        to_core,
                        call_id,
                        log.clone(),
                        decided_by,
                    ));
                    AgentEvent::ApprovalRequested(request)
                }
                // Per-token pieces are not logged; the complete message and call are.
                AgentEvent::AssistantDelta { .. }
                | AgentEvent::ToolCallStreaming { .. }
                | AgentEvent::LiveEditBase { .. } => event,
                other => {
                    write(&log, serde_json::to_value(&other));
                    other
                }
            };
            if to_front.send(event).is_err() {
                // The front end is gone; keep draining so the core is not blocked.
                continue;
            }
        }
    });
    front
}

fn write(log: &Arc<Mutex<AuditLog>>, value: Result<Value, serde_json::Error>) {
    if let (Ok(mut value), Ok(mut log)) = (value, log.lock()) {
        redact_strings(&mut value);
        log.record(value);
    }
}

/// The key and credential-looking values in any string of a record (diff
/// lines, test output, server messages) are hidden.
fn redact_strings(value: &mut Value) {
    scrub::json(value);
}

async fn relay_decision(
    answer: oneshot::Receiver<Decision>,
    mut to_core: oneshot::Sender<Decision>,
    call_id: String,
    log: Arc<Mutex<AuditLog>>,
    decided_by: DecidedBy,
) {
    let decision = tokio::select! {
        d = answer => d.ok(),
        // The task was interrupted while waiting; dropping `answer` tells the front end.
        _ = to_core.closed() => None,
    };
    let record = match &decision {
        Some(d) => {
            json!({"event": "approval_decided", "call_id": call_id, "decision": d, "decided_by": decided_by})
        }
        None => {
            json!({"event": "approval_decided", "call_id": call_id, "decision": {"decision": "decline", "reason": "no answer (interrupted or closed)"}, "decided_by": "nobody"})
        }
    };
    write(&log, Ok(record));
    if let Some(d) = decision {
        let _ = to_core.send(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_any_string_of_a_record_are_redacted() {
        let mut record = json!({
            "event": "approval_requested",
            "request": {"action": {"diff": {"hunks": [{"lines": [
                {"kind": "context", "text": "DB_PASSWORD=hunter2"},
                {"kind": "added", "text": "x = 1"}
            ]}]}}},
            "note": "nothing secret here"
        });
        redact_strings(&mut record);
        let text = record.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(
            text.contains("DB_PASSWORD=[redacted by stepwise]"),
            "{text}"
        );
        assert!(text.contains("x = 1") && text.contains("nothing secret here"));
    }
}
