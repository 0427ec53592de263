//! The built-in tools: the one list that registers them (a new tool is its
//! folder, one line here and its name in `crate::tool_id`).
//!
//! What must stay true: the tools registered here are exactly
//! `ToolName::BUILTIN`, in its order, so every `ToolName` that parses is a
//! registered built-in tool's, and a `ToolId` parses back from the name it
//! prints.

use crate::tools::calls::registry::{Registry, Tool};
use std::sync::{Arc, OnceLock};

/// The built-in tools, in the order the model is told of them.
fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(crate::tools::list_files::ListFiles),
        Arc::new(crate::tools::read_file::ReadFile),
        Arc::new(crate::tools::write_file::WriteFile),
        Arc::new(crate::tools::replace_text::ReplaceText),
        Arc::new(crate::tools::apply_patch::ApplyPatch),
        Arc::new(crate::tools::run_tests::RunTests),
        Arc::new(crate::tools::search_text::SearchText),
    ]
}

/// The registry of the built-in tools (built once).
pub fn builtin() -> &'static Registry {
    static BUILTIN: OnceLock<Registry> = OnceLock::new();
    BUILTIN.get_or_init(|| Registry::new(builtin_tools()))
}

impl Default for Registry {
    fn default() -> Self {
        builtin().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_id::{ToolId, ToolName, ToolSelector};
    use crate::tools::calls::registry::*;
    use crate::tools::{TestCommands, Workspace};
    use serde_json::{Value, json};

    fn plan(name: &str, arguments: &str) -> Result<Plan, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let tests = TestCommands::default();
        let ctx = ToolContext {
            workspace: &ws,
            tests: &tests,
        };
        let tool = builtin()
            .lookup(name)
            .ok_or_else(|| format!("no tool {name}"))?;
        let args = parse_arguments(name, arguments)?;
        tool.plan(&args, &ctx).map_err(|r| r.problem)
    }

    #[test]
    fn the_registry_registers_exactly_the_builtin_names_in_their_order() {
        assert_eq!(builtin().names(), ToolName::BUILTIN.to_vec());
        for name in ToolName::BUILTIN {
            assert_eq!(builtin().identify(name.as_str()), ToolId::Builtin(name));
        }
    }

    #[test]
    fn every_identity_survives_serialisation_and_parsing() {
        let mut ids: Vec<ToolId> = ToolName::all().into_iter().map(ToolId::from).collect();
        ids.push(ToolId::mcp("files", "write_file"));
        ids.push(ToolId::mcp("a-b", "c_d"));
        ids.push(ToolId::Unknown("delete_file".into()));
        for id in ids {
            let wire = serde_json::to_string(&id).unwrap();
            let name: String = serde_json::from_str(&wire).unwrap();
            assert_eq!(ToolId::parse(&name), id, "{wire}");
            assert_eq!(id, name.as_str());
        }
        assert_eq!(
            serde_json::to_string(&ToolId::mcp("fs", "read")).unwrap(),
            "\"mcp__fs__read\""
        );
    }

    #[test]
    fn selectors_name_one_tool_or_every_mcp_tool() {
        let any = ToolSelector::parse("mcp").unwrap();
        assert!(any.matches(&ToolId::mcp("s", "t")));
        assert!(!any.matches(&ToolName::RUN_TESTS.into()));
        let one = ToolSelector::parse("mcp__s__t").unwrap();
        assert!(one.matches(&ToolId::mcp("s", "t")));
        assert!(!one.matches(&ToolId::mcp("s", "u")));
        let err = ToolSelector::parse("delete_file").unwrap_err();
        assert!(err.contains("run_tests") && err.contains("mcp"), "{err}");
    }

