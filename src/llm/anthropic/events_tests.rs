//! Unit tests of `events.rs`: Anthropic's event shapes, one by one.

use super::*;

fn feed(events: &[&str]) -> Result<ModelReply, LlmError> {
    let mut acc = EventAccumulator::default();
    for e in events {
        acc.push(e)?;
    }
    Ok(acc.into_reply())
}

const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":10,"cache_read_input_tokens":50,"output_tokens":1}}}"#;

#[test]
fn text_and_usage_with_cache_tokens() {
    let reply = feed(&[
        START,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
        r#"{"type":"message_stop"}"#,
    ])
    .unwrap();
    assert_eq!(reply.content, "Hello");
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            prompt_tokens: 100,
            completion_tokens: 7,
            cached_tokens: 50,
            cache_write_tokens: 10,
        })
    );
}

#[test]
fn tool_use_arguments_join_across_pieces_and_report_live() {
    let mut acc = EventAccumulator::default();
    let events = [
        START,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"read_file","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"th\": \"calc"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ulator.py\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let mut fragments = Vec::new();
    for e in events {
        if let Added::Arguments {
            call,
            name,
            fragment,
        } = acc.push(e).unwrap()
        {
            fragments.push((call, name, fragment));
        }
    }
    assert_eq!(fragments.len(), 3, "empty pieces are not reported");
    assert_eq!(fragments[0].0, 0);
    assert_eq!(fragments[0].1, "read_file");
    let reply = acc.into_reply();
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "toolu_9");
    assert_eq!(
        reply.tool_calls[0].function.arguments,
        r#"{"path": "calculator.py"}"#
    );
}

#[test]
fn max_tokens_is_the_length_stop_and_empty_input_is_an_empty_object() {
    let reply = feed(&[
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"list_files","input":{}}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":8192}}"#,
    ])
    .unwrap();
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    assert_eq!(reply.tool_calls[0].function.arguments, "{}");
}

#[test]
fn error_events_keep_the_servers_message_and_say_if_transient() {
    let overloaded = feed(&[
        START,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ]);
    match overloaded {
        Err(LlmError::Server { message, transient }) => {
            assert_eq!(message, "Overloaded");
            assert!(transient);
        }
        other => panic!("{other:?}"),
    }
    let bad = feed(&[
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad field"}}"#,
    ]);
    assert!(matches!(
        bad,
        Err(LlmError::Server {
            transient: false,
            ..
        })
    ));
    let long = feed(&[
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    ]);
    assert!(
        matches!(long, Err(LlmError::ContextOverflow { .. })),
        "{long:?}"
    );
    let thinking = feed(&[
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        r#"{"type":"message_stop"}"#,
    ])
    .unwrap();
    assert_eq!(thinking.content, "", "thinking is not reply text");
    assert!(feed(&["not json"]).is_err());
}

#[test]
fn one_calls_arguments_past_the_cap_end_the_reply() {
    let mut acc = EventAccumulator::default();
    acc.push(START).unwrap();
    acc.push(r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"write_file","input":{}}}"#).unwrap();
    let piece = "y".repeat(64 * 1024);
    let delta = format!(
        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":"{piece}"}}}}"#
    );
    let err = (0..100)
        .find_map(|_| acc.push(&delta).err())
        .expect("stopped");
    assert!(
        err.to_string()
            .contains("one tool call (write_file) passed 4 MiB"),
        "{err}"
    );
    let mut acc = EventAccumulator::default();
    let text = format!(
        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{piece}"}}}}"#
    );
    acc.push(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    )
    .unwrap();
    let err = (0..200)
        .find_map(|_| acc.push(&text).err())
        .expect("stopped");
    assert!(err.to_string().contains("passed 8 MiB"), "{err}");
}
