//! `session/request_permission`: the options an approval offers and what
//! the client's answer decides, for a tool call and for trusting a folder.
//!
//! Hunk-level choices are a stepwise extension, for a client that says it
//! supports them (`clientCapabilities._meta.stepwise.hunks: true`): the
//! request's `_meta.stepwise.hunks` lists each file's hunk headers, and an
//! `allow_once` answer may carry `_meta.stepwise.accept: [{path, hunks}]`
//! to apply only those hunks (indices into the listed ones).
//!
//! What must stay true: `allow_always` (approve the tool for the rest of
//! the task, revocable) is offered only when the request allows it; an
//! answer that is not one of the options offered, an error or a cancelled
//! request never approves; without the client's word, hunks are neither
//! offered nor taken from an answer: the whole diff is the unit.

use crate::agent::{ApprovalAction, Decision, FileHunks};
use crate::config::trust::{Answer, Pending};
use crate::diff::FileDiff;
use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionResponse,
    ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_always";
pub const REJECT_ONCE: &str = "reject_once";
pub const REJECT_ALWAYS: &str = "reject_always";

/// What the reason of a `reject_always` tells the model.
pub const REJECTED_FOR_TASK: &str =
    "the user declined this tool for the rest of the task; do not call it again";

/// What the client chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
    /// Cancelled, an error, or an option that was not offered.
    Nothing,
}

/// The options of an approval.
pub fn options(allow_for_task: bool) -> Vec<PermissionOption> {
    let mut out = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow",
        PermissionOptionKind::AllowOnce,
    )];
    if allow_for_task {
        out.push(PermissionOption::new(
            ALLOW_ALWAYS,
            "Allow this tool for the rest of the task",
            PermissionOptionKind::AllowAlways,
        ));
    }
    out.push(PermissionOption::new(
        REJECT_ONCE,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    out.push(PermissionOption::new(
        REJECT_ALWAYS,
        "Reject this tool for the rest of the task",
        PermissionOptionKind::RejectAlways,
    ));
    out
}

/// The choice in the client's answer, among the options offered.
pub fn choice(answer: &Result<Value, Value>, offered: &[PermissionOption]) -> Choice {
    let Ok(value) = answer else {
        return Choice::Nothing;
    };
    let Ok(response) = serde_json::from_value::<RequestPermissionResponse>(value.clone()) else {
        return Choice::Nothing;
    };
    let RequestPermissionOutcome::Selected(selected) = response.outcome else {
        return Choice::Nothing;
    };
    let Some(option) = offered.iter().find(|o| o.option_id == selected.option_id) else {
        return Choice::Nothing;
    };
    match option.kind {
        PermissionOptionKind::AllowOnce => Choice::AllowOnce,
        PermissionOptionKind::AllowAlways => Choice::AllowAlways,
        PermissionOptionKind::RejectOnce => Choice::RejectOnce,
        PermissionOptionKind::RejectAlways => Choice::RejectAlways,
        _ => Choice::Nothing,
    }
}

/// The decision a choice makes for the core.
pub fn decision(choice: Choice) -> Decision {
    match choice {
        Choice::AllowOnce => Decision::Approve,
        Choice::AllowAlways => Decision::ApproveToolForTask,
        Choice::RejectOnce | Choice::Nothing => Decision::Decline { reason: None },
        Choice::RejectAlways => Decision::Decline {
            reason: Some(REJECTED_FOR_TASK.into()),
        },
    }
}

/// Whether the client's capabilities say it can choose hunks.
pub fn client_chooses_hunks(capabilities: &Value) -> bool {
    capabilities["_meta"]["stepwise"]["hunks"] == json!(true)
}

/// The files an approval's hunks could be chosen from.
fn hunk_files(action: &ApprovalAction) -> Vec<&FileDiff> {
    match action {
        ApprovalAction::Edit { diff, .. } => vec![diff],
        ApprovalAction::Patch { files }
        | ApprovalAction::KeepRunOutput { files, .. }
        | ApprovalAction::ApplyStage { files, .. } => files.iter().collect(),
        _ => Vec::new(),
    }
}

/// The request's `_meta` for a client that chooses hunks: each file's hunk headers.
pub fn hunk_offer(action: &ApprovalAction) -> Option<serde_json::Map<String, Value>> {
    let files = hunk_files(action);
    if files.is_empty() {
        return None;
    }
    let listed: Vec<Value> = files
        .iter()
        .map(|d| {
            let headers: Vec<String> = d.hunks.iter().map(|h| h.header()).collect();
            json!({"path": d.path, "hunks": headers})
        })
        .collect();
    json!({"stepwise": {"hunks": listed}}).as_object().cloned()
}

#[derive(serde::Deserialize)]
struct Accepted {
    path: String,
    hunks: Vec<usize>,
}

/// The decision of an `allow_once` answer that names hunks (`None`: it
/// names none, so the whole diff is approved).
pub fn hunk_decision(answer: &Result<Value, Value>, action: &ApprovalAction) -> Option<Decision> {
    let accept = answer
        .as_ref()
        .ok()?
        .get("_meta")?
        .get("stepwise")?
        .get("accept")?;
    let accepted: Vec<Accepted> = serde_json::from_value(accept.clone()).ok()?;
    match action {
        ApprovalAction::Edit { diff, .. } => {
            let chosen = accepted.into_iter().find(|a| a.path == diff.path)?;
            Some(Decision::ApproveHunks {
                accepted: chosen.hunks,
            })
        }
        ApprovalAction::Patch { .. }
        | ApprovalAction::KeepRunOutput { .. }
        | ApprovalAction::ApplyStage { .. } => Some(Decision::ApprovePatchHunks {
            files: accepted
                .into_iter()
                .map(|a| FileHunks {
                    path: a.path,
                    accepted: a.hunks,
                })
                .collect(),
        }),
        _ => None,
    }
}

/// The text an approved edit writes when it is not the proposed one
/// (only some hunks were chosen); `None` when the proposal is written as
/// shown, or nothing is.
pub fn written_text(action: &ApprovalAction, decision: &Decision) -> Option<String> {
    match (action, decision) {
        (
            ApprovalAction::Edit {
                diff,
                proposed,
                original,
                ..
            },
            Decision::ApproveHunks { accepted },
        ) => {
            let chosen: Vec<bool> = (0..diff.hunks.len())
                .map(|i| accepted.contains(&i))
                .collect();
            let old = original.as_deref().unwrap_or("");
            Some(crate::diff::apply_hunks(old, proposed, &chosen))
        }
        _ => None,
    }
}

/// The options of the trust question.
pub fn trust_options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(
            ALLOW_ONCE,
            "Trust this folder for this session",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            ALLOW_ALWAYS,
            "Trust this folder and remember",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            REJECT_ONCE,
            "Do not trust (run without these settings)",
            PermissionOptionKind::RejectOnce,
        ),
        PermissionOption::new(
            REJECT_ALWAYS,
            "Do not trust, and remember",
            PermissionOptionKind::RejectAlways,
        ),
    ]
}

