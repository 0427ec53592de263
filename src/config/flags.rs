//! Command-line interface: flags (each with its default and environment
//! variable in `--help`), shared by the TUI and `exec`, before or after the
//! subcommand.
//!
//! What must stay true: a numeric flag's value parser is its range from
//! `ranges` (the same one files are held to); a flag's environment variable
//! comes from its row in the settings table, so parse with [`command`], not
//! `Cli::command()`.

use super::settings::SETTINGS;
use super::{
    ColorChoice, LogSetting, ModelSource, Protocol, Provider, ResumeFrom, Review, ThemeChoice,
    ranges,
};
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "stepwise",
    version,
    about = "A coding agent for the terminal: the model proposes one step at a time, you approve every write and test run.",
    after_help = ENV_HELP
)]
pub struct Cli {
    #[command(flatten)]
    pub options: Options,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A task to start at once in the full-screen UI (without it, the UI opens idle).
    #[arg(value_name = "TASK")]
    pub task: Vec<String>,
}

impl Cli {
    /// The task given to the full-screen UI on the command line, if any.
    pub fn task_text(&self) -> Option<String> {
        let task = self.task.join(" ");
        (!task.trim().is_empty()).then_some(task)
    }
}

/// Configuration flags, accepted before or after the subcommand. Their
/// environment variables are set by [`command`] from the settings table.
#[derive(Debug, Clone, Args)]
pub struct Options {
    /// Project folder to work on; every path is confined to it [default: current folder].
    #[arg(long, short = 'C', global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Model name sent to the server [default: the provider's, e.g. gpt-4.1-mini for openai, claude-sonnet-4-5 for anthropic].
    #[arg(long, global = true)]
    pub model: Option<String>,
    /// API base URL (e.g. http://localhost:11434/v1 for Ollama) [default: the provider's].
    #[arg(long, global = true, value_name = "URL")]
    pub base_url: Option<String>,
    /// Most steps (tool calls and answers) per task.
    #[arg(long, global = true, value_name = "N", default_value_t = 20, value_parser = ranges::MAX_STEPS.flag_parser())]
    pub max_steps: u32,
    /// Seconds a test run may take before its whole process group is killed.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 30, value_parser = ranges::TEST_TIMEOUT.flag_parser())]
    pub test_timeout: u64,
    /// Retries of a failed model request (connection errors, timeouts, 429, 5xx), with backoff.
    #[arg(long, global = true, value_name = "N", default_value_t = 4, value_parser = ranges::MAX_RETRIES.flag_parser())]
    pub max_retries: u32,
    /// Stop a task when the model makes the same call with the same result this many times in a row (a note to the model comes at 3; 0 turns loop detection off).
    #[arg(long, global = true, value_name = "N", default_value_t = 5, value_parser = ranges::MAX_REPEATS.flag_parser())]
    pub max_repeats: u32,
    /// Seconds the model server may stay silent before the request counts as broken.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 120, value_parser = ranges::STREAM_IDLE_TIMEOUT.flag_parser())]
    pub stream_idle_timeout: u64,
    /// Seconds a stream kept alive (keep-alive comments, pings) may go without a token of the reply before it counts as stuck.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 600, value_parser = ranges::STREAM_TOKEN_TIMEOUT.flag_parser())]
    pub stream_token_timeout: u64,
    /// Compact the conversation when a request would pass this percentage of the context window.
    #[arg(long, global = true, value_name = "PERCENT", default_value_t = 70, value_parser = ranges::CONTEXT_BUDGET.flag_parser())]
    pub context_budget: u8,
    /// Context window of the model in tokens [default: from assets/models.toml, else 32768].
    #[arg(long, global = true, value_name = "TOKENS", value_parser = ranges::CONTEXT_WINDOW.flag_parser())]
    pub context_window: Option<u64>,
    /// Stop a task once its estimated cost reaches this many US dollars (needs known prices).
    #[arg(long, global = true, value_name = "USD", value_parser = ranges::MAX_COST.flag_parser())]
    pub max_cost: Option<f64>,
    /// Print the effective configuration and where each value came from, then exit.
    #[arg(long, global = true)]
    pub print_config: bool,
    /// Do not write the session transcript.
    #[arg(long, global = true)]
    pub no_log: bool,
    /// Folder for session transcripts (JSONL); default .stepwise/sessions in the workspace.
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "no_log")]
    pub log_dir: Option<PathBuf>,
    /// Run the built-in scripted demo model on a temporary copy of the workspace (no key, no network).
    #[arg(long, global = true)]
    pub demo: bool,
    /// Play the model's side from this script file (JSON), on a temporary copy of the workspace.
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "demo")]
    pub script: Option<PathBuf>,
    /// How the model calls tools: native tool calls, or a JSON object in its text.
    #[arg(long, global = true, value_enum, default_value_t = Protocol::Tools)]
    pub protocol: Protocol,
    /// How changes reach the workspace: step (approve each write and test run) or staged (the task works in a stage; its tested changeset is reviewed at the end, then written).
    #[arg(long, global = true, value_enum, value_name = "HOW", default_value_t = Review::Step)]
    pub review: Review,
    /// Work in a stage: the same as --review staged.
    #[arg(long, global = true, conflicts_with = "review")]
    pub stage: bool,
    /// Trust this folder for this run: apply what its .stepwise/stepwise.toml and .env say about where requests go and what runs.
    #[arg(long, global = true)]
    pub trust: bool,
    /// Do not trust this folder for this run: withhold what its .stepwise/stepwise.toml and .env say about where requests go and what runs, and run on your own settings (says what it withheld).
    #[arg(long, global = true, conflicts_with = "trust")]
    pub untrusted: bool,
    /// Colored output: auto (a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Provider preset: its base URL, key variable (e.g. ANTHROPIC_API_KEY) and wire API; custom: --base-url with OPENAI_API_KEY.
    #[arg(long, global = true, value_enum, value_name = "NAME", default_value_t = Provider::Openai)]
    pub provider: Provider,
    /// Continue the newest session of this workspace (its conversation, model, change log and totals).
    #[arg(long = "continue", global = true, conflicts_with_all = ["demo", "script"])]
    pub continue_last: bool,
    /// Continue the session of this name (see `stepwise resume` for the list).
    #[arg(long, global = true, value_name = "SESSION", conflicts_with_all = ["continue_last", "demo", "script"])]
    pub resume: Option<String>,
    /// The full-screen UI's palette: auto (asks the terminal its background), dark or light.
    #[arg(long, global = true, value_enum, value_name = "THEME", default_value_t = ThemeChoice::Auto)]
    pub theme: ThemeChoice,
}

