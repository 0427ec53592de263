//! The system prompt: the rules of the seed design (`assets/system_prompt.md`),
//! the workspace's test commands (or that it has none), the JSON-protocol
//! instructions when that protocol is used (tool list filled in from the
//! schemas), and the project's rules files, re-read per task with the test
//! commands.

use crate::agent::model::rules::{self, Rules};
use crate::agent::session::Session;
use crate::config::Protocol;
use crate::llm::{ChatMessage, Role};
use crate::tools::{Registry, TestCommands};

const SYSTEM_PROMPT: &str = include_str!("../../../assets/system_prompt.md");
const JSON_PROTOCOL_PROMPT: &str = include_str!("../../../assets/json_protocol.md");

impl Session {
    pub(in crate::agent) fn system_prompt(&self, rules: &Rules) -> String {
        let mut prompt = SYSTEM_PROMPT.to_string();
        prompt.push_str("\n\n");
        prompt.push_str(&test_commands_section(&self.test_commands));
        if self.settings.protocol == Protocol::Json {
            prompt.push_str("\n\n");
            prompt.push_str(&json_protocol_prompt(&self.registry, &self.test_commands));
        }
        if let Some(section) = rules.prompt_section() {
            prompt.push_str("\n\n");
            prompt.push_str(&section);
        }
        prompt
    }

    /// Re-read the project rules and test commands into the system prompt
    /// and the tool schemas (they may change between tasks).
    pub(in crate::agent) fn refresh_rules(&mut self) -> Rules {
        self.test_commands = TestCommands::detect(&self.workspace, &self.settings.test_commands);
        if self.tools.is_some() {
            self.tools = Some(self.registry.schemas(&self.test_commands));
        }
        let rules = rules::load(&self.workspace);
        let prompt = self.system_prompt(&rules);
        match self.history.first_mut() {
            Some(first) if first.role == Role::System => first.content = Some(prompt),
            _ => self.history.insert(0, ChatMessage::system(prompt)),
        }
        rules
    }
}

/// What the prompt says about running the tests here.
fn test_commands_section(tests: &TestCommands) -> String {
    if tests.is_empty() {
        return "This workspace has no test command: no project file names one and stepwise.toml sets no [test_commands], so `run_tests` cannot run anything. A final answer after changes is accepted but marked \"unverified: no test command\"; say in it how the change can be checked.".to_string();
    }
    format!(
        "Test commands of this workspace (the `command` of `run_tests`): {}.",
        tests.listing()
    )
}

/// The JSON-protocol instructions with the tool list filled in from the schemas.
fn json_protocol_prompt(registry: &Registry, tests: &TestCommands) -> String {
    let tools: Vec<String> = registry
        .schemas(tests)
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
