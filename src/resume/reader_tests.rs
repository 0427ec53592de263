//! Checkpoints written by `writer` and read back by `reader`: deltas after a
//! compaction and an undo, gaps, cut-off lines, edits and garbage.

use super::key::SigningKey;
use super::reader::parse;
use super::writer::Checkpoints;
use super::{LoadError, Loaded};
use crate::agent::history::saved::SavedState;
use crate::audit::{AuditLog, SharedLog};
use crate::llm::{ChatMessage, TokenUsage};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::sync::{Arc, Mutex};

struct Fixture {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    key: SigningKey,
    writer: Checkpoints,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cap = Dir::open_ambient_dir(dir.path(), ambient_authority()).unwrap();
    let log = AuditLog::create(&cap, dir.path()).unwrap();
    let path = log.path().to_path_buf();
    let shared: SharedLog = Arc::new(Mutex::new(log));
    let key = SigningKey::load_or_create(&dir.path().join("k")).unwrap();
    let writer = Checkpoints::start(shared, key.clone(), "model-x").unwrap();
    Fixture {
        _dir: dir,
        path,
        key,
        writer,
    }
}

fn state(messages: &[&str], changes: &[(&str, Option<&str>, Option<&str>)]) -> SavedState {
    let mut all = vec![ChatMessage::system("sys")];
    all.extend(messages.iter().map(|m| ChatMessage::user(*m)));
    SavedState {
        messages: all,
        changes: SavedState::encode_changes(
            &changes
                .iter()
                .map(|(p, b, a)| (1, *p, *b, *a))
                .collect::<Vec<_>>(),
        ),
        usage: TokenUsage {
            prompt_tokens: 10,
            completion_tokens: 2,
            cached_tokens: 0,
            cache_write_tokens: 4,
        },
        cost_usd: 0.5,
        tasks: 1,
        steps: 3,
        outcome: Some("answered".into()),
        model: None,
    }
}

impl Fixture {
    fn read(&self) -> Result<Loaded, LoadError> {
        parse(&std::fs::read(&self.path).unwrap(), "n", &self.key)
    }
    fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.path).unwrap();
        text.lines().map(str::to_string).collect()
    }
}

#[test]
fn deltas_after_compaction_and_undo_come_back_exactly() {
    let mut f = fixture();
    let first = state(&["a", "b", "c"], &[("x.py", Some("0"), Some("1"))]);
    f.writer.write(&first);
    f.writer.write(&first);
    assert_eq!(
        f.lines().len(),
        2,
        "header and one checkpoint: nothing changed"
    );
    // `b` rewritten (a compaction), a message added; the change undone, another made.
    let second = state(&["a", "B", "c", "d"], &[("y.py", None, Some("new"))]);
    f.writer.write(&second);
    let last: serde_json::Value = serde_json::from_str(f.lines().last().unwrap()).unwrap();
    let body: serde_json::Value = serde_json::from_str(last["state"].as_str().unwrap()).unwrap();
    assert_eq!(
        body["messages_from"], 2,
        "only from the first message that differs"
    );
    assert_eq!(body["changes_from"], 0);
    let loaded = f.read().unwrap();
    assert_eq!(loaded.state, second);
    assert_eq!(
        (loaded.model.as_str(), loaded.seq, loaded.cut_off),
        ("model-x", 2, false)
    );
}

#[test]
fn a_cut_off_line_or_a_gap_leaves_the_last_consistent_checkpoint() {
    let mut f = fixture();
    let (one, two, three) = (
        state(&["a"], &[]),
        state(&["a", "b"], &[]),
        state(&["a", "b", "c"], &[]),
    );
    for s in [&one, &two, &three] {
        f.writer.write(s);
    }
    let lines = f.lines();
    let cut = format!(
        "{}\n{}\n{}",
        lines[0],
        lines[1],
        &lines[2][..lines[2].len() / 2]
    );
    let loaded = parse(cut.as_bytes(), "n", &f.key).unwrap();
    assert_eq!((loaded.state.clone(), loaded.cut_off), (one.clone(), true));
    let gap = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[3]);
    assert_eq!(parse(gap.as_bytes(), "n", &f.key).unwrap().state, one);
}

