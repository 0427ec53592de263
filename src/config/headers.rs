//! The `[headers]` table: extra request headers (name → value) sent with
//! every model request, for proxies and gateways that want their own.
//!
//! What must stay true: every name and value is a valid HTTP header (no
//! control characters, so no header can be smuggled into another); the
//! headers that carry or frame the key (`Authorization`, `x-api-key`,
//! `api-key`, `Proxy-Authorization`) and those the client must own (`Host`,
//! `Content-Length`, `Content-Type`, `Transfer-Encoding`) cannot be set here;
//! a value that looks secret never shows in `--print-config` ([`shown`]) and
//! the client hides it from all output like the key ([`looks_secret`]).

use reqwest::header::{HeaderName, HeaderValue};

/// Headers `[headers]` may not set (lowercase).
const REFUSED: [&str; 8] = [
    "authorization",
    "x-api-key",
    "api-key",
    "proxy-authorization",
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
];

/// Words of header names whose values are secrets.
const SECRET_WORDS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "auth",
    "password",
    "cookie",
    "session",
    "signature",
];

/// A value at least this long without spaces looks like a token, whatever its name.
const TOKEN_CHARS: usize = 20;

/// Most headers one table may hold.
const MAX_HEADERS: usize = 32;

/// Read `[headers]`: a table of strings with valid, allowed names.
pub fn read(value: &toml::Value) -> Result<Vec<(String, String)>, String> {
    let Some(table) = value.as_table() else {
        return Err("is not a table of header names and values".into());
    };
    if table.len() > MAX_HEADERS {
        return Err(format!("has more than {MAX_HEADERS} headers"));
    }
    let mut out = Vec::new();
    for (name, value) in table {
        let Some(text) = value.as_str() else {
            return Err(format!("has {name} set to a value that is not a string"));
        };
        let lower = name.to_ascii_lowercase();
        if REFUSED.contains(&lower.as_str()) {
            return Err(format!(
                "may not set {name} (stepwise sets it, or it would carry a key: the key comes only from the provider's variable)"
            ));
        }
        if HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!("has a bad header name {name:?}"));
        }
        if HeaderValue::from_str(text).is_err() {
            return Err(format!(
                "has a bad value for {name} (no control characters or line breaks)"
            ));
        }
        out.push((lower, text.to_string()));
    }
    Ok(out)
}

/// Whether a header's value should be treated like a key: its name says so,
/// or the value looks like a token.
pub fn looks_secret(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
        || (value.len() >= TOKEN_CHARS && !value.contains(char::is_whitespace))
}

/// The `--print-config` text of the headers: names, and values unless secret.
pub fn shown(headers: &[(String, String)]) -> String {
    if headers.is_empty() {
        return "none".into();
    }
    let parts: Vec<_> = headers
        .iter()
        .map(|(name, value)| {
            if looks_secret(name, value) {
                format!("{name} = <hidden>")
            } else {
                format!("{name} = {value:?}")
            }
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        toml::Value::Table(toml::from_str(text).unwrap())
    }

    #[test]
    fn names_and_values_are_checked_and_key_headers_refused() {
        let ok = read(&table(
            "X-Gateway = \"team-a\"\n\"HTTP-Referer\" = \"https://x\"\n",
        ));
        assert_eq!(
            ok.unwrap(),
            [
                ("http-referer".to_string(), "https://x".to_string()),
                ("x-gateway".to_string(), "team-a".to_string())
            ]
        );
        for bad in [
            "Authorization = \"Bearer x\"",
            "x-api-key = \"k\"",
            "\"X-API-KEY\" = \"k\"",
            "Host = \"evil\"",
            "\"bad name\" = \"v\"",
            "X-A = \"line\\r\\nX-Injected: 1\"",
            "X-A = 5",
        ] {
            assert!(read(&table(bad)).is_err(), "{bad}");
        }
        assert!(read(&toml::Value::String("x".into())).is_err());
    }

    #[test]
    fn secret_looking_values_are_hidden_from_print_config() {
        let headers = vec![
            ("x-gateway".to_string(), "team-a".to_string()),
            ("x-portkey-token".to_string(), "pk".to_string()),
            ("x-route".to_string(), "abcdefghij0123456789xyz".to_string()),
        ];
        assert_eq!(
            shown(&headers),
            "x-gateway = \"team-a\", x-portkey-token = <hidden>, x-route = <hidden>"
        );
        assert_eq!(shown(&[]), "none");
    }
}
