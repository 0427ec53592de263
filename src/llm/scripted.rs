//! A model that plays its side from a script file instead of calling an
//! endpoint: turns of streamed text plus a tool call or a final answer, with a
//! per-chunk delay so it behaves like a live model. When the user declines a
//! step, the script's `on_decline` turns take over. Everything else (tools,
//! approvals, diffs, the gate) is the real core.

use super::{ChatModel, ChatRequest, LlmError, ModelReply, StreamDelta, StreamSink, ToolCallMsg};
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// One scripted model reply.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Text streamed before the action (shown as the assistant thinking aloud).
    #[serde(default)]
    pub say: Option<String>,
    /// A tool call: its name …
    #[serde(default)]
    pub tool: Option<String>,
    /// … and its arguments.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// A final answer (instead of a tool call).
    #[serde(default, rename = "final")]
    pub final_answer: Option<String>,
}

/// A whole script file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The task the script was written for (pre-filled in the UI and `exec`).
    #[serde(default)]
    pub task: Option<String>,
    /// Delay between streamed chunks, in milliseconds.
    #[serde(default = "default_delay")]
    pub chunk_delay_ms: u64,
    pub turns: Vec<Turn>,
    /// Turns played instead of the rest once the user declines a step.
    #[serde(default)]
    pub on_decline: Vec<Turn>,
}

fn default_delay() -> u64 {
    12
}

impl Script {
    /// Parse and check a script; errors name the turn that is wrong.
    pub fn parse(text: &str) -> Result<Script, String> {
        let script: Script =
            serde_json::from_str(text).map_err(|e| format!("invalid script: {e}"))?;
        for (label, turns) in [("turns", &script.turns), ("on_decline", &script.on_decline)] {
            for (i, turn) in turns.iter().enumerate() {
                match (&turn.tool, &turn.final_answer) {
                    (Some(_), None) | (None, Some(_)) => {}
                    _ => {
                        return Err(format!(
                            "invalid script: {label}[{i}] needs exactly one of \"tool\" or \"final\""
                        ));
                    }
                }
            }
        }
        if script.turns.is_empty() {
            return Err("invalid script: no turns".into());
        }
        Ok(script)
    }
}

struct Cursor {
    next: usize,
    declined: bool,
    calls: u64,
}

/// The scripted provider.
pub struct ScriptedModel {
    script: Script,
    label: String,
    cursor: Mutex<Cursor>,
}

impl ScriptedModel {
    pub fn new(script: Script, label: impl Into<String>) -> Self {
        ScriptedModel {
            script,
            label: label.into(),
            cursor: Mutex::new(Cursor {
                next: 0,
                declined: false,
                calls: 0,
            }),
        }
    }

    /// Pick the next turn, switching to `on_decline` after a declined step.
    fn next_turn(&self, request: &ChatRequest<'_>) -> Result<(Turn, u64), LlmError> {
        let mut cursor = self
            .cursor
            .lock()
            .map_err(|_| LlmError::Stream("the script state is poisoned".into()))?;
        if !cursor.declined && last_step_was_declined(request) && !self.script.on_decline.is_empty()
        {
            cursor.declined = true;
            cursor.next = 0;
        }
        let turns = if cursor.declined {
            &self.script.on_decline
        } else {
            &self.script.turns
        };
        let turn = turns
            .get(cursor.next)
            .cloned()
            .ok_or(LlmError::ScriptEnded)?;
        cursor.next += 1;
        cursor.calls += 1;
        Ok((turn, cursor.calls))
    }

    async fn play(
        &self,
        request: ChatRequest<'_>,
        sink: StreamSink<'_>,
    ) -> Result<ModelReply, LlmError> {
        let (turn, n) = self.next_turn(&request)?;
        let delay = Duration::from_millis(self.script.chunk_delay_ms);
        let mut content = String::new();
        let text = turn.final_answer.as_deref().map_or_else(
            || turn.say.clone().unwrap_or_default(),
            |answer| match &turn.say {
                Some(say) => format!("{say}\n\n{answer}"),
                None => answer.to_string(),
            },
        );
        for piece in chunks(&text) {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            sink(StreamDelta::Text(piece));
            content.push_str(piece);
        }
        let tool_calls = match &turn.tool {
            Some(name) => {
                let arguments = turn
                    .arguments
                    .clone()
                    .unwrap_or(Value::Object(Default::default()))
                    .to_string();
                // Stream the arguments too, so live previews build up as with a real model.
                for fragment in argument_pieces(&arguments) {
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    sink(StreamDelta::ToolArguments {
                        index: 0,
                        name,
                        fragment,
                    });
                }
                vec![ToolCallMsg::new(
                    format!("script_{n}"),
                    name.clone(),
                    arguments,
                )]
            }
            None => Vec::new(),
        };
        let finish = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        Ok(ModelReply {
            content,
            tool_calls,
            finish_reason: Some(finish.into()),
            usage: None,
            reasoning: serde_json::Map::new(),
        })
    }
}

