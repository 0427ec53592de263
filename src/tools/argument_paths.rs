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
            // Keys can name files too (`{"files": {".env": true}}`).
            Value::Object(map) => map.iter().find_map(|(k, v)| {
                self.denied_path_text(k)
                    .or_else(|| self.denied_value(v, depth + 1))
            }),
            _ => None,
        }
    }

    /// Why the path a string names is denied, if it names one of the
    /// workspace (or a credential file anywhere).
    fn denied_path_text(&self, text: &str) -> Option<String> {
        let shown = text.trim();
        let text = file_uri_path(shown)?;
        if text.is_empty() || text.contains('\0') || text.contains('\n') {
            return None;
        }
        let path = Path::new(&text);
        // Names denied wherever they are: `.env`, keys, anything in `.git/`.
        if let Some(why) = denied_anywhere(path) {
            return Some(format!("{shown} is refused: {why}"));
        }
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root().join(path)
        };
        // Resolved as the kernel would: symlinks first, `..` after them.
        match real_path(&full).strip_prefix(self.root()) {
            Ok(inside) => self.deny().reason(inside).map(|why| {
                format!(
                    "{shown} is refused: it leads to {}, and {why}",
                    inside.display()
                )
            }),
            // A relative path that climbs out names no file of the workspace
            // the server should touch; plain text with blanks is not a path.
            Err(_) if !path.is_absolute() && !text.contains(char::is_whitespace) => Some(format!(
                "{shown} is refused: it leads outside the workspace"
            )),
            Err(_) => None,
        }
    }
}

/// The path a `file:` URI names (any case, `localhost` host, percent
/// escapes decoded), the text itself when it is no URI, `None` for a URL
/// of another scheme.
fn file_uri_path(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("file://").map(|_| &text[7..]) else {
        return (!text.contains("://")).then(|| text.to_string());
    };
    let rest = if rest.len() >= 9 && rest[..9].eq_ignore_ascii_case("localhost") {
        &rest[9..]
    } else {
        rest
    };
    Some(percent_decode(rest))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|b| hex(*b)),
            bytes.get(i + 2).and_then(|b| hex(*b)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Why a path is denied by its names alone, wherever it is.
fn denied_anywhere(path: &Path) -> Option<&'static str> {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    if names.iter().any(|n| {
        super::deny::DENIED_DIRS
            .iter()
            .any(|d| d.eq_ignore_ascii_case(n))
    }) {
        return Some("everything inside .git/, .stepwise/ and .kube/ is off limits");
    }
    names.last().filter(|n| super::deny::denied_name(n)).map(
        |_| "environment files, private keys and credential files are never readable or writable",
    )
}

/// Where a path really leads: its deepest existing ancestor resolved
/// (symlinks followed, `..` taken after them, as the kernel does), the
/// rest joined on and folded.
fn real_path(full: &Path) -> PathBuf {
    let mut existing = full.to_path_buf();
    let mut rest = Vec::new();
    let resolved = loop {
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
                _ => break lexical(full),
            },
        }
    };
    let mut out = resolved;
    for part in rest.into_iter().rev() {
        out.push(part);
    }
    lexical(&out)
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
    fn no_spelling_of_a_denied_path_gets_through() {
        let (dir, ws) = workspace();
        let root = ws.root().display().to_string();
        let name = ws.root().file_name().unwrap().to_string_lossy().to_string();
        std::fs::create_dir_all(dir.path().join(".git/objects")).unwrap();
        std::os::unix::fs::symlink(".git/objects", dir.path().join("d")).unwrap();
        let alias = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(ws.root(), alias.path().join("proj")).unwrap();
        for path in [
            format!("../{name}/.env.local"),
            format!("src/../../{name}/.env.local"),
            format!("FILE://{root}/.env.local"),
            format!("file://{root}/%2Eenv.local"),
            format!("file://localhost{root}/.env.local"),
            format!("{}/proj/.env.local", alias.path().display()),
            "d/../config".to_string(),
            "/home/someone/.ssh/id_ed25519".to_string(),
        ] {
            assert!(denied(&ws, json!({"path": path})).is_some(), "{path}");
        }
        assert!(
            denied(&ws, json!({"files": {".env.local": true}})).is_some(),
            "a key"
        );
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
