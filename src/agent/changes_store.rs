//! The session's change log as JSON, for the transcript (resume): each
//! change once, in order. A change's `before` is left out when it is the
//! `after` of the previous change to the same path (the common case), so a
//! file's text is stored once as its original and then once per edit.
//!
//! What must stay true: `decode(encode(x)) == x`, and the encoding of change
//! `i` depends only on changes `..=i` (the transcript appends new changes to
//! those already written). Decoding treats its input as hostile: a bad entry
//! is an error, never a panic.

use super::changes::FileChange;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The changes as JSON entries.
pub fn encode(changes: &[FileChange]) -> Vec<Value> {
    let mut last_after: HashMap<&str, Option<&str>> = HashMap::new();
    let mut out = Vec::with_capacity(changes.len());
    for c in changes {
        let mut entry = json!({"task": c.task, "path": c.path, "after": c.after});
        if last_after.get(c.path.as_str()) != Some(&c.before.as_deref()) {
            entry["before"] = json!(c.before);
        }
        last_after.insert(&c.path, c.after.as_deref());
        out.push(entry);
    }
    out
}

/// The changes back from their entries.
pub fn decode(entries: &[Value]) -> Result<Vec<FileChange>, String> {
    let mut last_after: HashMap<String, Option<String>> = HashMap::new();
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let bad = || format!("change {} of the log is malformed", i + 1);
        let path = e["path"].as_str().ok_or_else(bad)?.to_string();
        let task = u32::try_from(e["task"].as_u64().ok_or_else(bad)?).map_err(|_| bad())?;
        let text = |v: &Value| match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            _ => Err(bad()),
        };
        let after = text(&e["after"])?;
        let before = match e.get("before") {
            Some(v) => text(v)?,
            None => last_after.get(&path).cloned().ok_or_else(bad)?,
        };
        last_after.insert(path.clone(), after.clone());
        out.push(FileChange {
            task,
            path,
            before,
            after,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(task: u32, path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            task,
            path: path.into(),
            before: before.map(Into::into),
            after: after.map(Into::into),
        }
    }

    #[test]
    fn each_text_is_stored_once_and_comes_back_exactly() {
        let changes = vec![
            change(1, "a.py", Some("v0"), Some("v1")),
            change(1, "b.py", None, Some("new")),
            change(2, "a.py", Some("v1"), Some("v2")),
            change(2, "b.py", Some("new"), None),
            // Someone changed a.py by hand in between: the before is stored.
            change(3, "a.py", Some("by hand"), Some("v3")),
        ];
        let encoded = encode(&changes);
        assert!(encoded[2].get("before").is_none(), "{}", encoded[2]);
        assert!(encoded[3].get("before").is_none(), "{}", encoded[3]);
        assert_eq!(encoded[4]["before"], "by hand");
        assert_eq!(decode(&encoded).unwrap(), changes);
        // The encoding of a prefix is a prefix of the encoding.
        assert_eq!(encode(&changes[..3]), encoded[..3]);
    }

    #[test]
    fn malformed_entries_are_errors() {
        for bad in [
            json!({"task": 1, "after": "x"}),
            json!({"task": -1, "path": "a", "after": "x", "before": null}),
            json!({"task": 1, "path": "a", "after": 5, "before": null}),
            // No before and no earlier change of the path.
            json!({"task": 1, "path": "a", "after": "x"}),
        ] {
            assert!(decode(std::slice::from_ref(&bad)).is_err(), "{bad}");
        }
    }
}