impl ChatModel for ScriptedModel {
    fn label(&self) -> String {
        self.label.clone()
    }

    fn complete<'a>(
        &'a self,
        request: ChatRequest<'a>,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(self.play(request, sink))
    }
}

/// The last message answers a tool call the user declined (the core flags it).
fn last_step_was_declined(request: &ChatRequest<'_>) -> bool {
    request.messages.last().is_some_and(|m| m.declined)
}

/// Split arguments into pieces of about 48 bytes (on character boundaries).
fn argument_pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(48);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// Split text into small word-sized pieces, as a live stream would.
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .skip(1)
            .find(|(_, c)| c.is_whitespace())
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatMessage;

    fn script(json: &str) -> ScriptedModel {
        ScriptedModel::new(Script::parse(json).unwrap(), "demo (scripted)")
    }

    async fn ask(
        model: &ScriptedModel,
        messages: &[ChatMessage],
    ) -> (Result<ModelReply, LlmError>, String) {
        let mut streamed = String::new();
        let mut args = String::new();
        let mut sink = |d: StreamDelta<'_>| match d {
            StreamDelta::Text(t) => streamed.push_str(t),
            StreamDelta::ToolArguments { fragment, .. } => args.push_str(fragment),
        };
        let reply = model
            .complete(
                ChatRequest {
                    messages,
                    tools: None,
                },
                &mut sink,
            )
            .await;
        if let Ok(r) = &reply
            && let Some(call) = r.tool_calls.first()
        {
            assert_eq!(
                args, call.function.arguments,
                "the arguments streamed whole"
            );
        }
        (reply, streamed)
    }

    const TWO_TURNS: &str = r#"{"chunk_delay_ms": 0, "turns": [
        {"say": "Looking around.", "tool": "list_files", "arguments": {"path": "."}},
        {"final": "Done."}
    ], "on_decline": [{"final": "You declined, so I stopped."}]}"#;

    #[tokio::test]
    async fn plays_turns_in_order_streaming_the_text() {
        let model = script(TWO_TURNS);
        let (reply, streamed) = ask(&model, &[ChatMessage::user("go")]).await;
        let reply = reply.unwrap();
        assert_eq!(streamed, "Looking around.");
        assert_eq!(reply.tool_calls[0].function.name, "list_files");
        assert_eq!(reply.tool_calls[0].function.arguments, r#"{"path":"."}"#);
        let (reply, _) = ask(
            &model,
            &[ChatMessage::tool_result("script_1", r#"{"success":true}"#)],
        )
        .await;
        assert_eq!(reply.unwrap().content, "Done.");
        let (end, _) = ask(&model, &[]).await;
        let said = end.unwrap_err().to_string();
        assert_eq!(
            said,
            "the scripted model has no more turns (it cannot improvise)"
        );
        assert!(!said.contains("HTTP"), "not a server's status: {said}");
    }

    #[tokio::test]
    async fn a_decline_switches_to_the_on_decline_turns() {
        let model = script(TWO_TURNS);
        let _ = ask(&model, &[ChatMessage::user("go")]).await;
        // The text alone does not count: only the core's flag does.
        let failed = ChatMessage::tool_result(
            "script_1",
            r#"{"success":false,"error":"The user declined this list_files call."}"#,
        );
        let (reply, _) = ask(&model, std::slice::from_ref(&failed)).await;
        assert_eq!(reply.unwrap().content, "Done.");
        let model = script(TWO_TURNS);
        let _ = ask(&model, &[ChatMessage::user("go")]).await;
        let (reply, _) = ask(&model, &[failed.declined(true)]).await;
        assert_eq!(reply.unwrap().content, "You declined, so I stopped.");
    }

    #[test]
    fn scripts_are_checked() {
        assert!(
            Script::parse(r#"{"turns": []}"#)
                .unwrap_err()
                .contains("no turns")
        );
        let both = r#"{"turns": [{"tool": "x", "final": "y"}]}"#;
        assert!(Script::parse(both).unwrap_err().contains("turns[0]"));
        assert!(Script::parse(r#"{"turns": [{"tol": "x"}]}"#).is_err());
    }

    #[test]
    fn chunks_cover_the_text_exactly() {
        let text = "Hello  wide world\nnext";
        assert_eq!(chunks(text).collect::<String>(), text);
        assert!(chunks(text).count() >= 4);
    }

    #[test]
    fn the_demo_script_is_valid() {
        let script = Script::parse(include_str!("../../assets/demo/calculator.json")).unwrap();
        assert!(script.task.is_some());
        assert!(!script.on_decline.is_empty());
        assert!(
            script
                .turns
                .iter()
                .any(|t| t.tool.as_deref() == Some("run_tests"))
        );
    }
}
