//! The end of a long output: what a failed call's line is followed by, in
//! both front ends and in a restored session.

/// How many lines of a failed call's output (the end of a failing test
/// run) the front ends show under it.
pub const FAILURE_TAIL_LINES: usize = 15;

/// The output a failed call's line is followed by: the last `n` lines of
/// `text` (its `output` field, or the coloured copy of it), blank lines at
/// either end left out.
pub fn output_tail(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let tail = &lines[lines.len().saturating_sub(n)..];
    tail.iter()
        .skip_while(|l| l.trim().is_empty())
        .copied()
        .collect()
}
