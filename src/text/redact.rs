//! Credential redaction for `read_file`: values of `.env`-style lines whose
//! name looks like a credential's (KEY, TOKEN, SECRET, PASSWORD, PASSWD,
//! PASSPHRASE, CREDENTIAL, or a part PASS, PWD, PW: `NAME=value`,
//! `NAME = "value"`, `"name": "value"`, `export NAME=value`, `name: value`),
//! quoted values of such names anywhere in a line (`{'PASSWORD': 'pw'}`), the
//! bodies of `-----BEGIN ... PRIVATE KEY-----` blocks (also inside a JSON
//! string, as in a service-account file), the password of a URL
//! (`postgres://app:pw@db`), the credentials of an `Authorization` header or
//! a bearer token, and tokens of well-known formats in any text (`ghp_…`,
//! `github_pat_…`, `sk-…`, `glpat-…`, `xoxb-…`, `AIza…`, `AKIA…`) are
//! replaced by [`MARKER`] before the text reaches the model. The hidden byte ranges are also what the edit
//! paths (`replace_text`, `apply_patch`) use to refuse any edit touching a
//! value the model could not see ([`touches`]).

use regex::Regex;
use std::ops::Range;
use std::sync::OnceLock;

/// What the model sees in place of a hidden value.
pub const MARKER: &str = "[redacted by stepwise]";

/// Words that make a name look like a credential's, anywhere in it.
const SECRET_WORDS: [&str; 7] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
];
/// Parts of a name (between `_`, `-` and `.`) that make it a credential's.
const SECRET_PARTS: [&str; 3] = ["PASS", "PWD", "PW"];

/// Whether a name looks like a credential's.
fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
        || upper
            .split(['_', '-', '.'])
            .any(|part| SECRET_PARTS.contains(&part))
}

/// Whether a name in the middle of a line looks like a credential's: by its
/// parts, so `key='name'` (a sort key) and `tokenizer` are not, while
/// `api_key`, `PASSWORD` and `client_secret` are.
fn secret_name_in_line(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let parts: Vec<&str> = upper
        .split(['_', '-', '.'])
        .filter(|p| !p.is_empty())
        .collect();
    let strong = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
    ];
    parts
        .iter()
        .any(|p| strong.contains(p) || SECRET_PARTS.contains(p))
        || (parts.len() > 1 && parts.iter().any(|p| *p == "KEY" || *p == "APIKEY"))
        || upper == "APIKEY"
}

/// Secrets found by their shape anywhere in a line: the capture group
/// `secret` is hidden.
fn shapes() -> &'static Regex {
    static SHAPES: OnceLock<Regex> = OnceLock::new();
    SHAPES.get_or_init(|| {
        let patterns = [
            // Tokens of well-known formats.
            r"\b(?P<secret>gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16}|[rs]k_live_[0-9A-Za-z]{16,})",
            // The password of a URL's user info.
            r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@",
            // An Authorization header's credentials, and bearer tokens.
            r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*(?:bearer|basic|token|digest)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
            r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*)",
        ];
        let joined = patterns
            .iter()
            .map(|p| format!("(?:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        // Capture names repeat across alternatives: number them instead.
        let numbered = number_groups(&joined);
        Regex::new(&numbered).unwrap_or_else(|_| never())
    })
}

/// Quoted values of credential-like names anywhere in a line.
fn quoted_pairs() -> &'static Regex {
    static PAIRS: OnceLock<Regex> = OnceLock::new();
    PAIRS.get_or_init(|| {
        let pattern =
            r#"["']?(?P<name>[A-Za-z0-9_.-]+)["']?\s*[:=]\s*(?:"(?P<dq>(?:[^"\\]|\\.)+)"|'(?P<sq>(?:[^'\\]|\\.)+)')"#;
        Regex::new(pattern).unwrap_or_else(|_| never())
    })
}

/// A regex that matches nothing (the patterns above are fixed and tested).
fn never() -> Regex {
    #[allow(clippy::unwrap_used)]
    Regex::new(r"[^\s\S]").unwrap()
}

/// `(?P<secret>` groups renamed `secret0`, `secret1`, … (a regex may not
/// repeat a name).
fn number_groups(pattern: &str) -> String {
    let mut out = String::new();
    for (i, part) in pattern.split("(?P<secret>").enumerate() {
        if i > 0 {
            out.push_str(&format!("(?P<secret{}>", i - 1));
        }
        out.push_str(part);
    }
    out
}

