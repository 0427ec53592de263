//! The `stepwise` binary: load `.env`, parse flags, run the TUI or `exec`.

use clap::FromArgMatches;
use stepwise::config::flags::{Cli, Command};
use stepwise::headless::{self, EXIT_USAGE};

fn main() {
    // `.env` from the current directory only; variables already set win.
    // Loaded before any thread exists, as setting the environment requires.
    match dotenvy::from_path(".env") {
        Ok(()) => {}
        Err(e) if e.not_found() => {}
        Err(e) => {
            eprintln!("stepwise: cannot read .env: {e}");
            std::process::exit(EXIT_USAGE);
        }
    }
    let matches = stepwise::config::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let resolved = match stepwise::config::resolve(&matches, &cli.options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("stepwise: {e}");
            std::process::exit(EXIT_USAGE);
        }
    };
    if cli.options.print_config {
        print!("{}", resolved.report());
        std::process::exit(0);
    }
    let mut config = resolved.config;
    config.task = cli.task_text();
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
    };
    // A prompt may still be blocked reading stdin; don't wait for it.
    runtime.shutdown_background();
    std::process::exit(code);
}
