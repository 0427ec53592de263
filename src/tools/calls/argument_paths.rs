//! The deny list for tools that take arbitrary arguments (MCP servers):
//! every string in a call's arguments that names a path of the workspace is
//! judged as `read_file` would judge it, by the name given and by the file it
//! really is, before anything is sent.
//!
//! Each string is read every way a server could read it (see `spellings`):
//! as it is, as any `file:` URI form, percent-decoded (repeatedly), and as a
//! glob pattern, expanded against the workspace (see `argument_patterns`).
//!
//! What must stay true: a string naming a denied file of the workspace (an
//! absolute path under the root, a relative path, a `file:` URI, a pattern
//! matching one, or a symlink inside the workspace leading to one) refuses
//! the whole call; so does a path of the workspace that leads outside it
//! through a symlink, a file with more than one hard link (as `read_file`
//! refuses it), and a pattern too broad to check. Strings that name
//! no workspace path pass.

use crate::tools::Workspace;
use crate::tools::calls::argument_patterns::{
    MAX_VISITED, Pattern, TooMany, could_name_denied, is_extended_pattern, is_pattern,
};
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
    /// workspace (or a credential file anywhere), however a server reads it.
    fn denied_path_text(&self, text: &str) -> Option<String> {
        let shown = text.trim();
        spellings(shown)
            .iter()
            .find_map(|path| self.denied_spelling(path))
            .map(|why| format!("{shown} is refused: {why}"))
    }

    /// Why `text`, read as a path or as a glob pattern, is denied.
    fn denied_spelling(&self, text: &str) -> Option<String> {
        if text.is_empty() || text.contains('\0') || text.contains('\n') {
            return None;
        }
        if is_extended_pattern(text) {
            return Some("extended glob patterns (`@(…)`, `!(…)`) are not checked".into());
        }
        if is_pattern(text)
            && let Some(why) = self.denied_pattern(text)
        {
            return Some(why);
        }
        self.denied_path(text)
    }

    /// Why the files the pattern `text` matches are denied, if one is:
    /// expanded against the workspace, judged by names alone elsewhere.
    fn denied_pattern(&self, text: &str) -> Option<String> {
        let pattern = Pattern::parse(text)?;
        let base = if Path::new(&pattern.base).is_absolute() {
            PathBuf::from(&pattern.base)
        } else {
            self.root().join(&pattern.base)
        };
        if real_path(&base).strip_prefix(self.root()).is_err() {
            let climbs = !Path::new(text).is_absolute() && !text.contains(char::is_whitespace);
            return if climbs {
                Some("it leads outside the workspace".into())
            } else {
                could_name_denied(text).map(str::to_string)
            };
        }
        if let Some(why) = self.denied_path(&base.to_string_lossy()) {
            return Some(why);
        }
        let found = pattern.each_match(&base, |below| {
            let path = base.join(below);
            self.denied_path(&path.to_string_lossy())
                .map(|why| format!("it matches {}, and {why}", shown(self.root(), &path)))
        });
        match found {
            Ok(why) => why,
            Err(TooMany) => Some(format!(
                "it is a pattern matching more than {MAX_VISITED} files, too many to check"
            )),
        }
    }

    /// Why the path `text` names is denied: by its names, then by where it
    /// really leads in the workspace.
    fn denied_path(&self, text: &str) -> Option<String> {
        let path = Path::new(text);
        // Names denied wherever they are: `.env`, keys, anything in `.git/`.
        if let Some(why) = denied_anywhere(path) {
            return Some(why.to_string());
        }
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root().join(path)
        };
        // Resolved as the kernel would: symlinks first, `..` after them.
        let real = real_path(&full);
        match real.strip_prefix(self.root()) {
            Ok(inside) => self
                .deny()
                .reason(inside)
                .map(|why| format!("it leads to {}, and {why}", inside.display()))
                .or_else(|| hard_links(&real)),
            // A path of the workspace leading out through a symlink, or a
            // relative path that climbs out, names no file of the workspace
            // the server should touch; plain text with blanks is not a path.
            Err(_) if lexical(&full).starts_with(self.root()) => {
                Some("it leads outside the workspace".into())
            }
            Err(_) if !path.is_absolute() && !text.contains(char::is_whitespace) => {
                Some("it leads outside the workspace".into())
            }
            Err(_) => None,
        }
    }
}

/// Why a file of the workspace with more than one name is refused, as
/// `read_file` refuses it: its other name may be a denied one.
fn hard_links(real: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(real).ok()?;
    (meta.is_file() && meta.nlink() > 1).then(|| {
        format!(
            "it has {} hard links: the same file also lives under another name, which may be one that is never readable (such as .env)",
            meta.nlink()
        )
    })
}

