//! Trust asked on a real session: `session/new` answers at once (the
//! client serves no request meanwhile), and the question comes as a
//! permission request on the session id the client was given, at the first
//! prompt, naming the file and its values. Until the folder is trusted the
//! session runs with the user's own settings and says what it withheld.

use super::*;

/// A user config that points at `good` and a project file that points at `project`.
fn project_pointing_at(
    good: &MockModel,
    project: &MockModel,
) -> (tempfile::TempDir, tempfile::TempDir) {
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
        format!("base_url = \"{}\"\n", project.base_url()),
    )
    .unwrap();
    (ws, home)
}

/// The text of every `agent_message_chunk`, joined.
fn said(client: &Client) -> String {
    client
        .updates_of("agent_message_chunk")
        .iter()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_trust_is_asked_on_the_real_session_at_its_first_prompt() {
    let good = MockModel::start(vec![text("hello from the right server")]).await;
    let project = MockModel::start(vec![text("trusted now"), text("still trusted")]).await;
    let (ws, home) = project_pointing_at(&good, &project);
    let file = ws.path().join(".stepwise/stepwise.toml");
    let mut client = Client::spawn(home.path(), &["--model", "mock-model"]);
    client.initialize().await;
    // Answered without the client serving any request.
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "hi").await;
    let mut questions = Vec::new();
    let done = client
        .until(id, |request| {
            questions.push(request["params"].clone());
            select("reject_once")
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert_eq!(
        questions[0]["sessionId"],
        json!(session),
        "the real session"
    );
    let title = questions[0]["toolCall"]["title"].as_str().unwrap();
    assert!(title.starts_with("Trust "), "{title}");
    assert!(
        title.contains(&file.display().to_string()) && title.contains("base_url = "),
        "the file and the value in the title: {title}"
    );
    let listed = questions[0]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(listed.contains("base_url = "), "{listed}");
    assert_eq!(good.requests().await.len(), 1, "the user's own settings");
    assert!(project.raw_requests().await.is_empty());
    let text = said(&client);
    assert!(
        text.contains("not trusted") && text.contains("base_url"),
        "the session says what it withheld and why: {text}"
    );
    let user_dir = home.path().join(".config/stepwise");
    assert!(
        !user_dir.join("trusted.toml").exists(),
        "reject_once is not remembered"
    );
    client.close().await;

    // allow_always trusts the folder and remembers: the next process does not ask.
    for round in 0..2 {
        let mut client = Client::spawn(home.path(), &["--model", "mock-model"]);
        client.initialize().await;
        let session = client.new_session(ws.path()).await;
        let id = client.prompt(&session, "hi").await;
        let mut asked = 0;
        let done = client
            .until(id, |request| {
                assert_eq!(request["params"]["sessionId"], json!(session));
                asked += 1;
                select("allow_always")
            })
            .await;
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        assert_eq!(asked, 1 - round, "asked once, then remembered");
        assert!(!said(&client).contains("not trusted"), "{}", said(&client));
        client.close().await;
    }
    assert!(user_dir.join("trusted.toml").exists());
    assert_eq!(
        project.raw_requests().await.len(),
        2,
        "the trusted folder's base_url applies"
    );
    assert_eq!(good.requests().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_a_project_file_changed_while_trust_is_asked_is_not_applied() {
    let good = MockModel::start(vec![text("hello from the right server")]).await;
    let shown = MockModel::start(vec![]).await;
    let swapped = MockModel::start(vec![]).await;
    let (ws, home) = project_pointing_at(&good, &shown);
    let file = ws.path().join(".stepwise/stepwise.toml");
    let mut client = Client::spawn(home.path(), &["--model", "mock-model"]);
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "hi").await;
    let done = client
        .until(id, |_| {
            // Rewritten while the client is asked; then trusted once.
            std::fs::write(&file, format!("base_url = \"{}\"\n", swapped.base_url())).unwrap();
            select("allow_once")
        })
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(
        swapped.raw_requests().await.is_empty(),
        "the unseen value applied"
    );
    assert!(shown.raw_requests().await.is_empty());
    assert_eq!(good.requests().await.len(), 1);
    assert!(said(&client).contains("changed"), "{}", said(&client));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_started_in_a_folder_it_will_ask_about_does_not_call_it_untrusted() {
    let good = MockModel::start(vec![]).await;
    let project = MockModel::start(vec![text("trusted now")]).await;
    let (ws, home) = project_pointing_at(&good, &project);
    // An editor starts the agent in the project folder.
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut client = Client::spawn_in(
        home.path(),
        ws.path(),
        &["--model", "mock-model"],
        Some(stderr.clone()),
    );
    client.initialize().await;
    let session = client.new_session(ws.path()).await;
    let id = client.prompt(&session, "hi").await;
    let done = client.until(id, |_| select("allow_once")).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(project.raw_requests().await.len(), 1, "trusted");
    client.close().await;
    let said = stderr.lock().unwrap().clone();
    assert!(
        !said.contains("not applying"),
        "the folder was trusted, stderr says otherwise: {said}"
    );
}
