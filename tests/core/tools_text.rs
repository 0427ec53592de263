//! What edits keep of the original (CRLF line endings, the final newline or
//! its absence, permissions), credential redaction on `read_file` and its
//! consequences for edits, and the unreachable `.stepwise/` folder.

use serde_json::json;
use std::os::unix::fs::{PermissionsExt, symlink};
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{apply_edit, prepare_replace, prepare_write};
use stepwise::tools::reading::files;
use stepwise::tools::redact::MARKER;

fn ws_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = tmp.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

fn replace(ws: &Workspace, path: &str, old: &str, new: &str) -> String {
    assert!(files::read_file(ws, path).success);
    let edit = prepare_replace(ws, path, old, new).unwrap();
    let out = apply_edit(ws, &edit);
    assert!(out.success, "{:?}", out.body);
    std::fs::read_to_string(ws.root().join(path)).unwrap()
}

#[test]
fn crlf_files_are_shown_and_matched_with_lf_and_keep_crlf() {
    let (_tmp, ws) = ws_with(&[("w.py", "def f():\r\n    return 1\r\n\r\nx = 2\r\n")]);
    let read = files::read_file(&ws, "w.py");
    assert_eq!(read.body["content"], "def f():\n    return 1\n\nx = 2\n");
    assert!(read.body["line_endings"].as_str().unwrap().contains("CRLF"));
    let edit = prepare_replace(&ws, "w.py", "    return 1\n\nx", "    return 2\n\ny").unwrap();
    assert_eq!(edit.diff.added, 2, "the diff is computed without \\r");
    assert!(apply_edit(&ws, &edit).success);
    assert_eq!(
        std::fs::read_to_string(ws.root().join("w.py")).unwrap(),
        "def f():\r\n    return 2\r\n\r\ny = 2\r\n"
    );
    // A whole-file write of a CRLF file keeps CRLF too.
    let edit = prepare_write(&ws, "w.py", "a = 1\nb = 2\n").unwrap();
    assert!(apply_edit(&ws, &edit).success);
    assert_eq!(
        std::fs::read_to_string(ws.root().join("w.py")).unwrap(),
        "a = 1\r\nb = 2\r\n"
    );
}

#[test]
fn lf_and_mixed_files_are_edited_as_they_are() {
    let (_tmp, ws) = ws_with(&[
        ("lf.py", "a = 1\nb = 2\n"),
        ("mixed.py", "a = 1\r\nb = 2\n"),
    ]);
    assert!(
        files::read_file(&ws, "lf.py")
            .body
            .get("line_endings")
            .is_none()
    );
    assert_eq!(replace(&ws, "lf.py", "b = 2", "b = 3"), "a = 1\nb = 3\n");
    assert_eq!(
        replace(&ws, "mixed.py", "b = 2", "b = 3"),
        "a = 1\r\nb = 3\n"
    );
}

#[test]
fn the_final_newline_or_its_absence_survives_a_replace() {
    let (_tmp, ws) = ws_with(&[
        ("with.py", "a = 1\nb = 2\n"),
        ("without.py", "a = 1\nb = 2"),
        ("crlf.py", "a = 1\r\nb = 2\r\n"),
    ]);
    assert_eq!(
        replace(&ws, "with.py", "b = 2\n", "b = 3"),
        "a = 1\nb = 3\n"
    );
    assert_eq!(
        replace(&ws, "without.py", "b = 2", "b = 3\nc = 4\n"),
        "a = 1\nb = 3\nc = 4"
    );
    assert_eq!(
        replace(&ws, "crlf.py", "b = 2\n", "b = 3"),
        "a = 1\r\nb = 3\r\n"
    );
    // Inside the file, newlines are the model's to change.
    assert_eq!(replace(&ws, "with.py", "a = 1\n", "a = 1"), "a = 1b = 3\n");
}

#[test]
fn replace_keeps_permissions() {
    let (tmp, ws) = ws_with(&[("run.py", "print(1)\n")]);
    let path = tmp.path().join("run.py");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    replace(&ws, "run.py", "1", "2");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o750);
}

const CONFIG: &str = "DEBUG = True\nAPI_KEY = \"sk-live-123\"\nNAME = \"app\"\n\
    -----BEGIN RSA PRIVATE KEY-----\nMIIEsecret\n-----END RSA PRIVATE KEY-----\nPORT = 80\n";