/// The environment variables, for `--help`.
const ENV_HELP: &str = "Environment: OPENAI_API_KEY (from the environment or .env in the workspace, -C DIR or else the current folder; never a flag; with --provider, that provider's: ANTHROPIC_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, DEEPSEEK_API_KEY, GEMINI_API_KEY), OPENAI_BASE_URL, STEPWISE_PROVIDER, STEPWISE_MODEL, STEPWISE_PYTHON (interpreter for run_tests), STEPWISE_LOG (UI log file, or off), HTTPS_PROXY/HTTP_PROXY/ALL_PROXY/NO_PROXY (never used for a local server). From .env only these are read, and those that redirect requests or run programs only in a trusted folder (--trust).\nConfig files: stepwise.toml in the user's config folder and in <workspace>/.stepwise/ (see --print-config).\nWithout a subcommand, stepwise opens the full-screen UI.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task without the full-screen UI, printing each step.
    #[command(after_help = ENV_HELP)]
    Exec(ExecArgs),
    /// Print a shell completion script (e.g. `stepwise completions bash > ~/.local/share/bash-completion/completions/stepwise`).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page in roff (e.g. `stepwise man > ~/.local/share/man/man1/stepwise.1`), or with --dir write one page per subcommand.
    Man {
        /// Write `stepwise.1` and one `stepwise-SUBCOMMAND.1` per subcommand into this folder (created if missing), instead of printing the main page.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// List the models the server offers (GET /models of the provider's API), one per line.
    Models,
    /// Run as an Agent Client Protocol agent for an editor (e.g. Zed): JSON-RPC on stdin/stdout, logs on stderr.
    Acp,
    /// The workspace's stages (staged tasks' changesets not yet applied): list, show, apply or discard them.
    #[command(subcommand)]
    Stage(StageCommand),
    /// Pick an earlier session of this workspace and continue it in the UI.
    Resume {
        /// Take the newest session without asking.
        #[arg(long, conflicts_with = "session")]
        last: bool,
        /// The session's name (as listed); without it, a numbered list asks.
        #[arg(value_name = "SESSION")]
        session: Option<String>,
    },
}

