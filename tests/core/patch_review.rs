//! Reviewing an `apply_patch` hunk by hunk in the core: exactly the accepted
//! hunks of every file are written, a file with none accepted is left alone,
//! the model hears which hunks of which files were rejected, a failed apply
//! of the accepted subset writes nothing, and `no_auto_approve_paths` is
//! checked for every file of a patch after "approve for the task".

use crate::support::*;
use serde_json::{Value, json};
use stepwise::agent::step::scopes::ScopePolicy;
use stepwise::agent::{ApprovalAction, Decision, FileHunks, LoopSettings};
use stepwise::diff::FileDiff;

pub fn forty() -> String {
    (1..=40).map(|i| format!("l{i}\n")).collect()
}

/// `forty()` with lines 2 and 30 renamed `{tag}2`, `{tag}30`: two hunks.
pub fn changed(tag: &str) -> String {
    forty()
        .replace("l2\n", &format!("{tag}2\n"))
        .replace("l30\n", &format!("{tag}30\n"))
}

/// A patch changing two hunks in each of `a.txt` and `b.txt`, and creating `new.txt`.
pub fn two_file_patch() -> String {
    let a = FileDiff::compute("a.txt", Some(&forty()), &changed("A")).to_unified();
    let b = FileDiff::compute("b.txt", Some(&forty()), &changed("B")).to_unified();
    let n = FileDiff::compute("new.txt", None, "fresh\n").to_unified();
    format!("{a}{b}{n}")
}

fn steps(patches: &[String]) -> Vec<Reply> {
    let mut s = vec![
        tool_call("read_file", json!({"path": "a.txt"})),
        tool_call("read_file", json!({"path": "b.txt"})),
    ];
    s.extend(
        patches
            .iter()
            .map(|p| tool_call("apply_patch", json!({"patch": p}))),
    );
    s.push(text("done"));
    s
}

fn setup() -> tempfile::TempDir {
    let ws = copy_workspace();
    for f in ["a.txt", "b.txt"] {
        std::fs::write(ws.path().join(f), forty()).unwrap();
    }
    ws
}

fn choose(files: &[(&str, &[usize])]) -> Decision {
    Decision::ApprovePatchHunks {
        files: files
            .iter()
            .map(|(p, a)| FileHunks {
                path: p.to_string(),
                accepted: a.to_vec(),
            })
            .collect(),
    }
}

fn read(ws: &tempfile::TempDir, f: &str) -> Option<String> {
    std::fs::read_to_string(ws.path().join(f)).ok()
}

