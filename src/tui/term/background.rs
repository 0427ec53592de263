//! Which palette the UI starts with: `--theme dark|light` decide; `auto`
//! asks the terminal its background colour (the OSC 11 query) and picks the
//! light palette on a light background. `--color`/`NO_COLOR` can turn colour
//! off altogether.
//!
//! What must stay true: the query runs once, in raw mode, before the event
//! stream starts reading the terminal, and never holds start-up longer than
//! [`TIMEOUT`], but to read to its end a paste begun meanwhile or a key's
//! escape sequence cut by a read ([`next_deadline`]: never past [`LONGEST`]
//! in all, however slowly bytes trickle in). It also sends a primary device attributes request (which
//! every terminal answers) so that a terminal that ignores OSC 11 is known at
//! once, and its late reply cannot turn up as keystrokes. No reply means dark.
//! Keys typed while it waits are not lost: what it read besides the two
//! replies is handed back, for `typed` to turn into events.

use crate::config::{ColorChoice, ThemeChoice};
use crate::tui::render::theme::{self, DARK, LIGHT, Look};
use std::io::Write;
use std::time::{Duration, Instant};

/// The longest start-up waits for the terminal's answer.
pub const TIMEOUT: Duration = Duration::from_millis(100);

/// How much longer to wait for the rest of a key's escape sequence (`ESC [
/// 1 ; 5` of Ctrl+Left) that the last read cut: were it left to the event
/// stream, its last byte would be typed as a letter.
pub const SEQUENCE_WAIT: Duration = Duration::from_millis(25);

/// The longest start-up ever waits, a paste or a cut sequence included.
pub const LONGEST: Duration = Duration::from_secs(1);

/// When to stop reading, after a read at `now` in a query begun at
/// `started`: a paste still arriving gets [`TIMEOUT`] more, a cut escape
/// sequence [`SEQUENCE_WAIT`] more (at most once past [`TIMEOUT`]), and
/// nothing goes past [`LONGEST`].
fn next_deadline(
    deadline: Instant,
    now: Instant,
    started: Instant,
    paste: bool,
    cut: bool,
) -> Instant {
    let next = match (paste, cut) {
        (true, _) => now + TIMEOUT,
        (false, true) => deadline.max((now + SEQUENCE_WAIT).min(started + TIMEOUT + SEQUENCE_WAIT)),
        (false, false) => deadline,
    };
    next.min(started + LONGEST)
}

/// The look for these settings; `ask` queries the terminal (only for `auto`).
pub fn choose(theme: ThemeChoice, color: bool, ask: impl FnOnce() -> Option<(u8, u8, u8)>) -> Look {
    if !color {
        return Look::Plain;
    }
    match theme {
        ThemeChoice::Dark => Look::Colored(&DARK),
        ThemeChoice::Light => Look::Colored(&LIGHT),
        ThemeChoice::Auto => Look::Colored(ask().map_or(&DARK, theme::for_background)),
    }
}

/// Whether the UI uses colour: the same rule as `exec` (`--color`,
/// `NO_COLOR`, `TERM=dumb`); the UI always runs on a terminal.
pub fn color_on(choice: ColorChoice) -> bool {
    let no_color = std::env::var("NO_COLOR").ok();
    let term = std::env::var("TERM").ok();
    crate::headless::style::use_color(choice, true, no_color.as_deref(), term.as_deref())
}

/// Ask the terminal (stdin/stdout, already in raw mode) its background:
/// the colour, and the bytes read that were not part of the replies (keys
/// typed meanwhile).
pub fn query() -> (Option<(u8, u8, u8)>, Vec<u8>) {
    let mut out = std::io::stdout();
    if out.write_all(b"\x1b]11;?\x1b\\\x1b[c").is_err() || out.flush().is_err() {
        return (None, Vec::new());
    }
    let stdin = std::io::stdin();
    let started = Instant::now();
    let mut deadline = started + TIMEOUT;
    let mut got: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 256];
    // Where a paste typed meanwhile starts, while it has not ended; kept
    // up to date from each read's bytes alone.
    let mut paste = None;
    while reading_on(&got, paste.is_some()) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let wait = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [rustix::event::PollFd::new(
            &stdin,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&wait)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        // Data is waiting, so this read does not block. Straight from the
        // file descriptor: std's buffered stdin would keep bytes the event
        // stream (which reads the descriptor) then never sees.
        match rustix::io::read(&stdin, &mut chunk[..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                // A marker may begin in the last bytes read before.
                let from = got.len().saturating_sub(PASTE_START.len() - 1);
                got.extend_from_slice(&chunk[..n]);
                paste = open_paste(paste, &got, from);
                // A paste goes on arriving: wait for its end marker, so that
                // its text is one paste and not keystrokes; a key's sequence
                // cut short: wait for its last bytes.
                let cut = paste.is_none() && ends_in_sequence(&got);
                deadline = next_deadline(deadline, Instant::now(), started, paste.is_some(), cut);
            }
        }
    }
    (parse_reply(&got), without_replies(&got))
}

