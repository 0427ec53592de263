//! Terminal setup and restoration on every exit path: raw mode, alternate
//! screen, mouse capture, bracketed paste and keyboard-enhancement flags are
//! focus reports are undone by `restore` (idempotent), called on normal exit, on error, by a
//! guard's `Drop`, by the panic hook, and after a signal; `suspend`/`resume`
//! hand the terminal to the user's editor and back. Also the log file.

use crossterm::cursor::{Hide, Show};
use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use std::io::{Write, stdout};
use std::path::PathBuf;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// The terminal is in full-screen mode (set up and not yet restored).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Enter full-screen mode. On error, whatever was set up is undone.
pub fn enter() -> std::io::Result<()> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let result = execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste, Hide)
        .and_then(|()| set_mouse_capture(true));
    if let Err(e) = result {
        restore();
        return Err(e);
    }
    // Lets Shift+Enter be told apart from Enter where the terminal supports
    // it; other terminals ignore the sequence.
    let _ = execute!(
        stdout(),
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    );
    // Focus reports tell when an approval waits unseen (see `notify`).
    let _ = execute!(stdout(), EnableFocusChange);
    Ok(())
}

/// Whether drawing is allowed (false once anything restored the terminal).
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

pub fn set_mouse_capture(on: bool) -> std::io::Result<()> {
    if on {
        execute!(stdout(), EnableMouseCapture)?;
    } else {
        execute!(stdout(), DisableMouseCapture)?;
    }
    MOUSE.store(on, Ordering::SeqCst);
    Ok(())
}

/// Put the terminal back as it was. Safe to call any number of times, from any thread.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    let _ = execute!(out, DisableFocusChange, PopKeyboardEnhancementFlags);
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(out, DisableBracketedPaste, LeaveAlternateScreen, Show);
    let _ = out.flush();
    let _ = disable_raw_mode();
}

/// Hand the terminal over to another program (the user's editor): back to
/// the normal screen, raw mode, mouse capture and paste mode off.
pub fn suspend() {
    restore();
}

/// Take the terminal back after `suspend` (mouse capture as it was).
pub fn resume(mouse: bool) -> std::io::Result<()> {
    enter()?;
    execute!(stdout(), Clear(ClearType::All))?;
    if !mouse {
        set_mouse_capture(false)?;
    }
    Ok(())
}

/// Restores the terminal when dropped (early returns, unwinding).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Restore the terminal before the panic message is printed, in any thread
/// (a panic in the agent task included). Chains to the previous hook.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            tracing::error!(panic = %info, "panic");
            previous(info);
        }));
    });
}

/// Send `tracing` output to a file, never the screen: `STEPWISE_LOG=path`,
/// `STEPWISE_LOG=off`, or by default `$XDG_STATE_HOME/stepwise/stepwise.log`
/// (`~/.local/state/...`). Returns the path in use.
pub fn init_logging() -> Option<PathBuf> {
    let path = match std::env::var_os("STEPWISE_LOG") {
        Some(v) if v == "off" || v.is_empty() => return None,
        Some(v) => PathBuf::from(v),
        None => {
            let state = std::env::var_os("XDG_STATE_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state"))
                })?;
            state.join("stepwise").join("stepwise.log")
        }
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).ok()?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_max_level(tracing::Level::INFO)
        .with_target(false)
        .try_init()
        .ok()?;
    Some(path)
}
