//! The session's transcript in `setup`: where transcripts are, a new one or
//! the resumed session's own, the checkpoint writer the session feeds, and
//! a model server's session built new or resumed from its transcript.
//!
//! What must stay true: a resumed session is built only from a transcript
//! that `resume` verified (signed with this user's key); it goes on with the
//! model it used and writes on in the same transcript.

use super::{Prepared, ResumeName, check_workspace_choice, open};
use crate::agent::{LoopSettings, Session};
use crate::audit::{self, AuditLog, SharedLog};
use crate::config::{Config, LogSetting};
use crate::lock::WorkspaceLock;
use crate::state_dir::StateDir;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A model server's session, new or resumed from its transcript.
pub(super) fn prepare_http(config: &Config, settings: LoopSettings) -> Result<Prepared, String> {
    let workspace = open(&config.workspace)?.with_deny_paths(&config.deny_paths)?;
    let state = StateDir::open(workspace.root())?;
    let lock = WorkspaceLock::acquire(&state)?;
    // A handed session never prompted goes on in its own (empty) transcript.
    let mut empty_handed = None;
    let loaded = match &config.resume {
        Some(crate::config::ResumeFrom::Handed(given)) => {
            let (dir, _) = sessions_dir(config, &state)?;
            let key = crate::resume::key::SigningKey::for_workspace(&config.workspace)?;
            let found = crate::resume::find_handed(&dir, given, &key)?;
            if found.is_none() {
                empty_handed = Some(crate::resume::check_name(given)?);
            }
            found
        }
        Some(from) => Some(crate::resume::find(
            &sessions_dir(config, &state)?,
            from,
            &config.workspace,
        )?),
        None => None,
    };
    // A resumed session goes on with the model it used (and its prices).
    let resumed_config;
    let (config, settings) = match &loaded {
        Some(l) if l.model != config.model => {
            resumed_config = Config {
                model: l.model.clone(),
                ..config.clone()
            };
            (&resumed_config, LoopSettings::from(&resumed_config))
        }
        _ => (config, settings),
    };
    let model = super::http_model(config)?;
    let mut session = Session::new(settings, model, workspace);
    session.check_context_window(config.context_window)?;
    if let Some(l) = &loaded {
        session
            .restore(l.state.clone(), &l.name)
            .map_err(|e| format!("session {}: {e}", l.name))?;
    }
    let appended = (loaded.as_ref().map(|l| l.name.as_str())).or(empty_handed.as_deref());
    let audit = open_log(config, &state, appended)?;
    let stem = (audit.as_ref())
        .and_then(|log| Some(log.path().file_stem()?.to_string_lossy().into_owned()));
    let mut resume_name = None;
    let audit = audit.map(|log| {
        let (shared, written) = sign_checkpoints(
            &mut session,
            log,
            &config.model,
            loaded.as_ref(),
            &config.workspace,
        );
        resume_name = stem.map(|name| ResumeName { name, written });
        shared
    });
    Ok(Prepared {
        audit,
        resume_name,
        session,
        model_label: config.model.clone(),
        workspace: config.workspace.clone(),
        notice: None,
        task: None,
        lock,
    })
}

/// Share the transcript with a checkpoint writer the session feeds. Without
/// a key (no config folder), the session is logged but cannot be resumed.
pub(super) fn sign_checkpoints(
    session: &mut Session,
    log: AuditLog,
    model: &str,
    loaded: Option<&crate::resume::Loaded>,
    workspace: &Path,
) -> (SharedLog, Arc<AtomicBool>) {
    use crate::resume::{key::SigningKey, writer::Checkpoints};
    let shared: SharedLog = Arc::new(std::sync::Mutex::new(log));
    // A resumed session can be resumed again at once; a new one after its first checkpoint.
    let written = Arc::new(AtomicBool::new(loaded.is_some()));
    let flag = written.clone();
    let writer = SigningKey::for_workspace(workspace).and_then(|key| match loaded {
        Some(l) => Ok(Checkpoints::resume(shared.clone(), key, l, model)),
        None => Checkpoints::start(shared.clone(), key, model),
    });
    match writer {
        Ok(mut writer) => session.on_checkpoint(Box::new(move |state| {
            if writer.write(state) {
                flag.store(true, Ordering::Relaxed);
            }
        })),
        Err(e) => {
            if let Ok(mut log) = shared.lock() {
                log.record(serde_json::json!({"event": "checkpoints_off", "reason": e}));
            }
        }
    }
    (shared, written)
}