/// `bytes` without the OSC 11 reply and the device attributes reply (each
/// also when cut off at the end): what is left was typed.
pub fn without_replies(bytes: &[u8]) -> Vec<u8> {
    let mut left = bytes.to_vec();
    if let Some(at) = find(&left, b"\x1b]11;") {
        let body = &left[at + 5..];
        let end = match body.iter().position(|b| *b == 0x07 || *b == 0x1b) {
            Some(i) if body[i] == 0x1b => at + 5 + i + 2,
            Some(i) => at + 5 + i + 1,
            None => left.len(),
        };
        left.drain(at..end.min(left.len()));
    }
    if let Some(at) = find(&left, b"\x1b[?") {
        let body = &left[at + 3..];
        let end = match body
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))
        {
            Some(i) if body[i] == b'c' => at + 3 + i + 1,
            Some(_) => at,
            None => left.len(),
        };
        left.drain(at..end);
    }
    left
}

/// Most bytes read while waiting for the replies, and while a paste that
/// began meanwhile goes on.
const MAX_WAITING: usize = 4096;
const MAX_PASTE: usize = 1 << 20;

/// Whether the query should read on: the replies have not arrived, or a
/// bracketed paste typed meanwhile has not ended (within bounds).
fn reading_on(got: &[u8], in_paste: bool) -> bool {
    (got.len() < MAX_WAITING && (!answered(got) || ends_in_sequence(got)))
        || (in_paste && got.len() < MAX_PASTE)
}

/// Whether `got` ends inside an escape sequence: an `ESC`, `ESC O`, or
/// `ESC [` with parameters but no final byte yet (a key's, or a reply's).
fn ends_in_sequence(got: &[u8]) -> bool {
    let Some(esc) = got.iter().rposition(|&b| b == 0x1b) else {
        return false;
    };
    match &got[esc + 1..] {
        [] | [b'O'] => true,
        [b'[', rest @ ..] => rest.iter().all(|b| (0x20..=0x3f).contains(b)),
        _ => false,
    }
}

/// [`reading_on`], the paste's state found from all of `got`.
#[cfg(test)]
fn keep_reading(got: &[u8]) -> bool {
    reading_on(got, open_paste(None, got, 0).is_some())
}

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// Where the bracketed paste still open in `got` starts, if one is: `open`
/// is what was known up to `from`, and only the bytes from there are read.
fn open_paste(mut open: Option<usize>, got: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let marker = if open.is_some() {
            PASTE_END
        } else {
            PASTE_START
        };
        let Some(i) = find(&got[at.min(got.len())..], marker) else {
            return open;
        };
        open = match open {
            None => Some(at + i),
            Some(_) => None,
        };
        at += i + marker.len();
    }
}

