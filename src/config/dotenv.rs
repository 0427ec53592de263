//! The workspace's `.env` (`-C DIR`, else the current folder): read without touching the environment, keeping only the
//! variables stepwise documents (each row's variable and `guard::ENV_ONLY`),
//! and splitting them into those any `.env` may set and those that wait for
//! the folder to be trusted.
//!
//! What must stay true: nothing here sets a variable (the binary does, before
//! any thread exists); a variable already in the environment wins and is
//! dropped here; an undocumented variable is never passed on; a base URL is
//! open only when the key sent to it comes from this same file (the file
//! sets a key variable, the environment sets none of them). Values are
//! literal: `${VAR}` and `$VAR` are never expanded (a repository's `.env`
//! could otherwise copy the environment's secrets into a model name or a
//! URL), and a value that looks like a secret is never taken as anything
//! but a key. The file is read only when it is a regular file, capped.
//! A line that cannot be parsed (the file may belong to another tool) is
//! skipped and counted by its number ([`DotEnv::skipped`]); so is a line
//! that is not UTF-8 ([`DotEnv::not_text`]); a file that cannot be read at
//! all (over 1 MiB, unreadable) is skipped whole with the reason
//! ([`DotEnv::unread`]): a project's `.env` never stops stepwise. A line's
//! content is never kept, shown or logged, since it may be a secret.

use super::guard::Guard;
use super::providers::{KEY_VARS, is_key_var};
use std::path::{Path, PathBuf};

/// The variables open when paired with the key in one file: where the key
/// goes and which model it pays for are then the file's own business.
const PAIRED_WITH_KEY: [&str; 2] = ["OPENAI_BASE_URL", "STEPWISE_MODEL"];