/// Byte ranges (within `line`) of secrets found by their shape or as quoted
/// values of credential-like names.
fn shaped_secrets(line: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for caps in shapes().captures_iter(line) {
        for group in caps.iter().skip(1).flatten() {
            // A token right before `(` is a call (`headers.get(`), not a secret.
            if line[group.end()..].starts_with('(') {
                continue;
            }
            out.push(group.start()..group.end());
        }
    }
    for caps in quoted_pairs().captures_iter(line) {
        let named = caps
            .name("name")
            .is_some_and(|n| secret_name_in_line(n.as_str()));
        if let (true, Some(value)) = (named, caps.name("dq").or_else(|| caps.name("sq"))) {
            out.push(value.start()..value.end());
        }
    }
    // A PEM block inside one line (a JSON string with `\n` escapes).
    if let Some(begin) = line.find("-----BEGIN ")
        && let Some(header_end) = line[begin..].find("PRIVATE KEY-----")
    {
        let body = begin + header_end + "PRIVATE KEY-----".len();
        let end = line[body..]
            .find("-----END ")
            .map_or(line.len(), |e| body + e);
        if end > body {
            out.push(body..end);
        }
    }
    out
}

/// Sorted, with overlapping and touching ranges merged.
fn merged(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// A text with its credential-like values hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The text as the model may see it.
    pub text: String,
    /// Byte ranges of the hidden values in the original text, in order.
    pub hidden: Vec<Range<usize>>,
}

/// Hide credential-like values of `text`.
pub fn redact(text: &str) -> Redacted {
    let hidden = hidden_ranges(text);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in &hidden {
        out.push_str(&text[at..range.start]);
        out.push_str(MARKER);
        if text[range.clone()].ends_with('\n') {
            out.push('\n'); // a key block's body keeps its own line
        }
        at = range.end;
    }
    out.push_str(&text[at..]);
    Redacted { text: out, hidden }
}

/// `text[range]` with every hidden value that reaches into it shown as the
/// marker, and how many there were.
pub fn redact_range(
    text: &str,
    hidden: &[std::ops::Range<usize>],
    range: std::ops::Range<usize>,
) -> (String, usize) {
    let mut out = String::with_capacity(range.len());
    let mut at = range.start;
    let mut count = 0;
    for h in hidden
        .iter()
        .filter(|h| h.start < range.end && range.start < h.end)
    {
        let (from, to) = (h.start.max(range.start), h.end.min(range.end));
        out.push_str(&text[at..from]);
        out.push_str(MARKER);
        if text[from..to].ends_with('\n') {
            out.push('\n'); // a key block's body keeps its own line
        }
        at = to;
        count += 1;
    }
    out.push_str(&text[at..range.end]);
    (out, count)
}

/// Whether editing the bytes in `span` (empty: an insertion point) touches a
/// hidden value: overlaps it or borders it, since `KEY=` followed by an
/// insertion changes the value too. Every edit path refuses such an edit.
pub fn touches(hidden: &[Range<usize>], span: &Range<usize>) -> bool {
    hidden
        .iter()
        .any(|h| span.start <= h.end && h.start <= span.end)
}

/// Lines with their byte offsets; each line excludes its `\n` (and a `\r` before it).
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |raw| {
        let at = start;
        start += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        (at, line.strip_suffix('\r').unwrap_or(line))
    })
}

