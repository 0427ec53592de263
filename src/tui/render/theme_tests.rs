//! The palettes' promises: concrete colours, readable contrast, one pass.
#![allow(clippy::disallowed_types)]

use super::*;
use ratatui::layout::Rect;

#[test]
fn every_text_style_has_contrast_of_at_least_4_5_in_both_palettes() {
    for palette in [&DARK, &LIGHT] {
        for (name, fg, bg) in pairs(palette) {
            let (Some(f), Some(b)) = (xterm_rgb(fg), xterm_rgb(bg)) else {
                panic!("{}: {name} uses a colour without known RGB", palette.name);
            };
            let ratio = contrast(f, b);
            assert!(
                ratio >= 4.5,
                "{}: {name} has contrast {ratio:.2} ({f:?} on {b:?})",
                palette.name
            );
        }
    }
}

#[test]
fn palettes_never_produce_a_token() {
    for palette in [&DARK, &LIGHT, &TERMINAL] {
        for c in palette
            .slots
            .iter()
            .chain([&palette.text, &palette.background])
        {
            assert!(
                !matches!(c, Color::Indexed(n) if (*n as usize) < SLOTS),
                "{}: {c:?}",
                palette.name
            );
        }
    }
}

#[test]
fn contrast_and_xterm_colours_match_known_values() {
    assert_eq!(xterm_rgb(Color::Indexed(16)), Some((0, 0, 0)));
    assert_eq!(xterm_rgb(Color::Indexed(231)), Some((255, 255, 255)));
    assert_eq!(xterm_rgb(Color::Indexed(80)), Some((95, 215, 215)));
    assert_eq!(xterm_rgb(Color::Indexed(244)), Some((128, 128, 128)));
    assert_eq!(xterm_rgb(Color::Cyan), None);
    let ratio = contrast((0, 0, 0), (255, 255, 255));
    assert!((ratio - 21.0).abs() < 1e-9, "{ratio}");
    assert!(std::ptr::eq(for_background((255, 255, 255)), &LIGHT));
    assert!(std::ptr::eq(for_background((0x1e, 0x1e, 0x1e)), &DARK));
}

fn one_cell(style: Style) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, 2, 1));
    buf.set_string(0, 0, "x", style);
    buf
}

#[test]
fn paint_resolves_tokens_once_and_fills_the_background() {
    let mut buf = one_cell(GOOD);
    paint(&mut buf, Look::Colored(&DARK));
    assert_eq!(buf[(0, 0)].fg, DARK.slots[Slot::Good as usize]);
    assert_eq!(buf[(1, 0)].bg, DARK.background);
    assert_eq!(buf[(1, 0)].fg, DARK.text);
    let once = buf.clone();
    paint(&mut buf, Look::Colored(&DARK));
    assert_eq!(buf, once, "painting is idempotent");
    let mut light = one_cell(GOOD);
    paint(&mut light, Look::Colored(&LIGHT));
    assert_ne!(light[(0, 0)].fg, buf[(0, 0)].fg);
}

#[test]
fn plain_keeps_modifiers_and_reverses_bars_but_drops_every_colour() {
    let mut buf = one_cell(PROMPT_BAR);
    buf.set_string(1, 0, "y", REJECTED);
    paint(&mut buf, Look::Plain);
    for cell in buf.content.iter() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset));
    }
    assert!(
        buf[(0, 0)]
            .modifier
            .contains(Modifier::BOLD | Modifier::REVERSED)
    );
    assert!(buf[(1, 0)].modifier.contains(Modifier::CROSSED_OUT));
}

#[test]
fn the_terminal_look_draws_the_classic_colours() {
    let mut buf = one_cell(ADDED_WORD);
    paint(&mut buf, Look::default());
    assert_eq!(
        (buf[(0, 0)].fg, buf[(0, 0)].bg),
        (Color::Black, Color::Green)
    );
    assert_eq!(buf[(1, 0)].bg, Color::Reset);
}