/// What `stepwise stage` does.
#[derive(Debug, Clone, Subcommand)]
pub enum StageCommand {
    /// List this workspace's stages: name, state, files, task.
    List,
    /// Print a stage's changeset as a patch (`git apply` takes it).
    Show {
        /// The stage's name, as listed.
        name: String,
    },
    /// Write a stage's changeset into the workspace, if its task's tests passed; files changed in the workspace since are left in the stage.
    Apply {
        /// The stage's name, as listed.
        name: String,
    },
    /// Drop a stage and everything in it; the workspace is not touched.
    Discard {
        /// The stage's name, as listed.
        name: String,
    },
}

#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// Approve every write and test run without asking.
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON event per line instead of human-readable output.
    #[arg(long)]
    pub json: bool,
    /// With --stage: write the staged changeset into the workspace once the task's answer met the gate with its tests passed (without it, the changeset stays in the stage).
    #[arg(long)]
    pub apply: bool,
    /// Try the task with each of these models side by side (comma-separated; `provider:model` asks another provider with its own key variable), each in a stage of its own, and print a table comparing them. Implies --stage.
    #[arg(long, value_name = "MODELS", value_delimiter = ',', conflicts_with_all = ["apply", "patch_out"])]
    pub models: Vec<String>,
    /// Try the task this many times with each model (with --models, or with the configured model), side by side.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16), conflicts_with_all = ["apply", "patch_out"])]
    pub attempts: u32,
    /// How many attempts run at once.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub parallel: u32,
    /// With --stage: write the staged changeset to FILE as a patch (`git apply FILE` applies it).
    #[arg(long, value_name = "FILE")]
    pub patch_out: Option<std::path::PathBuf>,
    /// The task, in words (optional with --demo or --script: the script's task is used).
    #[arg(value_name = "TASK")]
    pub task: Vec<String>,
}

impl ExecArgs {
    /// The task given on the command line, if any.
    pub fn task_text(&self) -> Option<String> {
        let task = self.task.join(" ");
        (!task.trim().is_empty()).then_some(task)
    }
}

/// The command line, with each setting's environment variable from its row.
pub fn command() -> clap::Command {
    SETTINGS
        .iter()
        .filter_map(|s| Some((s.flag?, s.env?)))
        .fold(Cli::command(), |cmd, (id, var)| {
            cmd.mut_arg(id, |arg| arg.env(var))
        })
}