#[test]
fn edits_other_keys_and_garbage_are_refused_without_panicking() {
    let mut f = fixture();
    f.writer.write(&state(&["the task"], &[]));
    let text = std::fs::read_to_string(&f.path).unwrap();
    let edited = text.replace("the task", "another task");
    assert_eq!(
        parse(edited.as_bytes(), "n", &f.key).unwrap_err(),
        LoadError::Untrusted
    );
    let other = SigningKey::load_or_create(&f.path.with_extension("other")).unwrap();
    assert_eq!(
        parse(text.as_bytes(), "n", &other).unwrap_err(),
        LoadError::Untrusted
    );
    for garbage in [
        &b"\xff\xfe\x00\n{\"v\": 18446744073709551615}\n"[..],
        b"{\"event\":\"checkpoint\",\"state\":5}\n",
        b"[1,2]\n\"x\"\nnull\n",
        b"",
    ] {
        assert!(parse(garbage, "n", &f.key).is_err());
    }
    // A signed body that is not a consistent session is damaged, not a panic.
    for body in [
        "{}",
        r#"{"session":"s","seq":1,"messages_from":5,"messages":[],"changes_from":0,"changes":[]}"#,
        r#"{"session":"s","seq":1,"messages_from":0,"messages":[{"role":"x"}],"changes_from":0,"changes":[]}"#,
    ] {
        let record = serde_json::json!({"event": "checkpoint", "v": 1, "state": body, "mac": f.key.sign(body)});
        let err = parse(format!("{record}\n").as_bytes(), "n", &f.key).unwrap_err();
        assert!(matches!(err, LoadError::Damaged(_)), "{body}: {err:?}");
    }
}

#[test]
fn credential_values_are_scrubbed_before_they_are_signed_and_written() {
    let mut f = fixture();
    f.writer
        .write(&state(&["my config:\nDB_PASSWORD=hunter2\n"], &[]));
    let text = std::fs::read_to_string(&f.path).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    let loaded = f.read().unwrap();
    assert!(
        loaded.state.messages[1]
            .content
            .as_deref()
            .unwrap()
            .contains("[redacted by stepwise]")
    );
}

#[test]
fn only_a_regular_file_is_read_and_a_large_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cap = Dir::open_ambient_dir(dir.path(), ambient_authority()).unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let err = super::reader::read_capped(&cap, "fifo.jsonl").unwrap_err();
    assert!(
        matches!(err, LoadError::Io(ref e) if e.contains("not a regular file")),
        "{err:?}"
    );
    let big = std::fs::File::create(dir.path().join("big.jsonl")).unwrap();
    big.set_len(super::reader::MAX_BYTES + 1).unwrap();
    assert_eq!(
        super::reader::read_capped(&cap, "big.jsonl").unwrap_err(),
        LoadError::TooLarge
    );
}

#[test]
fn a_model_switched_with_slash_model_is_the_one_a_resume_uses() {
    let mut f = fixture();
    f.writer.write(&state(&["the task"], &[]));
    let switched = SavedState {
        model: Some("other-model".into()),
        ..state(&["the task", "next"], &[])
    };
    f.writer.write(&switched);
    assert_eq!(f.read().unwrap().model, "other-model");
}

#[test]
fn a_file_holding_a_credential_is_withheld_from_the_transcript_not_scrubbed_into_it() {
    let mut f = fixture();
    let s = state(
        &["the task"],
        &[
            ("a.py", Some("x = 1\n"), Some("x = 2\n")),
            (
                "conf.py",
                Some("n = 1\n"),
                Some("password = \"hunter2-long\"\n"),
            ),
        ],
    );
    f.writer.write(&s);
    let written = f.lines().join("\n");
    assert!(!written.contains("hunter2"), "{written}");
    let loaded = f.read().unwrap();
    let changes = &loaded.state.changes;
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0]["path"], "a.py");
    assert!(changes[0].get("withheld").is_none());
    assert_eq!(changes[1]["withheld"], true);
    assert!(SavedState::changes_from_json(changes).is_ok());
}
