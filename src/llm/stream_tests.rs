//! Unit tests of `stream.rs`: chunk shapes of real servers, one by one.

use super::*;

fn feed(chunks: &[&str]) -> ModelReply {
    let mut acc = StreamAccumulator::default();
    for c in chunks {
        acc.push_data(c).expect("chunk parses");
    }
    acc.into_reply()
}

#[test]
fn text_deltas_concatenate_and_report_each_piece() {
    let mut acc = StreamAccumulator::default();
    let a = acc
        .push_data(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#)
        .unwrap();
    let b = acc
        .push_data(r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":""}]}"#)
        .unwrap();
    assert_eq!((a.as_deref(), b.as_deref()), (Some("Hel"), Some("lo")));
    assert!(!acc.finished(), "empty finish_reason is not a finish");
    acc.push_data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#)
        .unwrap();
    assert!(acc.finished());
    assert_eq!(acc.into_reply().content, "Hello");
}

#[test]
fn tool_call_arguments_split_inside_an_escape_are_joined_by_index() {
    let reply = feed(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"write_file","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.py\",\"content\":\"x\\"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ny\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    assert_eq!(reply.tool_calls.len(), 1);
    let call = &reply.tool_calls[0];
    assert_eq!(
        (call.id.as_str(), call.function.name.as_str()),
        ("call_a", "write_file")
    );
    let args: Value = serde_json::from_str(&call.function.arguments).unwrap();
    assert_eq!(args["content"], "x\ny");
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn argument_fragments_are_reported_with_their_call() {
    let mut acc = StreamAccumulator::default();
    acc.push_data(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"write_file","arguments":"{\"pa"}}]}}]}"#).unwrap();
    acc.push_data(
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":"}}]}}]}"#,
    )
    .unwrap();
    let got = acc.take_argument_fragments();
    assert_eq!(
        got,
        [
            (0, "write_file".to_string(), "{\"pa".to_string()),
            (0, "write_file".to_string(), "th\":".to_string())
        ]
    );
    assert!(acc.take_argument_fragments().is_empty());
}

#[test]
fn calls_without_index_are_split_by_id() {
    let reply = feed(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"a.py\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"c2","function":{"name":"read_file","arguments":"{\"path\":\"b.py\"}"}}]}}]}"#,
    ]);
    let got: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.function.arguments.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![("c1", r#"{"path":"a.py"}"#), ("c2", r#"{"path":"b.py"}"#)]
    );
}

#[test]
fn two_calls_interleaved_by_index_stay_apart() {
    let reply = feed(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"pa"}},{"index":1,"id":"b","function":{"name":"list_files","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"x.py\"}"}}]}}]}"#,
    ]);
    assert_eq!(reply.tool_calls[0].function.arguments, r#"{"path":"x.py"}"#);
    assert_eq!(reply.tool_calls[1].function.name, "list_files");
}

#[test]
fn usage_only_chunk_and_empty_usage_and_extra_fields() {
    let reply = feed(&[
        r#"{"id":"x","system_fingerprint":"fp","service_tier":"default","choices":[{"delta":{"reasoning_content":"hmm","content":"ok"},"logprobs":null}],"usage":{}}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}}}"#,
        r#"{"choices":[],"usage":{}}"#,
    ]);
    assert_eq!(reply.content, "ok");
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            prompt_tokens: 12,
            completion_tokens: 3,
            cached_tokens: 8,
            cache_write_tokens: 0,
        })
    );
}

#[test]
fn whole_call_in_one_chunk_with_object_arguments_and_no_id() {
    let reply = feed(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"list_files","arguments":{"path":"."}}}]},"finish_reason":"tool_calls"}]}"#,
    ]);
    assert_eq!(reply.tool_calls[0].id, "call_0");
    assert_eq!(reply.tool_calls[0].function.arguments, r#"{"path":"."}"#);
}

#[test]
fn unknown_fields_of_a_tool_call_are_kept_and_type_is_not_duplicated() {
    let reply = feed(&[
        r#"{"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"sig=="}},"function":{"arguments":"{}","name":"list_files"},"id":"call_1","type":"function"}]},"index":0}]}"#,
    ]);
    let sent = serde_json::to_value(&reply.tool_calls[0]).unwrap();
    assert_eq!(
        sent,
        serde_json::json!({"id":"call_1","type":"function","function":{"name":"list_files","arguments":"{}"},"extra_content":{"google":{"thought_signature":"sig=="}}})
    );
}

#[test]
fn malformed_chunk_is_a_decode_error() {
    let mut acc = StreamAccumulator::default();
    assert!(matches!(
        acc.push_data("{not json"),
        Err(LlmError::Decode(_))
    ));
}

