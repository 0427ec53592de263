//! Turning a `Config` into a ready `Session`: the model (HTTP or scripted), the
//! workspace (for `--demo`/`--script`, a fresh temporary copy), and what the
//! front end should tell the user about it. Shared by `exec` and the TUI.
//!
//! What must stay true: the workspace is the folder the user chose (the
//! current one by default), but never their home folder or `/` unless named
//! with `--workspace`; `--demo` needs no checkout: its sample project is
//! embedded here and written to a fresh temporary folder that is kept.

use crate::agent::{EventReceiver, LoopSettings, Session};
use crate::audit::{self, DecidedBy, SharedLog};
use crate::config::{Config, ModelSource, WireApi};
use crate::llm::{AnthropicModel, ChatModel, HttpModel, Script, ScriptedModel};
use crate::lock::WorkspaceLock;
use crate::tools::Workspace;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod sessions;
use sessions::{claim, prepare_http, sign_checkpoints};
pub use sessions::{pick_session, resume_commands};

/// The built-in demo script.
pub const DEMO_SCRIPT: &str = include_str!("../assets/demo/calculator.json");
/// The sample project `--demo` works on, embedded so it runs from any folder.
pub const DEMO_FILES: [(&str, &str); 2] = [
    ("calculator.py", include_str!("../workspace/calculator.py")),
    (
        "test_calculator.py",
        include_str!("../workspace/test_calculator.py"),
    ),
];
/// What the header shows instead of a model name for a scripted model.
pub const SCRIPTED_LABEL: &str = "demo (scripted)";

/// A session ready to run, and what to tell the user about it.
pub struct Prepared {
    pub session: Session,
    /// Model name, or `demo (scripted)`.
    pub model_label: String,
    /// The folder the agent works on (the temporary copy for a demo).
    pub workspace: PathBuf,
    /// A note to show before anything else (demo mode, where the copy lives).
    pub notice: Option<String>,
    /// A task to pre-fill (from the script).
    pub task: Option<String>,
    /// Held until exit: no second stepwise on this workspace.
    pub lock: WorkspaceLock,
    /// The transcript, unless logging is off.
    pub audit: Option<SharedLog>,
    /// The transcript's name, when this session can be resumed later.
    pub resume_name: Option<ResumeName>,
}

/// The name that resumes a session, once its transcript holds a checkpoint.
#[derive(Debug, Clone)]
pub struct ResumeName {
    name: String,
    written: Arc<std::sync::atomic::AtomicBool>,
}

impl ResumeName {
    /// The transcript's name, whether or not it holds a checkpoint yet.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name, when there is something to resume (not for a session
    /// that never ran a command).
    pub fn ready(&self) -> Option<&str> {
        let written = self.written.load(std::sync::atomic::Ordering::Relaxed);
        written.then_some(self.name.as_str())
    }
}

impl Prepared {
    /// Route the core's events through the transcript (when there is one).
    pub fn events_for_front_end(
        &mut self,
        from_core: EventReceiver,
        decided_by: DecidedBy,
    ) -> EventReceiver {
        match self.audit.take() {
            Some(log) => audit::tee(from_core, log, decided_by),
            None => from_core,
        }
    }
}

/// Build the session. The key is not checked here (the TUI opens without one).
pub fn prepare(config: &Config) -> Result<Prepared, String> {
    hide_every_key();
    // The workspace's `.git/config`, only when a regular file, capped.
    let git_config = config.workspace.join(".git").join("config");
    if let Ok(Some(text)) = crate::config::read::regular_text(&git_config, 256 * 1024) {
        crate::text::scrub::hide_git_credentials(&text);
    }
    let mut prepared = prepare_session(config)?;
    if let Some(task) = &config.task {
        prepared.task = Some(task.clone());
    }
    if config.review == crate::config::Review::Staged {
        let task = prepared.task.clone().unwrap_or_default();
        let staged = prepared.session.enter_stage(&task)?;
        prepared.notice = Some(match prepared.notice.take() {
            Some(notice) => format!("{notice}\n{staged}"),
            None => staged,
        });
    }
    Ok(prepared)
}

/// Every provider's key in the environment is hidden from all output, also
/// those of providers not chosen: a test's output or a file may show one.
fn hide_every_key() {
    for var in crate::config::providers::KEY_VARS {
        if let Some(key) = crate::config::ApiKey::from_env_var(var) {
            crate::tools::scrub::hide(key.expose());
        }
    }
}

