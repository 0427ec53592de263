//! The `stepwise` binary: read the workspace's `.env`, settle which project folders are
//! trusted, parse flags, run the TUI, `exec` or `acp` (or list the server's models,
//! or print completions or the man page); `stepwise resume` first asks which
//! session to continue.
//!
//! What must stay true: environment variables are set only here, before any
//! thread exists; a guarded value of a project file (see `config::guard`)
//! applies only in a folder trusted by `--trust` or a remembered answer, and
//! never with `--untrusted`; `exec` never asks (it refuses with exit code 2,
//! naming `--trust` and `--untrusted`), the UI asks before it
//! starts, `acp` never reads stdin for it (each session asks its client);
//! an answer applies only to the values it showed (files changed meanwhile
//! are asked about again); every message quoting a project file is
//! sanitized.

use clap::FromArgMatches;
use std::io::IsTerminal;
use std::path::PathBuf;
use stepwise::config::ResumeFrom;
use stepwise::config::dotenv::DotEnv;
use stepwise::config::flags::{Cli, Command};
use stepwise::config::trust::{self, Answer, Pending, TrustStore};
use stepwise::headless::{self, EXIT_USAGE};
use stepwise::present::sanitize;

fn main() {
    // Before anything else: no test run (or other process) may read our environment.
    stepwise::tools::sandbox::protect_self();
    // `.env` from the workspace (`-C DIR`, else the current folder) only;
    // variables already set win.
    let env_folder = env_folder();
    let dotenv = DotEnv::read(&env_folder.join(".env")).unwrap_or_else(|e| usage_error(&e));
    // The line's number only: its content may be another tool's secret.
    let file = env_folder.join(".env").display().to_string();
    let file = sanitize(&file);
    for line in &dotenv.skipped {
        eprintln!("stepwise: {file} line {line} cannot be parsed; skipped");
    }
    for line in &dotenv.not_text {
        eprintln!("stepwise: {file} line {line} is not UTF-8 text; skipped");
    }
    if let Some(why) = &dotenv.unread {
        eprintln!("stepwise: {}; skipped", sanitize(why));
    }
    for (name, value) in dotenv.open() {
        set_env(name, value);
    }
    // A first look at the command line: which folders, which mode, `--trust`.
    let first = parse(stepwise::config::command().get_matches());
    // Completions and the man page need no configuration, workspace or key.
    match first.0.command {
        Some(Command::Completions { shell }) => {
            stepwise::config::cli_docs::completions(shell, &mut std::io::stdout());
            std::process::exit(0);
        }
        Some(Command::Man { dir: None }) => {
            let written = stepwise::config::cli_docs::man(&mut std::io::stdout());
            std::process::exit(if written.is_ok() { 0 } else { 1 });
        }
        Some(Command::Man { dir: Some(dir) }) => {
            match stepwise::config::cli_docs::man_pages(&dir) {
                Ok(pages) => {
                    for page in pages {
                        println!("{}", page.display());
                    }
                    std::process::exit(0);
                }
                Err(e) => {
                    eprintln!(
                        "stepwise: cannot write the man pages to {}: {e}",
                        dir.display()
                    );
                    std::process::exit(1);
                }
            }
        }
        _ => {}
    }
    // What an untrusted workspace's project file may not set (a broken file
    // is reported by the layering below).
    let first_resolved = stepwise::config::resolve(&first.1, &first.0.options, false).ok();
    let shown_file = first_resolved.as_ref().and_then(|r| r.project.clone());
    let project = first_resolved.map(|r| r.withheld).unwrap_or_default();
    let workspace = first.0.options.workspace();
    let pending = trust::pending(project, &workspace, &dotenv, &env_folder);
    let trusted = trusted_folders(&pending, &first.0).unwrap_or_else(|e| usage_error(&e));
    if trusted.contains(&trust::folder_of(&env_folder)) {
        for (name, value, _) in dotenv.guarded() {
            set_env(name, value);
        }
    }
    // Again, now that the trusted variables are set.
    let (mut cli, mut matches) = parse(stepwise::config::command().get_matches());
    let folder = trust::folder_of(&cli.options.workspace());
    let trust_project = trusted.contains(&folder);
    let mut resolved = stepwise::config::resolve(&matches, &cli.options, trust_project)
        .unwrap_or_else(|e| usage_error(&e));
    if trust_project && !cli.options.trust && resolved.project != shown_file {
        // The answer covers exactly the values it was given for; the file
        // was read again since and changed, so ask about what it says now.
        let now = trust::pending(resolved.trusted.clone(), &workspace, &dotenv, &env_folder);
        if let Some(applied) = now.into_iter().find(|p| p.folder == folder) {
            eprintln!(
                "stepwise: the project files in {} changed after they were read for the trust question; asking about what they say now",
                sanitize(&folder.display().to_string())
            );
            let again = trusted_folders(std::slice::from_ref(&applied), &cli)
                .unwrap_or_else(|e| usage_error(&e));
            if again.is_empty() {
                if folder == trust::folder_of(&env_folder) {
                    for (name, _, _) in dotenv.guarded() {
                        remove_env(name);
                    }
                }
                (cli, matches) = parse(stepwise::config::command().get_matches());
                resolved = stepwise::config::resolve(&matches, &cli.options, false)
                    .unwrap_or_else(|e| usage_error(&e));
            }
        }
    }
    if cli.options.print_config {
        // `.env` values held back show like the workspace file's.
        let held = pending.iter().filter(|p| !trusted.contains(&p.folder));
        let from_env = held
            .flat_map(|p| &p.assignments)
            .filter(|a| Some(&a.file) == dotenv.path.as_ref())
            .cloned()
            .collect::<Vec<_>>();
        let lines = stepwise::config::report::withheld_lines(&from_env);
        resolved.provenance.extend(lines);
        print!("{}", sanitize(&resolved.report()));
        std::process::exit(0);
    }
    let mut config = resolved.config;
    config.task = cli.task_text();
    if let Some(Command::Resume { last, session }) = &cli.command {
        config.resume = match (last, session) {
            (true, _) => Some(ResumeFrom::Newest),
            (false, Some(name)) => Some(ResumeFrom::Named(name.clone())),
            (false, None) => match stepwise::setup::pick_session(&config) {
                Ok(Some(name)) => Some(ResumeFrom::Named(name)),
                Ok(None) => std::process::exit(0),
                Err(e) => usage_error(&e),
            },
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("stepwise: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let start = stepwise::acp::Start {
        matches: matches.clone(),
        options: cli.options.clone(),
    };
    let code = match cli.command {
        Some(Command::Exec(args)) => runtime.block_on(headless::run(config, args)),
        Some(Command::Acp) => runtime.block_on(stepwise::acp::run(start)),
        None | Some(Command::Resume { .. }) => stepwise::tui::run(&runtime, config),
        Some(Command::Models) => runtime.block_on(headless::models::list(config)),
        Some(Command::Stage(what)) => headless::stages::run(&config, &what),
        Some(Command::Completions { .. } | Command::Man { .. }) => 0,
    };
    // A prompt may still be blocked reading stdin; don't wait for it.
    runtime.shutdown_background();
    std::process::exit(code);
}

/// The folder whose `.env` is read: the workspace named with `-C`/`--workspace`,
/// else the current folder. The command line is only peeked at here (before
/// `.env` sets anything); a line that does not parse falls back to the
/// current folder and is reported by the parse that follows.
fn env_folder() -> PathBuf {
    let named = stepwise::config::command()
        .try_get_matches()
        .ok()
        .and_then(|m| Cli::from_arg_matches(&m).ok())
        .and_then(|cli| cli.options.workspace);
    named.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

fn parse(matches: clap::ArgMatches) -> (Cli, clap::ArgMatches) {
    match Cli::from_arg_matches(&matches) {
        Ok(cli) => (cli, matches),
        Err(e) => e.exit(),
    }
}

/// A message may quote a project file (a config error, a bad `.env` line):
/// sanitized like any file content.
fn usage_error(message: &str) -> ! {
    eprintln!("stepwise: {}", sanitize(message));
    std::process::exit(EXIT_USAGE);
}

fn set_env(name: &str, value: &str) {
    // SAFETY: called from `main` before the runtime or any other thread exists.
    unsafe { std::env::set_var(name, value) };
}

/// Undo `set_env` for a `.env` value that turned out not to be trusted.
fn remove_env(name: &str) {
    // SAFETY: called from `main` before the runtime or any other thread exists.
    unsafe { std::env::remove_var(name) };
}

/// The folders whose guarded values apply: all with `--trust`, none with
/// `--untrusted` (each named as withheld), else those with a remembered
/// "trusted" for exactly these values. An unanswered folder makes `exec`
/// refuse and the UI ask (on a terminal) and remember.
fn trusted_folders(pending: &[Pending], cli: &Cli) -> Result<Vec<PathBuf>, String> {
    if cli.options.trust {
        return Ok(pending.iter().map(|p| p.folder.clone()).collect());
    }
    if cli.options.untrusted {
        if !cli.options.print_config {
            for p in pending {
                eprintln!("stepwise: --untrusted: {}", trust::withheld(p));
            }
        }
        return Ok(Vec::new());
    }
    let mut store = TrustStore::load();
    let mut trusted = Vec::new();
    for p in pending {
        let answer = match store.answer(p) {
            Some(answer) => answer,
            None if cli.options.print_config => continue,
            None if matches!(cli.command, Some(Command::Exec(_))) => {
                return Err(trust::refusal(p));
            }
            // Stdin is the protocol's: each session asks about its own
            // folder through the client (so nothing is said here, where it
            // would claim a folder the user may yet trust is not trusted);
            // `.env` applies only when trusted.
            None if matches!(cli.command, Some(Command::Acp)) => continue,
            None if !std::io::stdin().is_terminal() => Answer::Declined,
            None => {
                let stdin = std::io::stdin();
                let answer = trust::ask(p, &mut stdin.lock(), &mut std::io::stderr())
                    .map_err(|e| format!("cannot ask whether to trust the folder: {e}"))?;
                if let Err(e) = store.remember(p, answer) {
                    eprintln!("stepwise: cannot remember the answer: {e}");
                }
                answer
            }
        };
        match answer {
            Answer::Trusted => trusted.push(p.folder.clone()),
            Answer::Declined => eprintln!("stepwise: {}", trust::withheld(p)),
        }
    }
    Ok(trusted)
}
