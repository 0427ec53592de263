//! This workspace's sessions, newest first, and the picker of
//! `stepwise resume`: a numbered list on the normal screen that reads a
//! number. (A plain list rather than a full-screen one: it runs before the
//! UI is built, since the chosen session decides the model the UI talks to;
//! it stays in the scrollback, and works the same over any terminal.)
//!
//! What must stay true: only sessions that verify under this user's key are
//! listed or chosen (the others are counted, never shown); every string
//! shown is one sanitized line.

use super::key::SigningKey;
use super::{LoadError, Loaded, SUFFIX, reader};
use crate::present::one_line;
use cap_std::fs::Dir;
use std::io::{BufRead, Write};

/// What the folder holds that can be resumed.
#[derive(Debug, Default)]
pub struct Sessions {
    /// Newest first (by start time, then name).
    pub trusted: Vec<Loaded>,
    /// Transcripts refused: not signed with this user's key, or damaged.
    pub refused: Vec<(String, LoadError)>,
}

/// Read every transcript in `dir`.
pub fn sessions(dir: &Dir, key: &SigningKey) -> Sessions {
    let mut out = Sessions::default();
    let Ok(entries) = dir.entries() else {
        return out;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(name) = file_name.strip_suffix(SUFFIX) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        match reader::read_capped(dir, &file_name).and_then(|b| reader::parse(&b, name, key)) {
            Ok(loaded) => out.trusted.push(loaded),
            // Nothing happened in it yet: not worth listing.
            Err(LoadError::NothingToResume) => {}
            Err(e) => out.refused.push((name.to_string(), e)),
        }
    }
    out.trusted
        .sort_by(|a, b| (&b.started, &b.name).cmp(&(&a.started, &a.name)));
    out
}

/// Load one session by name.
pub fn load(dir: &Dir, name: &str, key: &SigningKey) -> Result<Loaded, String> {
    let file = format!("{name}{SUFFIX}");
    reader::read_capped(dir, &file)
        .and_then(|b| reader::parse(&b, name, key))
        .map_err(|e| e.explain(name))
}

/// One row of the list.
pub fn row(n: usize, s: &Loaded) -> String {
    let task: String = one_line(s.state.first_task().unwrap_or("(no task)"))
        .chars()
        .take(60)
        .collect();
    let outcome = match s.state.outcome.as_deref() {
        None => "not finished",
        Some(crate::agent::RUNNING | crate::agent::CUT_OFF) => "cut off",
        Some(word) => word,
    };
    format!(
        "{n:>3}. {}  {}  {} steps, {}  \"{task}\"",
        one_line(&s.started),
        one_line(&s.name),
        s.state.steps,
        one_line(outcome)
    )
}

/// Print the list and read a number; `None` when the user chose none.
pub fn pick(
    sessions: &Sessions,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> std::io::Result<Option<String>> {
    if !sessions.refused.is_empty() {
        writeln!(
            out,
            "({} transcript(s) here not written by your stepwise, or damaged, are not offered.)",
            sessions.refused.len()
        )?;
    }
    if sessions.trusted.is_empty() {
        writeln!(out, "No session of this workspace can be resumed.")?;
        return Ok(None);
    }
    writeln!(out, "Sessions of this workspace, newest first:")?;
    for (i, s) in sessions.trusted.iter().enumerate() {
        writeln!(out, "{}", row(i + 1, s))?;
    }
    loop {
        write!(
            out,
            "Resume which? [1-{}, Enter: none] ",
            sessions.trusted.len()
        )?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 || line.trim().is_empty() {
            return Ok(None);
        }
        match line.trim().parse::<usize>() {
            Ok(n) if (1..=sessions.trusted.len()).contains(&n) => {
                return Ok(Some(sessions.trusted[n - 1].name.clone()));
            }
            _ => writeln!(out, "Type a number from the list.")?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::history::saved::SavedState;

    fn session(name: &str, started: &str, task: &str) -> Loaded {
        Loaded {
            name: name.into(),
            session: "s".into(),
            started: started.into(),
            model: "m".into(),
            seq: 1,
            state: SavedState {
                messages: vec![
                    crate::llm::ChatMessage::system("sys"),
                    crate::llm::ChatMessage::user(task),
                ],
                changes: vec![],
                usage: Default::default(),
                cost_usd: 0.0,
                tasks: 1,
                steps: 4,
                outcome: Some("answered".into()),
                model: None,
            },
            cut_off: false,
        }
    }

    #[test]
    fn the_picker_asks_again_until_a_listed_number_and_enter_chooses_none() {
        let sessions = Sessions {
            trusted: vec![
                session("b", "2026-12-02T00:00:00Z", "newer\x1b[2J task"),
                session("a", "2026-12-01T00:00:00Z", "older task"),
            ],
            refused: vec![("x".into(), LoadError::Untrusted)],
        };
        let mut out = Vec::new();
        let chosen = pick(&sessions, &mut "0\nthree\n2\n".as_bytes(), &mut out).unwrap();
        assert_eq!(chosen.as_deref(), Some("a"));
        let shown = String::from_utf8(out).unwrap();
        assert!(!shown.contains('\x1b'), "{shown}");
        assert_eq!(
            shown.matches("Type a number from the list.").count(),
            2,
            "{shown}"
        );
        assert!(
            shown.contains("1 transcript(s) here not written by your stepwise"),
            "{shown}"
        );
        assert!(shown.contains("4 steps, answered"), "{shown}");
        let none = pick(&sessions, &mut "\n".as_bytes(), &mut Vec::new()).unwrap();
        assert_eq!(none, None);
    }
}