/// Refuse the home folder or `/` as a workspace unless it was named explicitly.
pub fn check_workspace_choice(config: &Config) -> Result<(), String> {
    if config.workspace_given {
        return Ok(());
    }
    match too_broad(&config.workspace) {
        Some(what) => Err(format!(
            "refusing to use {what} as the workspace: cd into a project folder, or name it with --workspace DIR"
        )),
        None => Ok(()),
    }
}

/// What `folder` is when it is too broad to be a workspace (the root folder
/// `/` or the user's home folder, after links are resolved): the words that
/// name it; `None` for any other folder. The one check every front end
/// uses before taking a folder as the workspace.
pub fn too_broad(folder: &Path) -> Option<String> {
    let real = std::fs::canonicalize(folder).unwrap_or(folder.to_path_buf());
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .and_then(|h| std::fs::canonicalize(h).ok());
    if real.parent().is_none() {
        Some("the root folder /".to_string())
    } else if home.as_deref() == Some(real.as_path()) {
        Some(format!("your home folder {}", real.display()))
    } else {
        None
    }
}

fn prepare_session(config: &Config) -> Result<Prepared, String> {
    // The demo brings its own project; nothing of the current folder is used.
    let uses_folder = match &config.model_source {
        ModelSource::Http => true,
        ModelSource::Demo => false,
        ModelSource::Script(_) => config.workspace_given,
    };
    if uses_folder {
        check_workspace_choice(config)?;
    }
    if uses_folder && !config.workspace.is_dir() {
        return Err(format!(
            "workspace folder {} does not exist or is not a folder",
            config.workspace.display()
        ));
    }
    let settings = LoopSettings::from(config);
    crate::tools::sandbox::check_required(&settings.sandbox)?;
    let (script_text, script_name) = match &config.model_source {
        ModelSource::Http => return prepare_http(config, settings),
        _ if config.resume.is_some() => {
            return Err(
                "resuming a session needs a model server: --demo and --script always start afresh"
                    .into(),
            );
        }
        ModelSource::Demo => (DEMO_SCRIPT.to_string(), "the calculator demo".to_string()),
        ModelSource::Script(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read script {}: {e}", path.display()))?,
            path.display().to_string(),
        ),
    };
    let script = Script::parse(&script_text).map_err(|e| format!("{script_name}: {e}"))?;
    let task = script.task.clone();
    let copy = if uses_folder {
        copy_to_temp(&config.workspace)
            .map_err(|e| format!("cannot copy the workspace for the demo: {e}"))?
    } else {
        sample_in_temp().map_err(|e| format!("cannot write the demo project: {e}"))?
    };
    let copied = if uses_folder {
        format!("a copy of {}", config.workspace.display())
    } else {
        "the sample project".to_string()
    };
    let model: Arc<dyn ChatModel> = Arc::new(ScriptedModel::new(script, SCRIPTED_LABEL));
    // A scripted model costs nothing, whatever --model names.
    let settings = LoopSettings {
        pricing: None,
        ..settings
    };
    let workspace = open(&copy)?.with_deny_paths(&config.deny_paths)?;
    let (lock, audit) = claim(config, workspace.root())?;
    let mut session = Session::new(settings, model, workspace);
    let audit = audit.map(|log| sign_checkpoints(&mut session, log, SCRIPTED_LABEL, None, &copy).0);
    Ok(Prepared {
        audit,
        lock,
        resume_name: None,
        session,
        model_label: SCRIPTED_LABEL.to_string(),
        notice: Some(format!(
            "This is a scripted demo model playing {script_name}: no network, no API key. It works on {copied} at {} (kept after exit; your own folders are never touched). Approve each step with y, decline with n.",
            copy.display()
        )),
        workspace: copy,
        task,
    })
}

