//! `run_tests {command?}`: one of the workspace's test commands (found by
//! `tools::testing::test_commands`, run by `tools::testing::test_runner` in the sandbox).
//! Planned as a command the user approves.

use super::TestCommands;
use super::calls::registry::{Action, Args, Cut, Plan, Reader, Refused, Tool, ToolContext};
use super::{ToolId, ToolName};
use serde_json::Value;

pub struct RunTests;

impl Tool for RunTests {
    fn id(&self) -> ToolId {
        ToolName::RUN_TESTS.into()
    }

    /// The workspace's own commands are part of the description.
    fn description(&self, tests: &TestCommands) -> String {
        tests.description()
    }

    fn parameters(&self, tests: &TestCommands) -> Value {
        tests.parameters()
    }

    fn plan(&self, args: &Args, ctx: &ToolContext<'_>) -> Result<Plan, Refused> {
        let command = Reader::new(ToolName::RUN_TESTS, args)
            .optional_string("command")
            .map_err(|e| Refused::new("", e))?
            .map(|c| c.trim().to_string());
        let target = command.clone().unwrap_or_default();
        let found = match &command {
            Some(name) => ctx.tests.get(name),
            None => ctx.tests.default_command(),
        };
        match found {
            Some(runner) => Ok(Plan {
                target,
                action: Action::Tests(runner.clone()),
            }),
            None => {
                let problem = ctx.tests.unknown(command.as_deref().unwrap_or(""));
                Err(Refused::new(target, problem))
            }
        }
    }

    fn cut(&self) -> Option<Cut> {
        Some(Cut {
            field: "output",
            how: "run fewer tests (a narrower request) to see the rest",
        })
    }
}
