//! What the command line says about itself: shell completion scripts
//! (`stepwise completions SHELL`, via `clap_complete`) and the manual page
//! (`stepwise man`, via `clap_mangen`), both generated from [`command`], so
//! they name exactly the flags, environment variables and subcommands that
//! parse.
//!
//! What must stay true: these need no configuration, workspace or key, and
//! write only to the writer they are given.

use super::flags::command;
use std::io::Write;

/// Write the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut command(), "stepwise", out);
}

/// Write the manual page (section 1, roff).
pub fn man(out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(command()).render(out)
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
