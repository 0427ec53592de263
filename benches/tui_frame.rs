//! Frame benchmark of the TUI: a session holding 20,000 conversation lines and
//! a 5,000-line diff, drawn at 200x60 into ratatui's `TestBackend`.
//! Run with `cargo bench --bench tui_frame`; prints the time per frame for a
//! cold frame (everything wrapped once), idle redraws, redraws while text
//! streams in, while scrolling the middle of the history, while reviewing an
//! edit of 250 hunks (its prompt's first frame apart), while a 4,000-line
//! write streams in as a live diff (and how many previews it showed),
//! and redraws of a reply holding a 500-line highlighted code block; then
//! frames after resizes, and the same first frame and resizes for the
//! conversation alone (no diff pane), which show the diff pane's share.

// A benchmark may panic on what it sets up itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::time::{Duration, Instant};
use stepwise::agent::{AgentEvent, ApprovalAction, ApprovalRequest, Decision};
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;
use stepwise::tui::render::highlight_warm;
use stepwise::tui::{App, Effect, Msg, prepare_and_draw};

const WIDTH: u16 = 200;
const HEIGHT: u16 = 60;
const CONVERSATION_LINES: usize = 20_000;
const DIFF_LINES: usize = 5_000;

fn session() -> App {
    let mut app = conversation_only();
    // Every fourth line changed and a line added: one long hunk of ~5,000 rows.
    let (old, new) = big_file(4);
    let diff = FileDiff::compute("big.py", Some(&old), &new);
    let rows: usize = diff.hunks.iter().map(|h| h.lines.len()).sum();
    assert!(rows >= DIFF_LINES, "diff has {rows} lines");
    app.update(Msg::Agent(AgentEvent::ToolCallProposed {
        step: 1,
        call_id: "c1".into(),
        tool: "write_file".into(),
        kind: stepwise::agent::CallKind::Edit,
        target: "big.py".into(),
        arguments: json!({"path": "big.py"}),
        diff: Some(diff),
        needs_approval: true,
    }));
    app
}

/// 20,000 lines of streamed reply, nothing else.
fn conversation_only() -> App {
    let mut app = App::new("bench-model", "~/bench/workspace");
    // As the real app: grammars compile on a worker (see `ready_grammars`).
    app.set_grammars_off_thread();
    let mut text = String::new();
    for i in 0..CONVERSATION_LINES {
        match i % 50 {
            10 => text.push_str("```python\n"),
            20 => text.push_str("```\n"),
            _ => text.push_str(&format!(
                "Line {i}: the model explains a `step` in some detail, with **bold** words and a\tTab, long enough to wrap at narrower widths maybe.\n"
            )),
        }
    }
    app.update(Msg::Agent(AgentEvent::AssistantDelta { text }));
    app.update(Msg::Agent(AgentEvent::AssistantMessage {
        text: String::new(),
    }));
    app
}

/// A 4,000-line file and a version with every `every`-th line changed
/// (word-level highlights included) and a line added after it.
fn big_file(every: usize) -> (String, String) {
    let old: String = (0..4_000)
        .map(|i| format!("    value_{i} = compute({i}, 'x')\n"))
        .collect();
    let new: String = (0..4_000)
        .map(|i| {
            if i % every == 0 {
                format!("    value_{i} = compute({i}, 'y')  # changed\n    extra_{i} = {i}\n")
            } else {
                format!("    value_{i} = compute({i}, 'x')\n")
            }
        })
        .collect();
    (old, new)
}