/// The HTTP model client of the configuration: the provider's wire API, its
/// key variable, the base URL and `[headers]`.
pub fn http_model(config: &Config) -> Result<Arc<dyn ChatModel>, String> {
    let preset = config.provider.preset();
    let key = config.api_key.clone();
    let model: Arc<dyn ChatModel> = match preset.wire {
        WireApi::OpenAi => {
            let mut model = HttpModel::new(&config.base_url, &config.model, key)
                .and_then(|m| m.with_headers(&config.headers))
                .map_err(|e| e.to_string())?
                .with_idle_timeout(config.idle_timeout)
                .with_token_timeout(config.token_timeout);
            if let Some(var) = preset.key_var {
                model = model.with_key_var(var);
            }
            if accepts_prompt_cache_key(config.provider, &config.base_url) {
                model = model.with_prompt_cache_key(session_cache_key());
            }
            Arc::new(model)
        }
        WireApi::Anthropic => Arc::new(
            AnthropicModel::new(&config.base_url, &config.model, key)
                .and_then(|m| m.with_headers(&config.headers))
                .map_err(|e| e.to_string())?
                .with_idle_timeout(config.idle_timeout)
                .with_token_timeout(config.token_timeout),
        ),
    };
    Ok(model)
}

/// Whether the server takes OpenAI's `prompt_cache_key`: OpenAI's own API
/// does; other OpenAI-compatible servers may refuse a field they do not know.
fn accepts_prompt_cache_key(provider: crate::config::providers::Provider, base_url: &str) -> bool {
    let host = base_url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', ':']).next())
        .unwrap_or_default();
    provider == crate::config::providers::Provider::Openai && host == "api.openai.com"
}

/// A `prompt_cache_key` for this run's session: the process and the clock,
/// nothing about the user or the machine.
fn session_cache_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("stepwise-{:x}-{:x}", std::process::id(), nanos)
}

pub(crate) fn open(path: &Path) -> Result<Workspace, String> {
    Workspace::open(path).map_err(|e| format!("cannot open workspace {}: {e}", path.display()))
}

/// Folders never copied into a demo workspace.
const NOT_COPIED: [&str; 4] = ["__pycache__", ".pytest_cache", ".stepwise", ".git"];

/// A new folder under the system temp dir, kept after exit so the user can
/// look at what the demo did.
fn fresh_temp_dir() -> std::io::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let target = std::env::temp_dir().join(format!(
        "stepwise-demo-{}-{:x}",
        std::process::id(),
        stamp & 0xff_ffff
    ));
    std::fs::create_dir(&target)?;
    Ok(target)
}

/// Copy `from` into a fresh temporary folder and return it.
pub fn copy_to_temp(from: &Path) -> std::io::Result<PathBuf> {
    let target = fresh_temp_dir()?;
    copy_dir(from, &target)?;
    Ok(target)
}

/// Write the embedded sample project into a fresh temporary folder.
pub fn sample_in_temp() -> std::io::Result<PathBuf> {
    let target = fresh_temp_dir()?;
    for (name, text) in DEMO_FILES {
        std::fs::write(target.join(name), text)?;
    }
    Ok(target)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if NOT_COPIED.iter().any(|n| name == *n) {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
        // Symlinks are not copied: the copy must not point back into the original.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_openai_itself_gets_a_prompt_cache_key() {
        use crate::config::providers::Provider;
        assert!(accepts_prompt_cache_key(
            Provider::Openai,
            "https://api.openai.com/v1"
        ));
        // The default provider pointed at a local server, and other providers: no.
        assert!(!accepts_prompt_cache_key(
            Provider::Openai,
            "http://127.0.0.1:8080/v1"
        ));
        assert!(!accepts_prompt_cache_key(
            Provider::Openai,
            "https://api.openai.com.evil.example/v1"
        ));
        assert!(!accepts_prompt_cache_key(
            Provider::Deepseek,
            "https://api.openai.com/v1"
        ));
        let key = session_cache_key();
        assert!(key.starts_with("stepwise-") && key.len() > 12, "{key}");
    }

    #[test]
    fn copy_skips_caches_and_links() {
        let src = std::env::temp_dir().join(format!("stepwise-copy-src-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&src);
        std::fs::create_dir_all(src.join("pkg/__pycache__")).unwrap();
        std::fs::write(src.join("pkg/a.py"), "a").unwrap();
        std::fs::write(src.join("pkg/__pycache__/a.pyc"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", src.join("etc")).unwrap();
        let copy = copy_to_temp(&src).unwrap();
        assert_eq!(std::fs::read_to_string(copy.join("pkg/a.py")).unwrap(), "a");
        assert!(!copy.join("pkg/__pycache__").exists());
        assert!(std::fs::symlink_metadata(copy.join("etc")).is_err());
        std::fs::remove_dir_all(&src).unwrap();
        std::fs::remove_dir_all(&copy).unwrap();
    }
}
