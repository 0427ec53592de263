//! Project rules: `AGENTS.md` in the workspace root and `.stepwise/rules.md`,
//! read at each task start and appended to the system prompt, capped in size.
//!
//! What must stay true: a rule file is read as `read_file` reads a file: a
//! regular file only (never a FIFO or a device), opened without blocking,
//! capped, and judged by the deny list by where it really leads, so a rule
//! file that is a symlink to `.env` or `.git/config` puts nothing of them
//! into the prompt.

use crate::config::read::{MAX_CONFIG_BYTES, regular_text};
use crate::tools::Workspace;
use std::path::Path;

/// Rule files, in the order they are added.
pub const RULE_FILES: [&str; 2] = ["AGENTS.md", ".stepwise/rules.md"];
/// Most characters of rules added to the prompt.
pub const MAX_RULES_CHARS: usize = 20_000;

/// The rules found for a task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Which files were found (relative to the root).
    pub files: Vec<String>,
    pub text: String,
    pub truncated: bool,
}

impl Rules {
    /// The prompt section, or nothing when there are no rules.
    pub fn prompt_section(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let mut section = format!(
            "## Project rules (from {})\n\nFollow these rules of the project's maintainers:\n\n{}",
            self.files.join(" and "),
            self.text
        );
        if self.truncated {
            section.push_str(&format!(
                "\n\n[The rules were cut at {MAX_RULES_CHARS} characters; read the files for the rest.]"
            ));
        }
        Some(section)
    }
}

/// Read the rule files that exist. A file that leads outside the root or to
/// a denied file (a symlink), that is not a regular file, or not UTF-8 text
/// is skipped.
pub fn load(workspace: &Workspace) -> Rules {
    let mut rules = Rules::default();
    let Ok(root) = workspace.root().canonicalize() else {
        return rules;
    };
    for name in RULE_FILES {
        let Ok(real) = root.join(name).canonicalize() else {
            continue;
        };
        let Ok(inside) = real.strip_prefix(&root) else {
            continue;
        };
        // The rule file itself lives in `.stepwise/`; anything else it leads
        // to is judged as the file tools judge it.
        if inside != Path::new(name) && workspace.deny().denies(inside) {
            continue;
        }
        let Ok(Some(text)) = regular_text(&real, MAX_CONFIG_BYTES) else {
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        if !rules.text.is_empty() {
            rules.text.push_str("\n\n");
        }
        rules.text.push_str(text.trim_end());
        rules.files.push(name.to_string());
    }
    if rules.text.chars().count() > MAX_RULES_CHARS {
        rules.text = rules.text.chars().take(MAX_RULES_CHARS).collect();
        rules.truncated = true;
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("stepwise-rules-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".stepwise")).unwrap();
        dir
    }

    #[test]
    fn both_files_are_read_in_order_and_capped() {
        let dir = temp("both");
        std::fs::write(dir.join("AGENTS.md"), "Use tabs.\n").unwrap();
        std::fs::write(dir.join(".stepwise/rules.md"), "x".repeat(MAX_RULES_CHARS)).unwrap();
        let rules = load(&Workspace::open(&dir).unwrap());
        assert_eq!(rules.files, ["AGENTS.md", ".stepwise/rules.md"]);
        assert!(rules.text.starts_with("Use tabs.\n\nxxx"));
        assert!(rules.truncated);
        assert_eq!(rules.text.chars().count(), MAX_RULES_CHARS);
        let section = rules.prompt_section().unwrap();
        assert!(
            section.contains("AGENTS.md and .stepwise/rules.md") && section.contains("were cut")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_rules_no_section_and_links_out_are_skipped() {
        let dir = temp("none");
        assert_eq!(load(&Workspace::open(&dir).unwrap()).prompt_section(), None);
        let outside = temp("outside");
        std::fs::write(outside.join("AGENTS.md"), "secret rules").unwrap();
        std::os::unix::fs::symlink(outside.join("AGENTS.md"), dir.join("AGENTS.md")).unwrap();
        assert!(load(&Workspace::open(&dir).unwrap()).files.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_rule_file_that_leads_to_a_secret_or_a_special_file_is_skipped() {
        let dir = temp("links");
        std::fs::write(dir.join(".env"), "OPENAI_API_KEY=sk-rules-secret\n").unwrap();
        std::os::unix::fs::symlink(".env", dir.join("AGENTS.md")).unwrap();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/config"), "[core]\n").unwrap();
        std::os::unix::fs::symlink("../.git/config", dir.join(".stepwise/rules.md")).unwrap();
        let rules = load(&Workspace::open(&dir).unwrap());
        assert!(rules.files.is_empty(), "{rules:?}");
        assert!(!rules.text.contains("sk-rules-secret"));
        std::fs::remove_file(dir.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.join("AGENTS.md")).unwrap();
        assert!(load(&Workspace::open(&dir).unwrap()).files.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