fn hidden_ranges(text: &str) -> Vec<Range<usize>> {
    let mut hidden = Vec::new();
    let mut block_start: Option<usize> = None;
    for (at, line) in lines_with_offsets(text) {
        if let Some(start) = block_start {
            if line.contains("-----END ") && line.contains("PRIVATE KEY-----") {
                if at > start {
                    hidden.push(start..at);
                }
                block_start = None;
            }
            continue;
        }
        let mut in_line: Vec<Range<usize>> = shaped_secrets(line)
            .into_iter()
            .map(|r| at + r.start..at + r.end)
            .collect();
        if let Some(value) = secret_value(line) {
            in_line.push(at + value.start..at + value.end);
        }
        let one_line_block = line.contains("-----BEGIN ")
            && line.contains("PRIVATE KEY-----")
            && (line.contains("-----END ") || line.contains("\\n"));
        if one_line_block || (!in_line.is_empty() && !line.trim_start().starts_with("-----BEGIN "))
        {
            hidden.extend(merged(in_line));
            continue;
        }
        if line.contains("-----BEGIN ") && line.contains("PRIVATE KEY-----") {
            // The body starts after this line's line break.
            let end = at + line.len();
            let body = text[end..].find('\n').map_or(text.len(), |n| end + n + 1);
            block_start = Some(body);
            continue;
        }
    }
    if let Some(start) = block_start.filter(|&s| s < text.len()) {
        // An unterminated key block: hide everything after its header.
        hidden.push(start..text.len());
    }
    hidden
}

/// The byte range (within `line`) of the value of a credential-like assignment.
fn secret_value(line: &str) -> Option<Range<usize>> {
    let body = line.trim_start();
    let mut at = line.len() - body.len();
    let mut rest = body;
    if let Some(after) = rest.strip_prefix("export ") {
        let trimmed = after.trim_start();
        at += rest.len() - trimmed.len();
        rest = trimmed;
    }
    let (name, after_name) = split_name(rest)?;
    if !secret_name(name) {
        return None;
    }
    at += rest.len() - after_name.len();
    let sep = after_name.trim_start();
    at += after_name.len() - sep.len();
    let op = sep.chars().next()?;
    if !(op == '=' || op == ':') || sep[1..].starts_with(['=', ':']) {
        return None; // `==`, `:=`, `::` are not assignments of a literal
    }
    let value = sep[1..].trim_start();
    at += sep.len() - value.len();
    let value = value.trim_end().trim_end_matches([',', ';']).trim_end();
    let range = literal(value)?;
    Some(at + range.start..at + range.end)
}