/// A path of the workspace as shown in a refusal: relative to the root.
fn shown(root: &Path, path: &Path) -> String {
    let path = lexical(path);
    path.strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// Every path a server could read `text` as: the text itself, or for a
/// `file:` URI (RFC 8089: `file:/p`, `file:///p`, `file://host/p`, any
/// case) its path with and without a query or fragment, and as the `url`
/// crate reads it; then each of those percent-decoded, again and again
/// (`%252E`). None for a URL of another scheme.
fn spellings(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if text.len() >= 5 && text[..5].eq_ignore_ascii_case("file:") {
        let rest = &text[5..];
        let path = match rest.strip_prefix("//") {
            // The authority (empty, `localhost` or any host) ends at the next `/`.
            Some(authority) => authority.find('/').map_or("", |i| &authority[i..]),
            None => rest,
        };
        out.push(path.to_string());
        if let Some(i) = path.find(['?', '#']) {
            out.push(path[..i].to_string());
        }
        if let Some(parsed) = url::Url::parse(text)
            .ok()
            .and_then(|u| u.to_file_path().ok())
        {
            out.push(parsed.to_string_lossy().into_owned());
        }
    } else if text.contains("://") {
        return out;
    } else {
        out.push(text.to_string());
    }
    let mut decoded = Vec::new();
    for spelling in &out {
        let mut current = spelling.clone();
        for _ in 0..4 {
            let next = percent_decode(&current);
            if next == current {
                break;
            }
            decoded.push(next.clone());
            current = next;
        }
    }
    out.extend(decoded);
    out.dedup();
    out
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
        crate::tools::workspace::deny::DENIED_DIRS
            .iter()
            .any(|d| d.eq_ignore_ascii_case(n))
    }) {
        return Some("everything inside .git/, .stepwise/ and .kube/ is off limits");
    }
    names.last().filter(|n| crate::tools::workspace::deny::denied_name(n)).map(
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
    fn every_file_uri_form_and_percent_escape_is_read() {
        let (_dir, ws) = workspace();
        let root = ws.root().display().to_string();
        for path in [
            format!("file:{root}/%2Eenv.local"),
            format!("FILE:{root}/.env.local"),
            format!("file:///{root}/.env.local"),
            format!("file://localhost{root}/%2eenv%2Elocal"),
            format!("file://any-host{root}/.env.local"),
            format!("file://{root}/.env.local?x=1"),
            format!("file://{root}/.env.local#top"),
            format!("{root}/%2Eenv.local"),
            format!("{root}/%252Eenv.local"),
            "%2Eenv.local".to_string(),
            format!("{root}/src%2F..%2F.env.local"),
        ] {
            let why = denied(&ws, json!({"path": path})).unwrap_or_default();
            assert!(why.contains("is refused"), "{path}: {why:?}");
        }
    }

    #[test]
    fn a_pattern_is_expanded_against_the_workspace() {
        let (dir, ws) = workspace();
        let root = ws.root().display().to_string();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        std::fs::write(dir.path().join("src/deep/id_rsa"), "key").unwrap();
        std::fs::write(dir.path().join("src/lib.py"), "").unwrap();
        for path in [
            format!("{root}/.en[v].local"),
            format!("{root}/.env.*"),
            format!("{root}/*"),
            "?env.local".to_string(),
            "*".to_string(),
            "src/**".to_string(),
            "src/*/id_?sa".to_string(),
            "{calculator.py,.env.local}".to_string(),
            format!("file:{root}/.en%5Bv%5D.local"),
            "\\.env.local".to_string(),
            ".en@(v).local".to_string(),
        ] {
            let why = denied(&ws, json!({"path": path})).unwrap_or_default();
            assert!(why.contains("is refused"), "{path}: {why:?}");
        }
        let why = denied(&ws, json!({"pattern": "*"})).unwrap();
        assert!(why.contains("it matches .env.local"), "{why}");
        // Patterns that match no denied file pass.
        for path in [
            format!("{root}/src/*.py"),
            "*.py".to_string(),
            "src/**/*.py".to_string(),
            "list[int]".to_string(),
            "what is {this}?".to_string(),
        ] {
            assert_eq!(denied(&ws, json!({"path": path})), None, "{path}");
        }
    }

    #[test]
    fn a_pattern_through_a_symlink_or_out_of_the_workspace_is_refused() {
        let (dir, ws) = workspace();
        let root = ws.root().display().to_string();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "").unwrap();
        std::os::unix::fs::symlink(".git", dir.path().join("g")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
        for path in [
            "*/config".to_string(),
            "g/*".to_string(),
            format!("{root}/etc/pass*"),
            format!("{root}/etc/passwd"),
            "../*".to_string(),
            "/somewhere/else/.env*".to_string(),
        ] {
            let why = denied(&ws, json!({"path": path})).unwrap_or_default();
            assert!(why.contains("is refused"), "{path}: {why:?}");
        }
        assert_eq!(denied(&ws, json!({"path": "/somewhere/else/*.py"})), None);
    }

    #[test]
    fn a_file_with_another_name_is_refused_as_read_file_refuses_it() {
        let (dir, ws) = workspace();
        std::fs::hard_link(dir.path().join(".env.local"), dir.path().join("notes.txt")).unwrap();
        for path in ["notes.txt", "note?.txt"] {
            let why = denied(&ws, json!({"path": path})).unwrap_or_default();
            assert!(why.contains("2 hard links"), "{path}: {why:?}");
        }
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
