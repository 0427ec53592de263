//! Grammars made ready off the UI thread. `syntect` loads its grammars and
//! compiles each regex the first time a parse needs it; for one language
//! that is about 20 ms, far over a frame. So the real app asks for a
//! language as soon as a code block of it appears ([`Grammars::want`]); the
//! run loop carries the request out on a blocking worker ([`warm`]: the set
//! loads and the grammar's regexes compile there, by parsing the block's
//! own lines), and the answer comes back into the App as a message
//! ([`Grammars::ready`]), which asks for a frame. Until then the block is
//! shown plain; the compiled grammar is handed over through `syntect`'s own
//! once-only cells, immutable once set.
//!
//! What must stay true: with [`Grammars::off_thread`] on, the UI thread
//! never loads the set or compiles a grammar for a code block: a language
//! counts as usable only once its answer came; the App learns it only
//! through `update`, so drawing stays a function of the App's state (tests
//! and the bench deliver the answer themselves). Without it (the default, as
//! in tests that only look at colours) grammars load on first use, inline.

use crate::tui::render::highlight::{self, key};
use std::collections::{HashMap, HashSet};

/// How many lines of a block the worker parses to compile its grammar.
pub const SAMPLE_LINES: usize = 100;

/// Load the grammars and compile what colouring `sample` as `lang` needs.
/// Blocking (tens of milliseconds the first time): only for a worker, or a
/// test or bench that waits on purpose. Whether `lang` has colours.
pub fn warm(lang: &str, sample: &[String]) -> bool {
    if !highlight::known(lang) {
        return false;
    }
    let take = sample.len().min(SAMPLE_LINES);
    let _ = highlight::lines(lang, &sample[..take]);
    true
}

/// Which grammars the App may use, and the warm-ups it wants.
#[derive(Debug, Default)]
pub struct Grammars {
    off_thread: bool,
    /// Answers: whether each language (by [`key`]) has colours.
    ready: HashMap<String, bool>,
    /// Languages asked for (answered or not).
    asked: HashSet<String>,
    /// Warm-ups not yet handed to the run loop: language and sample lines.
    wanted: Vec<(String, Vec<String>)>,
}

impl Grammars {
    /// Grammars compile on a worker from now on (the real app, the bench).
    pub fn set_off_thread(&mut self) {
        self.off_thread = true;
    }

    /// Whether grammars (and so code blocks' colours) are off the UI thread.
    pub fn is_off_thread(&self) -> bool {
        self.off_thread
    }

    /// A block of `lang` appeared: ask for its grammar (once per language).
    pub fn want(&mut self, lang: &str, lines: &[String]) {
        if !self.off_thread || lang.trim().is_empty() {
            return;
        }
        let key = key(lang);
        if self.asked.insert(key.clone()) {
            let take = lines.len().min(SAMPLE_LINES);
            self.wanted.push((key, lines[..take].to_vec()));
        }
    }

    /// The warm-ups asked for since the last call.
    pub fn take_wanted(&mut self) -> Vec<(String, Vec<String>)> {
        std::mem::take(&mut self.wanted)
    }

    /// The worker answered for `lang`.
    pub fn ready(&mut self, lang: &str, known: bool) {
        let key = key(lang);
        self.asked.insert(key.clone());
        self.ready.insert(key, known);
    }

    /// Whether `lang` has colours: `None` while its grammar is not ready
    /// (off the UI thread), else the answer (inline: loads it now).
    pub fn known(&mut self, lang: &str, lines: &[String]) -> Option<bool> {
        if !self.off_thread {
            return Some(highlight::known(lang));
        }
        if lang.trim().is_empty() {
            return Some(false);
        }
        let answer = self.ready.get(&key(lang)).copied();
        if answer.is_none() {
            self.want(lang, lines);
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_is_asked_for_once_and_usable_only_once_answered() {
        let lines = vec!["fn main() {}".to_string()];
        let mut g = Grammars::default();
        g.want("rust", &lines);
        assert!(g.take_wanted().is_empty(), "inline: nothing to ask");
        g.set_off_thread();
        assert_eq!(g.known("Rust", &lines), None);
        g.want("rust", &lines);
        assert_eq!(g.take_wanted(), vec![("rust".to_string(), lines.clone())]);
        assert!(g.take_wanted().is_empty());
        g.ready("rust", true);
        assert_eq!(g.known("RUST", &lines), Some(true));
        g.ready("tsx", false);
        assert_eq!(g.known("typescript", &lines), Some(false), "aliases fold");
        assert_eq!(g.known("", &lines), Some(false));
    }

    #[test]
    fn warming_tells_known_languages_from_unknown_ones() {
        let lines = vec!["x = 1".to_string()];
        assert!(warm("python", &lines));
        assert!(!warm("no-such-language", &lines));
    }
}