/// Carry out the App's grammar warm-ups as the run loop would (on a worker
/// thread), but wait for them: the time they took off the UI thread.
fn ready_grammars(app: &mut App) -> Duration {
    let start = Instant::now();
    for effect in app.take_effects() {
        if let Effect::WarmGrammar { lang, sample } = effect {
            let worker = std::thread::spawn(move || {
                let known = highlight_warm::warm(&lang, &sample);
                (lang, known)
            });
            let (lang, known) = worker.join().expect("warm-up");
            app.update(Msg::GrammarReady { lang, known });
        }
    }
    start.elapsed()
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// Draw one frame: the time it took on the clock and on this thread's CPU.
fn one_frame(term: &mut Terminal<TestBackend>, app: &mut App) -> (Duration, Duration) {
    let (start, cpu) = (Instant::now(), thread_cpu());
    term.draw(|f| prepare_and_draw(f, app)).expect("draw");
    (start.elapsed(), thread_cpu().saturating_sub(cpu))
}

fn time_frames(
    label: &str,
    frames: u32,
    term: &mut Terminal<TestBackend>,
    app: &mut App,
    mut before: impl FnMut(&mut App, u32),
) {
    let mut total = Duration::ZERO;
    let (mut worst, mut worst_cpu) = (Duration::ZERO, Duration::ZERO);
    for i in 0..frames {
        before(app, i);
        let (took, cpu) = one_frame(term, app);
        total += took;
        worst = worst.max(took);
        worst_cpu = worst_cpu.max(cpu);
    }
    let mean = total / frames;
    println!(
        "{label:<44} {:>9.1} µs/frame (worst {:>8.1} µs, {:.1} µs on the CPU, {frames} frames)",
        mean.as_secs_f64() * 1e6,
        worst.as_secs_f64() * 1e6,
        worst_cpu.as_secs_f64() * 1e6
    );
}

/// CPU time this thread has used: on a busy machine a frame's wall time
/// also counts time the thread waited for a core, which this does not.
#[cfg(target_os = "linux")]
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid `timespec` for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu() -> Duration {
    Duration::ZERO
}

/// One long function on purpose: the scenarios run in order on the same
/// session (each builds on the state the last one left), and reading them
/// top to bottom is how the printed timings are read.
fn main() {
    let build = Instant::now();
    let mut app = session();
    let built = build.elapsed();
    println!(
        "session: {} conversation lines, a {DIFF_LINES}+ line diff, {WIDTH}x{HEIGHT} (built in {:?})",
        app.conversation().line_count(),
        built
    );
    println!(
        "{:<44} {:>9.1} µs (20,000 lines, 400 code blocks, none coloured yet)",
        "building the session",
        built.as_secs_f64() * 1e6
    );
    let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");

    let (cold, cpu) = one_frame(&mut term, &mut app);
    println!(
        "{:<44} {:>9.1} µs ({:.1} µs on the CPU; the lines in view and the diff)",
        "first frame (cold caches)",
        cold.as_secs_f64() * 1e6,
        cpu.as_secs_f64() * 1e6
    );
    // Python's grammar, wanted by that frame: on a worker in the real app.
    ready_grammars(&mut app);

    time_frames(
        "idle redraw (caches warm)",
        500,
        &mut term,
        &mut app,
        |_, _| {},
    );
    time_frames(
        "streaming: one delta per frame",
        500,
        &mut term,
        &mut app,
        |app, i| {
            app.update(Msg::Agent(AgentEvent::AssistantDelta {
                text: if i % 8 == 7 {
                    "word\n".into()
                } else {
                    "word ".into()
                },
            }));
        },
    );
    time_frames(
        "scrolling the conversation (PgUp)",
        200,
        &mut term,
        &mut app,
        |app, _| {
            app.scroll(
                stepwise::tui::Focus::Conversation,
                stepwise::tui::panes::scroll::ScrollMove::PageUp,
            );
        },
    );
    time_frames(
        "scrolling the diff (PgDn)",
        200,
        &mut term,
        &mut app,
        |app, _| {
            app.scroll(
                stepwise::tui::Focus::Diff,
                stepwise::tui::panes::scroll::ScrollMove::PageDown,
            );
        },
    );

    // Reviewing an edit of 250 hunks: each frame moves to the next hunk
    // (scrolled into view) or toggles one; the marks are painted per frame.
    let (old, new) = big_file(16);
    let diff = FileDiff::compute("hunks.py", Some(&old), &new);
    let hunks = diff.hunks.len();
    let (reply, _waiting) = tokio::sync::oneshot::channel();
    app.update(Msg::Agent(AgentEvent::ToolCallProposed {
        step: 2,
        call_id: "c2".into(),
        tool: "write_file".into(),
        kind: stepwise::agent::CallKind::Edit,
        target: "hunks.py".into(),
        arguments: json!({"path": "hunks.py"}),
        diff: Some(diff.clone()),
        needs_approval: true,
    }));
    app.update(Msg::Agent(AgentEvent::ApprovalRequested(ApprovalRequest {
        step: 2,
        call_id: "c2".into(),
        tool: ToolName::WRITE_FILE.into(),
        action: ApprovalAction::Edit {
            path: "hunks.py".into(),
            diff,
            proposed: new,
            original: Some(old.clone()),
        },
        allow_for_task: true,
        reply,
    })));
    // The prompt ignores keys while it arms; a reviewer has read it by now.
    app.set_now(app.now() + stepwise::tui::approval::ARMING);
    // Its first frame counts the rows of the new diff and styles what is in view.
    let (first, cpu) = one_frame(&mut term, &mut app);
    println!(
        "{:<44} {:>9.1} µs ({:.1} µs on the CPU; rows counted, the hunks in view styled)",
        "first frame of the hunk review prompt",
        first.as_secs_f64() * 1e6,
        cpu.as_secs_f64() * 1e6
    );
    time_frames(
        &format!("hunk review: j / Space per frame ({hunks} hunks)"),
        200,
        &mut term,
        &mut app,
        |app, i| app.update(Msg::from(key(if i % 2 == 0 { 'j' } else { ' ' }))),
    );
    app.answer(Decision::Decline { reason: None });

    // A 4,000-line write streaming in: a fragment per frame, 16 ms apart, so
    // the preview is recomputed every 100 ms (the worst frames).
    let (_, new) = big_file(4);
    let args = json!({"path": "big.py", "content": new}).to_string();
    let chars: Vec<char> = args.chars().collect();
    let frames = 500;
    let piece = chars.len().div_ceil(frames);
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 2 }));
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "write_file".into(),
        path: "big.py".into(),
        old: Some(old),
    }));
    time_frames(
        "live diff: a 4,000-line write streaming in",
        frames as u32,
        &mut term,
        &mut app,
        |app, i| {
            app.set_now(app.now() + Duration::from_millis(16));
            let at = i as usize * piece;
            let fragment: String = chars[at.min(chars.len())..(at + piece).min(chars.len())]
                .iter()
                .collect();
            app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
                index: 0,
                tool: "write_file".into(),
                preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
                fragment,
            }));
        },
    );
    // The last preview may still be computing (on its own thread).
    let waited = Instant::now();
    while app.live().computing() && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
        app.set_now(app.now() + Duration::from_millis(16));
        term.draw(|f| prepare_and_draw(f, &mut app)).expect("draw");
    }
    println!(
        "{:<44} {:>9} previews shown while it streamed",
        "live diff: previews",
        app.live().shown().map_or(0, |c| c.generation)
    );

    // For comparison: the same frame size with an empty session.
    let mut empty = App::new("bench-model", "~/bench/workspace");
    let mut small = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");
    time_frames(
        "idle redraw, empty session (baseline)",
        500,
        &mut small,
        &mut empty,
        |_, _| {},
    );

    // A reply with a 500-line Rust block, the first Rust code: its grammar
    // is compiled on a worker (the first frame shows the block plain), then
    // the UI's worker colours it.
    let mut code = App::new("bench-model", "~/bench/workspace");
    code.set_grammars_off_thread();
    let block: String = (0..500)
        .map(|i| format!("    let value_{i}: u64 = compute({i}, \"x\"); // step {i}\n"))
        .collect();
    let reply = format!("Here:\n\n```rust\nfn main() {{\n{block}}}\n```\n");
    let highlight = Instant::now();
    code.update(Msg::Agent(AgentEvent::AssistantDelta { text: reply }));
    code.update(Msg::Agent(AgentEvent::AssistantMessage {
        text: String::new(),
    }));
    println!(
        "{:<44} {:>9.1} µs (500 lines, coloured later, when drawn)",
        "highlighting a completed code block",
        highlight.elapsed().as_secs_f64() * 1e6
    );
    let mut code_term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");
    let first = Instant::now();
    code_term
        .draw(|f| prepare_and_draw(f, &mut code))
        .expect("draw");
    let first = first.elapsed();
    println!(
        "{:<44} {:>9.1} µs (plain: its grammar is not ready yet)",
        "first frame showing a 500-line block",
        first.as_secs_f64() * 1e6
    );
    let warm = ready_grammars(&mut code);
    println!(
        "{:<44} {:>9.1} µs (on a worker thread, in no frame)",
        "its grammar's warm-up, off the UI thread",
        warm.as_secs_f64() * 1e6
    );
    // The block is coloured on the UI's worker; frames (4 ms apart here)
    // only look for the result.
    let (mut frames, mut worst, colour) = (0, Duration::ZERO, Instant::now());
    loop {
        let one = Instant::now();
        code_term
            .draw(|f| prepare_and_draw(f, &mut code))
            .expect("draw");
        worst = worst.max(one.elapsed());
        frames += 1;
        if !code.colouring_due() {
            break;
        }
        std::thread::sleep(Duration::from_millis(4));
    }
    println!(
        "{:<44} {:>9.1} ms ({frames} frames meanwhile, worst frame {:.1} µs)",
        "until coloured, once its grammar is ready",
        colour.elapsed().as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e6
    );
    code.scroll(
        stepwise::tui::Focus::Conversation,
        stepwise::tui::panes::scroll::ScrollMove::PageUp,
    );
    time_frames(
        "idle redraw, 500-line highlighted code block",
        500,
        &mut code_term,
        &mut code,
        |_, _| {},
    );

    // Resizes: only the lines in view are wrapped again (the diff pane
    // re-counts its rows and wraps the lines in view; hunks stay styled).
    resizes("frame after a resize", &mut app);

    // The conversation alone: its first frame and resizes.
    let mut alone = conversation_only();
    // Python is compiled already (above): its answer is at hand at once.
    ready_grammars(&mut alone);
    let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");
    let cold = Instant::now();
    term.draw(|f| prepare_and_draw(f, &mut alone))
        .expect("draw");
    println!(
        "{:<44} {:>9.1} µs",
        "first frame, conversation only",
        cold.elapsed().as_secs_f64() * 1e6
    );
    resizes("resize, conversation only", &mut alone);
}

/// Time frames after resizes to a few widths (each a new width for the caches).
fn resizes(label: &str, app: &mut App) {
    let widths = [WIDTH - 40, WIDTH - 10, WIDTH - 70, WIDTH - 25, WIDTH];
    let mut total = Duration::ZERO;
    let mut worst = Duration::ZERO;
    for w in widths {
        let mut term = Terminal::new(TestBackend::new(w, HEIGHT)).expect("terminal");
        let start = Instant::now();
        term.draw(|f| prepare_and_draw(f, app)).expect("draw");
        let took = start.elapsed();
        total += took;
        worst = worst.max(took);
    }
    println!(
        "{label:<44} {:>9.1} µs/frame (worst {:>8.1} µs, {} widths)",
        (total / widths.len() as u32).as_secs_f64() * 1e6,
        worst.as_secs_f64() * 1e6,
        widths.len()
    );
}
