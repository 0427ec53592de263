//! Provider presets, `[headers]` and `stepwise models` through the real
//! binary: a preset reads its own key variable and sends no other
//! provider's key; ollama sends none; `[headers]` arrive at the server, only
//! from a trusted project file, never overriding the key's header, and
//! secret-looking values stay out of `--print-config`; `stepwise models`
//! lists both wire APIs' models sorted and fails in one clear line.

use crate::support::anthropic::{self as api, MockApi, header};
use crate::support::*;
use std::path::Path;
use std::process::{Command, Output};

const GROQ_KEY: &str = "gsk-groq-test-91c2b7e4-secret";
const ANT_KEY: &str = "sk-ant-models-3e5f7a-secret";
const OPENAI_KEY: &str = "sk-openai-other-4b8e2d-secret";

/// `stepwise ARGS` in `ws` with a private config folder and every key set.
async fn stepwise(ws: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .current_dir(ws)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("GROQ_API_KEY", GROQ_KEY)
        .env("ANTHROPIC_API_KEY", ANT_KEY)
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    drop(home);
    out
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn project_file(ws: &Path, body: &str) {
    std::fs::create_dir_all(ws.join(".stepwise")).unwrap();
    std::fs::write(ws.join(".stepwise/stepwise.toml"), body).unwrap();
}

/// One `exec` task with `--provider PROVIDER` against the mock server:
/// the requests it made (the run must succeed).
async fn run_with(provider: &str) -> Vec<wiremock::Request> {
    let model = MockModel::start(vec![text_reply()]).await;
    let ws = copy_workspace();
    let base = model.base_url();
    let args = [
        "exec",
        "--yes",
        "--provider",
        provider,
        "--base-url",
        &base,
        "check",
    ];
    let out = stepwise(ws.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    model.raw_requests().await
}

#[tokio::test]
async fn a_preset_sends_its_own_key_and_no_other_providers() {
    let requests = run_with("groq").await;
    let auth = header(&requests[0], "authorization");
    assert_eq!(auth, Some(format!("Bearer {GROQ_KEY}")));
    for r in &requests {
        let raw = format!("{:?}{}", r.headers, String::from_utf8_lossy(&r.body));
        assert!(!raw.contains(OPENAI_KEY) && !raw.contains(ANT_KEY), "{raw}");
    }
}

#[tokio::test]
async fn ollama_sends_no_key_at_all() {
    let requests = run_with("ollama").await;
    assert_eq!(header(&requests[0], "authorization"), None);
}

#[tokio::test]
async fn a_missing_preset_key_names_that_providers_variable() {
    let ws = copy_workspace();
    let mut cmd = Command::new(stepwise_bin());
    let home = tempfile::tempdir().unwrap();
    hermetic_env(&mut cmd)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .args(["exec", "--provider", "deepseek", "--workspace"])
        .arg(ws.path())
        .arg("check");
    let out = cmd.output().unwrap();
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("DEEPSEEK_API_KEY is not set"), "{err}");
}

#[tokio::test]
async fn headers_from_a_trusted_project_file_arrive_and_cannot_replace_the_key() {
    let mock = MockApi::messages(vec![api::text("ok")]).await;
    let ws = copy_workspace();
    project_file(ws.path(), "[headers]\nX-Gateway = \"team-a\"\n");
    let base = mock.uri();
    let args = [
        "exec",
        "--yes",
        "--provider",
        "anthropic",
        "--base-url",
        &base,
    ];
    // Untrusted: exec refuses to apply it (and sends nothing).
    let out = stepwise(ws.path(), &[&args[..], &["check"]].concat()).await;
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(text(&out).1.contains("headers"), "{:?}", text(&out));
    assert!(mock.requests().await.is_empty());
    let out = stepwise(ws.path(), &[&args[..], &["--trust", "check"]].concat()).await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let requests = mock.requests().await;
    assert_eq!(header(&requests[0], "x-gateway").as_deref(), Some("team-a"));
    assert_eq!(header(&requests[0], "x-api-key").as_deref(), Some(ANT_KEY));
    project_file(ws.path(), "[headers]\nx-api-key = \"sk-mine\"\n");
    let out = stepwise(ws.path(), &[&args[..], &["--trust", "check"]].concat()).await;
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("may not set x-api-key"),
        "{:?}",
        text(&out)
    );
}

#[tokio::test]
async fn print_config_shows_the_provider_and_hides_secret_header_values() {
    let ws = copy_workspace();
    project_file(
        ws.path(),
        "[headers]\nX-Gateway = \"team-a\"\nX-Portkey-Token = \"pk-live-abcdef\"\n",
    );
    let out = stepwise(
        ws.path(),
        &["--provider", "anthropic", "--trust", "--print-config"],
    )
    .await;
    let (shown, err) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(shown.contains("anthropic"), "{shown}");
    assert!(shown.contains("https://api.anthropic.com"), "{shown}");
    assert!(shown.contains("ANTHROPIC_API_KEY"), "{shown}");
    assert!(shown.contains("x-gateway = \"team-a\""), "{shown}");
    assert!(shown.contains("x-portkey-token = <hidden>"), "{shown}");
    assert!(
        !shown.contains("pk-live-abcdef") && !shown.contains(ANT_KEY),
        "{shown}"
    );
}

