//! Approval scopes: which tools the user approved for the rest of the task,
//! shared between the core and the front end (which shows and can revoke
//! them), and which tools and paths configuration never lets be approved
//! that way.

use crate::tools::ToolName;
use globset::{Glob, GlobMatcher};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// Tools approved for the rest of the current task. Cloning shares the set.
#[derive(Debug, Clone, Default)]
pub struct TaskApprovals(Arc<Mutex<BTreeSet<&'static str>>>);

impl TaskApprovals {
    pub fn grant(&self, tool: ToolName) {
        if let Ok(mut set) = self.0.lock() {
            set.insert(tool.as_str());
        }
    }

    /// Take an approval back; the next call of that tool asks again.
    pub fn revoke(&self, tool: &str) {
        if let Ok(mut set) = self.0.lock() {
            set.remove(tool);
        }
    }

    pub fn covers(&self, tool: ToolName) -> bool {
        self.0.lock().is_ok_and(|set| set.contains(tool.as_str()))
    }

    pub fn clear(&self) {
        if let Ok(mut set) = self.0.lock() {
            set.clear();
        }
    }

    /// The approved tools, sorted.
    pub fn list(&self) -> Vec<&'static str> {
        self.0
            .lock()
            .map(|set| set.iter().copied().collect())
            .unwrap_or_default()
    }
}

/// What configuration forbids approving for the whole task.
#[derive(Debug, Clone, Default)]
pub struct ScopePolicy {
    tools: Vec<ToolName>,
    paths: Vec<GlobMatcher>,
}

impl ScopePolicy {
    /// `tools` and `paths` (globs such as `*.toml` or `migrations/**`) come
    /// checked from the configuration, so building the policy cannot fail.
    pub fn new(tools: &[ToolName], paths: &[Glob]) -> ScopePolicy {
        ScopePolicy {
            tools: tools.to_vec(),
            paths: paths.iter().map(Glob::compile_matcher).collect(),
        }
    }

    /// May a call of `tool` on `path` be covered by a task-wide approval?
    pub fn allows(&self, tool: ToolName, path: Option<&str>) -> bool {
        if self.tools.contains(&tool) {
            return false;
        }
        match path {
            Some(path) => !self.paths.iter().any(|glob| glob.is_match(path)),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_shared_and_revocable() {
        let a = TaskApprovals::default();
        let b = a.clone();
        a.grant(ToolName::WriteFile);
        assert!(b.covers(ToolName::WriteFile));
        assert_eq!(b.list(), ["write_file"]);
        b.revoke("write_file");
        assert!(!a.covers(ToolName::WriteFile));
    }

    #[test]
    fn policy_forbids_tools_and_paths() {
        let globs = ["*.toml", "migrations/**"].map(|g| Glob::new(g).unwrap());
        let p = ScopePolicy::new(&[ToolName::RunTests], &globs);
        assert!(!p.allows(ToolName::RunTests, None));
        assert!(!p.allows(ToolName::WriteFile, Some("pyproject.toml")));
        assert!(!p.allows(ToolName::ReplaceText, Some("migrations/0001.py")));
        assert!(p.allows(ToolName::WriteFile, Some("calculator.py")));
        assert!(ScopePolicy::default().allows(ToolName::RunTests, None));
    }
}
