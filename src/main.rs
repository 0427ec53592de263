//! The `stepwise` binary: load `.env`, parse flags, run the TUI or `exec`
//! (or print completions or the man page).

use clap::FromArgMatches;
use stepwise::config::flags::{Cli, Command};
use stepwise::headless::{self, EXIT_USAGE};
use stepwise::present::sanitize;

fn main() {
    // `.env` from the current directory only; variables already set win.
    // Loaded before any thread exists, as setting the environment requires.
    match dotenvy::from_path(".env") {
        Ok(()) => {}
        Err(e) if e.not_found() => {}
        Err(e) => {
            // The error quotes the offending line: sanitized like any file content.
            eprintln!("stepwise: cannot read .env: {}", sanitize(&e.to_string()));
            std::process::exit(EXIT_USAGE);
        }
    }
    let matches = stepwise::config::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // Completions and the man page need no configuration, workspace or key.
    match cli.command {
        Some(Command::Completions { shell }) => {
            stepwise::config::cli_docs::completions(shell, &mut std::io::stdout());
            std::process::exit(0);
        }
        Some(Command::Man) => {
            let written = stepwise::config::cli_docs::man(&mut std::io::stdout());
            std::process::exit(if written.is_ok() { 0 } else { 1 });
        }
        _ => {}
    }
    let resolved = match stepwise::config::resolve(&matches, &cli.options) {
        Ok(r) => r,
        Err(e) => {
            // A config file's error quotes the file: sanitized like any file content.
            eprintln!("stepwise: {}", sanitize(&e.to_string()));
            std::process::exit(EXIT_USAGE);
        }
    };
    if cli.options.print_config {
        print!("{}", sanitize(&resolved.report()));
        std::process::exit(0);
    }
    let config = resolved.config;
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
    let code = match cli.command {
        Some(Command::Exec(args)) => runtime.block_on(headless::run(config, args)),
        None => stepwise::tui::run(&runtime, config),
        Some(Command::Completions { .. } | Command::Man) => 0,
    };
    // A prompt may still be blocked reading stdin; don't wait for it.
    runtime.shutdown_background();
    std::process::exit(code);
}
