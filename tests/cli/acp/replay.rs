//! A loaded session replays as it happened: each tool call with the title,
//! kind and locations it had live (never its arguments in the title), an
//! edit with its diff as written, a declined call as declined.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_replayed_write_carries_its_kind_locations_and_diff() {
    let (ws, home) = (copy_workspace(), tempfile::tempdir().unwrap());
    let path = ws.path().join("calculator.py");
    let before = std::fs::read_to_string(&path).unwrap();
    let model = MockModel::start(vec![
        read_calculator(),
        add_divide(),
        tool_call(
            "write_file",
            json!({"path": "NOTES.md", "content": "declined\n"}),
        ),
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Added divide."),
    ])
    .await;
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "add divide").await;
    let done = client
        .until(id, |request| {
            let title = request["params"]["toolCall"]["title"].as_str().unwrap();
            match title.contains("NOTES.md") {
                true => select("reject_once"),
                false => select("allow_once"),
            }
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let after = std::fs::read_to_string(&path).unwrap();
    let live: Vec<Value> = client.updates_of("tool_call");
    let live_declined = client
        .updates_of("tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == live[2]["toolCallId"] && u["status"] == "failed")
        .expect("the declined write ended");
    let no_diff = |u: &Value| {
        u["content"]
            .as_array()
            .is_none_or(|c| c.iter().all(|i| i["type"] != "diff"))
    };
    assert!(no_diff(&live_declined), "{live_declined}");
    client.close().await;

    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    let id = client
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": ws.path(), "mcpServers": []}),
        )
        .await;
    let loaded = client.until(id, |r| panic!("unexpected {r}")).await;
    assert!(loaded.get("result").is_some(), "{loaded}");
    let replayed = client.updates_of("tool_call");
    assert_eq!(replayed.len(), live.len(), "{replayed:?}");
    for (was, again) in live.iter().zip(&replayed) {
        assert_eq!(again["title"], was["title"], "the live title");
        assert_eq!(again["kind"], was["kind"]);
        assert_eq!(again["locations"], was["locations"]);
        let title = again["title"].as_str().unwrap();
        assert!(!title.contains('{'), "no arguments in a title: {title}");
    }
    let edit = &replayed[1];
    assert_eq!(edit["kind"], "edit");
    assert_eq!(edit["status"], "completed");
    assert_eq!(edit["locations"][0]["path"], json!(path));
    assert_eq!(
        edit["content"][0],
        json!({"type": "diff", "path": path, "oldText": before, "newText": after}),
        "{edit}"
    );
    let declined = &replayed[2];
    assert_eq!(declined["status"], "failed", "{declined}");
    assert!(
        declined["content"]
            .as_array()
            .is_none_or(|c| c.iter().all(|i| i["type"] != "diff")),
        "a declined write changed nothing: {declined}"
    );
    client.close().await;
}
