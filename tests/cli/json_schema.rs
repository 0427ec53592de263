//! The `--json` event schema is what the README documents (issue 16): the
//! tables under "JSON events" are parsed and compared with the lines `exec`
//! emits — a full run of the real binary, plus every `AgentEvent` variant
//! built here and printed by the same function `exec` uses. An event or a
//! field emitted but not documented, or documented but never emitted, fails.

use crate::support::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use stepwise::agent::*;
use stepwise::diff::FileDiff;
use stepwise::headless::json;
use stepwise::tools::ToolName;

/// A documented field: its name and, for objects, the type and whether it is a list.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    object: Option<(String, bool)>,
}

/// The README's two tables: events and objects, each name to its fields.
type Tables = (BTreeMap<String, Vec<Field>>, BTreeMap<String, Vec<Field>>);

fn parse_fields(cell: &str) -> Vec<Field> {
    cell.split(", ")
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            // `name` or `name (Type)` or `name ([Type])`, in backticks.
            let inner = f.split('`').nth(1).expect("a field in backticks");
            let (name, object) = match inner.split_once(" (") {
                Some((name, t)) => {
                    let t = t.trim_end_matches(')');
                    let list = t.starts_with('[');
                    (name, Some((t.trim_matches(['[', ']']).to_string(), list)))
                }
                None => (inner, None),
            };
            Field {
                name: name.to_string(),
                object,
            }
        })
        .collect()
}

fn readme_tables() -> Tables {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("### JSON events")
        .nth(1)
        .expect("README has a JSON events section");
    let section = section.split("\n#").next().unwrap_or_default();
    let (mut events, mut objects) = (BTreeMap::new(), BTreeMap::new());
    let mut table = None;
    for line in section.lines() {
        let cells: Vec<&str> = line
            .split(" | ")
            .map(|c| c.trim_matches(['|', ' ']))
            .collect();
        match cells.first() {
            Some(&"Event") => table = Some(true),
            Some(&"Object") => table = Some(false),
            Some(first) if first.starts_with('`') && cells.len() >= 2 => {
                let name = first.trim_matches('`').to_string();
                let fields = parse_fields(cells[1]);
                match table {
                    Some(true) => events.insert(name, fields),
                    Some(false) => objects.insert(name, fields),
                    None => panic!("a row before any table: {line}"),
                };
            }
            _ => {}
        }
    }
    (events, objects)
}

/// Checks emitted lines against the tables, remembering what was seen.
struct Checker {
    tables: Tables,
    seen_events: BTreeSet<String>,
    seen_object_fields: BTreeMap<String, BTreeSet<String>>,
}

impl Checker {
    fn line(&mut self, line: &str) {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(value["v"], 1, "{line}");
        let kind = value["event"].as_str().expect("event").to_string();
        let fields = self
            .tables
            .0
            .get(&kind)
            .unwrap_or_else(|| panic!("undocumented event {kind}"));
        let fields = fields.clone();
        let emitted: BTreeSet<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut documented: BTreeSet<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        documented.extend(["v", "event"]);
        assert_eq!(emitted, documented, "fields of {kind}");
        for f in &fields {
            self.value(&f.object, &value[&f.name], &format!("{kind}.{}", f.name));
        }
        self.seen_events.insert(kind);
    }

    fn value(&mut self, object: &Option<(String, bool)>, value: &Value, at: &str) {
        let Some((name, list)) = object else { return };
        let items: Vec<&Value> = match (list, value) {
            (_, Value::Null) => return,
            (true, Value::Array(items)) => items.iter().collect(),
            (false, v @ Value::Object(_)) => vec![v],
            _ => panic!("{at}: not a {name}: {value}"),
        };
        let fields = self
            .tables
            .1
            .get(name)
            .unwrap_or_else(|| panic!("undocumented object {name}"))
            .clone();
        for item in items {
            for (key, inner) in item.as_object().unwrap() {
                let field = fields.iter().find(|f| &f.name == key);
                let field =
                    field.unwrap_or_else(|| panic!("{at}: {name} has undocumented field {key}"));
                self.seen_object_fields
                    .entry(name.clone())
                    .or_default()
                    .insert(key.clone());
                self.value(&field.object, inner, &format!("{at}.{key}"));
            }
        }
    }

