//! `read_file` with `offset`/`limit` and the stale-write guard after partial
//! reads: a whole-file write needs the whole file read, a `replace_text` or
//! an `apply_patch` hunk only the lines it touches.

use serde_json::json;
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{apply_edit, prepare_replace, prepare_write};
use stepwise::tools::edits::patch_apply::prepare_patch;
use stepwise::tools::reading::files::{self, read_file_range};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn ws_with(path: &str, content: &str) -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join(path), content).unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

#[test]
fn ranges_return_the_exact_lines_with_their_numbers() {
    let (_tmp, ws) = ws_with("a.txt", &numbered(10));
    let out = read_file_range(&ws, "a.txt", Some(3), Some(2));
    assert_eq!(out.body["content"], "line 3\nline 4\n");
    assert_eq!(
        (
            &out.body["start_line"],
            &out.body["end_line"],
            &out.body["total_lines"],
            &out.body["truncated"]
        ),
        (&json!(3), &json!(4), &json!(10), &json!(true))
    );
    assert!(out.body["note"].as_str().unwrap().contains("offset 5"));
    assert_eq!(out.summary, "lines 3-4 of 10");
    let last = read_file_range(&ws, "a.txt", Some(9), None);
    assert_eq!(
        (&last.body["content"], &last.body["truncated"]),
        (&json!("line 9\nline 10\n"), &json!(false))
    );
    let errors = [
        (Some(0), None, "0 is not a line"),
        (Some(11), None, "past the end"),
        (None, Some(0), "out of range"),
        (None, Some(5_001), "1 to 5000"),
    ];
    for (offset, limit, want) in errors {
        let out = read_file_range(&ws, "a.txt", offset, limit);
        let error = out.body["error"].as_str().unwrap_or_default();
        assert!(error.contains(want), "{offset:?} {limit:?}: {error}");
    }
}

#[test]
fn an_unranged_read_stops_at_256_kib_on_a_line_boundary() {
    let text: String = (1..=20_000)
        .map(|i| format!("{i:06} {}\n", "x".repeat(20)))
        .collect();
    let (_tmp, ws) = ws_with("big.txt", &text);
    let out = files::read_file(&ws, "big.txt");
    let content = out.body["content"].as_str().unwrap();
    assert!(
        content.len() <= 256 * 1024 && content.len() > 250 * 1024,
        "{}",
        content.len()
    );
    assert!(text.starts_with(content) && content.ends_with('\n'));
    let end = out.body["end_line"].as_u64().unwrap();
    assert_eq!(content.lines().count() as u64, end);
    assert_eq!(out.body["truncated"], true);
    let note = out.body["note"].as_str().unwrap();
    assert!(note.contains(&format!("offset {}", end + 1)), "{note}");
}

#[test]
fn redaction_is_judged_on_the_whole_file_even_for_a_range() {
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretA\nMIIEsecretB\n-----END RSA PRIVATE KEY-----\n";
    let (_tmp, ws) = ws_with("k.txt", &format!("a\n{key}b\n"));
    // Lines 3-4 are the key's body: the range alone would not look like a key.
    let out = read_file_range(&ws, "k.txt", Some(3), Some(2));
    let content = out.body["content"].as_str().unwrap();
    assert!(!content.contains("MIIEsecret"), "{content}");
    assert!(out.body["redacted"].is_string());
}

#[test]
fn edits_after_a_partial_read_stay_inside_the_lines_read() {
    let (tmp, ws) = ws_with("a.txt", &numbered(100));
    assert!(read_file_range(&ws, "a.txt", Some(40), Some(20)).success);
    // Inside: allowed and written; outside: refused, naming what was read.
    let edit = prepare_replace(&ws, "a.txt", "line 45\n", "line 45 changed\n").unwrap();
    assert!(apply_edit(&ws, &edit).success);
    let outside = prepare_replace(&ws, "a.txt", "line 70\n", "x\n")
        .unwrap_err()
        .0;
    assert!(
        outside.contains("lines 40-59") && outside.contains("offset 70"),
        "{outside}"
    );
    let whole = prepare_write(&ws, "a.txt", "short\n").unwrap_err().0;
    assert!(whole.contains("read only lines 40-59"), "{whole}");
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -90,1 +90,1 @@\n-line 90\n+line ninety\n";
    let refused = prepare_patch(&ws, patch).unwrap_err().0;
    assert!(refused.contains("lines 90-90"), "{refused}");
    let inside = "--- a/a.txt\n+++ b/a.txt\n@@ -50,1 +50,1 @@\n-line 50\n+line fifty\n";
    assert!(prepare_patch(&ws, inside).is_ok());
    // Reading the rest makes the whole file known.
    assert!(read_file_range(&ws, "a.txt", Some(1), Some(5_000)).success);
    assert!(prepare_write(&ws, "a.txt", "short\n").is_ok());
    assert!(
        std::fs::read_to_string(tmp.path().join("a.txt"))
            .unwrap()
            .contains("line 45 changed\n")
    );
}