    #[test]
    fn reads_are_done_when_planned_and_take_their_defaults() {
        let listed = plan("list_files", "").unwrap();
        assert_eq!(listed.target, ".");
        let Action::Read(output) = listed.action else {
            panic!("a listing is a read")
        };
        assert!(output.success, "{:?}", output.body);
        let read = plan("read_file", r#"{"path":"a.py"}"#).unwrap();
        assert!(matches!(read.action, Action::Read(ref o) if o.body["content"] == "x = 1\n"));
        let search = plan("search_text", r#"{"pattern":"x"}"#).unwrap();
        assert_eq!(search.target, "x in .");
    }

    #[test]
    fn edits_are_planned_as_file_changes() {
        let write = plan("write_file", r#"{"path":"b.py","content":"y\n"}"#).unwrap();
        assert_eq!(write.target, "b.py");
        assert!(matches!(write.action, Action::Files(FileChange::Edit(ref e)) if e.diff.new_file));
        let patch = plan(
            "apply_patch",
            r#"{"patch":"--- /dev/null\n+++ b/c.py\n@@ -0,0 +1 @@\n+c\n"}"#,
        )
        .unwrap();
        assert!(matches!(patch.action, Action::Files(FileChange::Patch(_))));
    }

    #[test]
    fn bad_calls_get_errors_that_say_what_to_do() {
        let bad_json = plan("read_file", "{\"path\":").unwrap_err();
        assert!(bad_json.contains("not valid JSON"), "{bad_json}");
        let wrong_type = plan("read_file", r#"{"path": 3}"#).unwrap_err();
        assert!(
            wrong_type.contains("must be a string, not a number"),
            "{wrong_type}"
        );
        let missing = plan("write_file", r#"{"path": "a.py"}"#).unwrap_err();
        assert!(missing.contains("`content`"), "{missing}");
        let not_object = plan("read_file", "[1]").unwrap_err();
        assert!(not_object.contains("JSON object"), "{not_object}");
        let runner = plan("run_tests", r#"{"command": 3}"#).unwrap_err();
        assert!(runner.contains("must be a string"), "{runner}");
        let flag = plan("search_text", r#"{"pattern":"x","ignore_case":"yes"}"#).unwrap_err();
        assert!(flag.contains("true or false"), "{flag}");
        let huge = format!(
            r#"{{"path":"a.py","content":"{}"}}"#,
            "x".repeat(crate::tools::MAX_ARGUMENTS_BYTES)
        );
        assert!(plan("write_file", &huge).unwrap_err().contains("limit"));
    }

    #[test]
    fn schemas_name_all_the_tools_with_their_arguments() {
        let schemas = builtin().schemas(&TestCommands::default());
        let names: Vec<_> = schemas
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "list_files",
                "read_file",
                "write_file",
                "replace_text",
                "apply_patch",
                "run_tests",
                "search_text"
            ]
        );
        assert_eq!(
            schemas[4]["function"]["parameters"]["required"],
            json!(["patch"])
        );
        assert_eq!(
            schemas[3]["function"]["parameters"]["required"],
            json!(["path", "old", "new"])
        );
    }

    #[test]
    fn a_registered_tool_replaces_one_of_its_name_and_keeps_its_place_last() {
        struct Echo;
        impl Tool for Echo {
            fn id(&self) -> ToolId {
                ToolName::new("echo").into()
            }
            fn description(&self, _: &TestCommands) -> String {
                "Echo".into()
            }
            fn parameters(&self, _: &TestCommands) -> Value {
                object_schema(json!({}), &[])
            }
            fn plan(&self, _: &Args, _: &ToolContext<'_>) -> Result<Plan, Refused> {
                Err(Refused::new("", "never"))
            }
        }
        let registry = builtin().clone().with(Arc::new(Echo)).with(Arc::new(Echo));
        let names = registry.names();
        assert_eq!(names.len(), 8);
        assert_eq!(names.last().map(|n| n.as_str()), Some("echo"));
        assert!(registry.lookup("echo").is_some());
        assert!(
            builtin().lookup("echo").is_none(),
            "the built-in set is untouched"
        );
    }
}
