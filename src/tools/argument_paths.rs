//! The deny list for tools that take arbitrary arguments (MCP servers):
//! every string in a call's arguments that names a path of the workspace is
//! judged as `read_file` would judge it, by the name given and by the file it
//! really is, before anything is sent.
//!
//! What must stay true: a string naming a denied file of the workspace (an
//! absolute path under the root, a relative path, a `file://` URI, or a
//! symlink inside the workspace leading to one) refuses the whole call; so
//! does a path of the workspace that leads outside it through a symlink.
//! Strings that name no workspace path pass.

use super::Workspace;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// How deep arguments are searched for strings (deeper ones are refused).
const MAX_DEPTH: usize = 32;

impl Workspace {
    /// Why a call with these arguments may not be sent, if it may not: the
    /// first string in them that names a denied path of the workspace.
    pub fn denied_argument(&self, args: &serde_json::Map<String, Value>) -> Option<String> {
        args.values().find_map(|v| self.denied_value(v, 0))
    }

    fn denied_value(&self, value: &Value, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return Some("its arguments are nested too deeply to be checked".into());
        }
        match value {
            Value::String(s) => self.denied_path_text(s),
            Value::Array(items) => items.iter().find_map(|v| self.denied_value(v, depth + 1)),
            Value::Object(map) => map.values().find_map(|v| self.denied_value(v, depth + 1)),
            _ => None,
        }
    }

    /// Why the path a string names is denied, if it names one of the workspace.
    fn denied_path_text(&self, text: &str) -> Option<String> {
        let text = text.trim();
        let text = text.strip_prefix("file://").unwrap_or(text);
        // Another scheme's URL names no file of the workspace.
        if text.is_empty() || text.contains("://") || text.contains('\0') || text.contains('\n') {
            return None;
        }
        let path = Path::new(text);
        let relative = if path.is_absolute() {
            lexical(path).strip_prefix(self.root()).ok()?.to_path_buf()
        } else {
            let rel = Workspace::check(text).ok()?;
            rel.as_path().to_path_buf()
        };
        if let Some(why) = self.deny().reason(&relative) {
            return Some(format!("{text} is refused: {why}"));
        }
        match self.real_relative(&relative) {
            Ok(real) if real != relative => self.deny().reason(&real).map(|why| {
                format!(
                    "{text} is refused: it leads to {}, and {why}",
                    real.display()
                )
            }),
            Ok(_) => None,
            Err(outside) => Some(format!(
                "{text} is refused: it leads outside the workspace, to {}",
                outside.display()
            )),
        }
    }

    /// Where a workspace path really leads, relative to the root: its
    /// deepest existing ancestor resolved (symlinks followed), the rest
    /// joined on. `Err`: it leads outside the root, to that place.
    fn real_relative(&self, relative: &Path) -> Result<PathBuf, PathBuf> {
        let mut existing = self.root().join(relative);
        let mut rest = Vec::new();
        let real = loop {
            match std::fs::canonicalize(&existing) {
                Ok(real) => break real,
                Err(_) => match (
                    existing.file_name().map(|n| n.to_os_string()),
                    existing.parent(),
                ) {
                    (Some(name), Some(parent)) => {
                        rest.push(name);
                        existing = parent.to_path_buf();
                    }
                    _ => return Ok(relative.to_path_buf()),
                },
            }
        };
        let mut full = real;
        for part in rest.into_iter().rev() {
            full.push(part);
        }
        match full.strip_prefix(self.root()) {
            Ok(inside) => Ok(inside.to_path_buf()),
            Err(_) => Err(full),
        }
    }
}

/// `path` with `.` and `..` folded away, without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env.local"), "DB_PASSWORD=hunter2\n").unwrap();
        std::fs::write(dir.path().join("calculator.py"), "x = 1\n").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    fn denied(ws: &Workspace, args: Value) -> Option<String> {
        ws.denied_argument(args.as_object().unwrap())
    }

    #[test]
    fn a_denied_file_is_refused_however_it_is_named() {
        let (_dir, ws) = workspace();
        let root = ws.root().display().to_string();
        for path in [
            ".env.local".to_string(),
            "./src/../.env.local".into(),
            format!("{root}/.env.local"),
            format!("{root}/src/../.env.local"),
            format!("file://{root}/.env.local"),
            ".git/config".into(),
        ] {
            let why = denied(&ws, json!({"path": path})).unwrap_or_default();
            assert!(why.contains("is refused"), "{path}: {why:?}");
        }
        let nested = json!({"edits": [{"file": {"paths": ["calculator.py", ".env.local"]}}]});
        assert!(
            denied(&ws, nested).is_some(),
            "strings anywhere in the arguments"
        );
    }

    #[test]
    fn a_symlink_is_judged_by_its_target() {
        let (dir, ws) = workspace();
        std::os::unix::fs::symlink(".env.local", dir.path().join("notes.txt")).unwrap();
        let why = denied(&ws, json!({"path": "notes.txt"})).unwrap();
        assert!(why.contains("leads to .env.local"), "{why}");
        std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
        let out = denied(&ws, json!({"path": "etc/passwd"})).unwrap();
        assert!(out.contains("outside the workspace"), "{out}");
    }

    #[test]
    fn ordinary_arguments_pass() {
        let (_dir, ws) = workspace();
        let root = ws.root().display().to_string();
        let args = json!({
            "path": format!("{root}/calculator.py"),
            "new_file": "src/new_module.py",
            "content": "print('.env')\nimport os",
            "query": "where is the password read",
            "url": "https://example.org/.env",
            "count": 3,
        });
        assert_eq!(denied(&ws, args), None);
    }
}
