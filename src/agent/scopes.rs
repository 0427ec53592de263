//! Approval scopes: which tools the user approved for the rest of the task,
//! and which tools and paths configuration never lets be approved that way.
//! The task's approvals are plain state owned by the session (no lock that
//! could be poisoned and silently skip a revoke); a front end sees them only
//! through `ScopesChanged` events and changes them only through commands,
//! which reach the session over the `Revoker` channel even while a task runs.

use crate::tools::ToolName;
use globset::{Glob, GlobMatcher};
use std::collections::BTreeSet;
use tokio::sync::mpsc;

/// Tools approved for the rest of the current task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskApprovals(BTreeSet<ToolName>);

impl TaskApprovals {
    /// Returns whether the set changed.
    pub fn grant(&mut self, tool: ToolName) -> bool {
        self.0.insert(tool)
    }

    /// Take approvals back; the next call of those tools asks again.
    /// Returns whether the set changed.
    pub fn revoke(&mut self, tools: &[ToolName]) -> bool {
        let before = self.0.len();
        self.0.retain(|t| !tools.contains(t));
        self.0.len() != before
    }

    pub fn covers(&self, tool: ToolName) -> bool {
        self.0.contains(&tool)
    }

    /// Returns whether the set changed.
    pub fn clear(&mut self) -> bool {
        let changed = !self.0.is_empty();
        self.0.clear();
        changed
    }

    /// The approved tools, sorted by name.
    pub fn list(&self) -> Vec<ToolName> {
        let mut tools: Vec<ToolName> = self.0.iter().copied().collect();
        tools.sort_by_key(|t| t.as_str());
        tools
    }
}

/// The front end's way to take approvals back while a task runs: the session
/// applies what was sent before it checks the next tool call.
#[derive(Debug, Clone)]
pub struct Revoker(pub(super) mpsc::UnboundedSender<Vec<ToolName>>);

impl Revoker {
    /// False when the session is gone.
    pub fn revoke(&self, tools: Vec<ToolName>) -> bool {
        self.0.send(tools).is_ok()
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
    fn grants_are_revocable_and_report_changes() {
        let mut a = TaskApprovals::default();
        assert!(a.grant(ToolName::WriteFile));
        assert!(a.grant(ToolName::ReplaceText));
        assert!(!a.grant(ToolName::WriteFile), "already granted");
        assert!(a.covers(ToolName::WriteFile));
        assert_eq!(a.list(), [ToolName::ReplaceText, ToolName::WriteFile]);
        assert!(a.revoke(&[ToolName::WriteFile]));
        assert!(!a.covers(ToolName::WriteFile));
        assert!(!a.revoke(&[ToolName::WriteFile]), "nothing left to revoke");
        assert!(a.clear());
        assert!(!a.clear());
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
