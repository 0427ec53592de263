//! The session's change log as JSON, for the transcript (resume): each
//! change once, in order, as small as the edit. A change's `before` is left
//! out when it is the `after` of the previous change to the same path (the
//! common case); its `after` is the file's text when it created the file,
//! `null` when it deleted it, and otherwise a splice of its `before`
//! (`{"keep_start", "keep_end", "middle"}`: the bytes that changed). So the
//! transcript grows with what changed, not with file size × edits, and
//! encoding walks each file's versions once (see `Versions::walk_back`).
//!
//! A file whose texts hold anything scrubbing would hide (the key, a
//! credential-looking value) is **withheld**: its changes are written as
//! `{"task", "path", "withheld": true}` without texts, and a resumed session
//! has no change log for it (so `/undo` never writes a scrubbed text into
//! the file, and the transcript never holds the secret). Scrubbing the
//! encoded texts instead would shift the splices' byte offsets.
//!
//! What must stay true: decoding an encoding gives back exactly the recorded
//! texts of every file not withheld; the encoding never holds a value
//! scrubbing would hide, so the transcript writer must not scrub it again.
//! The transcript writes from the first entry that differs from what it
//! wrote before, so an earlier entry may change (a file becoming withheld).
//! Decoding treats its input as hostile: a bad entry is an error, never a
//! panic.

use crate::agent::history::changes::ChangeLog;
use crate::agent::history::versions::Splice;
use crate::tools::scrub;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// The changes as JSON entries, oldest first.
pub fn encode(log: &ChangeLog) -> Vec<Value> {
    let mut out = vec![Value::Null; log.len()];
    let mut withheld: HashSet<String> = HashSet::new();
    log.walk_back(|i, task, path, before, after, chained| {
        let mut secret = !chained && before.is_some_and(hides_something);
        let after = match (before, after) {
            (_, None) => Value::Null,
            (None, Some(after)) => {
                secret |= hides_something(after);
                json!(after)
            }
            (Some(before), Some(after)) => {
                let s = Splice::between(before, after);
                secret |= hides_something(changed_lines(after, &s));
                json!({"keep_start": s.prefix, "keep_end": s.suffix, "middle": &*s.middle})
            }
        };
        if secret {
            withheld.insert(path.to_string());
        }
        let mut entry = json!({"task": task, "path": path, "after": after});
        if !chained {
            entry["before"] = json!(before);
        }
        out[i] = entry;
    });
    for entry in &mut out {
        if let Some(path) = entry["path"].as_str()
            && withheld.contains(path)
        {
            *entry = json!({"task": entry["task"], "path": path, "withheld": true});
        }
    }
    out
}

/// Whether scrubbing would change `text`.
fn hides_something(text: &str) -> bool {
    matches!(scrub::text(text), Cow::Owned(_))
}

/// The whole lines of `after` that a splice wrote (scrubbing's patterns are
/// line-based); all of `after` when it may hold a multi-line key block.
fn changed_lines<'a>(after: &'a str, s: &Splice) -> &'a str {
    let end = after.len().saturating_sub(s.suffix).max(s.prefix);
    let start = after
        .get(..s.prefix)
        .and_then(|h| h.rfind('\n'))
        .map_or(0, |n| n + 1);
    let stop = after
        .get(end..)
        .and_then(|t| t.find('\n'))
        .map_or(after.len(), |n| end + n);
    let window = after.get(start..stop).unwrap_or(after);
    if window.contains("-----") {
        after
    } else {
        window
    }
}

