//! The `--json` event schema is what the docs document (issue 16): the
//! tables of the "JSON events" page (`docs/json-events.md`) are parsed and compared with the lines `exec`
//! emits — a full run of the real binary, plus every `AgentEvent` variant
//! built here and printed by the same function `exec` uses. An event or a
//! field emitted but not documented, or documented but never emitted, fails.

use crate::support::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use stepwise::headless::json;

/// A documented field: its name and, for objects, the type and whether it is a list.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    object: Option<(String, bool)>,
}

/// The JSON events page's two tables: events and objects, each name to its fields.
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
    let docs = crate::support::docs::all_text();
    let section = docs
        .split("\n# JSON events\n")
        .nth(1)
        .expect("the docs have a JSON events page");
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

mod every_event;

/// Events of the agent that `exec` never sends (see `src/headless.rs`).
const NOT_SENT_BY_EXEC: &[&str] = &["session_ready"];

use every_event::{diff, every_event};

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

    // Events only the full-screen UI is sent: exec never sends them (its
    // JSON stream carries the sandbox on each run_tests approval, and the
    // rule files in task_started), so the docs must not document them.
    for kind in NOT_SENT_BY_EXEC {
        assert!(
            !checker.tables.0.contains_key(*kind),
            "the docs document {kind}, which exec --json never sends"
        );
        assert!(
            !checker.seen_events.contains(*kind),
            "exec --json sent {kind}: document it and take it off NOT_SENT_BY_EXEC"
        );
    }

    // Every other event, printed by the function exec prints with.
    for event in every_event() {
        let line = json::event_line(&event);
        let value: Value = serde_json::from_str(&line).unwrap();
        if NOT_SENT_BY_EXEC.contains(&value["event"].as_str().unwrap()) {
            continue;
        }
        checker.line(&line);
    }
    checker.line(&json::notice_line("n", std::path::Path::new("/tmp/w")));
    checker.line(&json::changed_files_line(
        &[diff()],
        Some("2026-12-01T09-00-00Z"),
    ));
    checker.line(&json::unattended_line(1, "t"));
    checker.all_documented_were_seen();
}
