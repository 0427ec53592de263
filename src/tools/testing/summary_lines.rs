//! What every runner's summary reader shares: the parsed summary, the
//! conflict that makes a run fail, and the rule that a runner prints one
//! summary (a repeated identical line is still one; two that disagree are a
//! conflict).

/// What the runner's summary says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The summary as shown, built from the counts: `5 passed`, `5 tests OK`.
    pub line: String,
    /// Tests that passed (for go: packages that passed).
    pub passed: u64,
    /// Tests (or packages) that failed or errored.
    pub failed: u64,
    /// Tests that were skipped (they did not run).
    pub skipped: u64,
    /// The summary's own verdict.
    pub ok: bool,
}

/// Why a run's summaries cannot be believed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict(pub String);

/// The number just before one of `words` in `text` (`3 passed` → 3), summed.
pub fn count_before(text: &str, words: &[&str]) -> u64 {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|t| !t.is_empty())
        .collect();
    tokens
        .windows(2)
        .filter(|w| words.contains(&w[1]))
        .filter_map(|w| w[0].parse::<u64>().ok())
        .sum()
}

/// The one summary a runner prints, from the summaries found: none, all the
/// same (a repeated line), or a conflict naming them.
pub fn one_summary(found: Vec<Parsed>, runner: &str) -> Result<Option<Parsed>, Conflict> {
    let Some(last) = found.last().cloned() else {
        return Ok(None);
    };
    if found.iter().any(|p| p != &last) {
        let lines: Vec<&str> = found.iter().map(|p| p.line.as_str()).collect();
        return Err(Conflict(format!(
            "{runner} printed {} summaries that disagree ({})",
            found.len(),
            lines.join(" / ")
        )));
    }
    Ok(Some(last))
}

/// `N word` pairs separated by `sep` (`2 failed, 3 passed`), each word one
/// of `known`; `None` when any part is not such a pair.
pub fn counted_parts<'a>(text: &'a str, sep: &str, known: &[&str]) -> Option<Vec<(u64, &'a str)>> {
    let mut parts = Vec::new();
    for part in text.split(sep) {
        let part = part.trim();
        let (n, word) = part.split_once(' ')?;
        let n = n.parse::<u64>().ok()?;
        let word = word.trim();
        if !known.contains(&word) {
            return None;
        }
        parts.push((n, word));
    }
    (!parts.is_empty()).then_some(parts)
}

/// The sum of the counts of `words` among `parts`.
pub fn sum_of(parts: &[(u64, &str)], words: &[&str]) -> u64 {
    parts
        .iter()
        .filter(|(_, w)| words.contains(w))
        .map(|(n, _)| n)
        .sum()
}
