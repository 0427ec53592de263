//! `search_text`'s first pass, read into one buffer per thread: every text
//! file is searched to its last byte, a binary or non-UTF-8 file is skipped
//! (also when its NUL byte lies past the first block read), and the counts
//! of files searched and skipped are those of the whole walk. A file with
//! more than one name (a hard link) never matches, and the counts are the
//! same whatever it holds.

use serde_json::json;
use stepwise::tools::Workspace;
use stepwise::tools::reading::search::{SearchArgs, search_text};

fn args(pattern: &str) -> SearchArgs {
    SearchArgs {
        pattern: pattern.into(),
        path: ".".into(),
        glob: None,
        ignore_case: false,
    }
}

#[test]
fn counts_cover_every_file_and_binary_files_are_skipped_wherever_the_nul_is() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    for i in 0..300 {
        std::fs::create_dir_all(p.join(format!("d{}", i % 7))).unwrap();
        std::fs::write(p.join(format!("d{}/f{i}.txt", i % 7)), "plain\n").unwrap();
    }
    // A big file read over several blocks: its last line, without a line
    // break, is found.
    let mut big = "filler line\n".repeat(20_000);
    big.push_str("last needle");
    std::fs::write(p.join("big.txt"), &big).unwrap();
    // A NUL byte far past the first 64 KiB block makes the file binary.
    let mut late = "needle\n".repeat(20_000).into_bytes();
    late.push(0);
    std::fs::write(p.join("late_nul.txt"), late).unwrap();
    std::fs::write(p.join("latin1.txt"), b"needle \xe9\n").unwrap();
    std::fs::write(p.join("empty.txt"), "").unwrap();
    let ws = Workspace::open(p).unwrap();
    let out = search_text(&ws, &args("needle"));
    assert_eq!(out.body["total"], 1, "{:?}", out.body);
    assert_eq!(
        out.body["matches"],
        json!([{"path": "big.txt", "line": 20_001, "text": "last needle"}])
    );
    // 300 small files, big.txt and empty.txt; the binary and the Latin-1 file skipped.
    assert_eq!(out.body["files_searched"], 302);
    assert_eq!(out.body["skipped_files"], 2);
}

#[test]
fn many_matches_keep_the_first_by_path_and_line_and_count_them_all() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..30 {
        let lines: String = (0..20).map(|l| format!("hit {i} {l}\n")).collect();
        std::fs::write(tmp.path().join(format!("f{i:02}.txt")), lines).unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    let out = search_text(&ws, &args("hit"));
    assert_eq!(out.body["total"], 600);
    assert_eq!(out.body["truncated"], true);
    let matches = out.body["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 200);
    assert_eq!(
        matches[0],
        json!({"path": "f00.txt", "line": 1, "text": "hit 0 0"})
    );
    assert_eq!(
        matches[199],
        json!({"path": "f09.txt", "line": 20, "text": "hit 9 19"})
    );
    assert_eq!(out.body["files_searched"], 30);
}

#[test]
fn a_file_of_exactly_one_block_is_read_to_its_end() {
    let tmp = tempfile::tempdir().unwrap();
    for size in [64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 128 * 1024] {
        let mut text = "x".repeat(size - "\nend needle".len());
        text.push_str("\nend needle");
        assert_eq!(text.len(), size);
        std::fs::write(tmp.path().join(format!("f{size}.txt")), text).unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    let out = search_text(&ws, &args("end needle$"));
    assert_eq!(out.body["total"], 4, "{:?}", out.body);
    assert_eq!(out.body["files_searched"], 4);
}

#[test]
fn hard_links_never_match_and_their_counts_tell_nothing_of_what_they_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    let big_secret = format!("{}token=hunter2\n", "padding line\n".repeat(10_000));
    for (name, body) in [
        ("secret.txt", b"token=hunter2\n".to_vec()),
        ("binary.bin", b"hunter2\0\x01".to_vec()),
        ("latin1.txt", b"hunter2 \xe9\n".to_vec()),
        ("big.txt", big_secret.into_bytes()),
    ] {
        std::fs::write(p.join(name), body).unwrap();
        std::fs::hard_link(p.join(name), p.join(format!("alias-{name}"))).unwrap();
    }
    std::fs::write(p.join("plain.txt"), "hunter2 in the open\n").unwrap();
    let ws = Workspace::open(p).unwrap();
    let counts = |pattern: &str| {
        let out = search_text(&ws, &args(pattern));
        (
            out.body["total"].clone(),
            out.body["files_searched"].clone(),
            out.body["skipped_files"].clone(),
        )
    };
    // Only the single-named file matches; every linked one reads as text
    // without a match, binary or not, big or small.
    assert_eq!(counts("hunter2"), (json!(1), json!(9), json!(null)));
    assert_eq!(counts("no such text"), (json!(0), json!(9), json!(null)));
    assert_eq!(counts(r"\x00"), (json!(0), json!(9), json!(null)));
}
