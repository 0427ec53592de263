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
        // A model entry's window waits for trust; the window's own key may
        // make it smaller in any folder.
        "max_steps = 5\nbase_url = \"http://file.example/v1\"\ncontext_window = 5000\n",
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
        line(&report, "max_steps").contains(" 5 ")
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
            "--trust",
            "[default: current folder]",
            "-C, --workspace",
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

/// Run `--print-config` with this workspace `stepwise.toml`; it must fail with
/// exit code 2. Returns stderr and the file's path.
fn refused(file: &str, flags: &[&str]) -> (String, String) {
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    let path = ws.path().join(".stepwise/stepwise.toml");
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(&path, file).unwrap();
    let mut cmd = Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .arg("--workspace")
        .arg(ws.path())
        .args(flags)
        .arg("--print-config")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{file}: {err}");
    (err, path.display().to_string())
}

#[test]
fn config_file_values_are_held_to_the_flags_ranges() {
    for (file, expected) in [
        ("max_steps = 0", "max_steps = 0 is out of range (1..=10000)"),
        (
            "test_timeout = 0",
            "test_timeout = 0 is out of range (1..=86400)",
        ),
        (
            "stream_idle_timeout = 0",
            "stream_idle_timeout = 0 is out of range (1..=3600)",
        ),
        (
            "max_steps = 4294967301",
            "max_steps = 4294967301 is out of range (1..=10000)",
        ),
        (
            "context_budget = 5",
            "context_budget = 5 is out of range (10..=95)",
        ),
        (
            "max_retries = -1",
            "max_retries = -1 is out of range (0..=20)",
        ),
        (
            "max_cost = nan",
            "max_cost = nan is out of range (a finite number above 0)",
        ),
        (
            "max_cost = -2.5",
            "max_cost = -2.5 is out of range (a finite number above 0)",
        ),
    ] {
        let (err, path) = refused(file, &[]);
        assert_eq!(err, format!("stepwise: {path}: {expected}\n"), "{file}");
    }
}

#[test]
fn a_bad_file_value_is_refused_even_when_a_flag_overrides_it() {
    let (err, path) = refused("max_steps = 0", &["--max-steps", "5"]);
    assert!(err.contains(&format!("{path}: max_steps = 0 ")), "{err}");
}

#[test]
fn a_misspelt_tool_name_in_no_auto_approve_is_refused_with_the_valid_names() {
    let (err, path) = refused("no_auto_approve = [\"run-tests\"]\n", &[]);
    assert!(
        err.contains(&format!("{path}: no_auto_approve = [\"run-tests\"]")),
        "{err}"
    );
    for name in [
        "list_files",
        "read_file",
        "write_file",
        "replace_text",
        "apply_patch",
        "run_tests",
    ] {
        assert!(err.contains(name), "{err}");
    }
    let (err, _) = refused("no_auto_approve_paths = [\"[\"]\n", &[]);
    assert!(err.contains("no_auto_approve_paths"), "{err}");
}

#[test]
fn max_cost_flag_refuses_nan_negatives_and_zero() {
    for flag in [
        "--max-cost=NaN",
        "--max-cost=-1",
        "--max-cost=0",
        "--max-cost=inf",
    ] {
        let (err, _) = refused("", &[flag]);
        assert!(
            err.contains("--max-cost") && err.contains("out of range"),
            "{flag}: {err}"
        );
    }
}

#[test]
fn no_auto_approve_from_a_file_is_reported() {
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(
        ws.path().join(".stepwise/stepwise.toml"),
        "no_auto_approve = [\"run_tests\"]\nno_auto_approve_paths = [\"*.toml\"]\nmax_cost = 3\n",
    )
    .unwrap();
    let report = print_config(ws.path(), home.path(), &[], &[]);
    assert!(
        line(&report, "no_auto_approve").contains(r#"["run_tests"] ["*.toml"]"#)
            && line(&report, "no_auto_approve").ends_with("(file)"),
        "{report}"
    );
    assert!(line(&report, "max_cost").contains("$3.00"), "{report}");
}

#[test]
fn an_untrusted_project_file_may_tighten_limits_but_not_loosen_them_nor_pick_the_model() {
    let ws = copy_workspace();
    let home = tempfile::tempdir().unwrap();
    let user_dir = home.path().join(".config/stepwise");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(
        user_dir.join("stepwise.toml"),
        "max_steps = 7\nmax_cost = 0.5\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join(".stepwise")).unwrap();
    std::fs::write(
        ws.path().join(".stepwise/stepwise.toml"),
        "model = \"expensive-model\"\nmax_steps = 500\nmax_cost = 0.1\ntest_timeout = 3600\n",
    )
    .unwrap();
    let report = print_config(ws.path(), home.path(), &[], &[]);
    // Stricter: applied.
    assert!(line(&report, "max_cost").contains("0.1"), "{report}");
    // Looser, or another model: held back until the folder is trusted.
    assert!(line(&report, "max_steps").contains(" 7 "), "{report}");
    assert!(
        !line(&report, "model").contains("expensive-model"),
        "{report}"
    );
    assert!(!line(&report, "test_timeout").contains("3600"), "{report}");
    let held: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("not_applied"))
        .collect();
    let held = held.join("\n");
    for value in ["max_steps = 500", "test_timeout = 3600", "expensive-model"] {
        assert!(held.contains(value), "{value} not held:\n{report}");
    }
    assert!(!held.contains("max_cost"), "{report}");
}