/// The JSON result of the patch, as the model got it.
async fn patch_result(model: &MockModel) -> Value {
    let requests = model.requests().await;
    let last = requests.last().unwrap();
    let content = tool_messages(last)[2]["content"]
        .as_str()
        .unwrap()
        .to_string();
    serde_json::from_str(&content).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_hunk_rejected_in_each_file_writes_exactly_the_others_and_tells_the_model() {
    let ws = setup();
    let model = MockModel::start(steps(&[two_file_patch()])).await;
    let mut s = session_on(&model, ws.path(), LoopSettings::default());
    let decision = choose(&[("a.txt", &[1]), ("b.txt", &[0]), ("new.txt", &[])]);
    drive(&mut s, Some("patch"), Default::default(), move |r| {
        if let ApprovalAction::Patch { files } = &r.action {
            assert_eq!(
                files.iter().map(|f| f.hunks.len()).collect::<Vec<_>>(),
                [2, 2, 1]
            );
        }
        decision.clone()
    })
    .await;
    assert_eq!(
        read(&ws, "a.txt").unwrap(),
        forty().replace("l30\n", "A30\n")
    );
    assert_eq!(read(&ws, "b.txt").unwrap(), forty().replace("l2\n", "B2\n"));
    assert_eq!(
        read(&ws, "new.txt"),
        None,
        "a rejected new file is not created"
    );
    let result = patch_result(&model).await;
    assert_eq!(result["success"], true, "{result}");
    let rejected = result["rejected_hunks"].as_array().unwrap();
    let said: Vec<(&str, bool)> = rejected
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap(),
                r["lines"].as_str().unwrap().contains('+'),
            )
        })
        .collect();
    assert_eq!(said, [("a.txt", true), ("b.txt", true), ("new.txt", true)]);
    assert!(rejected[0]["lines"].as_str().unwrap().contains("+A2"));
    assert!(rejected[1]["lines"].as_str().unwrap().contains("+B30"));
    assert_eq!(result["untouched_files"], json!(["new.txt"]));
    assert!(result["note"].as_str().unwrap().contains("only some hunks"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_with_no_accepted_hunk_is_untouched_and_none_at_all_declines() {
    let ws = setup();
    let b_only = FileDiff::compute("b.txt", Some(&forty()), &changed("B")).to_unified();
    let model = MockModel::start(steps(&[two_file_patch(), b_only])).await;
    let mut s = session_on(&model, ws.path(), LoopSettings::default());
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = asked.clone();
    drive(&mut s, Some("patch"), Default::default(), move |_| match n
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    {
        0 => choose(&[("a.txt", &[0, 1])]),
        _ => choose(&[]),
    })
    .await;
    assert_eq!(read(&ws, "a.txt").unwrap(), changed("A"));
    assert_eq!(
        read(&ws, "b.txt").unwrap(),
        forty(),
        "no hunk of b.txt accepted"
    );
    assert_eq!(read(&ws, "new.txt"), None);
    let requests = model.requests().await;
    let second = tool_messages(requests.last().unwrap())[3]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(second.contains("rejected every hunk"), "{second}");
}

#[tokio::test(flavor = "multi_thread")]
async fn when_the_accepted_subset_cannot_be_applied_nothing_is_written() {
    let ws = setup();
    let model = MockModel::start(steps(&[two_file_patch()])).await;
    let mut s = session_on(&model, ws.path(), LoopSettings::default());
    let b = ws.path().join("b.txt");
    drive(&mut s, Some("patch"), Default::default(), move |_| {
        // b.txt changes while the prompt is open: its write must fail.
        std::fs::write(&b, "changed meanwhile\n").unwrap();
        choose(&[("a.txt", &[0]), ("b.txt", &[1])])
    })
    .await;
    assert_eq!(read(&ws, "a.txt").unwrap(), forty(), "rolled back");
    assert_eq!(read(&ws, "b.txt").unwrap(), "changed meanwhile\n");
    let result = patch_result(&model).await;
    assert_eq!(result["success"], false, "{result}");
    assert!(
        result["error"].as_str().unwrap().contains("not applied"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_patch_touching_a_no_auto_approve_path_asks_even_after_approve_for_task() {
    let ws = setup();
    std::fs::write(ws.path().join("settings.toml"), "x = 1\n").unwrap();
    let safe = FileDiff::compute("a.txt", Some(&forty()), &changed("A")).to_unified();
    let guarded = format!(
        "{}{}",
        FileDiff::compute("b.txt", Some(&forty()), &changed("B")).to_unified(),
        FileDiff::compute("settings.toml", Some("x = 1\n"), "x = 2\n").to_unified()
    );
    let mut script = steps(&[safe]);
    script.insert(2, tool_call("read_file", json!({"path": "settings.toml"})));
    script.insert(4, tool_call("apply_patch", json!({"patch": guarded})));
    let model = MockModel::start(script).await;
    let mut settings = LoopSettings::default();
    let globs = [globset::Glob::new("*.toml").unwrap()];
    settings.scope_policy = ScopePolicy::new(&[], &globs);
    let mut s = session_on(&model, ws.path(), settings);
    let (_, events) = drive(&mut s, Some("patch"), Default::default(), |r| {
        if r.allow_for_task {
            Decision::ApproveToolForTask
        } else {
            Decision::Approve
        }
    })
    .await;
    let asked: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "approval_requested")
        .collect();
    assert_eq!(asked.len(), 2, "the .toml patch asked again: {asked:?}");
    assert_eq!(asked[1]["allow_for_task"], false);
    assert_eq!(read(&ws, "settings.toml").unwrap(), "x = 2\n");
}
