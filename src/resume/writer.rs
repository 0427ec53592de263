//! Writing checkpoints into the transcript: after each command the session
//! hands over its [`SavedState`]; what changed since the last checkpoint is
//! appended as one signed `checkpoint` record (messages and changes from the
//! first one that differs, so a long session does not write its history
//! again and again, while a compaction or an undo that rewrote earlier ones
//! is still recorded exactly).
//!
//! What must stay true: every string is scrubbed (the key's value and
//! credential values) before it is hashed, signed or written; the MAC covers
//! the exact text written, which names the session and its sequence number
//! (so records cannot be moved between files or reordered unnoticed).

use super::key::SigningKey;
use super::{Loaded, VERSION};
use crate::agent::history::saved::SavedState;
use crate::audit::SharedLog;
use crate::tools::scrub;
use serde_json::{Value, json};
use std::hash::{DefaultHasher, Hash, Hasher};

/// The transcript's checkpoint writer for one session.
pub struct Checkpoints {
    log: SharedLog,
    key: SigningKey,
    session: String,
    started: String,
    model: String,
    seq: u64,
    messages: Vec<u64>,
    changes: Vec<u64>,
    counters: u64,
}

fn scrubbed(values: Vec<Value>) -> Vec<Value> {
    values
        .into_iter()
        .map(|mut v| {
            scrub::json(&mut v);
            v
        })
        .collect()
}

fn fingerprint(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

fn fingerprints(values: &[Value]) -> Vec<u64> {
    values.iter().map(|v| fingerprint(&v.to_string())).collect()
}

/// The first index where `old` and `new` differ.
fn first_difference(old: &[u64], new: &[u64]) -> usize {
    old.iter()
        .zip(new)
        .position(|(a, b)| a != b)
        .unwrap_or(old.len().min(new.len()))
}

impl Checkpoints {
    /// A writer for a new session (its header is written here).
    pub fn start(log: SharedLog, key: SigningKey, model: &str) -> Result<Checkpoints, String> {
        let mut id = [0u8; 12];
        getrandom::fill(&mut id).map_err(|e| format!("no randomness for a session id: {e}"))?;
        let session = hex::encode(id);
        let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        if let Ok(mut log) = log.lock() {
            log.record(json!({"event": "transcript", "v": VERSION, "session": session, "started": started}));
        }
        Ok(Checkpoints {
            log,
            key,
            session,
            started,
            model: model.to_string(),
            seq: 0,
            messages: Vec::new(),
            changes: Vec::new(),
            counters: 0,
        })
    }

    /// A writer that goes on with a resumed session in the same file.
    pub fn resume(log: SharedLog, key: SigningKey, loaded: &Loaded, model: &str) -> Checkpoints {
        let (messages, _) = loaded.state.messages_json();
        Checkpoints {
            log,
            key,
            session: loaded.session.clone(),
            started: loaded.started.clone(),
            model: model.to_string(),
            seq: loaded.seq,
            messages: fingerprints(&scrubbed(messages)),
            changes: fingerprints(&loaded.state.changes_json()),
            counters: 0,
        }
    }

    /// Append what changed since the last checkpoint (nothing when nothing
    /// did); true when a checkpoint was written.
    pub fn write(&mut self, state: &SavedState) -> bool {
        if let Some(model) = &state.model {
            self.model.clone_from(model);
        }
        let (messages, declined) = state.messages_json();
        let messages = scrubbed(messages);
        // Not scrubbed: the encoding withholds every file holding something
        // scrubbing would hide, and scrubbing it would shift its splices.
        let changes = state.changes_json();
        let (m_hash, c_hash) = (fingerprints(&messages), fingerprints(&changes));
        let m_from = first_difference(&self.messages, &m_hash);
        let c_from = first_difference(&self.changes, &c_hash);
        let usage = json!({
            "prompt_tokens": state.usage.prompt_tokens,
            "completion_tokens": state.usage.completion_tokens,
            "cached_tokens": state.usage.cached_tokens,
            "cache_write_tokens": state.usage.cache_write_tokens,
        });
        let counters = json!([
            state.tasks,
            state.steps,
            state.outcome,
            usage,
            state.cost_usd,
            declined,
            self.model
        ]);
        let counters_hash = fingerprint(&counters.to_string());
        let unchanged = m_from == m_hash.len()
            && m_from == self.messages.len()
            && c_from == c_hash.len()
            && c_from == self.changes.len()
            && counters_hash == self.counters;
        if unchanged {
            return false;
        }
        let seq = self.seq + 1;
        let mut body = json!({
            "session": self.session,
            "seq": seq,
            "started": self.started,
            "model": self.model,
            "tasks": state.tasks,
            "steps": state.steps,
            "outcome": state.outcome,
            "usage": usage,
            "cost_usd": state.cost_usd,
            "messages_from": m_from,
            "messages": messages[m_from..],
            "declined": declined,
            "changes_from": c_from,
        });
        scrub::json(&mut body);
        body["changes"] = json!(changes[c_from..]);
        let text = body.to_string();
        let mac = self.key.sign(&text);
        if let Ok(mut log) = self.log.lock() {
            log.record(json!({"event": "checkpoint", "v": VERSION, "state": text, "mac": mac}));
            self.seq = seq;
            self.messages = m_hash;
            self.changes = c_hash;
            self.counters = counters_hash;
            return true;
        }
        false
    }
}
