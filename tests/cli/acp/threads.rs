//! Several threads per project, as editors open them: one agent process
//! serves any number of sessions on one folder, they take turns at
//! changing it, `session/close` lets a folder go, and another process on
//! the same folder is refused with its own pid named.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn acp_two_threads_on_one_folder_both_edit_one_turn_after_the_other() {
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        // The second thread's first step, while the first one waits for its answer.
        tool_call(
            "write_file",
            json!({"path": "NOTES.md", "content": "divide is coming\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Added divide."),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Wrote the notes."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let first = client.new_session(ws.path()).await;
    let second = client.new_session(ws.path()).await;
    assert_ne!(first, second);

    let first_prompt = client.prompt(&first, "add divide").await;
    let held = loop {
        let message = client.next().await;
        if message["method"] == "session/request_permission" {
            assert_eq!(message["params"]["sessionId"], json!(first));
            break message;
        }
    };
    let second_prompt = client.prompt(&second, "write notes").await;
    // The second thread waits for the first one's turn, and says so.
    loop {
        let message = client.next().await;
        assert_ne!(
            message["method"], "session/request_permission",
            "the second thread asked while the first one was changing the folder: {message}"
        );
        if message["method"] == "session/update" {
            let update = &message["params"]["update"];
            let waiting = update["sessionUpdate"] == "agent_thought_chunk"
                && update["content"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("Another thread"));
            if waiting {
                assert_eq!(message["params"]["sessionId"], json!(second));
                break;
            }
        }
    }
    client
        .answer(
            &held["id"],
            json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
        )
        .await;
    let mut asked = vec![first.clone()];
    let mut ended = Vec::new();
    while ended.len() < 2 {
        let message = client.next().await;
        if message["method"] == "session/request_permission" {
            asked.push(message["params"]["sessionId"].as_str().unwrap().to_string());
            let chosen = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
            client.answer(&message["id"], chosen).await;
        } else if message.get("method").is_none()
            && (message["id"] == json!(first_prompt) || message["id"] == json!(second_prompt))
        {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            ended.push(message["id"].clone());
        }
    }
    assert_eq!(
        asked,
        [&first, &first, &second, &second].map(String::clone),
        "the edit and the tests of one thread, then of the other"
    );
    let calculator = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(calculator.contains("def divide(a, b):"), "{calculator}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("NOTES.md")).unwrap(),
        "divide is coming\n"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_session_close_lets_the_folder_go_and_another_process_is_named_by_its_pid() {
    let model = MockModel::start(vec![]).await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let mut first = spawn_on(&model, home.path());
    let init = first.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["close"],
        json!({}),
        "{init}"
    );
    let session = first.new_session(ws.path()).await;
    let mut other = spawn_on(&model, home.path());
    other.initialize().await;
    let id = other
        .request("session/new", json!({"cwd": ws.path(), "mcpServers": []}))
        .await;
    let refused = other.until(id, |r| panic!("unexpected {r}")).await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    let (mine, theirs) = (first.child.id().unwrap(), other.child.id().unwrap());
    assert!(message.contains(&format!("pid {mine})")), "{refused}");
    assert!(!message.contains(&format!("pid {theirs})")), "{refused}");

    let id = first
        .request("session/close", json!({"sessionId": session}))
        .await;
    let closed = first.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(closed["result"], json!({}), "{closed}");
    let id = first.prompt(&session, "hello").await;
    let gone = first.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(gone["error"]["code"], -32602, "a closed session: {gone}");

    // The folder is free for the other process now.
    let taken = other.new_session(ws.path()).await;
    assert!(!taken.is_empty());
    other.close().await;
    first.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_thread_never_overwrites_what_another_thread_wrote_since_it_read_the_file() {
    let ws = copy_workspace();
    let before = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        // The second thread reads the file before the first one writes it.
        read_calculator(),
        tool_call(
            "write_file",
            json!({"path": "calculator.py", "content": before.replace("A tiny", "A small")}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Added divide."),
        text("The file changed meanwhile; I will read it again."),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let first = client.new_session(ws.path()).await;
    let second = client.new_session(ws.path()).await;
    let first_prompt = client.prompt(&first, "add divide").await;
    let held = loop {
        let message = client.next().await;
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    let second_prompt = client.prompt(&second, "a small calculator").await;
    loop {
        let message = client.next().await;
        if message["method"] == "session/update" {
            client.updates.push(message["params"].clone());
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "agent_thought_chunk"
                && message["params"]["sessionId"] == json!(second)
            {
                break;
            }
        }
    }
    let allow = json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}});
    client.answer(&held["id"], allow.clone()).await;
    let mut ended = 0;
    while ended < 2 {
        let message = client.next().await;
        if message["method"] == "session/request_permission" {
            client.answer(&message["id"], allow.clone()).await;
        } else if message["method"] == "session/update" {
            client.updates.push(message["params"].clone());
        } else if message["id"] == json!(first_prompt) || message["id"] == json!(second_prompt) {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            ended += 1;
        }
    }
    let written = std::fs::read_to_string(ws.path().join("calculator.py")).unwrap();
    assert!(
        written.contains("def divide(a, b):"),
        "the first thread's write stays: {written}"
    );
    assert!(!written.contains("A small"), "{written}");
    let refused = client
        .updates
        .iter()
        .filter(|u| u["sessionId"] == json!(second))
        .map(|u| &u["update"])
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .expect("the second thread's write is refused");
    assert!(refused["rawOutput"]["error"].is_string(), "{refused}");
    client.close().await;
}