impl Options {
    /// The workspace folder: `--workspace`/`-C`, else the current folder.
    pub fn workspace(&self) -> PathBuf {
        match &self.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    /// Where the session transcript goes.
    pub fn log(&self) -> LogSetting {
        match (&self.log_dir, self.no_log) {
            (_, true) => LogSetting::Off,
            (Some(dir), false) => LogSetting::Dir(dir.clone()),
            (None, false) => LogSetting::InWorkspace,
        }
    }

    /// Which earlier session to resume, from `--continue` / `--resume`.
    pub fn resume_from(&self) -> Option<ResumeFrom> {
        match (&self.resume, self.continue_last) {
            (Some(name), _) => Some(ResumeFrom::Named(name.clone())),
            (None, true) => Some(ResumeFrom::Newest),
            (None, false) => None,
        }
    }

    /// Where the model's replies come from.
    pub fn model_source(&self) -> ModelSource {
        match (&self.script, self.demo) {
            (Some(path), _) => ModelSource::Script(path.clone()),
            (None, true) => ModelSource::Demo,
            (None, false) => ModelSource::Http,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_work_before_and_after_the_subcommand() {
        let before = Cli::try_parse_from([
            "stepwise",
            "--workspace",
            "/tmp/w",
            "--max-steps",
            "5",
            "exec",
            "--yes",
            "do",
            "it",
        ])
        .unwrap();
        let after = Cli::try_parse_from([
            "stepwise",
            "exec",
            "--workspace",
            "/tmp/w",
            "--max-steps",
            "5",
            "--yes",
            "do",
            "it",
        ])
        .unwrap();
        for cli in [before, after] {
            assert_eq!(cli.options.workspace, Some(PathBuf::from("/tmp/w")));
            assert_eq!(cli.options.max_steps, 5);
            let Some(Command::Exec(args)) = cli.command else {
                panic!("exec expected")
            };
            assert!(args.yes);
            assert_eq!(args.task_text().as_deref(), Some("do it"));
        }
    }

    #[test]
    fn every_row_names_a_flag_that_exists_with_its_env_var_and_default() {
        use crate::config::settings::Fallback;
        let cmd = command();
        for s in SETTINGS {
            let Some(id) = s.flag else {
                assert!(s.env.is_none(), "{}: an env var needs a flag", s.key);
                continue;
            };
            let arg = cmd.get_arguments().find(|a| a.get_id() == id);
            let arg = arg.unwrap_or_else(|| panic!("no flag {id}"));
            assert_eq!(arg.get_long(), Some(id.replace('_', "-").as_str()));
            assert_eq!(arg.get_env().and_then(|e| e.to_str()), s.env, "{id}");
            if matches!(s.fallback, Fallback::FlagDefault) {
                assert!(!arg.get_default_values().is_empty(), "{id} has no default");
            }
        }
    }

    #[test]
    fn a_task_without_a_subcommand_is_for_the_ui_and_exec_stays_a_subcommand() {
        let ui = Cli::try_parse_from(["stepwise", "-C", "/p", "fix", "the bug"]).unwrap();
        assert!(ui.command.is_none());
        assert_eq!(ui.task_text().as_deref(), Some("fix the bug"));
        assert_eq!(ui.options.workspace, Some(PathBuf::from("/p")));
        let exec = Cli::try_parse_from(["stepwise", "exec", "fix"]).unwrap();
        assert!(exec.task.is_empty());
        assert!(matches!(exec.command, Some(Command::Exec(_))));
        let idle = Cli::try_parse_from(["stepwise"]).unwrap();
        assert_eq!(idle.task_text(), None);
        assert_eq!(
            idle.options.workspace, None,
            "the current folder, decided later"
        );
    }

    #[test]
    fn numeric_flags_use_the_range_table() {
        assert!(Cli::try_parse_from(["stepwise", "--max-steps", "10000"]).is_ok());
        assert!(Cli::try_parse_from(["stepwise", "--max-steps", "10001"]).is_err());
        assert!(Cli::try_parse_from(["stepwise", "--context-window", "1023"]).is_err());
        for cost in ["--max-cost=NaN", "--max-cost=-1", "--max-cost=0"] {
            assert!(Cli::try_parse_from(["stepwise", cost]).is_err(), "{cost}");
        }
        let cli = Cli::try_parse_from(["stepwise", "--max-cost", "0.5"]).unwrap();
        assert_eq!(cli.options.max_cost, Some(0.5));
    }

    #[test]
    fn defaults_and_bad_values() {
        let cli = Cli::try_parse_from(["stepwise"]).unwrap();
        assert_eq!(cli.options.max_steps, 20);
        assert_eq!(cli.options.test_timeout, 30);
        assert_eq!(cli.options.protocol, Protocol::Tools);
        assert!(cli.command.is_none());
        assert!(Cli::try_parse_from(["stepwise", "--protocol", "xml"]).is_err());
        assert!(Cli::try_parse_from(["stepwise", "--max-steps", "0"]).is_err());
        let bare = Cli::try_parse_from(["stepwise", "exec"]).unwrap();
        let Some(Command::Exec(args)) = bare.command else {
            panic!("exec expected")
        };
        assert_eq!(
            args.task_text(),
            None,
            "checked later: a script may bring its task"
        );
        assert!(Cli::try_parse_from(["stepwise", "--demo", "--script", "x.json"]).is_err());
        let demo = Cli::try_parse_from(["stepwise", "exec", "--demo", "--yes"]).unwrap();
        assert_eq!(demo.options.model_source(), ModelSource::Demo);
    }
}
