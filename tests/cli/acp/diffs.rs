//! Where clients look for an edit's diff: in the `tool_call` itself, from
//! its proposal on (the permission request repeats it), and still there
//! when it completed, with the text that was written. A failure's text is
//! not cut.

use super::*;

/// The `diff` items of a tool call or update.
fn diffs(update: &Value) -> Vec<Value> {
    update["content"]
        .as_array()
        .map(|c| c.iter().filter(|i| i["type"] == "diff").cloned().collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_an_edit_carries_its_diff_in_the_tool_call_and_keeps_it_once_written() {
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Added divide."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let path = ws.path().join("calculator.py");
    let before = std::fs::read_to_string(&path).unwrap();
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let mut asked = Vec::new();
    let response = client
        .until(id, |request| {
            asked.push(request["params"]["toolCall"].clone());
            select("allow_once")
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let written = std::fs::read_to_string(&path).unwrap();
    assert_ne!(written, before);

    let edit = client
        .updates_of("tool_call")
        .into_iter()
        .find(|c| c["kind"] == "edit")
        .expect("the edit's tool call");
    let proposed = diffs(&edit);
    assert_eq!(proposed.len(), 1, "a diff as soon as proposed: {edit}");
    assert_eq!(proposed[0]["path"], json!(path));
    assert!(
        proposed[0]["newText"]
            .as_str()
            .unwrap()
            .contains("def divide(a, b):"),
        "{edit}"
    );
    let updates: Vec<Value> = client
        .updates_of("tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == edit["toolCallId"])
        .collect();
    let whole = updates
        .iter()
        .find(|u| !diffs(u).is_empty() && u["status"] != "completed")
        .expect("the whole diff on the tool call before the question");
    assert_eq!(diffs(whole)[0]["oldText"], json!(before));
    assert_eq!(diffs(whole), diffs(&asked[0]), "the request repeats it");
    let done = updates
        .iter()
        .find(|u| u["status"] == "completed")
        .expect("the edit completed");
    let kept = diffs(done);
    assert_eq!(kept.len(), 1, "the diff is kept on completion: {done}");
    assert_eq!(kept[0]["path"], json!(path));
    assert_eq!(kept[0]["oldText"], json!(before));
    assert_eq!(kept[0]["newText"], json!(written));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_completed_edit_shows_the_hunks_that_were_written() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let path = ws.path().join("calculator.py");
    let before = std::fs::read_to_string(&path).unwrap();
    let after = before
        .replace("A tiny calculator", "A small calculator")
        .replace("Return a minus b.", "Return a minus b (a - b).");
    let model = MockModel::start(vec![
        read_calculator(),
        tool_call(
            "write_file",
            json!({"path": "calculator.py", "content": after}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let mut client = spawn_on(&model, home.path());
    client
        .initialize_with(json!({"_meta": {"stepwise": {"hunks": true}}}))
        .await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "docstrings").await;
    let response = client
        .until(id, |_| {
            let accept = json!([{"path": "calculator.py", "hunks": [0]}]);
            Act::Answer(json!({
                "outcome": {"outcome": "selected", "optionId": "allow_once"},
                "_meta": {"stepwise": {"accept": accept}}
            }))
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("A small calculator") && written.contains("Return a minus b."));
    let done = client
        .updates_of("tool_call_update")
        .into_iter()
        .find(|u| u["status"] == "completed" && !diffs(u).is_empty())
        .expect("the completed edit with its diff");
    assert_eq!(diffs(&done)[0]["newText"], json!(written), "{done}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_failed_call_says_its_whole_error() {
    // An edit of a file the model never read is refused with a long reason.
    let model = MockModel::start(vec![add_divide(), text("I will read it first.")]).await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let response = client.until(id, |_| select("allow_once")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let failed = client
        .updates_of("tool_call_update")
        .into_iter()
        .find(|u| u["status"] == "failed")
        .expect("the refused edit");
    let error = failed["rawOutput"]["error"].as_str().unwrap().to_string();
    let texts: Vec<&str> = failed["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    assert!(error.chars().count() > 100, "a long error: {error}");
    assert!(texts.contains(&error.as_str()), "{texts:?} vs {error}");
    client.close().await;
}

/// A staged session (`stepwise acp --stage`): the edits and the test run
/// ask nothing, the project is untouched while the client is asked, and
/// the whole changeset is one permission request with every file's diff.
#[tokio::test(flavor = "multi_thread")]
async fn acp_a_staged_changeset_is_one_permission_request_with_every_diff() {
    if crate::sandbox_hardening::lacks(|s| s.layer) {
        return;
    }
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        tool_call(
            "write_file",
            json!({"path": "NOTES.md", "content": "divide added\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Added divide."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let path = ws.path().join("calculator.py");
    let before = std::fs::read_to_string(&path).unwrap();
    let flags = super::client::mock_flags(&model);
    let mut flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    flags.push("--stage");
    let mut client = Client::spawn(home.path(), &flags);
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let mut asked = Vec::new();
    let untouched = std::cell::Cell::new(true);
    let response = client
        .until(id, |request| {
            asked.push(request["params"]["toolCall"].clone());
            let now = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
            untouched.set(untouched.get() && now == before && !ws.path().join("NOTES.md").exists());
            select("allow_once")
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(asked.len(), 1, "one request, for the changeset: {asked:?}");
    assert!(untouched.get(), "the project was written before the answer");
    let shown: Vec<String> = diffs(&asked[0])
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(shown.len(), 2, "{}", asked[0]);
    assert!(
        shown.iter().any(|p| p.ends_with("calculator.py")),
        "{shown:?}"
    );
    assert!(shown.iter().any(|p| p.ends_with("NOTES.md")), "{shown:?}");
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("def divide(a, b):"),
        "written once allowed"
    );
    assert!(ws.path().join("NOTES.md").exists());
    client.close().await;
}
