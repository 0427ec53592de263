//! Reading a transcript back for resuming: the signed `checkpoint` records,
//! applied in order, give the session's state as of the last one.
//!
//! What must stay true: the file is hostile until proven otherwise. It is
//! read through the sessions folder's capability, at most [`MAX_BYTES`];
//! nothing in it panics the reader; a record from a newer transcript version
//! is refused as such; a checkpoint whose MAC does not verify under this
//! user's key makes the whole file untrusted (it was not written by this
//! user's stepwise, or was changed since); an incomplete last line (a crash,
//! `kill -9`) is ignored, and so is everything after a gap in the sequence.

use super::key::SigningKey;
use super::{LoadError, Loaded, VERSION};
use crate::agent::history::saved::{SavedState, message_from_json};
use crate::llm::TokenUsage;
use cap_std::fs::Dir;
use serde_json::Value;
use std::io::Read;

/// The largest transcript read (bigger ones are refused, not truncated).
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Read `name` in `dir` (size-capped).
pub fn read_capped(dir: &Dir, name: &str) -> Result<Vec<u8>, LoadError> {
    // A FIFO or a device planted under a transcript's name would block or
    // never end: only a regular file is opened.
    let meta = dir
        .metadata(name)
        .map_err(|e| LoadError::Io(format!("cannot open {name}: {e}")))?;
    if !meta.is_file() {
        return Err(LoadError::Io(format!("{name} is not a regular file")));
    }
    let file = dir
        .open(name)
        .map_err(|e| LoadError::Io(format!("cannot open {name}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError::Io(format!("cannot read {name}: {e}")))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(LoadError::TooLarge);
    }
    Ok(bytes)
}

/// The state as the checkpoints left it, while applying them.
#[derive(Default)]
struct Building {
    session: Option<String>,
    seq: u64,
    body: Value,
    messages: Vec<Value>,
    changes: Vec<Value>,
}

/// The session in `bytes` (named `name`), verified with `key`.
pub fn parse(bytes: &[u8], name: &str, key: &SigningKey) -> Result<Loaded, LoadError> {
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    // The last piece has no newline after it: empty, or a line cut off.
    let cut_off = lines.pop().is_some_and(|last| !last.is_empty());
    let mut b = Building::default();
    for line in lines {
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if let Some(v) = record.get("v").and_then(Value::as_u64)
            && v > u64::from(VERSION)
        {
            return Err(LoadError::Newer(v));
        }
        if record["event"] != "checkpoint" {
            continue;
        }
        let (Some(text), Some(mac)) = (record["state"].as_str(), record["mac"].as_str()) else {
            return Err(LoadError::Untrusted);
        };
        if !key.verify(text, mac) {
            return Err(LoadError::Untrusted);
        }
        let body: Value = serde_json::from_str(text).map_err(|_| LoadError::Untrusted)?;
        if !b.apply(body)? {
            // A checkpoint is missing: go on from the last consistent one.
            break;
        }
    }
    b.finish(name, cut_off)
}

impl Building {
    /// Apply one verified checkpoint; false when it does not follow the last one.
    fn apply(&mut self, body: Value) -> Result<bool, LoadError> {
        let damaged = |what: &str| LoadError::Damaged(what.to_string());
        let session = body["session"]
            .as_str()
            .ok_or_else(|| damaged("no session id"))?;
        if self.session.as_deref().is_some_and(|s| s != session) {
            return Err(damaged("checkpoints of two sessions in one file"));
        }
        if body["seq"].as_u64() != Some(self.seq + 1) {
            return Ok(false);
        }
        let from = |key: &str, len: usize| {
            body[key]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n <= len)
                .ok_or_else(|| damaged(key))
        };
        let m_from = from("messages_from", self.messages.len())?;
        let c_from = from("changes_from", self.changes.len())?;
        let (Some(messages), Some(changes)) =
            (body["messages"].as_array(), body["changes"].as_array())
        else {
            return Err(damaged("no messages or changes"));
        };
        self.messages.truncate(m_from);
        self.messages.extend(messages.iter().cloned());
        self.changes.truncate(c_from);
        self.changes.extend(changes.iter().cloned());
        self.session = Some(session.to_string());
        self.seq += 1;
        self.body = body;
        Ok(true)
    }

    fn finish(self, name: &str, cut_off: bool) -> Result<Loaded, LoadError> {
        let session = self.session.ok_or(LoadError::NothingToResume)?;
        let body = &self.body;
        let damaged = |what: &str| LoadError::Damaged(what.to_string());
        let declined: Vec<u64> = body["declined"]
            .as_array()
            .map(|d| d.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let messages = (self.messages.iter().enumerate())
            .map(|(i, m)| message_from_json(m, declined.contains(&(i as u64))))
            .collect::<Result<Vec<_>, _>>()
            .map_err(LoadError::Damaged)?;
        let changes = SavedState::changes_from_json(&self.changes).map_err(LoadError::Damaged)?;
        let count = |key: &str| {
            body[key]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| damaged(key))
        };
        let usage = TokenUsage {
            prompt_tokens: body["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
            completion_tokens: body["usage"]["completion_tokens"].as_u64().unwrap_or(0),
            cached_tokens: body["usage"]["cached_tokens"].as_u64().unwrap_or(0),
            cache_write_tokens: body["usage"]["cache_write_tokens"].as_u64().unwrap_or(0),
        };
        let state = SavedState {
            messages,
            changes,
            usage,
            cost_usd: body["cost_usd"]
                .as_f64()
                .filter(|c| c.is_finite() && *c >= 0.0)
                .unwrap_or(0.0),
            tasks: count("tasks")?,
            steps: count("steps")?,
            outcome: body["outcome"].as_str().map(str::to_string),
            model: None,
        };
        let text = |key: &str| {
            body[key]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| damaged(key))
        };
        Ok(Loaded {
            name: name.to_string(),
            session,
            started: text("started")?,
            model: text("model")?,
            seq: self.seq,
            state,
            cut_off,
        })
    }
}
