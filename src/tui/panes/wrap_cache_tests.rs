//! The lazy wrap cache against the reference it replaces: every line wrapped
//! and a global row offset scrolled with `Scroll`. Same rows drawn and same
//! following state after every move; a width change keeps the top line.

use super::*;
use crate::tui::panes::scroll::Scroll;

/// Line `i` is `len` characters cut into rows of `width`.
fn wrap_len(len: &usize, width: usize) -> Vec<Line<'static>> {
    let text: String = (0..*len)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![Line::default()];
    }
    chars
        .chunks(width.max(1))
        .map(|c| Line::raw(c.iter().collect::<String>()))
        .collect()
}

fn lines(n: usize, seed: u64) -> Vec<usize> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly short lines, some far taller than the viewport.
            match (x >> 33) % 10 {
                0 => 400 + ((x >> 40) % 300) as usize,
                1 => 0,
                _ => ((x >> 40) % 90) as usize,
            }
        })
        .collect()
}

fn drawn(cache: &WrapCache, n: usize, width: u16, height: u16) -> Vec<String> {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    cache.render(n, area, &mut buf);
    (0..height)
        .map(|y| (0..width).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

fn reference(all: &[Line<'static>], scroll: &Scroll, width: u16, height: u16) -> Vec<String> {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    scroll.draw_window(all, area, &mut buf);
    (0..height)
        .map(|y| (0..width).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

#[test]
fn every_move_lands_where_the_full_wrap_would() {
    let text = lines(300, 7);
    let wrap: WrapFn<'_, usize> = &wrap_len;
    let (width, height) = (30u16, 12u16);
    let all: Vec<Line<'static>> = text.iter().flat_map(|l| wrap_len(l, 30)).collect();
    let mut lazy = WrapCache::default();
    let mut full = Scroll::following();
    let moves = [
        ScrollMove::PageUp,
        ScrollMove::Up(3),
        ScrollMove::PageUp,
        ScrollMove::Down(1),
        ScrollMove::Up(40),
        ScrollMove::Top,
        ScrollMove::Down(7),
        ScrollMove::PageDown,
        ScrollMove::Up(1),
        ScrollMove::Bottom,
        ScrollMove::PageUp,
        ScrollMove::PageDown,
        ScrollMove::Up(25),
        ScrollMove::Down(100_000),
        ScrollMove::Top,
        ScrollMove::Up(2),
    ];
    lazy.layout(&text, wrap, width as usize, height as usize);
    for (step, m) in moves.iter().cycle().take(200).enumerate() {
        lazy.apply(&text, wrap, *m, height as usize);
        full.apply(*m, all.len(), height as usize);
        lazy.layout(&text, wrap, width as usize, height as usize);
        assert_eq!(
            drawn(&lazy, text.len(), width, height),
            reference(&all, &full, width, height),
            "step {step}: {m:?}"
        );
        assert_eq!(lazy.anchor().is_following(), full.is_following(), "{m:?}");
    }
    assert!(lazy.known() < text.len(), "not everything was wrapped");
}

#[test]
fn following_wraps_only_the_end_and_a_resize_wraps_only_the_view() {
    let text = lines(20_000, 3);
    let wrap: WrapFn<'_, usize> = &wrap_len;
    let mut c = WrapCache::default();
    c.layout(&text, wrap, 80, 30);
    assert!(c.known() <= 30, "{} lines wrapped", c.known());
    c.layout(&text, wrap, 50, 30);
    assert!(c.known() <= 30, "{} lines wrapped", c.known());
    let all: Vec<Line<'static>> = text.iter().flat_map(|l| wrap_len(l, 50)).collect();
    assert_eq!(
        drawn(&c, text.len(), 50, 30),
        reference(&all, &Scroll::following(), 50, 30)
    );
}

#[test]
fn a_resize_keeps_the_top_line_even_inside_a_tall_one() {
    let text = vec![
        10, 20, 1000, 30, 40, 50, 60, 70, 80, 90, 5, 5, 5, 5, 5, 5, 5, 5,
    ];
    let wrap: WrapFn<'_, usize> = &wrap_len;
    let mut c = WrapCache::default();
    c.layout(&text, wrap, 20, 5);
    c.apply(&text, wrap, ScrollMove::Top, 5);
    c.apply(&text, wrap, ScrollMove::Down(3 + 10), 5);
    c.layout(&text, wrap, 20, 5);
    assert_eq!(
        c.shown,
        Pos { line: 2, row: 11 },
        "rows 13: line 2, its 12th row"
    );
    // Narrower: the same line, the same row inside it.
    c.layout(&text, wrap, 10, 5);
    assert_eq!(c.shown, Pos { line: 2, row: 11 });
    // Much wider: line 2 has 2 rows now; its last one stays on top.
    c.layout(&text, wrap, 600, 5);
    assert_eq!(c.shown, Pos { line: 2, row: 1 });
    assert!(!c.anchor().is_following());
    c.apply(&text, wrap, ScrollMove::Up(1), 5);
    c.layout(&text, wrap, 600, 5);
    assert_eq!(c.shown, Pos { line: 2, row: 0 });
}
