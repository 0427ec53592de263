//! The wording of a restored session (`stepwise resume`, `--continue`),
//! shared by both front ends.
//!
//! What must stay true: every untrusted string (the session's name, a task,
//! a tool's arguments) is made one line and sanitized here.

use super::one_line;
use crate::agent::RestoredEntry;

/// The first line of a restored conversation.
pub fn restored_line(session: &str, tasks: u32, steps: u32) -> String {
    let tasks_word = if tasks == 1 { "task" } else { "tasks" };
    let steps_word = if steps == 1 { "step" } else { "steps" };
    format!(
        "Resumed session {}: {tasks} {tasks_word}, {steps} {steps_word} so far. The next task continues this conversation.",
        one_line(session)
    )
}

/// A restored session whose last task never finished (its process stopped).
pub fn cut_off_line(files: &[String]) -> String {
    let changed = if files.is_empty() {
        "It had changed no file.".to_string()
    } else {
        let names: Vec<String> = files.iter().map(|f| one_line(f).into_owned()).collect();
        format!(
            "It had changed {}: /diff shows the changes and /undo reverts them.",
            names.join(", ")
        )
    };
    format!("The last task was cut off: stepwise stopped before it finished. {changed}")
}

/// A tool call of a restored conversation, on one line.
pub fn restored_tool_line(name: &str, arguments: &str) -> String {
    const MAX: usize = 160;
    let args: String = one_line(arguments).chars().take(MAX).collect();
    format!("called {} {args}", one_line(name))
}

/// An entry's text for a plain-text front end.
pub fn restored_entry_text(entry: &RestoredEntry) -> String {
    match entry {
        RestoredEntry::User { text } => format!("> {}", one_line(text)),
        RestoredEntry::Assistant { text } => one_line(text).to_string(),
        RestoredEntry::Tool {
            name, arguments, ..
        } => restored_tool_line(name, arguments),
        RestoredEntry::Gate { text } => format!("gate: {}", one_line(text)),
        RestoredEntry::Notice { text } => one_line(text).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_arguments_are_one_clean_line() {
        let line = restored_line("s\x1b]0;x\x07\n1", 2, 1);
        assert!(!line.contains('\x1b') && !line.contains('\n'), "{line}");
        assert!(line.contains("2 tasks, 1 step"), "{line}");
        let tool = restored_tool_line(
            "read_file",
            &format!("{{\"path\":\"{}\"}}", "a".repeat(500)),
        );
        assert!(tool.chars().count() < 200, "{tool}");
    }
}
