//! Keeping the conversation inside the model's context window: estimate the
//! size of the next request, and when it passes the budget replace older tool
//! results by short stubs (`[read_file calculator.py: 1,204 bytes, elided]`),
//! keeping the system prompt, user messages, the latest turns and the latest
//! read of every file still relevant.

use crate::llm::{ChatMessage, Role};
use crate::text::numbers::thousands;
use crate::tools::Registry;
use crate::tools::calls::registry::ContextRole;
use serde_json::Value;
use std::collections::HashSet;

/// Messages at the end of the history that are never elided.
pub const KEEP_RECENT: usize = 4;

/// Rough token count of messages: about four bytes of JSON a token.
pub fn estimate_tokens(messages: &[ChatMessage]) -> u64 {
    messages
        .iter()
        .map(|m| serde_json::to_string(m).map_or(0, |s| s.len() as u64) / 4 + 4)
        .sum()
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compaction {
    pub before_tokens: u64,
    pub after_tokens: u64,
    pub elided: usize,
}

/// A tool result in the history: where it is and what it was about.
struct ToolResult {
    index: usize,
    tool: String,
    path: Option<String>,
    bytes: usize,
}

/// Elide tool results, least useful first, until the estimate is at most
/// `limit` (or everything elidable is elided, when `limit` is 0).
pub fn compact(history: &mut [ChatMessage], limit: u64, tools: &Registry) -> Compaction {
    let before = estimate_tokens(history);
    let mut result = Compaction {
        before_tokens: before,
        after_tokens: before,
        elided: 0,
    };
    let protected_from = history.len().saturating_sub(KEEP_RECENT);
    let results: Vec<ToolResult> = (0..protected_from)
        .filter_map(|i| describe(history, i))
        .collect();
    // The latest read of each file is still relevant; older reads are stale,
    // and so is any read followed by an edit of that file.
    let mut latest_read = HashSet::new();
    let mut order: Vec<(u8, usize)> = Vec::new();
    for (pos, r) in results.iter().enumerate().rev() {
        let rank = match (&r.path, tools.context_role(&r.tool)) {
            (Some(path), ContextRole::ReadsFile) => {
                if latest_read.insert(path.clone()) && !edited_after(&results, pos, path, tools) {
                    2
                } else {
                    0
                }
            }
            _ => 1,
        };
        order.push((rank, r.index));
    }
    // Stale reads first, then other results, then latest reads; oldest first within a rank.
    order.sort_by_key(|&(rank, index)| (rank, index));
    for (_, index) in order {
        if limit > 0 && result.after_tokens <= limit {
            break;
        }
        if let Some(r) = results.iter().find(|r| r.index == index) {
            let stub = stub(r);
            let old = estimate_tokens(&history[index..=index]);
            history[index].content = Some(stub);
            let new = estimate_tokens(&history[index..=index]);
            result.after_tokens = result.after_tokens.saturating_sub(old.saturating_sub(new));
            result.elided += 1;
        }
    }
    result
}

fn edited_after(results: &[ToolResult], pos: usize, path: &str, tools: &Registry) -> bool {
    results[pos + 1..].iter().any(|r| {
        tools.context_role(&r.tool) == ContextRole::EditsFile && r.path.as_deref() == Some(path)
    })
}

fn stub(r: &ToolResult) -> String {
    let bytes = thousands(r.bytes);
    match &r.path {
        Some(path) => format!("[{} {path}: {bytes} bytes, elided]", r.tool),
        None => format!("[{}: {bytes} bytes, elided]", r.tool),
    }
}

/// A not-yet-elided tool result at `index`, with its tool name and path.
fn describe(history: &[ChatMessage], index: usize) -> Option<ToolResult> {
    let message = &history[index];
    let content = message.content.as_deref()?;
    if content.starts_with('[') && content.ends_with("elided]") {
        return None;
    }
    let (tool, body) = match (message.role, &message.tool_call_id) {
        (Role::Tool, Some(id)) => (tool_of_call(history, index, id)?, content),
        (Role::User, None) => {
            let rest = content.strip_prefix("Tool result for ")?;
            let (tool, body) = rest.split_once(": ")?;
            (tool.to_string(), body)
        }
        _ => return None,
    };
    let path = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("path").and_then(Value::as_str).map(str::to_string));
    Some(ToolResult {
        index,
        tool,
        path,
        bytes: body.len(),
    })
}

