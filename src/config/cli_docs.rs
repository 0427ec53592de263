//! What the command line says about itself: shell completion scripts
//! (`stepwise completions SHELL`, via `clap_complete`) and the manual page
//! (`stepwise man`, and one page per subcommand with `--dir`, via
//! `clap_mangen`), both generated from [`command`], so
//! they name exactly the flags, environment variables and subcommands that
//! parse.
//!
//! What must stay true: these need no configuration, workspace or key, and
//! write only to the writer (or the folder) they are given.

use super::flags::command;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) {
    let mut cmd = match shell {
        clap_complete::Shell::Zsh => without_task(command()),
        _ => command(),
    };
    clap_complete::generate(shell, &mut cmd, "stepwise", out);
}

/// The command without the top level's free-text task: zsh's script counts
/// it as the first word, so it expected a subcommand only in second place
/// and completed nothing after the first word (`stepwise exec --<Tab>`).
/// A task is prose; there is nothing to complete in it.
fn without_task(cmd: clap::Command) -> clap::Command {
    let mut top = clap::Command::new("stepwise");
    if let Some(about) = cmd.get_about() {
        top = top.about(about.clone());
    }
    top = top.version(env!("CARGO_PKG_VERSION"));
    let args = cmd
        .get_arguments()
        .filter(|a| a.get_id() != "task")
        .cloned();
    let subcommands = cmd.get_subcommands().cloned();
    top.args(args.collect::<Vec<_>>())
        .subcommands(subcommands.collect::<Vec<_>>())
}

/// The command as the man pages show it: built (so each subcommand's name
/// is `stepwise-NAME`, the name its page is written under) and without the
/// `help` subcommand, which gets no page.
fn man_command() -> clap::Command {
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Write the main manual page (section 1, roff). It names a
/// `stepwise-NAME(1)` page for each subcommand; [`man_pages`] writes them.
pub fn man(out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(man_command()).render(out)
}

/// Write the main page and one page per subcommand (at every depth) into
/// `dir`, creating it if needed; returns the files written.
pub fn man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    fn write(cmd: clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            write(sub.clone(), dir, written)?;
        }
        written.push(clap_mangen::Man::new(cmd).generate_to(dir)?);
        Ok(())
    }
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    write(man_command(), dir, &mut written)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_and_the_man_page_name_the_flags_and_subcommands() {
        let mut bash = Vec::new();
        completions(clap_complete::Shell::Bash, &mut bash);
        let bash = String::from_utf8(bash).unwrap();
        assert!(
            bash.contains("--max-steps") && bash.contains("exec"),
            "{bash}"
        );
        let mut page = Vec::new();
        man(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(
            page.starts_with(".ie") || page.contains(".TH stepwise"),
            "{page}"
        );
        assert!(page.contains("OPENAI_BASE_URL") && page.contains("completions"));
    }
}