/// A leading name: quoted (`"api_key"`) or bare (`API_KEY`, `db.password`).
fn split_name(s: &str) -> Option<(&str, &str)> {
    if let Some(q) = s.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = s[1..].find(q)? + 1;
        return Some((&s[1..end], &s[end + 1..]));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .unwrap_or(s.len());
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// The part of a value to hide: the inside of a quoted string, or a bare token
/// that is not code (a call, a reference, a collection) nor a keyword.
fn literal(value: &str) -> Option<Range<usize>> {
    let first = value.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let end = value[1..].find(first)? + 1;
        return (end > 1).then_some(1..end);
    }
    // A bare value ends at a ` #` comment.
    let value = value.split(" #").next().unwrap_or(value).trim_end();
    let code_like = value.contains(char::is_whitespace)
        || value.contains(['(', '[', '{', '$'])
        || matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "none" | "null" | "nil" | "undefined"
        );
    (!code_like).then_some(0..value.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        redact(text).text
    }

    #[test]
    fn env_style_assignments_are_hidden() {
        let m = MARKER;
        assert_eq!(shown("API_KEY=sk-123\n"), format!("API_KEY={m}\n"));
        assert_eq!(
            shown("export GITHUB_TOKEN=ghp_x\n"),
            format!("export GITHUB_TOKEN={m}\n")
        );
        assert_eq!(
            shown("db_password = \"hunter2\"\n"),
            format!("db_password = \"{m}\"\n")
        );
        assert_eq!(
            shown("  \"client_secret\": \"abc\",\n"),
            format!("  \"client_secret\": \"{m}\",\n")
        );
        assert_eq!(shown("Secret: xyz\r\n"), format!("Secret: {m}\r\n"));
        assert_eq!(shown("KEY=v"), format!("KEY={m}"));
        assert_eq!(
            shown("password: hunter2 # dev only\n"),
            format!("password: {m} # dev only\n")
        );
    }

    #[test]
    fn secrets_found_by_their_shape_and_in_any_place_of_a_line_are_hidden() {
        let m = MARKER;
        for (text, secret) in [
            ("DB_PASS=hunter2x\n", "hunter2x"),
            (
                "DATABASES = {'default': {'USER': 'app', 'PASSWORD': 'pw-django'}}\n",
                "pw-django",
            ),
            (
                "see ghp_abcdefghijklmnopqrstuvwxyz0123456789 in the issue\n",
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            ),
            (
                "DATABASE_URL: postgres://app:s3cr3tpw@db:5432/app\n",
                "s3cr3tpw",
            ),
            (
                "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc' https://x\n",
                "eyJhbGciOiJIUzI1NiJ9.abc",
            ),
            (
                "\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz\n",
                "eC1hY2Nlc3MtdG9rZW46Z2hz",
            ),
            (
                "key sk-proj-abcdefghijklmnopqrstuvwx leaked\n",
                "sk-proj-abcdefghijklmnopqrstuvwx",
            ),
        ] {
            let out = shown(text);
            assert!(!out.contains(secret), "{text:?} -> {out:?}");
            assert!(out.contains(m), "{out}");
        }
        let gcp = r#"{"type": "service_account", "private_key_id": "abc123def", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0B\n-----END PRIVATE KEY-----\n", "client_email": "x@y.iam.gserviceaccount.com"}"#;
        let out = shown(gcp);
        assert!(
            !out.contains("MIIEvQIBADANBg") && !out.contains("kqhkiG9w0B"),
            "{out}"
        );
        assert!(out.contains("client_email"), "the rest stays: {out}");
        let multi = "{\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIB\\n-----END PRIVATE KEY-----\\n\",\n  \"x\": 1\n}\n";
        let out = shown(multi);
        assert!(
            !out.contains("MIIEvQIB") && out.contains("\"x\": 1"),
            "{out}"
        );
        // What is hidden is exactly what the ranges say, in the original.
        let text = "a: postgres://u:pw12345@h/db and ghp_abcdefghijklmnopqrstuvwxyz01\n";
        let r = redact(text);
        let hidden: Vec<&str> = r.hidden.iter().map(|h| &text[h.clone()]).collect();
        assert_eq!(hidden, ["pw12345", "ghp_abcdefghijklmnopqrstuvwxyz01"]);
    }

    #[test]
    fn code_and_harmless_lines_are_kept() {
        for line in [
            "if API_KEY == other:",
            "TOKEN = os.environ[\"TOKEN\"]",
            "SECRET_KEY = get_secret()",
            "PASSWORD = None",
            "token = \"\"",
            "use_key: true",
            "NAME=stepwise",
            "keyring.get(x)",
            "assert parse(\"API_KEY=abc\")",
            "api_key = ${API_KEY}",
            "TOKEN := 3",
            "BYPASS=1",
            "TESTS_PASSED=3",
            "url = https://example.org/path@v2",
            "see https://github.com/user/repo",
            "task: skip the flaky test",
            "def f(authorization: str = Header(None)):",
            "    authorization = request.headers.get(\"Authorization\")",
            "# uses Bearer authentication here",
            "xs = sorted(xs, key='name')",
            "<li key=\"row\">",
        ] {
            assert_eq!(shown(line), line, "{line}");
        }
    }

    #[test]
    fn an_edit_touches_a_hidden_value_it_overlaps_or_borders() {
        let hidden = vec![Range { start: 4, end: 7 }];
        assert!(touches(&hidden, &(5..6)));
        assert!(touches(&hidden, &(0..4)), "ends where the value starts");
        assert!(touches(&hidden, &(7..7)), "inserts right after it");
        assert!(!touches(&hidden, &(0..3)));
        assert!(!touches(&hidden, &(8..9)));
        assert!(!touches(&[], &(0..9)));
    }

    #[test]
    fn private_key_bodies_are_hidden_and_ranges_point_into_the_original() {
        let text = "a = 1\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabcd\n-----END RSA PRIVATE KEY-----\nb = 2\n";
        let r = redact(text);
        assert_eq!(
            r.text,
            format!(
                "a = 1\n-----BEGIN RSA PRIVATE KEY-----\n{MARKER}\n-----END RSA PRIVATE KEY-----\nb = 2\n"
            )
        );
        assert_eq!(r.hidden.len(), 1);
        assert_eq!(&text[r.hidden[0].clone()], "MIIE\nabcd\n");
        let open = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n";
        let r = redact(open);
        assert_eq!(&open[r.hidden[0].clone()], "AAAA\n", "unterminated block");
        let r = redact("PASSWORD=pw\nx=1\n");
        assert_eq!(&"PASSWORD=pw\nx=1\n"[r.hidden[0].clone()], "pw");
    }
}
