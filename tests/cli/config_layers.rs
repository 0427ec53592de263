//! Configuration layering through the real binary: flags beat environment beat
//! config files beat defaults; `--print-config` says where each value came from.

use crate::support::*;
use std::process::Command;

fn print_config(
    ws: &std::path::Path,
    home: &std::path::Path,
    env: &[(&str, &str)],
    flags: &[&str],
) -> String {
    let mut cmd = Command::new(stepwise_bin());
    hermetic_env(&mut cmd)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .envs(env.iter().copied())
        .arg("--workspace")
        .arg(ws)
        .args(flags)
        .arg("--print-config");
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn line<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} in\n{report}"))
}

#[test]
fn flags_beat_env_beat_workspace_file_beat_user_file_beat_defaults() {
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    let user_dir = home.path().join(".config/stepwise");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(
        user_dir.join("stepwise.toml"),
        "model = \"user-model\"\nmax_steps = 7\ntest_timeout = 11\nmax_retries = 1\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(
        ws.path().join(".stepwise/stepwise.toml"),
        "max_steps = 9\nbase_url = \"http://file.example/v1\"\n[models.\"user-model\"]\ncontext_window = 5000\n",
    )
    .unwrap();
    let report = print_config(
        ws.path(),
        home.path(),
        &[
            ("OPENAI_BASE_URL", "http://env.example/v1"),
            ("OPENAI_API_KEY", "sk-print-config-secret"),
        ],
        &["--test-timeout", "99"],
    );
    assert!(
        line(&report, "model").contains("user-model") && line(&report, "model").contains("file"),
        "{report}"
    );
    assert!(
        line(&report, "max_steps").contains(" 9 ")
            && line(&report, "max_steps").contains(".stepwise/stepwise.toml")
    );
    assert!(
        line(&report, "base_url").contains("env.example")
            && line(&report, "base_url").contains("env OPENAI_BASE_URL")
    );
    assert!(
        line(&report, "test_timeout").contains("99")
            && line(&report, "test_timeout").contains("(flag)")
    );
    assert!(line(&report, "max_retries").contains(" 1 "));
    assert!(line(&report, "stream_idle_timeout").contains("(default)"));
    assert!(line(&report, "context_window").contains("5000"), "{report}");
    assert!(line(&report, "api_key").contains("set"));
    assert!(!report.contains("sk-print-config-secret"));
}

#[test]
fn a_broken_config_file_is_a_usage_error_naming_the_file() {
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(ws.path().join(".stepwise/stepwise.toml"), "max_stepz = 3\n").unwrap();
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--print-config")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stepwise.toml") && err.contains("max_stepz"),
        "{err}"
    );
}

#[test]
fn help_lists_every_flag_with_defaults_and_environment_variables() {
    for args in [&["--help"][..], &["exec", "--help"][..]] {
        let mut cmd = Command::new(stepwise_bin());
        let out = hermetic_env(&mut cmd).args(args).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        for needle in [
            "--workspace",
            "--model",
            "--base-url",
            "--max-steps",
            "--test-timeout",
            "--protocol",
            "--demo",
            "--script",
            "--max-retries",
            "--stream-idle-timeout",
            "--no-log",
            "--print-config",
            "[default: ./workspace]",
            "[default: 20]",
            "[default: 30]",
            "[env: STEPWISE_MODEL=",
            "[env: OPENAI_BASE_URL=",
            "OPENAI_API_KEY",
            "STEPWISE_PYTHON",
        ] {
            assert!(
                help.contains(needle),
                "{args:?} help lacks {needle}:\n{help}"
            );
        }
    }
}