#[test]
fn complete_body_is_parsed() {
    let reply = parse_completion_body(
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
    )
    .unwrap();
    assert_eq!(reply.content, "done");
    assert_eq!(reply.usage.map(|u| u.prompt_tokens), Some(5));
    assert!(parse_completion_body(r#"{"error":"x"}"#).is_err());
}

#[test]
fn errors_inside_a_stream_end_the_reply_with_the_servers_message() {
    let mut acc = StreamAccumulator::default();
    acc.push_data(r#"{"choices":[{"delta":{"content":"The"}}]}"#)
        .unwrap();
    let err = acc
        .push_data(r#"{"error":{"message":"Sorry about that!","type":"server_error"}}"#)
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Server { message, transient: true } if message == "Sorry about that!"),
        "{err:?}"
    );
    let err = StreamAccumulator::default()
        .push_data(r#"{"choices":[{"delta":{},"finish_reason":"error"}]}"#)
        .unwrap_err();
    assert!(
        matches!(
            err,
            LlmError::Server {
                transient: false,
                ..
            }
        ),
        "{err:?}"
    );
    let err = StreamAccumulator::default()
        .push_data(r#"{"error":{"code":"context_length_exceeded","message":"too long"}}"#)
        .unwrap_err();
    assert!(matches!(err, LlmError::ContextOverflow { .. }), "{err:?}");
    assert!(
        StreamAccumulator::default()
            .push_data(r#"{"choices":[],"error":null}"#)
            .is_ok()
    );
}

#[test]
fn an_empty_or_error_body_is_not_a_decode_error() {
    assert!(matches!(
        parse_completion_body(" \n"),
        Err(LlmError::EmptyReply)
    ));
    assert!(matches!(
        parse_completion_body(r#"{"error":{"message":"no","code":"invalid"}}"#),
        Err(LlmError::Server {
            transient: false,
            ..
        })
    ));
}

#[test]
fn a_new_id_at_an_index_in_use_is_a_new_call() {
    // Ollama streams each parallel call whole, every one at `index: 0`.
    let reply = feed(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_k1","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.py\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_k2","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b.py\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}"#,
    ]);
    let calls: Vec<_> = (reply.tool_calls.iter())
        .map(|c| (c.id.as_str(), c.function.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_k1", r#"{"path":"a.py"}"#),
            ("call_k2", r#"{"path":"b.py"}"#)
        ]
    );
    // The same id repeated (llama-cpp-python) or an empty one (DashScope) continues the call.
    let reply = feed(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"read_file","arguments":"th\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"","function":{"arguments":"\"x\"}"}}]}}]}"#,
    ]);
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].function.arguments, r#"{"path":"x"}"#);
}

#[test]
fn reasoning_content_pieces_are_joined_and_reasoning_details_merged_by_index() {
    let reply = feed(&[
        r#"{"choices":[{"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}"#,
        r#"{"choices":[{"delta":{"content":null,"reasoning_content":"Read the"}}]}"#,
        r#"{"choices":[{"delta":{"content":null,"reasoning_content":" file."}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.text","text":"Look ","format":"anthropic-claude-v1","index":0}]}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.text","text":"first.","signature":null,"index":0}]}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.text","signature":"sig==","index":0}]}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"abc","id":"rs_1","index":1}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(reply.reasoning["reasoning_content"], "Read the file.");
    assert_eq!(
        reply.reasoning["reasoning_details"],
        serde_json::json!([
            {"type":"reasoning.text","text":"Look first.","format":"anthropic-claude-v1","signature":"sig==","index":0},
            {"type":"reasoning.encrypted","data":"abc","id":"rs_1","index":1}
        ])
    );
    assert!(
        feed(&[r#"{"choices":[{"delta":{"content":"hi"}}]}"#])
            .reasoning
            .is_empty()
    );
}

#[test]
fn think_blocks_are_not_part_of_the_content() {
    let strip = |s: &str| without_think(s.to_string());
    assert_eq!(
        strip("<think>\nThe user wants 42.\n</think>\n\nThe answer is 42."),
        "The answer is 42."
    );
    assert_eq!(
        strip("Okay, the user wants 42.\n</think>\n\n42."),
        "42.",
        "the opening tag was in the prompt"
    );
    assert_eq!(strip("<think>a</think>One <think>b</think>two"), "One two");
    assert_eq!(strip("<think>never closed"), "");
    assert_eq!(strip("no thinking here"), "no thinking here");
    let reply = feed(&[
        r#"{"choices":[{"delta":{"content":"<thi"}}]}"#,
        r#"{"choices":[{"delta":{"content":"nk>hmm</think>\n\nDone."}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(reply.content, "Done.");
}

#[test]
fn a_reply_or_one_calls_arguments_past_its_cap_ends_the_reply() {
    let piece = "x".repeat(64 * 1024);
    let text = format!(r#"{{"choices":[{{"delta":{{"content":"{piece}"}}}}]}}"#);
    let mut acc = StreamAccumulator::default();
    let pushed = (0..200).map(|_| acc.push_data(&text)).find(Result::is_err);
    let err = pushed.expect("stopped").unwrap_err();
    assert!(matches!(err, LlmError::TooLarge(_)), "{err}");
    assert!(err.to_string().contains("passed 8 MiB"), "{err}");

    let mut acc = StreamAccumulator::default();
    acc.push_data(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"write_file","arguments":""}}]}}]}"#).unwrap();
    let args = format!(
        r#"{{"choices":[{{"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{piece}"}}}}]}}}}]}}"#
    );
    let pushed = (0..100).map(|_| acc.push_data(&args)).find(Result::is_err);
    let err = pushed.expect("stopped").unwrap_err();
    assert!(
        err.to_string()
            .contains("one tool call (write_file) passed 4 MiB"),
        "{err}"
    );

    // Calls with nothing in them still count: a stream of them stops too.
    let mut acc = StreamAccumulator::default();
    let stopped = (0..200_000).any(|i| {
        let call = format!(r#"{{"choices":[{{"delta":{{"tool_calls":[{{"index":{i}}}]}}}}]}}"#);
        acc.push_data(&call).is_err()
    });
    assert!(stopped);
}
