//! Fuzz the JSON text protocol: any reply text is either turned into actions
//! or refused with an error for a repair request, and the tool calls it
//! yields are validated or refused, never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use stepwise::agent::model::protocol::{Action, parse_reply};
use stepwise::config::Protocol;
use stepwise::llm::ModelReply;
use stepwise::tools::calls::registry::parse_arguments;

fuzz_target!(|data: &[u8]| {
    let reply = ModelReply {
        content: String::from_utf8_lossy(data).into_owned(),
        ..ModelReply::default()
    };
    let mut ids = 0;
    match parse_reply(Protocol::Json, &reply, &mut ids) {
        Ok(actions) => {
            assert!(!actions.is_empty(), "a parsed reply holds an action");
            for action in actions {
                if let Action::Tool {
                    name, arguments, ..
                } = action
                {
                    // Validation may refuse, but must not panic.
                    let _ = parse_arguments(&name, &arguments);
                }
            }
        }
        Err(message) => assert!(!message.is_empty(), "a refusal says why"),
    }
});