/// The device attributes reply (`ESC [ ? … c`) has arrived: nothing else will.
fn answered(bytes: &[u8]) -> bool {
    let Some(at) = find(bytes, b"\x1b[?") else {
        return false;
    };
    bytes[at + 3..]
        .iter()
        .find(|b| !(b.is_ascii_digit() || **b == b';'))
        .is_some_and(|b| *b == b'c')
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The colour in an OSC 11 reply, `ESC ] 11 ; rgb:RRRR/GGGG/BBBB` ended by
/// BEL or ST, anywhere in `bytes` (1 to 4 hex digits per channel).
pub fn parse_reply(bytes: &[u8]) -> Option<(u8, u8, u8)> {
    let start = find(bytes, b"\x1b]11;")? + 5;
    let rest = &bytes[start..];
    let end = rest.iter().position(|b| *b == 0x07 || *b == 0x1b)?;
    let body = std::str::from_utf8(&rest[..end]).ok()?;
    let body = body
        .strip_prefix("rgb:")
        .or_else(|| body.strip_prefix("rgba:"))?;
    let mut channels = body.split('/').map(channel);
    let rgb = (channels.next()??, channels.next()??, channels.next()??);
    Some(rgb)
}

/// One channel, scaled from its digits' range to 0–255.
fn channel(hex: &str) -> Option<u8> {
    if hex.is_empty() || hex.len() > 4 {
        return None;
    }
    let v = u32::from_str_radix(hex, 16).ok()?;
    let max = (1u32 << (4 * hex.len())) - 1;
    u8::try_from((v * 255 + max / 2) / max).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paste_followed_read_by_read_is_where_a_scan_of_all_finds_it() {
        let stream = b"ab\x1b[200~one\r\x1b[201~cd\x1b[200~two\x1b[201~\x1b[200~three";
        for size in 1..=stream.len() {
            let (mut got, mut open) = (Vec::new(), None);
            for chunk in stream.chunks(size) {
                let from = got.len().saturating_sub(PASTE_START.len() - 1);
                got.extend_from_slice(chunk);
                open = open_paste(open, &got, from);
                assert_eq!(open, open_paste(None, &got, 0), "{size}: {got:?}");
            }
            assert_eq!(open, Some(stream.len() - b"\x1b[200~three".len()));
        }
    }

    #[test]
    fn a_paste_begun_while_waiting_is_read_to_its_end() {
        let answered_then = |rest: &[u8]| [b"\x1b[?62;22c".as_slice(), rest].concat();
        assert!(keep_reading(b""), "nothing yet");
        assert!(!keep_reading(&answered_then(b"typed")));
        assert!(keep_reading(&answered_then(b"\x1b[200~half a pas")));
        assert!(!keep_reading(&answered_then(b"\x1b[200~all\r\x1b[201~")));
        assert!(keep_reading(&answered_then(
            b"\x1b[200~a\x1b[201~\x1b[200~b"
        )));
        // A key's escape sequence cut by the last read is read to its end.
        for cut in [&b"\x1b[1;5"[..], b"\x1b[", b"\x1b", b"\x1bO", b"x\x1b[<0;3"] {
            assert!(keep_reading(&answered_then(cut)), "{cut:?}");
        }
        for whole in [&b"\x1b[1;5D"[..], b"\x1bOP", b"\x1bx", b"\x1b[<0;3;4M"] {
            assert!(!keep_reading(&answered_then(whole)), "{whole:?}");
        }
        // Without a paste, only so much is read while waiting.
        assert!(!keep_reading(&vec![b'x'; MAX_WAITING]));
        let mut long = b"\x1b[200~".to_vec();
        long.resize(MAX_WAITING * 2, b'x');
        assert!(keep_reading(&long));
        long.resize(MAX_PASTE, b'x');
        assert!(!keep_reading(&long), "bounded");
    }

    #[test]
    fn start_up_waits_on_for_pastes_and_cut_sequences_but_never_past_the_longest() {
        let t0 = Instant::now();
        let first = t0 + TIMEOUT;
        let ms = Duration::from_millis;
        assert_eq!(next_deadline(first, t0 + ms(10), t0, false, false), first);
        // A sequence cut near the end gets a little more, once.
        let cut = next_deadline(first, t0 + ms(95), t0, false, true);
        assert_eq!(cut, t0 + ms(95) + SEQUENCE_WAIT);
        let trickled = next_deadline(cut, t0 + ms(119), t0, false, true);
        assert_eq!(
            trickled,
            t0 + TIMEOUT + SEQUENCE_WAIT,
            "a trickle holds no longer"
        );
        // A paste goes on while it arrives, up to the longest wait.
        assert_eq!(
            next_deadline(first, t0 + ms(90), t0, true, false),
            t0 + ms(190)
        );
        assert_eq!(
            next_deadline(first, t0 + ms(950), t0, true, false),
            t0 + LONGEST
        );
    }

    #[test]
    fn replies_in_both_terminators_and_digit_counts_parse() {
        assert_eq!(
            parse_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\"),
            Some((255, 255, 255))
        );
        assert_eq!(
            parse_reply(b"\x1b]11;rgb:1e1e/1e1e/2e2e\x07\x1b[?62;22c"),
            Some((30, 30, 46))
        );
        assert_eq!(parse_reply(b"\x1b]11;rgb:f/8/0\x07"), Some((255, 136, 0)));
        assert_eq!(parse_reply(b"\x1b[?1;2c"), None, "only device attributes");
        assert_eq!(parse_reply(b"\x1b]11;rgb:zz/00/00\x07"), None);
        assert_eq!(parse_reply(b"\x1b]11;rgb:ffff/ffff"), None, "cut off");
        assert!(answered(b"\x1b]11;rgb:0/0/0\x07\x1b[?64;1;2c"));
        assert!(!answered(b"\x1b[?64;1"));
    }

    #[test]
    fn keys_typed_around_the_replies_are_kept_and_the_replies_are_not() {
        let got = b"ab\x1b]11;rgb:0/0/0\x1b\\c\x1b[?62;22cd\x1b[A";
        assert_eq!(without_replies(got), b"abcd\x1b[A");
        assert_eq!(without_replies(b"x\x1b]11;rgb:0/0/0\x07\x1b[?1;2c"), b"x");
        assert_eq!(without_replies(b"hi\x1b]11;rgb:ff"), b"hi", "cut off");
        assert_eq!(without_replies(b"hi\x1b[?6"), b"hi", "cut off");
        assert_eq!(without_replies(b"hi"), b"hi", "no reply at all");
    }

    #[test]
    fn the_reply_decides_auto_and_no_reply_or_no_colour_decide_too() {
        let white = || parse_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\");
        let black = || parse_reply(b"\x1b]11;rgb:0000/0000/0000\x07");
        assert_eq!(
            choose(ThemeChoice::Auto, true, white),
            Look::Colored(&LIGHT)
        );
        assert_eq!(choose(ThemeChoice::Auto, true, black), Look::Colored(&DARK));
        assert_eq!(
            choose(ThemeChoice::Auto, true, || None),
            Look::Colored(&DARK)
        );
        let never = || -> Option<(u8, u8, u8)> { panic!("asked for a fixed theme") };
        assert_eq!(
            choose(ThemeChoice::Light, true, never),
            Look::Colored(&LIGHT)
        );
        assert_eq!(choose(ThemeChoice::Auto, false, never), Look::Plain);
    }
}