/// The change log back from its entries.
pub fn decode(entries: &[Value]) -> Result<ChangeLog, String> {
    let mut last_after: HashMap<String, Option<String>> = HashMap::new();
    let mut log = ChangeLog::default();
    for (i, e) in entries.iter().enumerate() {
        let bad = || format!("change {} of the log is malformed", i + 1);
        let path = e["path"].as_str().ok_or_else(bad)?.to_string();
        let task = u32::try_from(e["task"].as_u64().ok_or_else(bad)?).map_err(|_| bad())?;
        if e["withheld"] == true {
            // Every change of a withheld file is withheld: none is restored.
            last_after.remove(&path);
            continue;
        }
        let before = match e.get("before") {
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad()),
            None => last_after.remove(&path).ok_or_else(bad)?,
        };
        let after = match (&e["after"], before.as_deref()) {
            (Value::Null, _) => None,
            (Value::String(s), None) => Some(s.clone()),
            (splice @ Value::Object(_), Some(before)) => {
                let count = |key: &str| {
                    splice[key]
                        .as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(bad)
                };
                let s = Splice {
                    prefix: count("keep_start")?,
                    suffix: count("keep_end")?,
                    middle: splice["middle"].as_str().ok_or_else(bad)?.into(),
                };
                Some(s.apply_checked(before).ok_or_else(bad)?)
            }
            _ => return Err(bad()),
        };
        log.record(task, &path, before.as_deref(), after.as_deref());
        last_after.insert(path, after);
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Change<'a> = (u32, &'a str, Option<&'a str>, Option<&'a str>);

    fn log_of(changes: &[Change]) -> ChangeLog {
        let mut log = ChangeLog::default();
        for (task, path, before, after) in changes {
            log.record(*task, path, *before, *after);
        }
        log
    }

    /// Every change's (task, path, before, after), oldest first.
    fn texts(log: &ChangeLog) -> Vec<(u32, String, Option<String>, Option<String>)> {
        let mut out = Vec::new();
        log.walk_back(|_, task, path, before, after, _| {
            out.push((
                task,
                path.to_string(),
                before.map(str::to_string),
                after.map(str::to_string),
            ));
        });
        out.reverse();
        out
    }

    #[test]
    fn each_text_is_stored_once_and_comes_back_exactly() {
        let changes = [
            (1, "a.py", Some("v0\nsame\n"), Some("v1\nsame\n")),
            (1, "b.py", None, Some("new")),
            (2, "a.py", Some("v1\nsame\n"), Some("v2\nsame\n")),
            (2, "b.py", Some("new"), None),
            // Someone changed a.py by hand in between: the before is stored.
            (3, "a.py", Some("by hand"), Some("v3")),
        ];
        let log = log_of(&changes);
        let encoded = encode(&log);
        assert!(encoded[2].get("before").is_none(), "{}", encoded[2]);
        assert_eq!(encoded[2]["after"]["middle"], "2", "only what changed");
        assert!(encoded[3].get("before").is_none(), "{}", encoded[3]);
        assert_eq!(encoded[4]["before"], "by hand");
        assert_eq!(texts(&decode(&encoded).unwrap()), texts(&log));
        // The encoding of a prefix is a prefix of the encoding.
        assert_eq!(encode(&log_of(&changes[..3])), encoded[..3]);
    }

    #[test]
    fn a_long_session_of_edits_to_one_file_stays_small() {
        let mut log = ChangeLog::default();
        let mut text = String::from("start\n");
        for i in 0..500 {
            let next = format!("{text}line {i}\n");
            log.record(1, "f.txt", Some(&text), Some(&next));
            text = next;
        }
        let encoded = encode(&log);
        let size: usize = encoded.iter().map(|e| e.to_string().len()).sum();
        assert!(size < 100 * 500, "{size} bytes for 500 one-line edits");
        let back = decode(&encoded).unwrap();
        assert_eq!(texts(&back), texts(&log));
    }

    #[test]
    fn a_file_holding_a_credential_is_withheld_and_the_rest_comes_back() {
        let changes = [
            (1, "a.py", Some("x = 1\n"), Some("x = 2\n")),
            (
                1,
                "settings.py",
                Some("A = 1\nB = 2\n"),
                Some("A = 1\nB = 3\n"),
            ),
            // The next edit writes a password: the whole file is withheld.
            (
                2,
                "settings.py",
                Some("A = 1\nB = 3\n"),
                Some("A = 1\nB = 3\npassword = \"hunter2-long\"\n"),
            ),
            (2, "a.py", Some("x = 2\n"), Some("x = 3\n")),
        ];
        let encoded = encode(&log_of(&changes));
        let text = serde_json::to_string(&encoded).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(
            encoded[1]["withheld"], true,
            "an earlier change of the file too"
        );
        assert_eq!(encoded[2]["withheld"], true);
        let back = texts(&decode(&encoded).unwrap());
        let a_only: Vec<_> = texts(&log_of(&changes))
            .into_iter()
            .filter(|c| c.1 == "a.py")
            .collect();
        assert_eq!(back, a_only);
    }

    #[test]
    fn a_credential_already_in_the_original_withholds_the_file() {
        let original = "API_KEY = \"sk-live-1234567890abcdef\"\nname = 1\n";
        let edited = "API_KEY = \"sk-live-1234567890abcdef\"\nname = 2\n";
        let encoded = encode(&log_of(&[(1, "conf.py", Some(original), Some(edited))]));
        assert_eq!(encoded[0]["withheld"], true, "{}", encoded[0]);
        assert!(!encoded[0].to_string().contains("sk-live"));
    }

    #[test]
    fn malformed_entries_are_errors() {
        for bad in [
            json!({"task": 1, "after": "x"}),
            json!({"task": -1, "path": "a", "after": "x", "before": null}),
            json!({"task": 1, "path": "a", "after": 5, "before": null}),
            // No before and no earlier change of the path.
            json!({"task": 1, "path": "a", "after": "x"}),
            // A splice that does not fit its before.
            json!({"task": 1, "path": "a", "before": "ab", "after": {"keep_start": 5, "keep_end": 0, "middle": ""}}),
            json!({"task": 1, "path": "a", "before": "é", "after": {"keep_start": 1, "keep_end": 0, "middle": ""}}),
            // A splice needs a before.
            json!({"task": 1, "path": "a", "before": null, "after": {"keep_start": 0, "keep_end": 0, "middle": ""}}),
        ] {
            assert!(decode(std::slice::from_ref(&bad)).is_err(), "{bad}");
        }
    }
}
