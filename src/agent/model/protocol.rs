//! The two ways a model can express its decision: native tool calls, or the JSON
//! text protocol (`{"type":"tool_call",...}` / `{"type":"final",...}`). Turns a
//! reply into actions and records replies and results in the history.
//!
//! With native tools offered, a reply whose whole text is plainly a call
//! (`{"name": ..., "arguments": {...}}`, in a code fence or in Hermes/Qwen
//! `<tool_call>` tags) is never a final answer: [`text_call`] reads it as
//! the call it names, or says what is wrong with it.

use crate::config::Protocol;
use crate::llm::{ChatMessage, ModelReply, ToolCallMsg};
use crate::tools::ToolOutput;
use serde_json::Value;

/// One decision of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Tool {
        call_id: String,
        name: String,
        arguments: String,
    },
    Final {
        text: String,
    },
}

/// Read the actions of a reply. `Err` says what was wrong, for a repair request.
pub fn parse_reply(
    protocol: Protocol,
    reply: &ModelReply,
    json_ids: &mut u64,
) -> Result<Vec<Action>, String> {
    match protocol {
        Protocol::Tools => parse_native(reply),
        Protocol::Json => parse_json_reply(&reply.content).map(|action| {
            vec![match action {
                JsonAction::Final(text) => Action::Final { text },
                JsonAction::Tool { name, arguments } => {
                    *json_ids += 1;
                    Action::Tool {
                        call_id: format!("json_{json_ids}"),
                        name,
                        arguments,
                    }
                }
            }]
        }),
    }
}

fn parse_native(reply: &ModelReply) -> Result<Vec<Action>, String> {
    if !reply.tool_calls.is_empty() {
        return Ok(reply
            .tool_calls
            .iter()
            .map(|c| Action::Tool {
                call_id: c.id.clone(),
                name: c.function.name.clone(),
                arguments: c.function.arguments.clone(),
            })
            .collect());
    }
    let text = reply.content.trim();
    if text.is_empty() {
        return Err(
            "your reply was empty: call one of the tools, or answer in text when the task is done"
                .into(),
        );
    }
    Ok(vec![Action::Final {
        text: text.to_string(),
    }])
}

/// Tags some models (Hermes, Qwen) wrap a call in when a server does not parse it.
const CALL_TAGS: (&str, &str) = ("<tool_call>", "</tool_call>");

/// A reply's text read as a tool call, if it plainly is one: `None` when it
/// is not (an answer), `Some(Ok)` for a call of one of `tools` with object
/// arguments, `Some(Err)` saying what is wrong with it otherwise.
pub fn text_call(text: &str, tools: &[String]) -> Option<Result<(String, String), String>> {
    let mut inner = text.trim();
    if let Some(rest) = inner.strip_prefix(CALL_TAGS.0) {
        inner = rest
            .trim_end()
            .strip_suffix(CALL_TAGS.1)
            .unwrap_or(rest)
            .trim();
    }
    if let Some(rest) = inner.strip_prefix("```") {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        inner = rest.trim_end().strip_suffix("```").unwrap_or(rest).trim();
    }
    if !inner.starts_with('{') {
        return None;
    }
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(inner) else {
        // Looks like a call in JSON but is not valid JSON.
        return inner
            .contains("\"name\"")
            .then(|| Err(format!("your reply is a tool call written as text, and its JSON does not parse; {TEXT_CALL_HINT}")));
    };
    let call = match object.get("function") {
        Some(Value::Object(function)) => function,
        _ => &object,
    };
    let name = call.get("name").and_then(Value::as_str)?;
    let arguments = call.get("arguments").or_else(|| call.get("parameters"))?;
    if !tools.iter().any(|t| t == name) {
        return Some(Err(format!(
            "your reply is a call of \"{name}\" written as text, and there is no such tool; {TEXT_CALL_HINT}"
        )));
    }
    let arguments = match arguments {
        Value::String(text) => serde_json::from_str::<Value>(text).unwrap_or(Value::Null),
        other => other.clone(),
    };
    if !arguments.is_object() {
        return Some(Err(format!(
            "your reply is a call of \"{name}\" written as text, and its arguments are not a JSON object; {TEXT_CALL_HINT}"
        )));
    }
    Some(Ok((name.to_string(), arguments.to_string())))
}

