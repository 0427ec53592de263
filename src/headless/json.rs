//! `exec --json`: one JSON object per line, each carrying the schema version
//! `"v"` and its kind in `"event"`. The events and their fields are a public
//! interface, documented in the README ("JSON events"); a test compares that
//! table with what is emitted.
//!
//! What must stay true: every line goes through [`versioned`] (so it has
//! `"v"`) and [`present::json_safe`] (so no raw control character reaches
//! the terminal, while a parser still reads the same strings); a change that
//! removes or renames a field, or changes its meaning, raises
//! [`SCHEMA_VERSION`] (adding an event or a field does not).

use crate::agent::AgentEvent;
use crate::diff::FileDiff;
use crate::present;
use serde::Serialize;

/// The version of the `--json` event schema.
pub const SCHEMA_VERSION: u32 = 1;

/// An event with the schema version in front of its own fields.
#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    v: u32,
    #[serde(flatten)]
    event: &'a T,
}

/// One output line for anything serializable as an object with an `event` tag.
fn versioned<T: Serialize>(event: &T) -> String {
    let line = serde_json::to_string(&Versioned {
        v: SCHEMA_VERSION,
        event,
    })
    .unwrap_or_else(|e| {
        serde_json::json!({"v": SCHEMA_VERSION, "event": "error", "message": format!("unserializable event: {e}")})
            .to_string()
    });
    present::json_safe(&line).into_owned()
}

/// The line of one core event.
pub fn event_line(event: &AgentEvent) -> String {
    versioned(event)
}

/// `exec`'s own notice before the task (e.g. the demo's temporary workspace).
pub fn notice_line(text: &str, workspace: &std::path::Path) -> String {
    versioned(&serde_json::json!({"event": "notice", "text": text, "workspace": workspace}))
}

/// The files the session changed, the last line of a run, with the
/// session's name for `--resume` (`null` without a transcript).
pub fn changed_files_line(diffs: &[FileDiff], session: Option<&str>) -> String {
    let files: Vec<_> = diffs
        .iter()
        .map(|d| serde_json::json!({"path": d.path, "added": d.added, "removed": d.removed, "created": d.new_file}))
        .collect();
    versioned(&serde_json::json!({"event": "changed_files", "files": files, "session": session}))
}

/// Approvals were declined because no one could answer them.
pub fn unattended_line(declined: u32, text: &str) -> String {
    versioned(
        &serde_json::json!({"event": "declined_unattended", "declined": declined, "text": text}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_carries_the_version_and_no_raw_control() {
        let event = AgentEvent::AssistantDelta {
            text: "\x1b]0;t\x07\u{9b}2J".into(),
        };
        let line = event_line(&event);
        assert!(
            !line.chars().any(|c| present::visible(c).is_some()),
            "{line}"
        );
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["v"], 1);
        assert_eq!(value["event"], "assistant_delta");
        assert_eq!(
            value["text"], "\x1b]0;t\x07\u{9b}2J",
            "the data is unchanged"
        );
        let usage = event_line(&AgentEvent::Usage(Default::default()));
        let value: serde_json::Value = serde_json::from_str(&usage).unwrap();
        assert_eq!(value["v"], 1);
        assert_eq!(value["prompt_tokens"], 0);
        let notice: serde_json::Value =
            serde_json::from_str(&notice_line("n", std::path::Path::new("/w"))).unwrap();
        assert_eq!(
            (notice["v"].as_u64(), notice["event"].as_str()),
            (Some(1), Some("notice"))
        );
    }
}
