//! Scrubbing secrets from text that leaves stepwise: the exact values of the
//! secrets it holds (the API key, registered by the client that sends it)
//! and the credential patterns of [`redact`](super::redact). Whatever prints,
//! logs, writes the transcript or sends text to the model calls [`text`] or
//! [`json`]: server error bodies (the model client), tool results and test
//! output (the session, before the event and the model see them), the
//! transcript (`audit`) and `exec`'s output.
//!
//! A value is registered with its common encodings too: a test that prints
//! `base64(token)` or its hex would otherwise carry it past the scrub to the
//! model. Base64 is registered at each of the three byte alignments (a
//! secret inside a longer encoded text), standard and URL-safe, without the
//! characters that depend on its neighbours.
//!
//! What must stay true: a registered value never survives [`text`], wherever
//! it sits in the string (also inside a word or a URL), nor its hex or
//! base64 on one line; scrubbing is
//! idempotent; values too short to be secret are not registered (hiding
//! every `x` would destroy the text and protect nothing).

use super::redact::{MARKER, redact};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::RwLock;

/// Shortest value worth hiding.
pub const MIN_SECRET_CHARS: usize = 6;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Shortest encoded form worth hiding (shorter runs of base64 letters
/// occur in ordinary text).
const MIN_ENCODED_CHARS: usize = 8;

/// The forms of `secret` a program may print it in: itself, hex (both
/// cases), and the parts of base64 (standard and URL-safe) that it alone
/// decides at each byte alignment.
fn forms(secret: &str) -> Vec<String> {
    use base64::Engine;
    let bytes = secret.as_bytes();
    let mut out = vec![
        secret.to_string(),
        hex::encode(bytes),
        hex::encode_upper(bytes),
    ];
    for engine in [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ] {
        // Encoded alone, as `base64(token)` prints it, padding and all.
        out.push(engine.encode(bytes));
        for offset in 0..3usize {
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(bytes);
            let encoded = engine.encode(&shifted);
            // The leading characters mix in the bytes before it; past the
            // last whole group of three, the bytes after it.
            let skip = [0, 2, 3][offset];
            let whole = shifted.len() / 3 * 4;
            if let Some(core) = encoded.get(skip..whole) {
                out.push(core.to_string());
            }
        }
    }
    out.retain(|f| f == secret || f.len() >= MIN_ENCODED_CHARS);
    out.sort();
    out.dedup();
    out
}

/// Hide this value (and its encodings) from everything scrubbed from now on.
pub fn hide(secret: &str) {
    let secret = secret.trim();
    if secret.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    if let Ok(mut secrets) = SECRETS.write()
        && !secrets.iter().any(|s| s == secret)
    {
        for form in forms(secret) {
            if !secrets.contains(&form) {
                secrets.push(form);
            }
        }
        // Longest first, so a key containing another is hidden whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Hide the credentials a workspace's `.git/config` (its `text`) holds: an
/// `http.extraheader` (a CI checkout's token) and the password of a remote
/// URL. A test's output can print them (`git config -l`); from now on they
/// are scrubbed like the key. (`setup` reads the file.)
pub fn hide_git_credentials(text: &str) {
    for line in text.lines() {
        let line = line.trim();
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "extraheader" {
            hide(value);
            // `AUTHORIZATION: basic TOKEN`: the token alone too.
            if let Some(token) = value.split_whitespace().last() {
                hide(token);
            }
        }
        if let Some((_, rest)) = value.split_once("://")
            && let Some((userinfo, _)) = rest.split_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
        {
            hide(password);
        }
    }
}

/// `text` without registered secrets and credential-looking values.
pub fn text(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    if let Ok(secrets) = SECRETS.read() {
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MARKER));
            }
        }
    }
    let redacted = redact(&out);
    if redacted.hidden.is_empty() {
        out
    } else {
        Cow::Owned(redacted.text)
    }
}

/// Scrub a string in place.
pub fn string(value: &mut String) {
    if let Cow::Owned(clean) = text(value) {
        *value = clean;
    }
}

/// Scrub every string of a JSON value (object keys included).
pub fn json(value: &mut Value) {
    match value {
        Value::String(s) => string(s),
        Value::Array(items) => items.iter_mut().for_each(json),
        Value::Object(map) => {
            let dirty = map.keys().any(|k| matches!(text(k), Cow::Owned(_)));
            if dirty {
                let entries = std::mem::take(map);
                for (k, v) in entries {
                    map.insert(text(&k).into_owned(), v);
                }
            }
            map.values_mut().for_each(json);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_token_in_git_config_is_hidden_from_then_on() {
        hide_git_credentials(
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic Q0ktdG9rZW4tdW5pdC0xMjM0\n[remote \"origin\"]\n\turl = https://ci:pw-unit-77aa@git.example/repo.git\n",
        );
        let shown = text("token Q0ktdG9rZW4tdW5pdC0xMjM0 and pw-unit-77aa in a test's output");
        assert!(
            !shown.contains("Q0ktdG9rZW4tdW5pdC0xMjM0") && !shown.contains("pw-unit-77aa"),
            "{shown}"
        );
    }

    #[test]
    fn a_key_printed_in_base64_or_hex_is_hidden_too() {
        use base64::Engine;
        let key = "sk-scrub-enc-5b7d1e9a";
        hide(key);
        let b64 = base64::engine::general_purpose::STANDARD;
        for prefix in ["", "x", "xy", "token=", "Authorization: Bearer "] {
            let encoded = b64.encode(format!("{prefix}{key}\n"));
            let shown = text(&encoded).into_owned();
            assert!(shown.contains(MARKER), "{prefix:?}: {encoded} -> {shown}");
            // Nothing that decodes back to the key is left.
            let core = forms(key)
                .into_iter()
                .filter(|f| f != key)
                .any(|f| shown.contains(&f));
            assert!(!core, "{shown}");
        }
        let url_safe = base64::engine::general_purpose::URL_SAFE.encode(key);
        assert!(text(&url_safe).contains(MARKER));
        assert!(text(&hex::encode(key)).contains(MARKER));
        assert!(text(&hex::encode_upper(key)).contains(MARKER));
        // Ordinary text is left alone.
        assert_eq!(
            text("plain words, nothing encoded"),
            "plain words, nothing encoded"
        );
    }

    #[test]
    fn a_registered_key_is_hidden_wherever_it_sits_and_short_values_are_not_registered() {
        hide("sk-scrub-unit-0f3c9e1d");
        hide("abc");
        let leaked = "Bearer sk-scrub-unit-0f3c9e1d; url=http://h/?k=sk-scrub-unit-0f3c9e1dX abc";
        let clean = text(leaked);
        assert!(!clean.contains("sk-scrub-unit-0f3c9e1d"), "{clean}");
        assert_eq!(clean.matches(MARKER).count(), 2, "{clean}");
        assert!(clean.ends_with(" abc"), "{clean}");
        assert_eq!(text(&clean), clean, "idempotent");
        assert!(matches!(text("nothing here"), Cow::Borrowed(_)));
        let mut v =
            serde_json::json!({"output": ["DB_PASSWORD=hunter2", {"sk-scrub-unit-0f3c9e1d": 1}]});
        json(&mut v);
        let shown = v.to_string();
        assert!(
            !shown.contains("hunter2") && !shown.contains("sk-scrub-unit"),
            "{shown}"
        );
    }
}
