//! The documentation's two screen captures are the real UI: `stepwise --demo`
//! in a 100x30 terminal, at the first write's prompt (in `README.md`) and
//! after the answer (in `docs/gate.md`). This test fails when a capture
//! differs from its screen (the two header rows aside: they hold the demo
//! copy's temporary path, the clock and this machine's sandbox; elsewhere
//! clocks and the receipt's sandbox state are compared as placeholders);
//! with `STEPWISE_UPDATE_README=1` it writes the fresh captures into their
//! pages instead:
//!
//! ```sh
//! STEPWISE_UPDATE_README=1 cargo test --test pty readme_captures
//! ```

use crate::support::pty::Tui;
use std::num::NonZeroU16;

/// Header rows skipped when comparing (the temporary path, the clock).
const HEADER_ROWS: usize = 2;

/// The screen as the README shows it: rows without trailing blanks, and
/// no blank rows at the end.
fn capture(screen: &str) -> Vec<String> {
    let mut rows: Vec<String> = screen.lines().map(|l| l.trim_end().to_string()).collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

/// A page's ```text blocks that are screen captures (they start with the
/// header), as (first line index, rows).
fn readme_captures(readme: &str) -> Vec<(usize, Vec<String>)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] == "```text"
            && lines
                .get(i + 1)
                .is_some_and(|l| l.starts_with(" stepwise │"))
        {
            let start = i + 1;
            let end = (start..lines.len())
                .find(|&j| lines[j] == "```")
                .unwrap_or(lines.len());
            out.push((
                start,
                lines[start..end].iter().map(|l| l.to_string()).collect(),
            ));
            i = end;
        }
        i += 1;
    }
    out
}

/// The rows below the header, with what differs between runs and machines
/// (elapsed times, the receipt's sandbox state) as placeholders.
fn comparable(rows: &[String]) -> Vec<String> {
    let clock = regex::Regex::new(r"\b\d+:\d\d\b").expect("regex");
    rows.iter()
        .skip(HEADER_ROWS)
        .map(|r| match r.starts_with("┃ run ") {
            true => "┃ run (the sandbox state)".to_string(),
            false => clock.replace_all(r, "M:SS").into_owned(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readme_captures_are_the_real_screens() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let ws = crate::support::copy_workspace();
    let ws_arg = ws.path().to_string_lossy().into_owned();
    let size = (
        NonZeroU16::new(30).expect("rows"),
        NonZeroU16::new(100).expect("cols"),
    );
    let mut tui = Tui::start_sized(
        &["--demo", "--workspace", &ws_arg],
        &[("TMPDIR", tmp.path())],
        size,
    );
    tui.wait_for("Add divide(a, b)").await;
    tui.send("\r");
    let first = capture(&tui.wait_for("Step 4 · ").await);
    tui.send("y");
    for prompt in ["Step 5 · ", "Step 6 · ", "Step 7 · Run"] {
        tui.wait_for(prompt).await;
        tui.send("y");
    }
    let second = capture(&tui.wait_for("Done in 8 steps").await);
    tui.send("\x04");
    assert_eq!(tui.exit_code().await, 0);

    // Each capture with its page, the README's first.
    let mut found = Vec::new();
    for (page, text) in crate::support::docs::pages() {
        for (start, rows) in readme_captures(&text) {
            found.push((page.clone(), text.clone(), start, rows));
        }
    }
    let pages: Vec<String> = found.iter().map(|f| f.0.display().to_string()).collect();
    assert_eq!(pages, ["README.md", "docs/gate.md"], "the two captures");
    let fresh = [first, second];
    if std::env::var_os("STEPWISE_UPDATE_README").is_some() {
        for ((page, text, start, old), new) in found.iter().zip(&fresh) {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            lines.splice(*start..start + old.len(), new.iter().cloned());
            let path = crate::support::docs::root().join(page);
            std::fs::write(path, lines.join("\n") + "\n").expect("write the page");
        }
        return;
    }
    for ((_, _, _, old), new) in found.iter().zip(&fresh) {
        assert_eq!(
            comparable(old),
            comparable(new),
            "a README capture is out of date: run STEPWISE_UPDATE_README=1 cargo test --test pty readme_captures\nfresh:\n{}",
            new.join("\n")
        );
    }
}
