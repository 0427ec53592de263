//! The system prompt: the rules of the seed design (`assets/system_prompt.md`),
//! the JSON-protocol instructions when that protocol is used (tool list filled
//! in from the schemas), and the project's rules files, re-read per task.

use super::rules::{self, Rules};
use super::session::Session;
use crate::config::Protocol;
use crate::llm::{ChatMessage, Role};
use crate::tools::tool_schemas;

const SYSTEM_PROMPT: &str = include_str!("../../assets/system_prompt.md");
const JSON_PROTOCOL_PROMPT: &str = include_str!("../../assets/json_protocol.md");

impl Session {
    pub(super) fn system_prompt(&self, rules: &Rules) -> String {
        let mut prompt = SYSTEM_PROMPT.to_string();
        if self.settings.protocol == Protocol::Json {
            prompt.push_str("\n\n");
            prompt.push_str(&json_protocol_prompt());
        }
        if let Some(section) = rules.prompt_section() {
            prompt.push_str("\n\n");
            prompt.push_str(&section);
        }
        prompt
    }

    /// Re-read the project rules into the system prompt (they may change between tasks).
    pub(super) fn refresh_rules(&mut self) -> Rules {
        let rules = rules::load(self.workspace.root());
        let prompt = self.system_prompt(&rules);
        match self.history.first_mut() {
            Some(first) if first.role == Role::System => first.content = Some(prompt),
            _ => self.history.insert(0, ChatMessage::system(prompt)),
        }
        rules
    }
}

/// The JSON-protocol instructions with the tool list filled in from the schemas.
fn json_protocol_prompt() -> String {
    let tools: Vec<String> = tool_schemas()
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    let f = &t["function"];
                    format!(
                        "- {}: {} Arguments: {}",
                        f["name"].as_str().unwrap_or(""),
                        f["description"].as_str().unwrap_or(""),
                        f["parameters"]["properties"]
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    JSON_PROTOCOL_PROMPT.replace("{TOOLS}", &tools.join("\n"))
}