/// The documented variables of one `.env` that the environment does not already set.
#[derive(Debug, Clone, Default)]
pub struct DotEnv {
    /// The file, as found (`None`: there was none).
    pub path: Option<PathBuf>,
    /// Name, value and guard of each variable, in file order.
    vars: Vec<(String, String, Guarded)>,
    /// Names in the file that stepwise does not read.
    pub ignored: Vec<String>,
    /// Numbers (from 1) of the lines that could not be parsed and were skipped.
    pub skipped: Vec<usize>,
    /// Numbers (from 1) of the lines that are not UTF-8 text (or hold
    /// U+F8FF, see [`DOLLAR`]), skipped.
    pub not_text: Vec<usize>,
    /// Why the whole file was not read (too large, unreadable), if it was not.
    pub unread: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guarded {
    Open,
    Trusted(&'static str),
}

impl DotEnv {
    /// Read `path`; a missing file is an empty `DotEnv`, an unreadable one
    /// (not UTF-8, too large) an error naming it; lines that cannot be
    /// parsed are skipped (see [`DotEnv::skipped`]).
    pub fn read(path: &Path) -> Result<DotEnv, String> {
        Self::read_with(path, |name| std::env::var_os(name).is_some())
    }

    /// `read`, asking `already_set` instead of the environment (for tests).
    pub fn read_with(path: &Path, already_set: impl Fn(&str) -> bool) -> Result<DotEnv, String> {
        let bytes = match super::read::config_bytes(path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(DotEnv::default()),
            // Another tool's file, or one planted to stop stepwise: said
            // and skipped (the reason names the file, never its content).
            Err(why) => {
                return Ok(DotEnv {
                    unread: Some(why),
                    ..DotEnv::default()
                });
            }
        };
        let (text, not_text) = text_lines(&bytes);
        let escaped = without_substitution(&text)
            .ok_or_else(|| format!("cannot read {}: it holds U+F8FF", path.display()))?;
        let (entries, skipped) = parse(&escaped);
        let mut env = DotEnv {
            path: Some(path.to_path_buf()),
            skipped,
            not_text,
            ..DotEnv::default()
        };
        for (name, value) in entries {
            let (name, value) = (literal(name), literal(value));
            let Some(guard) = super::settings::env_guard(&name) else {
                env.ignored.push(name);
                continue;
            };
            // Only a key variable may hold a secret: a secret-looking model
            // name, URL or header would carry it somewhere else.
            if !is_key_var(&name) && crate::text::scrub::text(&value) != value.as_str() {
                return Err(format!(
                    "{}: {name} looks like a secret (a key or a credential); only the key variables may hold one",
                    path.display()
                ));
            }
            if already_set(&name) || env.vars.iter().any(|(n, _, _)| *n == name) {
                continue; // the environment (or the file's first line) wins
            }
            let guarded = match guard {
                Guard::Open => Guarded::Open,
                Guard::Trusted(what) | Guard::Part(what, _) => Guarded::Trusted(what),
                Guard::Limit(_) => Guarded::Trusted(super::guard::LOOSER_LIMIT),
            };
            env.vars.push((name, value, guarded));
        }
        // Whichever provider is chosen, the key sent to the file's URL must be
        // the file's own: it sets a key and the environment sets none.
        let pairs_key = env.vars.iter().any(|(n, _, _)| is_key_var(n))
            && !KEY_VARS.iter().any(|v| already_set(v));
        for (name, _, guarded) in &mut env.vars {
            if pairs_key && PAIRED_WITH_KEY.contains(&name.as_str()) {
                *guarded = Guarded::Open;
            }
        }
        Ok(env)
    }

    /// Variables any `.env` may set.
    pub fn open(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars
            .iter()
            .filter(|(_, _, g)| *g == Guarded::Open)
            .map(|(n, v, _)| (n.as_str(), v.as_str()))
    }

    /// Variables that wait for the folder to be trusted: name, value and what it decides.
    pub fn guarded(&self) -> impl Iterator<Item = (&str, &str, &'static str)> {
        self.vars.iter().filter_map(|(n, v, g)| match g {
            Guarded::Trusted(what) => Some((n.as_str(), v.as_str(), *what)),
            Guarded::Open => None,
        })
    }
}

/// The file's lines that are UTF-8 text and do not hold [`DOLLAR`], each
/// other line left empty (so that the numbers stay), and the numbers (from
/// 1) of those left empty.
fn text_lines(bytes: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(bytes.len());
    let mut bad = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            text.push('\n');
        }
        match std::str::from_utf8(line) {
            Ok(line) if !line.contains(DOLLAR) => text.push_str(line),
            _ => bad.push(i + 1),
        }
    }
    (text, bad)
}

/// The entries `dotenvy` reads from `text`, in file order, and the numbers
/// of the lines it could not parse. An entry that cannot be parsed costs
/// only its first line: when it spans several (an unclosed quote runs to the
/// end of the file), reading starts again on the line after its first, so
/// the entries below it still count, as other dotenv readers do.
fn parse(text: &str) -> (Vec<(String, String)>, Vec<usize>) {
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    // Lines of `text` before the part being read.
    let mut base = 0usize;
    let mut rest = text;
    'restart: while !rest.is_empty() {
        let started = std::rc::Rc::new(std::cell::Cell::new(0usize));
        let reader = LineByLine {
            text: rest.as_bytes(),
            at: 0,
            started: started.clone(),
        };
        for entry in dotenvy::from_read_iter(reader) {
            match entry {
                Ok(pair) => entries.push(pair),
                Err(dotenvy::Error::LineParse(entry, _)) => {
                    // The entry's last line is the last one read so far.
                    let span = lines_in(&entry);
                    let first = started.get().saturating_sub(span) + 1;
                    skipped.push(base + first);
                    if span > 1 {
                        let next = nth_line_start(rest, first);
                        base += first;
                        rest = &rest[next..];
                        continue 'restart;
                    }
                }
                // Reading from memory fails in no other way; stop rather than spin.
                Err(_) => {
                    skipped.push(base + started.get().max(1));
                    break 'restart;
                }
            }
        }
        break;
    }
    (entries, skipped)
}

