//! Loop detection: a model that makes the same call with the same arguments
//! and gets the same result again and again (a small model calling
//! `run_tests` until the step budget ends) is told so at the third time in a
//! row, and the task stops at the limit (`max_repeats`, 5 by default; 0
//! turns it off).
//!
//! What must stay true: only an unbroken run of identical calls with
//! identical results counts; any other call, other arguments or another
//! result starts the count again. Results are compared with their numbers
//! masked, so that a test run's timing ("Ran 4 tests in 0.002s") does not
//! make the same failure look new. Results are compared with their numbers
//! masked, so that a test run's timing ("Ran 4 tests in 0.002s") does not
//! make the same failure look new.

/// Repeats after which the model is told that it repeats itself.
pub const NOTE_AT: u32 = 3;

/// What the model reads, after the result, at the third repeat.
pub const NOTE: &str = "[stepwise] this call returned the same result three times in a row; repeating it will not change anything: do something else, or answer if the task is done.";

/// What one more result means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Fine,
    /// Tell the model (the result gets [`NOTE`]).
    Note,
    /// The limit is reached: stop the task.
    Stop(u32),
}

/// The run of identical calls so far.
#[derive(Debug, Default)]
pub struct RepeatWatch {
    last: Option<(String, String, String)>,
    count: u32,
}

impl RepeatWatch {
    /// Take in one call and its result, against a limit (0: never stop nor note).
    pub fn observe(&mut self, name: &str, arguments: &str, result: &str, limit: u32) -> Verdict {
        let result = mask_numbers(result);
        let same = self
            .last
            .as_ref()
            .is_some_and(|(n, a, r)| n == name && same_arguments(a, arguments) && *r == result);
        if same {
            self.count += 1;
        } else {
            self.last = Some((name.to_string(), arguments.to_string(), result));
            self.count = 1;
        }
        match self.count {
            _ if limit == 0 => Verdict::Fine,
            n if n >= limit => Verdict::Stop(n),
            NOTE_AT => Verdict::Note,
            _ => Verdict::Fine,
        }
    }
}

/// The text with every run of digits as one `#`.
fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The same arguments, also when only their JSON spacing or key order differs.
fn same_arguments(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_identical_calls_is_noted_at_three_and_stopped_at_the_limit() {
        let mut w = RepeatWatch::default();
        let call =
            |w: &mut RepeatWatch, args: &str, result: &str| w.observe("run_tests", args, result, 5);
        let seen: Vec<Verdict> = (0..5)
            .map(|i| {
                // Spacing and key order do not make a call another one.
                let args = if i % 2 == 0 {
                    r#"{"command":"unittest"}"#
                } else {
                    r#"{ "command": "unittest" }"#
                };
                call(&mut w, args, "1 failed")
            })
            .collect();
        use Verdict::*;
        assert_eq!(seen, [Fine, Fine, Note, Fine, Stop(5)]);
        // Only timings differ: still the same result.
        let mut w = RepeatWatch::default();
        call(&mut w, "{}", "Ran 4 tests in 0.002s FAILED");
        call(&mut w, "{}", "Ran 4 tests in 0.013s FAILED");
        assert_eq!(call(&mut w, "{}", "Ran 4 tests in 0.001s FAILED"), Note);
        // Another result starts again.
        let mut w = RepeatWatch::default();
        for _ in 0..4 {
            call(&mut w, "{}", "same");
        }
        assert_eq!(call(&mut w, "{}", "changed"), Fine);
        assert_eq!(w.observe("read_file", "{}", "changed", 5), Fine);
        // 0 turns it off.
        let mut w = RepeatWatch::default();
        assert!((0..10).all(|_| w.observe("x", "{}", "r", 0) == Fine));
    }
}
