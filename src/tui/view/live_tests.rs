//! A large live preview, computed on the UI's worker while the arguments
//! stream in split anywhere, ends equal to the diff computed from scratch;
//! the pane takes its items as the worker built them.

use crate::diff::FileDiff;
use crate::tools::ToolId;
use crate::tools::calls::registry::LivePreview;
use crate::tui::panes::diff::live::{INLINE_PREVIEW_BYTES, LivePreviews, REFRESH};
use std::time::{Duration, Instant};

/// A 3,000-line file, and a version with every fifth line changed.
/// How the core says a built-in tool is previewed.
fn preview(tool: &str) -> LivePreview {
    crate::tools::Registry::default().live_preview(tool)
}

fn big() -> (String, String) {
    let old: String = (0..3_000)
        .map(|i| format!("value_{i} = compute({i}, 'x')\n"))
        .collect();
    let new: String = old
        .lines()
        .enumerate()
        .map(|(i, l)| match i % 5 {
            0 => format!("{l} # ünïcode {i}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    (old, new)
}

/// Refresh until no preview is computing (a thread may take a while on a
/// busy machine; the bound only keeps a broken build from hanging).
fn settle(live: &mut LivePreviews, now: &mut Instant) {
    for _ in 0..20_000 {
        *now += REFRESH;
        live.refresh(*now);
        if !live.computing() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the preview never arrived");
}

#[test]
fn a_large_preview_streamed_in_random_pieces_ends_as_the_full_diff() {
    let (old, new) = big();
    let args = serde_json::json!({"path": "big.py", "content": new}).to_string();
    assert!(
        args.len() + old.len() > INLINE_PREVIEW_BYTES,
        "takes the threaded path"
    );
    let expected = FileDiff::compute("big.py", Some(&old), &new);
    let chars: Vec<char> = args.chars().collect();
    // A small linear congruential generator: the same splits every run.
    let mut seed: u64 = 0x5eed;
    for _ in 0..4 {
        let mut live = LivePreviews::default();
        live.base(
            0,
            &ToolId::parse("write_file"),
            "big.py".into(),
            Some(old.clone()),
        );
        let mut now = Instant::now();
        let mut at = 0;
        let mut seen = 0;
        while at < chars.len() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = 1 + (seed >> 33) as usize % 9_000;
            let piece: String = chars[at..(at + n).min(chars.len())].iter().collect();
            at += n;
            live.fragment(
                0,
                &ToolId::parse("write_file"),
                preview("write_file"),
                &piece,
            );
            // Frames come faster than the throttle, or slower.
            now += Duration::from_millis((seed >> 40) % 150);
            live.refresh(now);
            let generation = live.shown().map_or(0, |c| c.generation);
            assert!(generation >= seen, "previews only move forward");
            seen = generation;
        }
        settle(&mut live, &mut now);
        let shown = live.shown().and_then(|c| c.preview.clone());
        assert_eq!(
            shown.as_ref(),
            Some(&expected),
            "the last preview is the real diff"
        );
        assert_eq!(live.next_refresh(), None, "nothing left to do");
    }
}

#[test]
fn a_frame_does_not_wait_for_a_large_preview() {
    let (old, new) = big();
    let args = serde_json::json!({"path": "big.py", "content": new}).to_string();
    let mut live = LivePreviews::default();
    live.base(0, &ToolId::parse("write_file"), "big.py".into(), Some(old));
    live.fragment(
        0,
        &ToolId::parse("write_file"),
        preview("write_file"),
        &args,
    );
    let t0 = Instant::now();
    live.refresh(t0);
    // Queued on the worker: the pane shows the earlier state until it is
    // ready, and a refresh is asked for to pick it up.
    assert!(live.computing());
    assert!(live.next_refresh().is_some());
    let mut now = t0;
    settle(&mut live, &mut now);
    assert!(
        live.shown()
            .is_some_and(|c| c.preview.is_some() && c.generation == 1)
    );
}

#[test]
fn the_pane_takes_a_large_preview_with_its_items_built_off_the_ui_thread() {
    use crate::agent::AgentEvent;
    use crate::tui::panes::diff::source::{build_rows, built};
    use crate::tui::{App, Msg};
    let (old, new) = big();
    let args = serde_json::json!({"path": "big.py", "content": new}).to_string();
    let mut app = App::new("model", "~/ws");
    app.update(Msg::Agent(AgentEvent::ModelRequest { steps_done: 0 }));
    app.update(Msg::Agent(AgentEvent::LiveEditBase {
        index: 0,
        tool: "write_file".into(),
        path: "big.py".into(),
        old: Some(old.clone()),
    }));
    app.update(Msg::Agent(AgentEvent::ToolCallStreaming {
        index: 0,
        tool: "write_file".into(),
        preview: crate::tools::calls::registry::LivePreview::WriteFile,
        fragment: args,
    }));
    let area = ratatui::layout::Rect::new(0, 0, 200, 60);
    let mut now = Instant::now();
    app.set_now(now);
    // Its first frame: no preview yet (an empty diff), its job queued.
    crate::tui::view::relayout(&mut app, area);
    assert!(app.live().computing());
    let before = built();
    for _ in 0..20_000 {
        now += REFRESH;
        app.set_now(now);
        crate::tui::view::relayout(&mut app, area);
        if app.live().shown().is_some_and(|c| c.preview.is_some()) && !app.live().computing() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    crate::tui::view::relayout(&mut app, area);
    assert_eq!(built(), before, "no diff items built on the UI thread");
    let width = app.panes.diff.expect("a diff pane").inner().width as usize;
    let whole = FileDiff::compute("big.py", Some(&old), &new);
    let rows = build_rows(&[&whole], width, false).rows.len();
    assert_eq!(
        app.diff.total_rows(),
        rows + 1,
        "its rows and the streaming note"
    );
}