/// How many lines an entry as `dotenvy` quotes it spans (its own final
/// line break, if it kept one, starts no line).
fn lines_in(entry: &str) -> usize {
    let entry = entry.strip_suffix('\n').unwrap_or(entry);
    entry.bytes().filter(|&b| b == b'\n').count() + 1
}

/// The byte offset where line `n` (counted from 0) of `text` starts, or its length.
fn nth_line_start(text: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(n - 1)
        .map_or(text.len(), |i| i + 1)
}

/// Hands `dotenvy` at most one line per read and counts the lines begun,
/// so that when it yields an entry the count is the number of that entry's
/// last line (its buffered reader holds nothing beyond the line it took).
struct LineByLine<'a> {
    text: &'a [u8],
    at: usize,
    started: std::rc::Rc<std::cell::Cell<usize>>,
}

impl std::io::Read for LineByLine<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.text[self.at..];
        if rest.is_empty() || buf.is_empty() {
            return Ok(0);
        }
        if self.at == 0 || self.text[self.at - 1] == b'\n' {
            self.started.set(self.started.get() + 1);
        }
        let line = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let n = line.min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

/// What stands for a `$` while `dotenvy` reads the text: a private-use
/// character it treats as any letter, so it has nothing to expand.
const DOLLAR: char = '\u{f8ff}';