/// The trust question's tool call: the folder, each file and value it
/// would apply in the title (shortened), all of them in the content.
pub fn trust_call(id: &str, pending: &Pending) -> ToolCallUpdate {
    const MAX: usize = 300;
    let values: Vec<String> = (pending.assignments.iter())
        .map(|a| format!("{} sets {}", a.file.display(), a.text))
        .collect();
    let mut title = format!("Trust {}? {}", pending.folder.display(), values.join("; "));
    if title.chars().count() > MAX {
        title = title.chars().take(MAX - 1).collect::<String>() + "…";
    }
    let lines = format!(
        "Its project settings decide where requests go or what runs:\n{}",
        pending.lines().join("\n")
    );
    let fields = ToolCallUpdateFields::new()
        .title(crate::present::one_line(&title).into_owned())
        .kind(ToolKind::Other)
        .content(vec![ToolCallContent::from(
            agent_client_protocol_schema::v1::ContentBlock::from(lines),
        )]);
    ToolCallUpdate::new(id.to_string(), fields)
}

/// What a trust choice answers, and whether to remember it. Anything but
/// an allow is "not trusted" (the safe side).
pub fn trust_answer(choice: Choice) -> (Answer, bool) {
    match choice {
        Choice::AllowOnce => (Answer::Trusted, false),
        Choice::AllowAlways => (Answer::Trusted, true),
        Choice::RejectOnce | Choice::Nothing => (Answer::Declined, false),
        Choice::RejectAlways => (Answer::Declined, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn selected(id: &str) -> Result<Value, Value> {
        Ok(json!({"outcome": {"outcome": "selected", "optionId": id}}))
    }

    #[test]
    fn allow_always_is_offered_only_when_the_request_allows_it() {
        let ids = |o: Vec<PermissionOption>| -> Vec<String> {
            o.iter().map(|o| o.option_id.0.to_string()).collect()
        };
        assert_eq!(
            ids(options(true)),
            [ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS]
        );
        assert_eq!(
            ids(options(false)),
            [ALLOW_ONCE, REJECT_ONCE, REJECT_ALWAYS]
        );
        // Not offered, so not taken.
        assert_eq!(
            choice(&selected(ALLOW_ALWAYS), &options(false)),
            Choice::Nothing
        );
    }

    #[test]
    fn only_an_offered_allow_approves() {
        let offered = options(true);
        assert_eq!(
            decision(choice(&selected(ALLOW_ONCE), &offered)),
            Decision::Approve
        );
        assert_eq!(
            decision(choice(&selected(ALLOW_ALWAYS), &offered)),
            Decision::ApproveToolForTask
        );
        let declines = [
            selected(REJECT_ONCE),
            selected("something_else"),
            Ok(json!({"outcome": {"outcome": "cancelled"}})),
            Ok(json!({"nonsense": true})),
            Err(json!({"code": -32603, "message": "no"})),
        ];
        for answer in declines {
            assert!(
                matches!(
                    decision(choice(&answer, &offered)),
                    Decision::Decline { .. }
                ),
                "{answer:?}"
            );
        }
        assert_eq!(
            decision(choice(&selected(REJECT_ALWAYS), &offered)),
            Decision::Decline {
                reason: Some(REJECTED_FOR_TASK.into())
            }
        );
    }

    #[test]
    fn hunks_are_offered_for_file_changes_and_taken_from_an_allow() {
        assert!(client_chooses_hunks(
            &json!({"_meta": {"stepwise": {"hunks": true}}})
        ));
        assert!(!client_chooses_hunks(&json!({"fs": {}})));
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n";
        let edit = ApprovalAction::Edit {
            path: "x.py".into(),
            diff: FileDiff::compute("x.py", Some(old), new),
            proposed: new.into(),
            original: Some(old.into()),
        };
        let offer = Value::Object(hunk_offer(&edit).unwrap());
        assert_eq!(offer["stepwise"]["hunks"][0]["path"], "x.py");
        assert_eq!(
            offer["stepwise"]["hunks"][0]["hunks"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let answer = Ok(json!({
            "outcome": {"outcome": "selected", "optionId": ALLOW_ONCE},
            "_meta": {"stepwise": {"accept": [{"path": "x.py", "hunks": [1]}]}}
        }));
        assert_eq!(
            hunk_decision(&answer, &edit),
            Some(Decision::ApproveHunks { accepted: vec![1] })
        );
        let plain = Ok(json!({"outcome": {"outcome": "selected", "optionId": ALLOW_ONCE}}));
        assert_eq!(hunk_decision(&plain, &edit), None);
        let run = ApprovalAction::RunTests {
            command: vec!["x".into()],
            sandbox: String::new(),
        };
        assert!(hunk_offer(&run).is_none());
        assert_eq!(hunk_decision(&answer, &run), None);
    }

    #[test]
    fn the_trust_question_names_the_file_and_its_values_in_its_title() {
        let pending = Pending {
            folder: "/ws".into(),
            assignments: vec![crate::config::trust::Assignment {
                file: "/ws/.stepwise/stepwise.toml".into(),
                text: "base_url = \"http://evil.example\"\x1b[2J".into(),
                decides: "where requests go",
            }],
        };
        let call = serde_json::to_value(trust_call("trust-0", &pending)).unwrap();
        let title = call["title"].as_str().unwrap();
        assert!(
            title.starts_with("Trust /ws? /ws/.stepwise/stepwise.toml sets base_url = "),
            "{title}"
        );
        assert!(!title.contains('\x1b'), "{title}");
        let long = Pending {
            assignments: vec![
                crate::config::trust::Assignment {
                    file: "/ws/.stepwise/stepwise.toml".into(),
                    text: format!("base_url = \"{}\"", "x".repeat(1000)),
                    decides: "where requests go",
                };
                2
            ],
            ..pending
        };
        let call = serde_json::to_value(trust_call("trust-0", &long)).unwrap();
        assert!(call["title"].as_str().unwrap().chars().count() <= 300);
        let listed = call["content"][0]["content"]["text"].as_str().unwrap();
        assert_eq!(listed.matches(&"x".repeat(1000)).count(), 2, "all of it");
    }

    #[test]
    fn trust_is_given_only_by_an_allow() {
        assert_eq!(trust_answer(Choice::AllowOnce), (Answer::Trusted, false));
        assert_eq!(trust_answer(Choice::AllowAlways), (Answer::Trusted, true));
        assert_eq!(trust_answer(Choice::Nothing), (Answer::Declined, false));
        assert_eq!(trust_answer(Choice::RejectAlways), (Answer::Declined, true));
    }
}
