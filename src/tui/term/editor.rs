//! Editing a proposal before accepting it: the content goes into a private
//! temp folder under the file's own name (so the editor picks its syntax by
//! extension), `$VISUAL`, else `$EDITOR`, else `vi` runs on it (the variable
//! split into program and arguments by the shell's quoting rules, but never
//! run through a shell), and the saved
//! file is read back. The run loop hands the terminal over around this.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`, split as a
/// shell splits words (`"/opt/My Editor/bin/ed" --wait` is one program and
/// one argument); a value whose quotes do not close is passed over.
pub fn command(visual: Option<&str>, editor: Option<&str>) -> Vec<String> {
    [visual, editor]
        .into_iter()
        .flatten()
        .filter_map(|v| shell_words::split(v).ok())
        .find(|argv| !argv.is_empty())
        .unwrap_or_else(|| vec!["vi".to_string()])
}

/// The editor command from this process's environment.
pub fn from_env() -> Vec<String> {
    let var = |name| std::env::var(name).ok();
    command(var("VISUAL").as_deref(), var("EDITOR").as_deref())
}

/// A private folder that is removed when dropped.
struct TempFolder(PathBuf);

impl TempFolder {
    fn create() -> std::io::Result<TempFolder> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "stepwise-edit-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = std::env::temp_dir().join(name);
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
        Ok(TempFolder(dir))
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The temp file's name: the edited file's own name (its extension kept).
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "proposal.txt".to_string())
}

/// Open `content` (the proposal for `path`) in the editor `argv`, wait for
/// it, and return what was saved. The terminal must be handed over already.
pub async fn edit(path: &str, content: &str, argv: &[String]) -> Result<String, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("no editor configured".into());
    };
    let folder = TempFolder::create().map_err(|e| format!("cannot create a temp folder: {e}"))?;
    let file = folder.0.join(file_name(path));
    std::fs::write(&file, content).map_err(|e| format!("cannot write the temp file: {e}"))?;
    let status = tokio::process::Command::new(program)
        .args(args)
        .arg(&file)
        .status()
        .await
        .map_err(|e| format!("cannot run the editor `{program}`: {e} (set $VISUAL or $EDITOR)"))?;
    if !status.success() {
        return Err(format!(
            "the editor `{program}` failed ({status}); the proposal is unchanged"
        ));
    }
    std::fs::read_to_string(&file).map_err(|e| format!("cannot read the edited file: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visual_then_editor_then_vi_split_on_whitespace() {
        assert_eq!(
            command(Some("code --wait"), Some("nano")),
            ["code", "--wait"]
        );
        assert_eq!(command(Some("  "), Some("emacs -nw")), ["emacs", "-nw"]);
        assert_eq!(command(None, None), ["vi"]);
        assert_eq!(command(Some(""), Some("")), ["vi"]);
        assert_eq!(
            command(Some("\"/opt/My Editor/bin/ed\" --wait -c 'set nu'"), None),
            ["/opt/My Editor/bin/ed", "--wait", "-c", "set nu"]
        );
        assert_eq!(command(Some("code \"--wait"), Some("nano")), ["nano"]);
    }

    #[test]
    fn the_temp_file_keeps_the_name_and_extension() {
        assert_eq!(file_name("src/calculator.py"), "calculator.py");
        assert_eq!(file_name(".env"), ".env");
        assert_eq!(file_name(""), "proposal.txt");
    }

    #[tokio::test]
    async fn the_saved_file_is_read_back_and_the_folder_removed() {
        // `sh -c SCRIPT NAME FILE`: the script sees the file as $1.
        let seen = tempfile::tempdir().expect("temp dir");
        let log = seen.path().join("where");
        let script = format!(
            "printf 'edited\\n' >> \"$1\"; echo \"$1\" > '{}'",
            log.display()
        );
        let argv: Vec<String> = vec!["sh".into(), "-c".into(), script, "editor".into()];
        let out = edit("dir/a.py", "original\n", &argv).await;
        assert_eq!(out.as_deref(), Ok("original\nedited\n"));
        let used = std::fs::read_to_string(&log).expect("the editor ran");
        let used = Path::new(used.trim());
        assert!(used.ends_with("a.py"), "{}", used.display());
        assert!(!used.exists(), "the temp folder is removed");
        let failing: Vec<String> = ["sh", "-c", "exit 3", "editor"].map(String::from).to_vec();
        assert!(edit("a.py", "x", &failing).await.is_err());
        let missing = vec!["/nonexistent/editor".to_string()];
        let err = edit("a.py", "x", &missing).await.unwrap_err();
        assert!(err.contains("cannot run the editor"), "{err}");
    }
}
