//! Which folders `session/new` takes: never the home folder or `/`, which
//! the command line refuses too (the model could read every credential
//! file of the user).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn acp_refuses_the_home_folder_and_the_root_as_a_workspace() {
    let model = MockModel::start(vec![]).await;
    let home = tempfile::tempdir().unwrap();
    let mut client = spawn_on(&model, home.path());
    client.initialize().await;
    for (cwd, named) in [
        (home.path(), "home folder"),
        (Path::new("/"), "root folder"),
    ] {
        let id = client
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        let answer = client.until(id, |r| panic!("unexpected {r}")).await;
        assert_eq!(answer["error"]["code"], -32602, "{cwd:?}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{message}");
    }
    assert!(
        !home.path().join(".stepwise").exists(),
        "nothing was written in the home folder"
    );
    assert!(model.raw_requests().await.is_empty());
    client.close().await;
}