#[tokio::test]
async fn models_lists_both_wire_apis_sorted_with_their_headers() {
    let ws = copy_workspace();
    let openai = MockApi::models(&["gpt-b", "gpt-a", "o3"], None).await;
    let base = format!("{}/v1", openai.uri());
    let out = stepwise(ws.path(), &["models", "--base-url", &base]).await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(text(&out).0, "gpt-a\ngpt-b\no3\n");
    let r = &openai.requests().await[0];
    assert_eq!(
        header(r, "authorization"),
        Some(format!("Bearer {OPENAI_KEY}"))
    );

    let anthropic = MockApi::models(&["claude-z", "claude-a"], None).await;
    let out = stepwise(
        ws.path(),
        &[
            "models",
            "--provider",
            "anthropic",
            "--base-url",
            &anthropic.uri(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(text(&out).0, "claude-a\nclaude-z\n");
    let r = &anthropic.requests().await[0];
    assert_eq!(header(r, "x-api-key").as_deref(), Some(ANT_KEY));
    assert_eq!(
        header(r, "anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert_eq!(header(r, "authorization"), None);
}

#[tokio::test]
async fn models_fails_in_one_line_on_a_bad_key_or_a_dead_endpoint() {
    let ws = copy_workspace();
    let refused = MockApi::models(&[], Some(error(401, "Incorrect API key provided"))).await;
    let base = format!("{}/v1", refused.uri());
    let out = stepwise(
        ws.path(),
        &["models", "--provider", "groq", "--base-url", &base],
    )
    .await;
    let (shown, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(shown.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("401") && err.contains("GROQ_API_KEY"), "{err}");
    assert!(!err.contains(GROQ_KEY));
    // A port nothing listens on.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{dead}/v1");
    let out = stepwise(ws.path(), &["models", "--base-url", &base]).await;
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot list models") && err.contains("127.0.0.1"),
        "{err}"
    );
}

#[tokio::test]
async fn models_refuses_a_list_larger_than_its_cap_in_one_line() {
    let ws = copy_workspace();
    // 9 MiB of models: a server that would send without end is cut off.
    let ids: Vec<String> = (0..300_000).map(|i| format!("model-{i:024}")).collect();
    let body = serde_json::json!({"data": ids.iter().map(|id| serde_json::json!({"id": id})).collect::<Vec<_>>()});
    let huge = MockApi::models(&[], Some(Reply::Json(body))).await;
    let base = format!("{}/v1", huge.uri());
    let out = stepwise(ws.path(), &["models", "--base-url", &base]).await;
    let (shown, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(shown.is_empty());
    assert!(err.contains("larger than 8 MiB"), "{err}");
}

fn text_reply() -> Reply {
    crate::support::text("Nothing to change.")
}

#[test]
fn the_docs_provider_table_matches_the_presets() {
    let readme = crate::support::docs::all_text();
    for preset in stepwise::config::providers::PRESETS {
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{}`", preset.name)))
            .unwrap_or_else(|| panic!("no docs row for {}", preset.name));
        let url = format!("`{}`", preset.base_url);
        assert!(row.contains(&url) || preset.name == "custom", "{row}");
        match preset.key_var {
            Some(var) => assert!(row.contains(&format!("`{var}`")), "{row}"),
            None => assert!(row.contains("| none |"), "{row}"),
        }
        let wire = match preset.wire {
            stepwise::config::WireApi::OpenAi => "chat completions",
            stepwise::config::WireApi::Anthropic => "Anthropic Messages",
        };
        assert!(row.contains(wire), "{row}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_provider_without_a_base_url_is_a_configuration_error() {
    let ws = copy_workspace();
    let out = stepwise(ws.path(), &["exec", "--provider", "custom", "Hello"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("--provider custom needs the server's address"),
        "{stderr}"
    );
    assert!(!stderr.contains(OPENAI_KEY), "{stderr}");
    // Given one, it runs.
    let model = MockModel::start(vec![crate::support::text("Hi.")]).await;
    let base = model.base_url();
    let args = ["exec", "--provider", "custom", "--base-url", &base, "Hello"];
    let out = stepwise(ws.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
}

#[tokio::test]
async fn without_a_model_each_provider_asks_for_one_it_serves() {
    let ws = copy_workspace();
    for (provider, model) in [
        ("openai", "gpt-4.1-mini"),
        ("anthropic", "claude-sonnet-4-5"),
        ("groq", "llama-3.3-70b-versatile"),
    ] {
        let out = stepwise(ws.path(), &["--provider", provider, "--print-config"]).await;
        let (shown, err) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let line = shown
            .lines()
            .find(|l| l.trim_start().starts_with("model "))
            .unwrap_or_else(|| panic!("no model line: {shown}"));
        assert!(line.contains(model), "{provider}: {line}");
    }
    let out = stepwise(
        ws.path(),
        &["--provider", "anthropic", "--model", "m", "--print-config"],
    )
    .await;
    let (shown, _) = text(&out);
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("model ") && l.contains(" m ")),
        "{shown}"
    );
}