fn tool_of_call(history: &[ChatMessage], before: usize, id: &str) -> Option<String> {
    history[..before].iter().rev().find_map(|m| {
        m.tool_calls
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.function.name.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCallMsg;

    fn read(id: &str, path: &str, size: usize) -> Vec<ChatMessage> {
        vec![
            ChatMessage::assistant_tool_calls(
                "",
                vec![ToolCallMsg::new(
                    id,
                    "read_file",
                    format!("{{\"path\":\"{path}\"}}"),
                )],
            ),
            ChatMessage::tool_result(
                id,
                serde_json::json!({"success": true, "path": path, "content": "x".repeat(size)})
                    .to_string(),
            ),
        ]
    }

    fn history() -> Vec<ChatMessage> {
        let mut h = vec![ChatMessage::system("sys"), ChatMessage::user("task")];
        h.extend(read("a1", "a.py", 4000)); // stale: read again below
        h.extend(read("b1", "b.py", 4000)); // latest read of b.py
        h.extend(read("a2", "a.py", 4000)); // latest read of a.py
        h.extend(read("c1", "c.py", 100));
        h.extend(read("c2", "c.py", 100)); // recent, protected
        h
    }

    #[test]
    fn stale_reads_go_first_and_stubs_name_tool_path_and_size() {
        let mut h = history();
        let before = estimate_tokens(&h);
        let done = compact(&mut h, before - 500, &Registry::default());
        assert_eq!(done.elided, 1);
        let stubbed = h[3].content.as_deref().unwrap();
        assert!(
            stubbed.starts_with("[read_file a.py: 4,0") && stubbed.ends_with(" bytes, elided]"),
            "{stubbed}"
        );
        assert!(
            h[5].content.as_deref().unwrap().contains("xxxx"),
            "latest read of b.py kept"
        );
        assert!(done.after_tokens < done.before_tokens);
        assert_eq!(done.after_tokens, estimate_tokens(&h));
    }

    #[test]
    fn everything_elidable_goes_when_needed_but_not_the_recent_turns() {
        let mut h = history();
        compact(&mut h, 1, &Registry::default());
        let elided = h
            .iter()
            .filter(|m| m.content.as_deref().is_some_and(|c| c.ends_with("elided]")))
            .count();
        assert_eq!(
            elided, 3,
            "the three older reads; the last two turns are protected"
        );
        assert_eq!(h[0].content.as_deref(), Some("sys"));
        assert_eq!(h[1].content.as_deref(), Some("task"));
        assert!(
            !h[h.len() - 1]
                .content
                .as_deref()
                .unwrap()
                .ends_with("elided]")
        );
        // Compacting again finds nothing more.
        assert_eq!(compact(&mut h, 1, &Registry::default()).elided, 0);
    }

    #[test]
    fn under_the_limit_nothing_changes() {
        let mut h = history();
        let copy = h.clone();
        assert_eq!(compact(&mut h, u64::MAX, &Registry::default()).elided, 0);
        assert_eq!(h, copy);
    }

    #[test]
    fn json_protocol_results_are_recognised() {
        let mut h = vec![ChatMessage::system("s"), ChatMessage::user("t")];
        h.push(ChatMessage::assistant("{\"type\":\"tool_call\"}"));
        let body = serde_json::json!({"success": true, "output": "y".repeat(5000)}).to_string();
        h.push(ChatMessage::user(format!(
            "Tool result for run_tests: {body}"
        )));
        h.extend((0..4).map(|_| ChatMessage::user("pad")));
        assert_eq!(compact(&mut h, 1, &Registry::default()).elided, 1);
        let expected = format!("[run_tests: {} bytes, elided]", thousands(body.len()));
        assert_eq!(h[3].content.as_deref(), Some(expected.as_str()));
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(1204), "1,204");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
