//! `GET /models` for both wire APIs: OpenAI's `{"data":[{"id":...}]}` and
//! Anthropic's, which has the same `data[].id` shape (plus paging fields).
//!
//! What must stay true: the names come back sorted and de-duplicated; an
//! error status is the same `LlmError` a chat request would give (with the
//! provider's key variable in a 401's hint); names are the server's text,
//! so whoever prints them sanitizes them.

use super::LlmError;
use super::transport::{error_chain, response_error};
use serde_json::Value;
use std::time::Duration;

/// Most names kept from one answer.
const MAX_MODELS: usize = 10_000;

/// Send a prepared `GET` and read the model names of its answer.
pub async fn fetch(
    request: reqwest::RequestBuilder,
    idle_timeout: Duration,
    key_var: &str,
) -> Result<Vec<String>, LlmError> {
    let response = tokio::time::timeout(idle_timeout, request.send())
        .await
        .map_err(|_| LlmError::IdleTimeout(idle_timeout.as_secs()))?
        .map_err(|e| LlmError::Connect {
            url: e.url().map(|u| u.to_string()).unwrap_or_default(),
            detail: error_chain(&e),
        })?;
    if !response.status().is_success() {
        return Err(response_error(response, idle_timeout, key_var).await);
    }
    let mut response = response;
    let mut body = Vec::new();
    loop {
        let chunk = tokio::time::timeout(idle_timeout, response.chunk())
            .await
            .map_err(|_| LlmError::IdleTimeout(idle_timeout.as_secs()))?
            .map_err(|e| LlmError::Stream(error_chain(&e)))?;
        let Some(chunk) = chunk else { break };
        if body.len() + chunk.len() > MAX_LIST_BYTES {
            return Err(LlmError::Decode(format!(
                "the model list is larger than {} MiB",
                MAX_LIST_BYTES / 1024 / 1024
            )));
        }
        body.extend_from_slice(&chunk);
    }
    names(&String::from_utf8_lossy(&body))
}

/// Largest model list read (a server could otherwise send without end).
const MAX_LIST_BYTES: usize = 8 * 1024 * 1024;

/// The sorted, unique `data[].id` of a models answer.
pub fn names(body: &str) -> Result<Vec<String>, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| LlmError::Decode(format!("{e} in the model list")))?;
    let data = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode("the model list has no data array".into()))?;
    let mut names: Vec<String> = data
        .iter()
        .filter_map(|m| m.get("id").and_then(Value::as_str))
        .take(MAX_MODELS)
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_back_sorted_and_unique() {
        let body = r#"{"object":"list","data":[{"id":"b"},{"id":"a","created":1},{"id":"b"},{"x":1}],"has_more":false}"#;
        assert_eq!(names(body).unwrap(), ["a", "b"]);
        assert!(names(r#"{"models":[]}"#).is_err());
        assert!(names("<html>").is_err());
    }
}
