//! Loading any session that was handed out: one never prompted loads as an
//! empty history (and goes on in its own transcript), one still open in
//! this process is attached to, with what it said so far said again.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_session_never_prompted_loads_as_an_empty_history() {
    let model = MockModel::start(vec![text("hello"), text("hello again")]).await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    client.close().await;

    let params = json!({"sessionId": session, "cwd": ws.path(), "mcpServers": []});
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let id = client.request("session/load", params.clone()).await;
    let loaded = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(loaded["result"], json!({}), "{loaded}");
    assert!(
        client.updates.is_empty(),
        "nothing to replay: {:?}",
        client.updates
    );
    let id = client.prompt(&session, "say hello").await;
    let done = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    client.close().await;

    // It went on in the same transcript: the next load replays that turn.
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let id = client.request("session/load", params.clone()).await;
    let loaded = client.until(id, |r| panic!("unexpected {r}")).await;
    assert!(loaded.get("result").is_some(), "{loaded}");
    let users = client.updates_of("user_message_chunk");
    assert_eq!(users.len(), 1, "{:?}", client.updates);
    assert_eq!(users[0]["content"]["text"], "say hello");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_loading_a_session_open_in_this_process_attaches_to_it() {
    let model = MockModel::start(vec![
        read_calculator(),
        text("It adds and subtracts."),
        text("No, it does not multiply."),
    ])
    .await;
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "explain calculator.py").await;
    let done = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let live = client.updates.len();

    let id = client
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": ws.path(), "mcpServers": []}),
        )
        .await;
    let loaded = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(loaded["result"], json!({}), "{loaded}");
    let again: Vec<Value> = client.updates[live..]
        .iter()
        .map(|u| {
            assert_eq!(u["sessionId"], json!(session));
            u["update"].clone()
        })
        .collect();
    let kinds: Vec<&str> = again
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "user_message_chunk", "{again:?}");
    assert_eq!(again[0]["content"]["text"], "explain calculator.py");
    assert!(kinds.contains(&"tool_call"), "{kinds:?}");
    let text: String = again
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(text.contains("It adds and subtracts."), "{text}");

    // The same session goes on.
    let id = client.prompt(&session, "does it multiply?").await;
    let done = client.until(id, |r| panic!("unexpected {r}")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    client.close().await;
}
