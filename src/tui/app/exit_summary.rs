//! What stays on the normal screen after the full-screen UI closes: how the
//! last task ended, the files the session changed (the core's change log:
//! edits and patches, less what was undone, with a resumed session's), tokens
//! and cost, the transcript's path and, for `--demo`, where the temporary
//! copy is, and the command that resumes the session.
//!
//! What must stay true: every path and name is sanitized (one line each, no
//! control characters), and nothing secret is in it (it is built from the
//! App's own counters and the change log's paths).

use crate::present;
use crate::tui::app::{App, TaskState};
use crate::tui::render::text::sanitize;
use std::path::Path;

impl App {
    /// The lines to print after the UI closes.
    pub fn exit_summary(&self, transcript: Option<&Path>, demo_copy: Option<&Path>) -> Vec<String> {
        let outcome = match (&self.facts.last_outcome, self.status.state) {
            (_, TaskState::Interrupting) => "The running task was interrupted.".to_string(),
            (Some(line), _) => format!("Last task: {line}"),
            (None, _) => "No task was run.".to_string(),
        };
        let mut out = vec![format!("stepwise: {outcome}")];
        let files = self.changed_files();
        if files.is_empty() {
            out.push("Files changed: none".to_string());
        } else {
            out.push(format!("Files changed: {}", files.join(", ")));
        }
        out.push(present::usage_line(
            &self.status.session_tokens,
            self.status.session_cost,
        ));
        if let Some(path) = transcript {
            out.push(format!(
                "Transcript: {}",
                sanitize(&path.display().to_string())
            ));
        }
        if let Some(path) = demo_copy {
            out.push(format!(
                "The demo worked on a temporary copy: {}",
                sanitize(&path.display().to_string())
            ));
        }
        out
    }

    /// The exit summary's last line: the command that resumes this session.
    pub fn resume_line(command: &str) -> String {
        format!("Resume this session: {}", sanitize(command))
    }

    /// Each file the session changed, once, in order (sanitized).
    fn changed_files(&self) -> Vec<String> {
        self.facts
            .session_files
            .iter()
            .map(|p| sanitize(p))
            .collect()
    }
}