/// The text with every `$` that `dotenvy` could expand (any `$` not escaped
/// by a backslash) replaced by [`DOLLAR`]; the values are mapped back
/// afterwards ([`literal`]). No quoting or comment state is mirrored, so
/// no input can make a `$` reach `dotenvy`'s expansion. `None`: the text
/// already holds the stand-in (refused rather than misread).
fn without_substitution(text: &str) -> Option<String> {
    if text.contains(DOLLAR) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut backslashes = 0usize;
    for c in text.chars() {
        if c == '$' && backslashes.is_multiple_of(2) {
            out.push(DOLLAR);
        } else {
            out.push(c);
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    Some(out)
}

/// A name or value as the file wrote it.
fn literal(text: String) -> String {
    if text.contains(DOLLAR) {
        text.replace(DOLLAR, "$")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_literal_and_never_expand_the_environment() {
        // HOME and PATH are set in any test environment.
        let text = "STEPWISE_MODEL=m-${HOME}-$PATH\nSTEPWISE_PYTHON=\"/x/$HOME\"\nOPENAI_BASE_URL='http://h/$HOME'\nSTEPWISE_PROVIDER=a\\$b # it's $HOME\nSTEPWISE_LOG=\"multi\nline $PATH\"\n# comment's $HOME\nHTTPS_PROXY=$STEPWISE_MODEL\n";
        let env = read(text, &[]);
        let all: Vec<(&str, &str)> = env
            .open()
            .chain(env.guarded().map(|(n, v, _)| (n, v)))
            .collect();
        let value = |name: &str| all.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        assert_eq!(value("STEPWISE_MODEL"), Some("m-${HOME}-$PATH"));
        assert_eq!(value("STEPWISE_PYTHON"), Some("/x/$HOME"));
        assert_eq!(value("OPENAI_BASE_URL"), Some("http://h/$HOME"));
        assert_eq!(value("STEPWISE_PROVIDER"), Some("a$b"));
        assert_eq!(value("STEPWISE_LOG"), Some("multi\nline $PATH"));
        assert_eq!(value("HTTPS_PROXY"), Some("$STEPWISE_MODEL"));
    }

    #[test]
    fn no_quoting_or_comment_trick_reaches_the_expansion() {
        let mut parsed = 0;
        for text in [
            // A blank dotenvy counts before `#`, then a quote a mirror would open.
            "STEPWISE_LOG=x\u{a0}#'\nSTEPWISE_MODEL=${HOME}\n",
            "STEPWISE_LOG=x\u{b}#'\nSTEPWISE_MODEL=$HOME\n",
            // An escaped quote inside single quotes.
            "STEPWISE_MODEL='x\\'\n#$HOME'\n",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(".env");
            std::fs::write(&path, text).unwrap();
            let Ok(env) = DotEnv::read_with(&path, |_| false) else {
                continue; // a file dotenvy cannot read is refused whole
            };
            parsed += 1;
            let home = std::env::var("HOME").unwrap_or_default();
            let values: Vec<&str> = env
                .open()
                .map(|(_, v)| v)
                .chain(env.guarded().map(|(_, v, _)| v))
                .collect();
            assert!(
                values.iter().all(|v| home.is_empty() || !v.contains(&home)),
                "{text:?} expanded HOME: {values:?}"
            );
        }
        assert!(parsed >= 2, "the tricks must be read, not only refused");
    }

    #[test]
    fn a_secret_looking_value_is_only_ever_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(
            &path,
            "STEPWISE_MODEL=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
        )
        .unwrap();
        let err = DotEnv::read_with(&path, |_| false).unwrap_err();
        assert!(err.contains("STEPWISE_MODEL looks like a secret"), "{err}");
        assert!(!err.contains("ghp_abc"), "the error never shows it: {err}");
        std::fs::write(
            &path,
            "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n",
        )
        .unwrap();
        assert!(DotEnv::read_with(&path, |_| false).is_ok());
    }

    #[test]
    fn lines_that_cannot_be_parsed_are_skipped_by_number_without_their_content() {
        let text = "STEPWISE_LOG=x\nBAD KEY=CANARY-1\n\n# note\nSTEPWISE_MODEL=\"unclosed CANARY-2\nOPENAI_API_KEY=sk-file\nexport\nGROQ_API_KEY='a'b CANARY-3\nSTEPWISE_PYTHON=/x\n";
        let env = read(text, &[]);
        assert_eq!(env.skipped, [2, 5, 7, 8]);
        let all: Vec<(&str, &str)> = env
            .open()
            .chain(env.guarded().map(|(n, v, _)| (n, v)))
            .collect();
        let mut names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["OPENAI_API_KEY", "STEPWISE_LOG", "STEPWISE_PYTHON"],
            "the lines after an unclosed quote still count"
        );
        let shown = format!("{env:?}");
        assert!(
            !shown.contains("CANARY"),
            "nothing of a skipped line is kept: {shown}"
        );
    }

    #[test]
    fn a_skipped_entry_spanning_lines_is_numbered_by_its_first() {
        // A quoted value over three lines with garbage after the quote: its
        // first line goes, then line 3 alone (`y`), then line 4, whose
        // quote never closes; what follows still counts.
        let (entries, skipped) = parse("A=1\nB='x\ny\nz' junk\nC=3\r\nD = \"two\nlines\"\n");
        assert_eq!(skipped, [2, 3, 4]);
        let pairs: Vec<(&str, &str)> = entries
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(pairs, [("A", "1"), ("C", "3"), ("D", "two\nlines")]);
        // A long line (beyond any read buffer) is still one line.
        let long = format!("A={}\nBAD\n", "x".repeat(20_000));
        assert_eq!(parse(&long).1, [2]);
    }

    #[test]
    fn lines_that_are_not_text_are_skipped_by_number_and_a_large_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        let mut bytes = b"STEPWISE_LOG=x\nSECRET=CANARY-\xff\xfe\n".to_vec();
        bytes.extend_from_slice("OTHER=\u{f8ff}CANARY\nSTEPWISE_MODEL=m\n".as_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let env = DotEnv::read_with(&path, |_| false).unwrap();
        assert_eq!(env.not_text, [2, 3]);
        let mut names: Vec<&str> = env.open().map(|(n, _)| n).collect();
        names.extend(env.guarded().map(|(n, _, _)| n));
        names.sort_unstable();
        assert_eq!(names, ["STEPWISE_LOG", "STEPWISE_MODEL"]);
        assert!(!format!("{env:?}").contains("CANARY"));
        std::fs::write(&path, "A=1\n".repeat(300_000)).unwrap();
        let env = DotEnv::read_with(&path, |_| false).unwrap();
        let why = env.unread.clone().unwrap_or_default();
        assert!(why.contains("larger than 1024 KiB"), "{why}");
        assert_eq!(env.open().count() + env.guarded().count(), 0);
    }

    #[test]
    fn a_special_file_is_skipped_without_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let env = DotEnv::read_with(&path, |_| false).unwrap();
        assert_eq!(env.path, None, "nothing was read");
        assert_eq!(env.open().count(), 0);
    }

    fn read(text: &str, set: &[&str]) -> DotEnv {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, text).unwrap();
        DotEnv::read_with(&path, |n| set.contains(&n)).unwrap()
    }

    fn names<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        it.collect()
    }

    #[test]
    fn only_documented_variables_are_kept_and_redirecting_ones_wait() {
        let env = read(
            "OPENAI_BASE_URL=http://evil.example/v1\nHTTP_PROXY=http://p:1\nSTEPWISE_PYTHON=/tmp/x\nSTEPWISE_MODEL=m\nLD_PRELOAD=/tmp/evil.so\nPATH=/tmp\n",
            &[],
        );
        assert_eq!(names(env.open().map(|(n, _)| n)), Vec::<&str>::new());
        assert_eq!(
            names(env.guarded().map(|(n, _, _)| n)),
            [
                "OPENAI_BASE_URL",
                "HTTP_PROXY",
                "STEPWISE_PYTHON",
                "STEPWISE_MODEL"
            ],
            "another model waits for trust too"
        );
        assert_eq!(env.ignored, ["LD_PRELOAD", "PATH"]);
    }

    #[test]
    fn a_base_url_next_to_its_key_needs_no_trust_unless_the_environment_sends_its_own_key() {
        let text =
            "OPENAI_API_KEY=sk-file\nOPENAI_BASE_URL=http://host.example/v1\nSTEPWISE_MODEL=m\n";
        let env = read(text, &[]);
        assert_eq!(
            names(env.open().map(|(n, _)| n)),
            ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPWISE_MODEL"]
        );
        assert_eq!(env.guarded().count(), 0);
        let env = read(text, &["OPENAI_API_KEY"]);
        assert_eq!(env.open().count(), 0);
        assert_eq!(
            names(env.guarded().map(|(n, _, _)| n)),
            ["OPENAI_BASE_URL", "STEPWISE_MODEL"]
        );
    }

    #[test]
    fn any_providers_key_pairs_with_the_base_url_unless_the_environment_has_a_key() {
        let text = "ANTHROPIC_API_KEY=sk-ant-file\nOPENAI_BASE_URL=http://host.example\n";
        let env = read(text, &[]);
        assert_eq!(
            names(env.open().map(|(n, _)| n)),
            ["ANTHROPIC_API_KEY", "OPENAI_BASE_URL"]
        );
        // The environment's OpenAI key could be the one sent to the file's URL.
        let env = read(text, &["OPENAI_API_KEY"]);
        assert_eq!(names(env.guarded().map(|(n, _, _)| n)), ["OPENAI_BASE_URL"]);
        let env = read("GROQ_API_KEY=g\nSTEPWISE_PROVIDER=groq\n", &[]);
        assert_eq!(names(env.open().map(|(n, _)| n)), ["GROQ_API_KEY"]);
        assert_eq!(
            names(env.guarded().map(|(n, _, _)| n)),
            ["STEPWISE_PROVIDER"],
            "which key is sent where waits for trust"
        );
    }

    #[test]
    fn the_environment_wins_and_a_missing_file_is_empty() {
        let env = read("STEPWISE_PYTHON=/tmp/x\n", &["STEPWISE_PYTHON"]);
        assert_eq!(env.guarded().count(), 0);
        let none = DotEnv::read(Path::new("/nonexistent/.env")).unwrap();
        assert!(none.path.is_none() && none.open().count() == 0);
    }
}