#[test]
fn credentials_are_redacted_with_a_note() {
    let (_tmp, ws) = ws_with(&[("settings.py", CONFIG)]);
    let out = files::read_file(&ws, "settings.py");
    let content = out.body["content"].as_str().unwrap();
    assert!(!content.contains("sk-live-123") && !content.contains("MIIEsecret"));
    assert!(content.contains(&format!("API_KEY = \"{MARKER}\"")));
    assert!(content.contains("NAME = \"app\"") && content.contains("PORT = 80"));
    assert!(
        out.body["redacted"]
            .as_str()
            .unwrap()
            .contains("2 value(s)")
    );
    assert!(out.summary.contains("2 redacted"), "{}", out.summary);
    let plain = ws_with(&[("a.py", "x = 1\n")]);
    assert_eq!(
        files::read_file(&plain.1, "a.py").body,
        json!({"success": true, "path": "a.py", "content": "x = 1\n",
               "start_line": 1, "end_line": 1, "total_lines": 1, "truncated": false})
    );
}

#[test]
fn edits_cannot_touch_or_overwrite_redacted_values() {
    let (_tmp, ws) = ws_with(&[("settings.py", CONFIG)]);
    let shown = files::read_file(&ws, "settings.py").body["content"]
        .as_str()
        .unwrap()
        .to_string();
    let refuse = |old: &str, new: &str, want: &str| {
        let error = prepare_replace(&ws, "settings.py", old, new).unwrap_err().0;
        assert!(error.contains(want), "{old:?}: {error}");
    };
    // Copied from what the model saw: the marker is not in the file.
    refuse(
        &format!("API_KEY = \"{MARKER}\""),
        "API_KEY = \"x\"",
        "cannot be matched",
    );
    // Around the hidden value: would change it without seeing it.
    refuse("API_KEY = \"", "API_KEY = \"x", "hidden from you");
    refuse("\"\nNAME", "\"\nNAME", "hidden from you");
    refuse("-----BEGIN RSA PRIVATE KEY-----\n", "", "hidden from you");
    // Placeholders are never written as content.
    refuse(
        "NAME = \"app\"",
        &format!("NAME = \"{MARKER}\""),
        "placeholder",
    );
    let whole = prepare_write(&ws, "settings.py", &shown).unwrap_err().0;
    assert!(whole.contains("replace_text"), "{whole}");
    let copy = prepare_write(&ws, "copy.py", &shown).unwrap_err().0;
    assert!(copy.contains("placeholder"), "{copy}");
    assert_eq!(
        std::fs::read_to_string(ws.root().join("settings.py")).unwrap(),
        CONFIG
    );
    // Visible lines stay editable, and the secrets survive the edit.
    let after = replace(&ws, "settings.py", "PORT = 80", "PORT = 8080");
    assert_eq!(after, CONFIG.replace("PORT = 80", "PORT = 8080"));
}

#[test]
fn the_stepwise_folder_is_unreachable() {
    let (tmp, ws) = ws_with(&[
        (".stepwise/sessions/log.json", "{}"),
        (".stepwise/notes.md", "private\n"),
        ("a.py", "x = 1\n"),
    ]);
    symlink(".stepwise", tmp.path().join("alias")).unwrap();
    symlink(".stepwise/notes.md", tmp.path().join("notes.md")).unwrap();
    let listed = files::list_files(&ws, ".");
    assert_eq!(listed.body["files"], json!(["a.py"]), "{:?}", listed.body);
    for path in [
        ".stepwise/notes.md",
        "./.stepwise/notes.md",
        "sub/../.stepwise/notes.md",
        "alias/notes.md",
        "notes.md",
    ] {
        let out = files::read_file(&ws, path);
        assert!(!out.success, "read {path}: {:?}", out.body);
        assert!(
            out.body["error"].as_str().unwrap().contains(".stepwise"),
            "{path}: {:?}",
            out.body
        );
    }
    for path in [".stepwise", "alias", ".stepwise/sessions"] {
        assert!(!files::list_files(&ws, path).success, "list {path}");
    }
    for path in [".stepwise/new.md", "alias/new.md", "alias/deep/new.md"] {
        if let Ok(edit) = prepare_write(&ws, path, "x\n") {
            let out = apply_edit(&ws, &edit);
            assert!(!out.success, "write {path}: {:?}", out.body);
        }
    }
    assert!(prepare_replace(&ws, ".stepwise/notes.md", "private", "public").is_err());
    assert!(prepare_write(&ws, "notes.md", "public\n").is_err());
    let mut inside: Vec<_> = std::fs::read_dir(tmp.path().join(".stepwise"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    inside.sort();
    assert_eq!(
        inside,
        ["notes.md", "sessions"],
        "nothing was created there"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join(".stepwise/notes.md")).unwrap(),
        "private\n"
    );
}
