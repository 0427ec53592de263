//! The prompt's hints match the view, from the key map: full screen, Esc
//! goes back (it never declines there); a test run's prompt speaks of what
//! it shows, not of a diff; the first `a` says what `y` and `n` still do.

use crate::support::tui::*;
use crossterm::event::KeyCode;

#[test]
fn the_full_screen_diff_says_esc_goes_back() {
    let mut app = app();
    explored(&mut app);
    keep_open(write_calculator(&mut app));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("n/Enter/Esc no"), "{shown}");
    press(&mut app, KeyCode::Char('f'));
    let shown = screen(&draw(&mut app, 120, 40));
    assert!(shown.contains("f/Esc back"), "{shown}");
    assert!(shown.contains("n/Enter no"), "{shown}");
    assert!(
        !shown.contains("n/Enter/Esc"),
        "Esc does not decline here:\n{shown}"
    );
    assert!(!shown.contains("full diff"), "{shown}");
}

#[test]
fn a_test_runs_prompt_speaks_of_no_diff() {
    let mut app = app();
    explored(&mut app);
    keep_open(run_tests_request(&mut app, 4));
    let shown = screen(&draw(&mut app, 160, 40));
    let hints = shown
        .lines()
        .find(|l| l.contains("y yes"))
        .unwrap_or_else(|| panic!("no hint row:\n{shown}"));
    assert!(!hints.contains("diff"), "{hints}");
    assert!(hints.contains("f full screen"), "{hints}");
}

#[test]
fn the_first_a_says_what_y_and_n_still_do() {
    let mut app = app();
    explored(&mut app);
    keep_open(run_tests_request(&mut app, 4));
    press(&mut app, KeyCode::Char('a'));
    let flash = app.flash().clone().unwrap_or_default();
    assert!(flash.contains("Press a again"), "{flash}");
    assert!(
        flash.contains("y approves only this one, n/Enter/Esc declines it"),
        "{flash}"
    );
}