/// What a model that wrote a call as text is told.
pub const TEXT_CALL_HINT: &str = "call tools through the tools interface (a tool call), not in your reply's text; when the task is done, answer in plain text";

#[derive(Debug, PartialEq, Eq)]
enum JsonAction {
    Tool { name: String, arguments: String },
    Final(String),
}

const JSON_SHAPE: &str = r#"reply with exactly one JSON object: {"type":"tool_call","tool":NAME,"arguments":{...}} or {"type":"final","answer":TEXT}"#;

/// Find the first JSON object in the text (code fences and prose around it are tolerated).
fn parse_json_reply(text: &str) -> Result<JsonAction, String> {
    if text.trim().is_empty() {
        return Err(format!("your reply was empty; {JSON_SHAPE}"));
    }
    let object = text
        .match_indices('{')
        .find_map(|(i, _)| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                .filter(Value::is_object)
        })
        .ok_or_else(|| format!("no JSON object was found in your reply; {JSON_SHAPE}"))?;
    match object.get("type").and_then(Value::as_str) {
        Some("tool_call") => {
            let name = object.get("tool").and_then(Value::as_str).ok_or_else(|| {
                format!("\"tool\" must be the tool name as a string; {JSON_SHAPE}")
            })?;
            let arguments = match object.get("arguments") {
                None | Some(Value::Null) => "{}".to_string(),
                Some(args @ Value::Object(_)) => args.to_string(),
                Some(_) => {
                    return Err(format!("\"arguments\" must be a JSON object; {JSON_SHAPE}"));
                }
            };
            Ok(JsonAction::Tool {
                name: name.to_string(),
                arguments,
            })
        }
        Some("final") => object
            .get("answer")
            .and_then(Value::as_str)
            .map(|a| JsonAction::Final(a.to_string()))
            .ok_or_else(|| format!("\"answer\" must be a string; {JSON_SHAPE}")),
        _ => Err(format!(
            "\"type\" must be \"tool_call\" or \"final\"; {JSON_SHAPE}"
        )),
    }
}

/// Append the model's reply to the history.
pub fn record_reply(protocol: Protocol, history: &mut Vec<ChatMessage>, reply: &ModelReply) {
    match protocol {
        // Only a turn that called tools carries its reasoning back (DeepSeek
        // wants it there and ignores it elsewhere).
        Protocol::Tools if !reply.tool_calls.is_empty() => history.push(
            ChatMessage::assistant_tool_calls(&reply.content, reply.tool_calls.clone())
                .with_reasoning(reply.reasoning.clone()),
        ),
        _ => history.push(ChatMessage::assistant(reply.content.clone())),
    }
}

/// Append the result of one tool call.
pub fn record_tool_result(
    protocol: Protocol,
    history: &mut Vec<ChatMessage>,
    call_id: &str,
    tool: &str,
    output: &ToolOutput,
    result: String,
) {
    let message = match protocol {
        Protocol::Tools => ChatMessage::tool_result(call_id, result),
        Protocol::Json => ChatMessage::user(format!("Tool result for {tool}: {result}")),
    };
    history.push(message.declined(output.declined));
}

/// Append a message from stepwise itself (gate refusal, repair request).
pub fn record_feedback(history: &mut Vec<ChatMessage>, text: &str) {
    history.push(ChatMessage::user(format!("[stepwise] {text}")));
}

