//! Approval scopes: which tools (by `ToolId`, so each MCP tool on its own)
//! the user approved for the rest of the task, and which tools and paths
//! configuration never lets be approved that way.
//! The task's approvals are plain state owned by the session (no lock that
//! could be poisoned and silently skip a revoke); a front end sees them only
//! through `ScopesChanged` events and changes them only through commands,
//! which reach the session over the `Revoker` channel even while a task runs.

use crate::tools::{ToolId, ToolSelector};
use globset::{Glob, GlobMatcher};
use std::collections::BTreeSet;
use tokio::sync::mpsc;

/// Tools approved for the rest of the current task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskApprovals(BTreeSet<ToolId>);

impl TaskApprovals {
    /// Returns whether the set changed.
    pub fn grant(&mut self, tool: ToolId) -> bool {
        self.0.insert(tool)
    }

    /// Take approvals back; the next call of those tools asks again.
    /// Returns whether the set changed.
    pub fn revoke(&mut self, tools: &[ToolId]) -> bool {
        let before = self.0.len();
        self.0.retain(|t| !tools.contains(t));
        self.0.len() != before
    }

    pub fn covers(&self, tool: &ToolId) -> bool {
        self.0.contains(tool)
    }

    /// Returns whether the set changed.
    pub fn clear(&mut self) -> bool {
        let changed = !self.0.is_empty();
        self.0.clear();
        changed
    }

    /// The approved tools, sorted by name.
    pub fn list(&self) -> Vec<ToolId> {
        let mut tools: Vec<ToolId> = self.0.iter().cloned().collect();
        tools.sort_by_key(|t| t.to_string());
        tools
    }
}

/// The front end's way to take approvals back while a task runs: the session
/// applies what was sent before it checks the next tool call.
#[derive(Debug, Clone)]
pub struct Revoker(pub(in crate::agent) mpsc::UnboundedSender<Vec<ToolId>>);

impl Revoker {
    /// False when the session is gone.
    pub fn revoke(&self, tools: Vec<ToolId>) -> bool {
        self.0.send(tools).is_ok()
    }
}

/// What configuration forbids approving for the whole task.
#[derive(Debug, Clone, Default)]
pub struct ScopePolicy {
    tools: Vec<ToolSelector>,
    paths: Vec<GlobMatcher>,
}

impl ScopePolicy {
    /// `tools` and `paths` (globs such as `*.toml` or `migrations/**`) come
    /// checked from the configuration, so building the policy cannot fail.
    pub fn new(tools: &[ToolSelector], paths: &[Glob]) -> ScopePolicy {
        ScopePolicy {
            tools: tools.to_vec(),
            paths: paths.iter().map(Glob::compile_matcher).collect(),
        }
    }

    /// May a call of `tool` on `path` be covered by a task-wide approval?
    pub fn allows(&self, tool: &ToolId, path: Option<&str>) -> bool {
        if self.tools.iter().any(|s| s.matches(tool)) {
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
    use crate::tools::ToolName;

    #[test]
    fn grants_are_revocable_and_report_changes() {
        let mut a = TaskApprovals::default();
        let (write, replace) = (ToolName::WRITE_FILE.into(), ToolName::REPLACE_TEXT.into());
        assert!(a.grant(write));
        assert!(a.grant(replace));
        let write: ToolId = ToolName::WRITE_FILE.into();
        assert!(!a.grant(write.clone()), "already granted");
        assert!(a.covers(&write));
        assert_eq!(
            a.list(),
            [
                ToolId::from(ToolName::REPLACE_TEXT),
                ToolName::WRITE_FILE.into()
            ]
        );
        assert!(a.revoke(std::slice::from_ref(&write)));
        assert!(!a.covers(&write));
        assert!(!a.revoke(&[write]), "nothing left to revoke");
        assert!(a.clear());
        assert!(!a.clear());
    }

    #[test]
    fn each_mcp_tool_is_granted_and_revoked_on_its_own() {
        let mut a = TaskApprovals::default();
        let (write, read) = (
            ToolId::mcp("fs", "write_file"),
            ToolId::mcp("fs", "read_file"),
        );
        assert!(a.grant(write.clone()));
        assert!(a.covers(&write) && !a.covers(&read));
        assert!(
            !a.covers(&ToolName::WRITE_FILE.into()),
            "not the built-in tool"
        );
        assert!(a.revoke(std::slice::from_ref(&write)));
        assert!(!a.covers(&write));
    }

    #[test]
    fn policy_forbids_tools_and_paths() {
        let globs = ["*.toml", "migrations/**"].map(|g| Glob::new(g).unwrap());
        let p = ScopePolicy::new(&[ToolName::RUN_TESTS.into(), ToolSelector::AnyMcp], &globs);
        assert!(!p.allows(&ToolName::RUN_TESTS.into(), None));
        assert!(!p.allows(&ToolName::WRITE_FILE.into(), Some("pyproject.toml")));
        assert!(!p.allows(&ToolName::REPLACE_TEXT.into(), Some("migrations/0001.py")));
        assert!(p.allows(&ToolName::WRITE_FILE.into(), Some("calculator.py")));
        assert!(!p.allows(&ToolId::mcp("fs", "write_file"), None));
        assert!(ScopePolicy::default().allows(&ToolName::RUN_TESTS.into(), None));
    }
}