    fn all_documented_were_seen(&self) {
        let documented: BTreeSet<&String> = self.tables.0.keys().collect();
        let seen: BTreeSet<&String> = self.seen_events.iter().collect();
        assert_eq!(documented, seen, "documented events never emitted");
        for (name, fields) in &self.tables.1 {
            let seen = self
                .seen_object_fields
                .get(name)
                .cloned()
                .unwrap_or_default();
            let documented: BTreeSet<String> = fields.iter().map(|f| f.name.clone()).collect();
            assert_eq!(
                documented, seen,
                "fields of {name} documented but never emitted"
            );
        }
    }
}

fn diff() -> FileDiff {
    FileDiff::compute("calculator.py", Some("a\nb\n"), "a\nc\n")
}

/// One of each event, built here. The match below has no wildcard: a new
/// variant does not compile until it is built here (and documented).
fn every_event() -> Vec<AgentEvent> {
    let usage = stepwise::llm::TokenUsage::default();
    let request = |action| {
        AgentEvent::ApprovalRequested(ApprovalRequest {
            step: 1,
            call_id: "c".into(),
            tool: ToolName::WriteFile,
            action,
            allow_for_task: true,
            reply: tokio::sync::oneshot::channel().0,
        })
    };
    let receipt = Receipt {
        tests: Some(TestReceipt {
            command: "python3 -m unittest".into(),
            exit_code: Some(0),
            summary: "5 passed".into(),
        }),
        files: vec![FileStat {
            path: "a.py".into(),
            added: 1,
            removed: 0,
            created: true,
        }],
        diff_hash: "abc".into(),
        no_tool_used: false,
    };
    let events = vec![
        AgentEvent::SessionReady {
            rules: vec!["AGENTS.md".into()],
        },
        AgentEvent::TaskStarted {
            task: "t".into(),
            max_steps: 20,
            rules: vec![],
        },
        AgentEvent::ModelRequest { steps_done: 0 },
        AgentEvent::AssistantDelta { text: "a".into() },
        AgentEvent::AssistantMessage { text: "a".into() },
        AgentEvent::Usage(usage),
        AgentEvent::Retrying {
            retry: 1,
            max_retries: 4,
            delay_ms: 10,
            error: "HTTP 500".into(),
        },
        AgentEvent::ToolCallStreaming {
            index: 0,
            tool: ToolRef::from_name("write_file"),
            fragment: "{".into(),
        },
        AgentEvent::LiveEditBase {
            index: 0,
            tool: ToolName::WriteFile.into(),
            path: "a".into(),
            old: None,
        },
        AgentEvent::StepStarted {
            step: 1,
            max_steps: 20,
        },
        AgentEvent::ToolCallProposed {
            step: 1,
            call_id: "c".into(),
            tool: ToolName::WriteFile.into(),
            target: "a".into(),
            arguments: serde_json::json!({}),
            diff: Some(diff()),
            needs_approval: true,
        },
        request(ApprovalAction::Edit {
            path: "a".into(),
            diff: diff(),
            proposed: String::new(),
            original: None,
        }),
        request(ApprovalAction::Patch {
            files: vec![diff()],
        }),
        request(ApprovalAction::Delete {
            path: "a".into(),
            diff: diff(),
        }),
        request(ApprovalAction::Undo {
            files: vec![diff()],
        }),
        request(ApprovalAction::RunTests {
            command: vec!["python3".into()],
        }),
        AgentEvent::ToolRunning {
            step: 1,
            call_id: "c".into(),
            auto_approved: false,
        },
        AgentEvent::ToolFinished {
            step: 1,
            call_id: "c".into(),
            tool: ToolRef::from_name("nope"),
            status: CallStatus::Ok,
            summary: "s".into(),
            result: serde_json::json!({"success": true}),
        },
        AgentEvent::ProtocolRepair {
            attempt: 1,
            error: "e".into(),
        },
        AgentEvent::GateRefused {
            step: 2,
            reason: "r".into(),
        },
        AgentEvent::FinalAnswer {
            text: "done".into(),
            receipt,
        },
        AgentEvent::SessionDiff {
            files: vec![diff()],
            git: Some(GitStatus {
                branch: Some("main".into()),
                other_dirty: vec![],
            }),
        },
        AgentEvent::UndoFinished {
            reverted: vec![],
            error: None,
        },
        AgentEvent::Error {
            message: "m".into(),
        },
        AgentEvent::ResumeRefused {
            message: "m".into(),
        },
        AgentEvent::ScopesChanged {
            approved: vec![ToolName::RunTests],
        },
        AgentEvent::TaskFinished {
            reason: FinishReason::Error("e".into()),
            steps: 1,
            usage,
            cost_usd: None,
        },
        AgentEvent::Cost {
            request_usd: 0.1,
            task_usd: 0.1,
            session_usd: 0.1,
        },
        AgentEvent::Compacted {
            before_tokens: 2,
            after_tokens: 1,
            elided: 1,
            summarized: 0,
        },
    ];
    for event in &events {
        match event {
            AgentEvent::SessionReady { .. }
            | AgentEvent::TaskStarted { .. }
            | AgentEvent::ModelRequest { .. }
            | AgentEvent::AssistantDelta { .. }
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::Usage(_)
            | AgentEvent::Retrying { .. }
            | AgentEvent::ToolCallStreaming { .. }
            | AgentEvent::LiveEditBase { .. }
            | AgentEvent::StepStarted { .. }
            | AgentEvent::ToolCallProposed { .. }
            | AgentEvent::ApprovalRequested(_)
            | AgentEvent::ToolRunning { .. }
            | AgentEvent::ToolFinished { .. }
            | AgentEvent::ProtocolRepair { .. }
            | AgentEvent::GateRefused { .. }
            | AgentEvent::FinalAnswer { .. }
            | AgentEvent::SessionDiff { .. }
            | AgentEvent::UndoFinished { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::ResumeRefused { .. }
            | AgentEvent::ScopesChanged { .. }
            | AgentEvent::TaskFinished { .. }
            | AgentEvent::Cost { .. }
            | AgentEvent::Compacted { .. } => {}
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_documents_every_event_and_field_exec_emits() {
    let mut checker = Checker {
        tables: readme_tables(),
        seen_events: BTreeSet::new(),
        seen_object_fields: BTreeMap::new(),
    };
    assert!(
        checker.tables.0.len() >= 25,
        "{:?}",
        checker.tables.0.keys()
    );

    // A full run of the real binary: the seed task, approved, in JSON.
    let model = MockModel::start(seed_script("unittest")).await;
    let ws = copy_workspace();
    let mut cmd = std::process::Command::new(stepwise_bin());
    let out = hermetic_env(&mut cmd)
        .args([
            "exec",
            "--json",
            "--yes",
            "--base-url",
            &model.base_url(),
            "--workspace",
        ])
        .arg(ws.path())
        .arg("Add divide(a, b) with tests")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    for line in stdout.lines() {
        checker.line(line);
    }
    for kind in [
        "task_started",
        "tool_call_proposed",
        "approval_requested",
        "tool_finished",
        "final_answer",
        "changed_files",
    ] {
        assert!(
            checker.seen_events.contains(kind),
            "the run emitted no {kind}"
        );
    }

    // Every other event, printed by the function exec prints with.
    for event in every_event() {
        checker.line(&json::event_line(&event));
    }
    checker.line(&json::notice_line("n", std::path::Path::new("/tmp/w")));
    checker.line(&json::changed_files_line(&[diff()]));
    checker.line(&json::unattended_line(1, "t"));
    checker.all_documented_were_seen();
}
