//! `stepwise acp` driven by a scripted ACP client over its stdin/stdout,
//! against the mock model on 127.0.0.1, on a temp copy of the sample
//! workspace: an edit offered with its diff, approved, written and tested
//! (`end_turn`, the receipt last and in `_meta`); a rejected edit; a cancel
//! while a permission request waits; `allow_always` and its revoke;
//! `session/load` of an earlier session; malformed lines answered with
//! errors. Every stdout line must be a JSON-RPC message. The modules below
//! hold the rest, one subject each.

mod client;
mod diffs;
mod folders;
mod load;
mod replay;
mod threads;
mod trust;

use crate::support::*;
use client::*;
use serde_json::{Value, json};
use std::path::Path;

/// The model reads the file it will edit (stepwise refuses an edit of an unread file).
fn read_calculator() -> Reply {
    tool_call("read_file", json!({"path": "calculator.py"}))
}

/// The model's edit of the seed task: `divide` after `subtract`.
fn add_divide() -> Reply {
    tool_call(
        "replace_text",
        json!({
            "path": "calculator.py",
            "old": "    return a - b\n",
            "new": format!("    return a - b{}", DIVIDE_FN.trim_end_matches('\n').to_string() + "\n"),
        }),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_an_edit_is_offered_with_its_diff_approved_written_tested_and_ends_the_turn() {
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Added divide; the tests pass."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let before = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let mut client = spawn_on(&model, home.path());
    let init = client.initialize().await;
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(init["authMethods"], json!([]));
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let mut asked = Vec::new();
    let path = ws.path().join("calculator.py");
    let response = client
        .until(id, |request| {
            assert_eq!(request["method"], "session/request_permission");
            asked.push(request["params"].clone());
            select("allow_once")
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(asked.len(), 2, "the edit and the test run: {asked:?}");

    let edit = &asked[0]["toolCall"];
    assert_eq!(edit["kind"], "edit");
    assert_eq!(
        edit["content"][0],
        json!({
            "type": "diff",
            "path": path,
            "oldText": before,
            "newText": before.replace("    return a - b\n", &format!("    return a - b{}", DIVIDE_FN.trim_end_matches('\n').to_string() + "\n")),
        }),
        "the whole change, before it is approved"
    );
    assert_eq!(edit["locations"][0]["path"], json!(path));
    assert_eq!(
        option_ids(&asked[0]),
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert!(
        asked[0]["_meta"].is_null(),
        "no hunks for a client that did not ask for them: {}",
        asked[0]
    );
    let run = &asked[1]["toolCall"];
    assert_eq!(run["kind"], "execute");
    let title = run["title"].as_str().unwrap();
    assert!(
        title.starts_with("Run ") && title.contains("unittest") && title.ends_with(')'),
        "the sandbox state is in the title: {title}"
    );

    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("def divide(a, b):"), "{written}");
    let receipt = &response["result"]["_meta"]["stepwise"]["receipt"];
    assert_eq!(receipt["tests"]["passed"], true, "{response}");
    assert_eq!(receipt["files"][0]["path"], "calculator.py");

    let calls = client.updates_of("tool_call");
    let kinds: Vec<&Value> = calls.iter().map(|c| &c["kind"]).collect();
    assert_eq!(kinds, [&json!("read"), &json!("edit"), &json!("execute")]);
    assert_eq!(calls[1]["locations"][0]["path"], json!(path));
    let done: Vec<Value> = client
        .updates_of("tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "completed")
        .collect();
    assert_eq!(done.len(), 3, "the read, the edit, the tests: {done:?}");
    let chunks = client.updates_of("agent_message_chunk");
    let text: String = chunks
        .iter()
        .map(|c| c["content"]["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("Added divide; the tests pass."), "{text}");
    let last = chunks.last().unwrap()["content"]["text"].as_str().unwrap();
    assert!(
        last.contains(stepwise::present::RECEIPT_HEADING) && last.contains("exit 0"),
        "the receipt is the turn's last message: {last}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_rejected_edit_leaves_the_file_and_the_turn_ends_cleanly() {
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        text("Understood, nothing changed."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let before = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let mut asked = 0;
    let response = client
        .until(id, |_| {
            asked += 1;
            select("reject_once")
        })
        .await;
    assert_eq!(asked, 1, "{:?}", client.updates);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("calculator.py")).unwrap(),
        before
    );
    let failed: Vec<Value> = client
        .updates_of("tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "the declined edit did not run");
    let requests = model.requests().await;
    let told = tool_messages(requests.last().unwrap());
    let last = told.last().unwrap()["content"].as_str().unwrap();
    assert!(last.contains("declined"), "{told:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_cancel_while_a_permission_waits_writes_nothing_and_the_turn_is_cancelled() {
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        text("never asked for"),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let before = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let response = client.until(id, |_| Act::Cancel(session.clone())).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("calculator.py")).unwrap(),
        before,
        "nothing half-done is written"
    );
    assert_eq!(model.requests().await.len(), 2, "the task stopped there");
    // The session takes the next prompt.
    let id = client.prompt(&session, "then just say hello").await;
    let next = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(next["result"]["stopReason"], "end_turn", "{next}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_allow_always_covers_the_next_edit_until_it_is_revoked() {
    let edit = |old: &str, new: &str| {
        tool_call(
            "replace_text",
            json!({"path": "calculator.py", "old": old, "new": new}),
        )
    };
    let model = MockModel::start(vec![
        read_calculator(),
        edit("sum of a and b", "sum of a and b (a + b)"),
        edit("a minus b", "a minus b (a - b)"),
        // Time for the client's revoke to arrive before the third edit.
        delayed(edit("A tiny calculator", "A small calculator"), 1500),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Docstrings updated."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "touch up the docstrings").await;
    let mut asked: Vec<String> = Vec::new();
    let mut revoke_id = None;
    // Answers in order: the first edit for the task, the third once, the tests once.
    let response = loop {
        let message = client.next().await;
        if message["id"] == json!(id) && message.get("method").is_none() {
            break message;
        }
        if Some(&message["id"]) == revoke_id.as_ref() && message.get("method").is_none() {
            assert_eq!(
                message["result"]["revoked"],
                json!(["replace_text"]),
                "{message}"
            );
            continue;
        }
        if message["method"] == "session/update" {
            let update = &message["params"]["update"];
            client.updates.push(message["params"].clone());
            let completed =
                update["sessionUpdate"] == "tool_call_update" && update["status"] == "completed";
            // The second edit ran without asking: take the approval back.
            // (The read, then the first two edits.)
            if completed
                && client
                    .updates_of("tool_call_update")
                    .iter()
                    .filter(|u| u["status"] == "completed")
                    .count()
                    == 3
            {
                let asked_id = client
                    .request(stepwise::acp::REVOKE, json!({"sessionId": session}))
                    .await;
                revoke_id = Some(json!(asked_id));
            }
            continue;
        }
        if message["method"] == "session/request_permission" {
            let title = message["params"]["toolCall"]["title"]
                .as_str()
                .unwrap()
                .to_string();
            let choice = match asked.len() {
                0 => "allow_always",
                _ => "allow_once",
            };
            asked.push(title);
            let result = json!({"outcome": {"outcome": "selected", "optionId": choice}});
            client.answer(&message["id"], result).await;
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(revoke_id.is_some(), "the revoke was sent");
    assert_eq!(
        asked.len(),
        3,
        "edit 1, edit 3 after the revoke, the tests: {asked:?}"
    );
    assert!(asked[0].starts_with("Write calculator.py"), "{asked:?}");
    assert!(asked[1].starts_with("Write calculator.py"), "{asked:?}");
    assert!(asked[2].starts_with("Run "), "{asked:?}");
    let written = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(
        written.contains("(a + b)") && written.contains("(a - b)") && written.contains("A small"),
        "{written}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_session_load_replays_an_earlier_session_and_goes_on_with_it() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let first = MockModel::start(vec![
        tool_call("read_file", json!({"path": "calculator.py"})),
        text("It adds and subtracts."),
    ])
    .await;
    let mut client = spawn_on(&first, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "explain calculator.py").await;
    let response = client
        .until(id, |r| panic!("a read asks nothing: {r}"))
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    client.close().await;

    let second = MockModel::start(vec![text("No, it does not multiply.")]).await;
    let mut client = spawn_on(&second, home.path());
    client.initialize().await;
    let id = client
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": ws.path(), "mcpServers": []}),
        )
        .await;
    let loaded = client.until(id, |r| panic!("unexpected {r}")).await;
    assert!(loaded.get("result").is_some(), "{loaded}");
    let replayed: Vec<Value> = client.updates.iter().map(|u| u["update"].clone()).collect();
    assert_eq!(
        replayed[0]["sessionUpdate"], "user_message_chunk",
        "{replayed:?}"
    );
    assert_eq!(replayed[0]["content"]["text"], "explain calculator.py");
    assert_eq!(replayed[1]["sessionUpdate"], "tool_call");
    assert_eq!(replayed[1]["status"], "completed");
    assert!(replayed[1]["title"].as_str().unwrap().contains("read_file"));
    assert_eq!(replayed[2]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(replayed[2]["content"]["text"], "It adds and subtracts.");
    assert!(
        client
            .updates
            .iter()
            .all(|u| u["sessionId"] == json!(session))
    );

    let id = client.prompt(&session, "does it multiply?").await;
    let response = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let sent = second.requests().await;
    let messages = sent[0]["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["content"] == "explain calculator.py"),
        "the earlier conversation goes on: {messages:?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_untrusted_withholds_the_project_values_without_asking() {
    let good = MockModel::start(vec![text("hello from the right server")]).await;
    let attacker = MockModel::start(vec![text("stolen")]).await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let user_dir = home.path().join(".config/stepwise");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(
        user_dir.join("stepwise.toml"),
        format!("base_url = \"{}\"\n", good.base_url()),
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(
        ws.path().join(".stepwise/stepwise.toml"),
        format!("base_url = \"{}\"\n", attacker.base_url()),
    )
    .unwrap();
    let mut client = Client::spawn(home.path(), &["--model", "mock-model", "--untrusted"]);
    client.initialize().await;
    let id = client
        .request("session/new", json!({"cwd": ws.path(), "mcpServers": []}))
        .await;
    let response = client
        .until(id, |r| panic!("--untrusted asks nothing: {r}"))
        .await;
    let session = response["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let id = client.prompt(&session, "hi").await;
    let done = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(good.requests().await.len(), 1);
    assert!(attacker.raw_requests().await.is_empty());
    assert!(!user_dir.join("trusted.toml").exists());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_malformed_lines_get_errors_and_the_agent_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(home.path(), &[]);
    client.send_line("this is not json").await;
    let error = client.next().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null);
    client.send_line("[1, 2]").await;
    assert_eq!(client.next().await["error"]["code"], -32600);
    client
        .send(json!({"jsonrpc": "2.0", "id": 7, "method": "no/such/method"}))
        .await;
    let unknown = client.next().await;
    assert_eq!(
        (unknown["id"].clone(), unknown["error"]["code"].clone()),
        (json!(7), json!(-32601))
    );
    let id = client
        .request("session/prompt", json!({"sessionId": "none", "prompt": []}))
        .await;
    let bad = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let init = client.initialize().await;
    assert_eq!(init["protocolVersion"], 1, "still serving");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_client_that_chooses_hunks_gets_only_the_hunks_it_accepted() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let before = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    // Two changes far apart: the first line and the last docstring.
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
        text("Updated the module docstring."),
    ])
    .await;
    let mut client = spawn_on(&model, home.path());
    client
        .initialize_with(json!({"_meta": {"stepwise": {"hunks": true}}}))
        .await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "docstrings").await;
    let mut offered = Vec::new();
    let response = client
        .until(id, |request| {
            let meta = request["params"]["_meta"].clone();
            offered.push(meta.clone());
            if meta.is_null() {
                return select("allow_once");
            }
            Act::Answer(json!({
                "outcome": {"outcome": "selected", "optionId": "allow_once"},
                "_meta": {"stepwise": {"accept": [{"path": "calculator.py", "hunks": [0]}]}}
            }))
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let hunks = &offered[0]["stepwise"]["hunks"][0];
    assert_eq!(hunks["path"], "calculator.py");
    assert_eq!(hunks["hunks"].as_array().unwrap().len(), 2, "{hunks}");
    assert!(
        offered[1].is_null(),
        "a test run has no hunks: {:?}",
        offered[1]
    );
    let written = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(
        written.contains("A small calculator"),
        "hunk 0 applied: {written}"
    );
    assert!(
        written.contains("Return a minus b."),
        "hunk 1 left out: {written}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_sessions_on_two_workspaces_have_their_own_ids() {
    let model = MockModel::start(vec![text("one"), text("two")]).await;
    let (a, b, home) = (
        copy_workspace(),
        copy_workspace(),
        tempfile::tempdir().unwrap(),
    );
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    // Transcripts are named by the second they start in: these two may share a name.
    let first = client.new_session(a.path()).await;
    let second = client.new_session(b.path()).await;
    assert_ne!(first, second);
    for session in [&first, &second] {
        let id = client.prompt(session, "hello").await;
        let done = client.until(id, |r| panic!("unexpected {r}")).await;
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    }
    let sessions: Vec<&Value> = client.updates.iter().map(|u| &u["sessionId"]).collect();
    assert!(sessions.contains(&&json!(first)) && sessions.contains(&&json!(second)));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_stdin_closing_while_a_permission_waits_ends_the_process_and_writes_nothing() {
    let model = MockModel::start(vec![read_calculator(), add_divide(), text("never")]).await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let before = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    client.prompt(&session, "add divide").await;
    loop {
        let message = client.next().await;
        if message["method"] == "session/request_permission" {
            break;
        }
    }
    // The editor goes away without answering.
    client.close().await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("calculator.py")).unwrap(),
        before
    );
}
