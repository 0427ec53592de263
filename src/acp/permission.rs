//! `session/request_permission`: the options an approval offers and what
//! the client's answer decides, for a tool call and for trusting a folder.
//!
//! What must stay true: `allow_always` (approve the tool for the rest of
//! the task, revocable) is offered only when the request allows it; an
//! answer that is not one of the options offered, an error or a cancelled
//! request never approves; hunk-level choices are not offered (a client has
//! no way to say it supports them yet), so the whole diff is the unit.

use crate::agent::Decision;
use crate::config::trust::{Answer, Pending};
use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionResponse,
    ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

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

/// The trust question's tool call: the folder and every value it would apply.
pub fn trust_call(id: &str, pending: &Pending) -> ToolCallUpdate {
    let title = format!(
        "Trust {}? Its project settings decide where requests go or what runs",
        crate::present::one_line(&pending.folder.display().to_string())
    );
    let lines = pending.lines().join("\n");
    let fields = ToolCallUpdateFields::new()
        .title(title)
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
    fn trust_is_given_only_by_an_allow() {
        assert_eq!(trust_answer(Choice::AllowOnce), (Answer::Trusted, false));
        assert_eq!(trust_answer(Choice::AllowAlways), (Answer::Trusted, true));
        assert_eq!(trust_answer(Choice::Nothing), (Answer::Declined, false));
        assert_eq!(trust_answer(Choice::RejectAlways), (Answer::Declined, true));
    }
}