/// Native tool calls need an answer for every id; used when a reply's remaining
/// calls cannot run (budget exhausted, interrupted).
pub fn unanswered_call_ids(reply_calls: &[ToolCallMsg], answered: usize) -> Vec<String> {
    reply_calls
        .iter()
        .skip(answered)
        .map(|c| c.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declined_result_is_flagged_in_both_protocols() {
        let declined = ToolOutput::declined("The user declined this write_file call.");
        let failed = ToolOutput::error("no such file");
        for protocol in [Protocol::Tools, Protocol::Json] {
            let mut history = Vec::new();
            record_tool_result(
                protocol,
                &mut history,
                "c1",
                "write_file",
                &declined,
                declined.to_model_text(),
            );
            record_tool_result(
                protocol,
                &mut history,
                "c2",
                "read_file",
                &failed,
                failed.to_model_text(),
            );
            assert!(history[0].declined, "{protocol:?}");
            assert!(!history[1].declined, "{protocol:?}");
        }
    }

    #[test]
    fn json_object_is_found_inside_fences_and_prose() {
        let text = "Sure, here it is:\n```json\n{\"type\":\"tool_call\",\"tool\":\"read_file\",\"arguments\":{\"path\":\"a.py\"}}\n```\nThanks";
        assert_eq!(
            parse_json_reply(text),
            Ok(JsonAction::Tool {
                name: "read_file".into(),
                arguments: r#"{"path":"a.py"}"#.into()
            })
        );
        assert_eq!(
            parse_json_reply(r#"{"type":"final","answer":"done {x}"}"#),
            Ok(JsonAction::Final("done {x}".into()))
        );
    }

    #[test]
    fn json_errors_say_what_was_wrong() {
        assert!(
            parse_json_reply("I will read the file now.")
                .unwrap_err()
                .contains("no JSON object")
        );
        assert!(
            parse_json_reply(r#"{"type":"call"}"#)
                .unwrap_err()
                .contains("\"type\" must be")
        );
        assert!(
            parse_json_reply(r#"{"type":"tool_call","tool":"x","arguments":"a"}"#)
                .unwrap_err()
                .contains("\"arguments\" must be")
        );
        assert!(
            parse_json_reply(r#"{"type":"final"}"#)
                .unwrap_err()
                .contains("answer")
        );
        assert!(parse_json_reply("  ").unwrap_err().contains("empty"));
    }

    #[test]
    fn native_reply_without_calls_is_a_final_answer_and_empty_is_an_error() {
        let reply = ModelReply {
            content: " All done. ".into(),
            ..ModelReply::default()
        };
        assert_eq!(
            parse_native(&reply),
            Ok(vec![Action::Final {
                text: "All done.".into()
            }])
        );
        assert!(parse_native(&ModelReply::default()).is_err());
    }

    #[test]
    fn a_call_written_as_text_is_told_apart_from_an_answer() {
        let tools = vec!["read_file".to_string(), "run_tests".to_string()];
        let call = |t: &str| text_call(t, &tools);
        let read = Some(Ok((
            "read_file".to_string(),
            r#"{"path":"a.py"}"#.to_string(),
        )));
        assert_eq!(
            call(r#"{"name": "read_file", "arguments": {"path": "a.py"}}"#),
            read
        );
        assert_eq!(
            call(
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>"
            ),
            read
        );
        assert_eq!(
            call(
                "```json\n{\"function\": {\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"a.py\\\"}\"}}\n```"
            ),
            read
        );
        assert_eq!(
            call(r#"{"name": "read_file", "parameters": {"path": "a.py"}}"#),
            read
        );
        let unknown = call(r#"{"name": "delete_all", "arguments": {}}"#)
            .unwrap()
            .unwrap_err();
        assert!(unknown.contains("no such tool"), "{unknown}");
        let bad = call(r#"{"name": "read_file", "arguments": "a.py"}"#)
            .unwrap()
            .unwrap_err();
        assert!(bad.contains("not a JSON object"), "{bad}");
        assert!(
            call(r#"{"name": "read_file", "arguments": {"#)
                .unwrap()
                .is_err()
        );
        // Answers, also ones that show JSON, are answers.
        assert_eq!(call("All done: the tests pass."), None);
        assert_eq!(call(r#"The config is {"name": "x"}."#), None);
        assert_eq!(call(r#"{"name": "stepwise", "version": 1}"#), None);
    }

    #[test]
    fn json_protocol_ids_are_unique() {
        let reply = ModelReply {
            content: r#"{"type":"tool_call","tool":"list_files"}"#.into(),
            ..ModelReply::default()
        };
        let mut ids = 0;
        let a = parse_reply(Protocol::Json, &reply, &mut ids).unwrap();
        let b = parse_reply(Protocol::Json, &reply, &mut ids).unwrap();
        assert_ne!(a, b);
    }
}