/// The folder the transcripts are in, as a capability (and its path).
pub(super) fn sessions_dir(config: &Config, state: &StateDir) -> Result<(Dir, PathBuf), String> {
    let (dir, shown) = match &config.log {
        LogSetting::Off => {
            return Err("resuming a session needs its transcript, and --no-log is set".into());
        }
        LogSetting::InWorkspace => {
            let shown = state.path().join(audit::SESSIONS);
            let dir = state
                .dir()
                .create_dir_all(audit::SESSIONS)
                .and_then(|()| state.dir().open_dir(audit::SESSIONS));
            (dir, shown)
        }
        // A folder the user named: theirs to choose, opened as it is.
        LogSetting::Dir(dir) => {
            let opened = std::fs::create_dir_all(dir)
                .and_then(|()| Dir::open_ambient_dir(dir, ambient_authority()));
            (opened, dir.clone())
        }
    };
    let dir = dir.map_err(|e| {
        format!(
            "cannot open the session logs in {}: {e} (use --no-log to run without them)",
            shown.display()
        )
    })?;
    Ok((dir, shown))
}

/// The transcript: a new file, or the resumed session's own (`resumed`).
pub(super) fn open_log(
    config: &Config,
    state: &StateDir,
    resumed: Option<&str>,
) -> Result<Option<AuditLog>, String> {
    if config.log == LogSetting::Off {
        return Ok(None);
    }
    let (dir, shown) = sessions_dir(config, state)?;
    let opened = match resumed {
        Some(name) => AuditLog::append(&dir, &format!("{name}{}", crate::resume::SUFFIX), &shown),
        None => AuditLog::create(&dir, &shown),
    };
    opened.map(Some).map_err(|e| {
        format!(
            "cannot create the session log in {}: {e} (use --no-log to run without it)",
            shown.display()
        )
    })
}

/// The workspace's `.stepwise/` folder, its lock and its transcript.
pub(super) fn claim(
    config: &Config,
    workspace: &Path,
) -> Result<(WorkspaceLock, Option<AuditLog>), String> {
    let state = StateDir::open(workspace)?;
    let lock = WorkspaceLock::acquire(&state)?;
    Ok((lock, open_log(config, &state, None)?))
}

/// `stepwise resume` without a name: list this workspace's sessions on the
/// normal screen and read a number. `None`: the user chose none.
pub fn pick_session(config: &Config) -> Result<Option<String>, String> {
    check_workspace_choice(config)?;
    let state = StateDir::open(&config.workspace)?;
    let (dir, _) = sessions_dir(config, &state)?;
    let key = crate::resume::key::SigningKey::for_workspace(&config.workspace)?;
    let found = crate::resume::list::sessions(&dir, &key);
    let stdin = std::io::stdin();
    crate::resume::list::pick(&found, &mut stdin.lock(), &mut std::io::stdout())
        .map_err(|e| format!("cannot ask which session to resume: {e}"))
}

/// The commands that resume session `name` later (the UI's, `exec`'s).
pub fn resume_commands(config: &Config, name: &str) -> (String, String) {
    let workspace = config.workspace_given.then_some(config.workspace.as_path());
    let log_dir = match &config.log {
        LogSetting::Dir(dir) => Some(dir.as_path()),
        _ => None,
    };
    let locating = crate::resume::locating_args(workspace, log_dir);
    (
        crate::resume::ui_command(name, &locating),
        crate::resume::exec_command(name, &locating),
    )
}
