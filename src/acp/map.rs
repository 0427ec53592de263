//! The ACP shape of what the core says: a proposed call as a `tool_call`
//! (its `kind`, title and `locations`), an approval as the tool call of a
//! permission request (with `diff` content for an edit), how a call ended,
//! why a turn stopped, the receipt as text, a prompt's content as the task,
//! and a restored conversation as `session/update`s. Pure functions.
//!
//! What must stay true: the kind and title come from the call's `CallKind`
//! and the approval's shape, never from a tool's name; every path sent is
//! absolute (the workspace root joined with the workspace path); every
//! string shown as text passes `present`'s sanitizer. An edit's call carries
//! `diff` content from its proposal to its end: the changed lines with
//! their context while only the hunks are known, the exact old and new
//! contents once it is asked about (what will be written), and the text
//! written once done. Text content is never cut; only titles are one line.

use crate::agent::{ApprovalAction, CallKind, CallStatus, FinishReason, Receipt, RestoredEntry};
use crate::diff::FileDiff;
use crate::present::{one_line, receipt_lines, sanitize};
use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, Diff, EmbeddedResourceResource, SessionUpdate, StopReason,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use std::path::Path;

/// The ACP kind of a proposed call, from what its plan does.
pub fn kind_of_call(kind: CallKind) -> ToolKind {
    match kind {
        CallKind::Read => ToolKind::Read,
        CallKind::Edit => ToolKind::Edit,
        CallKind::Execute => ToolKind::Execute,
        CallKind::External | CallKind::Other => ToolKind::Other,
    }
}

/// The ACP kind of an approval, from its shape.
pub fn kind_of_action(action: &ApprovalAction) -> ToolKind {
    match action {
        ApprovalAction::Edit { .. }
        | ApprovalAction::Patch { .. }
        | ApprovalAction::Undo { .. }
        | ApprovalAction::KeepRunOutput { .. }
        | ApprovalAction::ApplyStage { .. } => ToolKind::Edit,
        ApprovalAction::Delete { .. } => ToolKind::Delete,
        ApprovalAction::RunTests { .. } => ToolKind::Execute,
        ApprovalAction::McpCall { .. } => ToolKind::Other,
    }
}

/// A location in the workspace (the root of an empty path).
fn location(root: &Path, path: &str) -> ToolCallLocation {
    let path = path.trim();
    if path.is_empty() || path == "." {
        ToolCallLocation::new(root.to_path_buf())
    } else {
        ToolCallLocation::new(root.join(path))
    }
}

fn text(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::from(text.into()))
}

/// A call's title: what it is and what it works on, never its arguments.
pub fn call_title(tool: &str, target: &str) -> String {
    let title = format!("{} {}", one_line(tool), one_line(target));
    title.trim_end().to_string()
}

/// Where a call of this kind points: its file, for reads and edits.
pub fn call_locations(kind: CallKind, target: &str, root: &Path) -> Vec<ToolCallLocation> {
    match kind {
        CallKind::Read | CallKind::Edit if !target.is_empty() => vec![location(root, target)],
        _ => Vec::new(),
    }
}

/// A call the model proposed, before anything ran. `target` is its path
/// (for reads and edits) or runner; `arguments` are shown raw; `diff` is
/// what an edit would change, as far as the core knows it yet.
pub fn proposed(
    id: &str,
    kind: CallKind,
    tool: &str,
    target: &str,
    arguments: serde_json::Value,
    diff: Option<&FileDiff>,
    root: &Path,
) -> ToolCall {
    let content: Vec<ToolCallContent> = diff.map(|d| hunk_diff(root, d)).into_iter().collect();
    ToolCall::new(id.to_string(), call_title(tool, target))
        .kind(kind_of_call(kind))
        .status(ToolCallStatus::Pending)
        .locations(call_locations(kind, target, root))
        .content(content)
        .raw_input(arguments)
}

/// A file diff as `diff` content when only its hunks are known: the old
/// and new side of each hunk with its context lines (hunks apart are
/// joined), at the file's absolute path. A deleted file's new text is empty.
pub fn hunk_diff(root: &Path, diff: &FileDiff) -> ToolCallContent {
    use crate::diff::LineKind;
    let (mut old, mut new) = (String::new(), String::new());
    for hunk in &diff.hunks {
        let mut last: Option<LineKind> = None;
        for line in &hunk.lines {
            if line.is_no_newline_marker() {
                // The line before it has no newline: take back the one added.
                if last != Some(LineKind::Added) {
                    old.pop();
                }
                if last != Some(LineKind::Removed) {
                    new.pop();
                }
                continue;
            }
            let text = format!("{}\n", line.text);
            match line.kind {
                LineKind::Removed => old.push_str(&text),
                LineKind::Added => new.push_str(&text),
                _ => {
                    old.push_str(&text);
                    new.push_str(&text);
                }
            }
            last = Some(line.kind);
        }
    }
    let old = (!diff.new_file).then_some(old);
    ToolCallContent::from(Diff::new(root.join(&diff.path), new).old_text(old))
}

/// An edit's `diff` content with the text that was written instead of the
/// proposed one (hunks chosen, or the user's own version).
pub fn with_written(content: &mut [ToolCallContent], written: &str) {
    for item in content {
        if let ToolCallContent::Diff(diff) = item {
            diff.new_text = written.to_string();
        }
    }
}

/// The tool call of a permission request: the action's title (a test run's
/// names its sandbox state), kind, locations and what would change (an
/// edit's whole old and new text as `diff` content, so the editor shows it
/// before it is approved).
pub fn permission_call(id: &str, action: &ApprovalAction, root: &Path) -> ToolCallUpdate {
    let (content, locations) = match action {
        ApprovalAction::Edit {
            path,
            proposed,
            original,
            ..
        } => {
            let diff = Diff::new(root.join(path), proposed.clone()).old_text(original.clone());
            (
                vec![ToolCallContent::from(diff)],
                vec![location(root, path)],
            )
        }
        ApprovalAction::Delete { path, diff } => {
            (vec![hunk_diff(root, diff)], vec![location(root, path)])
        }
        ApprovalAction::Patch { files }
        | ApprovalAction::Undo { files }
        | ApprovalAction::KeepRunOutput { files, .. }
        | ApprovalAction::ApplyStage { files, .. } => (
            files.iter().map(|d| hunk_diff(root, d)).collect(),
            files.iter().map(|d| location(root, &d.path)).collect(),
        ),
        ApprovalAction::RunTests { command, .. } => (
            vec![text(format!("`{}`", one_line(&command.join(" "))))],
            Vec::new(),
        ),
        ApprovalAction::McpCall { arguments, .. } => (
            vec![text(format!("```json\n{}\n```", sanitize(arguments)))],
            Vec::new(),
        ),
    };
    let fields = ToolCallUpdateFields::new()
        .title(one_line(&action.prompt()).into_owned())
        .kind(kind_of_action(action))
        .status(ToolCallStatus::Pending)
        .content(content)
        .locations(locations);
    ToolCallUpdate::new(id.to_string(), fields)
}

/// A call's status change (it runs now).
pub fn running(id: &str) -> ToolCallUpdate {
    ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
    )
}

/// The ACP status of how a call ended (a declined call failed: it did not run).
pub fn status_of(status: CallStatus) -> ToolCallStatus {
    match status {
        CallStatus::Ok => ToolCallStatus::Completed,
        CallStatus::Failed | CallStatus::Declined => ToolCallStatus::Failed,
    }
}

/// How a call ended: its status, the `diff` content it kept (`kept`, with
/// what was written; none for a call that did not run), then its outcome as text (a failure's whole error,
/// else the one-line summary), and its result.
pub fn finished(
    id: &str,
    status: CallStatus,
    summary: &str,
    result: serde_json::Value,
    kept: Vec<ToolCallContent>,
) -> ToolCallUpdate {
    let error = result.get("error").and_then(serde_json::Value::as_str);
    let said = match (status, error) {
        (CallStatus::Failed | CallStatus::Declined, Some(error)) if !error.is_empty() => {
            sanitize(error).into_owned()
        }
        (CallStatus::Declined, _) if summary.is_empty() => "declined".to_string(),
        _ => one_line(summary).into_owned(),
    };
    let mut content = kept;
    if !said.is_empty() {
        content.push(text(said));
    }
    let mut fields = ToolCallUpdateFields::new()
        .status(status_of(status))
        .raw_output(result);
    if !content.is_empty() {
        fields = fields.content(content);
    }
    ToolCallUpdate::new(id.to_string(), fields)
}

/// Why the turn stopped: the step budget is `max_turn_requests` (so is the
/// cost limit, a budget too); the model's refusal is a `refusal`, and so is
/// an error that ended the task (the agent will not go on; `_meta` says
/// which, and the error is the turn's last message).
pub fn stop_reason(reason: &FinishReason) -> StopReason {
    match reason {
        FinishReason::Answered => StopReason::EndTurn,
        FinishReason::BudgetExhausted | FinishReason::CostLimit => StopReason::MaxTurnRequests,
        FinishReason::Cancelled => StopReason::Cancelled,
        FinishReason::Error(_) | FinishReason::Refused(_) => StopReason::Refusal,
    }
}

/// The receipt as the turn's last message: computed by stepwise.
pub fn receipt_text(receipt: &Receipt) -> String {
    let lines: Vec<String> = receipt_lines(receipt)
        .into_iter()
        .map(|l| sanitize(&l.text).into_owned())
        .collect();
    format!("\n\n{}", lines.join("\n"))
}

/// A piece of the agent's message.
pub fn message(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(
        sanitize(text).into_owned(),
    )))
}

/// The user's task, as a replay shows it.
pub fn user_message(text: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::from(
        sanitize(text).into_owned(),
    )))
}

/// A note about the turn (a retry, a refused answer): the agent's thought.
pub fn note(text: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(
        sanitize(text).into_owned(),
    )))
}

/// The task a prompt asks for: its text, and each embedded resource's text
/// under its URI (a link names its URI). Images, audio and binary resources
/// are refused (the prompt capabilities do not offer them).
pub fn prompt_text(blocks: &[ContentBlock]) -> Result<String, String> {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(format!("@{}", link.uri)),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    parts.push(format!(
                        "<context uri=\"{}\">\n{}\n</context>",
                        r.uri, r.text
                    ));
                }
                _ => return Err("a binary resource cannot be part of a task".into()),
            },
            _ => return Err("only text and text resources can be part of a task".into()),
        }
    }
    let task = parts.join("\n");
    if task.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(task)
}

/// One change of a restored session's change log: path, before, after.
pub type Recorded = (String, Option<String>, Option<String>);

/// A restored conversation as updates, as it went live: the user's tasks,
/// the model's text, and each tool call with the title, kind, locations and
/// status it had, an edit with the `diff` its change log recorded (`changes`,
/// in order), a decline with its reason (`id` numbers the calls).
pub fn replay(
    entries: &[RestoredEntry],
    changes: &[Recorded],
    root: &Path,
    id: impl Fn(usize) -> String,
) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    let mut next_change = 0;
    for (i, entry) in entries.iter().enumerate() {
        match entry {
            RestoredEntry::User { text } => out.push(user_message(text)),
            RestoredEntry::Assistant { text } => out.push(message(text)),
            RestoredEntry::Tool {
                name,
                arguments,
                call_kind,
                target,
                status,
                detail,
                summary,
                ..
            } => {
                let raw = serde_json::from_str(arguments)
                    .unwrap_or_else(|_| serde_json::Value::String(arguments.clone()));
                let mut content = Vec::new();
                if *call_kind == CallKind::Edit && *status == Some(CallStatus::Ok) {
                    let found = (changes.iter().enumerate().skip(next_change))
                        .find(|(_, (path, _, _))| path == target.trim());
                    if let Some((n, (path, before, after))) = found {
                        next_change = n + 1;
                        let new = after.clone().unwrap_or_default();
                        let diff = Diff::new(root.join(path), new).old_text(before.clone());
                        content.push(ToolCallContent::from(diff));
                    }
                }
                let said = match status {
                    Some(CallStatus::Failed | CallStatus::Declined) if !detail.is_empty() => {
                        sanitize(detail).into_owned()
                    }
                    Some(CallStatus::Declined) => "declined".to_string(),
                    _ => one_line(summary).into_owned(),
                };
                if !said.is_empty() {
                    content.push(text(said));
                }
                let call = ToolCall::new(id(i), call_title(name, target))
                    .kind(kind_of_call(*call_kind))
                    .status(status.map_or(ToolCallStatus::Completed, status_of))
                    .locations(call_locations(*call_kind, target, root))
                    .content(content)
                    .raw_input(raw);
                out.push(SessionUpdate::ToolCall(call));
            }
            RestoredEntry::Gate { text } | RestoredEntry::Notice { text } => out.push(note(text)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn as_json(value: impl serde::Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    #[test]
    fn an_edit_is_offered_with_its_whole_diff_at_an_absolute_path() {
        let action = ApprovalAction::Edit {
            path: "src/a.py".into(),
            diff: FileDiff::compute("src/a.py", Some("x\n"), "y\n"),
            proposed: "y\n".into(),
            original: Some("x\n".into()),
        };
        let call = as_json(permission_call("c1", &action, Path::new("/ws")));
        assert_eq!(call["toolCallId"], "c1");
        assert_eq!(call["kind"], "edit");
        assert_eq!(call["title"], "Write src/a.py (+1 −1)");
        assert_eq!(
            call["content"][0],
            json!({"type": "diff", "path": "/ws/src/a.py", "oldText": "x\n", "newText": "y\n"})
        );
        assert_eq!(call["locations"][0]["path"], "/ws/src/a.py");
        let created = ApprovalAction::Edit {
            path: "new.py".into(),
            diff: FileDiff::compute("new.py", None, "n\n"),
            proposed: "n\n".into(),
            original: None,
        };
        let call = as_json(permission_call("c2", &created, Path::new("/ws")));
        assert!(call["content"][0]["oldText"].is_null(), "{call}");
    }

    #[test]
    fn a_diff_known_by_its_hunks_shows_both_sides_of_each() {
        let old = "a\nb\nc\n";
        let new = "a\nB\nc";
        let content = as_json(hunk_diff(
            Path::new("/ws"),
            &FileDiff::compute("f.txt", Some(old), new),
        ));
        assert_eq!(content["type"], "diff");
        assert_eq!(content["path"], "/ws/f.txt");
        assert_eq!(content["oldText"], old);
        assert_eq!(content["newText"], new);
        let created = as_json(hunk_diff(
            Path::new("/ws"),
            &FileDiff::compute("n.txt", None, "x\n"),
        ));
        assert!(created["oldText"].is_null(), "{created}");
        assert_eq!(created["newText"], "x\n");
    }

    #[test]
    fn kinds_come_from_the_shape_and_a_test_run_names_its_sandbox() {
        let run = ApprovalAction::RunTests {
            command: vec!["python3".into(), "-m".into(), "pytest".into()],
            sandbox: "sandboxed".into(),
        };
        let call = as_json(permission_call("t", &run, Path::new("/ws")));
        assert_eq!(call["kind"], "execute");
        assert_eq!(call["title"], "Run python3 -m pytest (sandboxed)");
        let delete = ApprovalAction::Delete {
            path: "old.py".into(),
            diff: FileDiff::compute("old.py", Some("a\n"), ""),
        };
        assert_eq!(kind_of_action(&delete), ToolKind::Delete);
        let mcp = ApprovalAction::McpCall {
            server: "s".into(),
            tool: "t".into(),
            arguments: "{}".into(),
        };
        assert_eq!(kind_of_action(&mcp), ToolKind::Other);
        assert_eq!(kind_of_call(CallKind::Read), ToolKind::Read);
        assert_eq!(kind_of_call(CallKind::Execute), ToolKind::Execute);
    }

    #[test]
    fn a_proposed_read_points_at_its_file() {
        let call = as_json(proposed(
            "r",
            CallKind::Read,
            "read_file",
            "calculator.py",
            json!({"path": "calculator.py"}),
            None,
            Path::new("/ws"),
        ));
        assert_eq!(call["kind"], "read");
        // `pending` is the default, left out on the wire.
        assert!(call["status"].is_null(), "{call}");
        assert_eq!(call["locations"][0]["path"], "/ws/calculator.py");
        assert_eq!(call["rawInput"]["path"], "calculator.py");
    }

    #[test]
    fn stop_reasons_say_why_the_turn_ended() {
        assert_eq!(stop_reason(&FinishReason::Answered), StopReason::EndTurn);
        assert_eq!(
            stop_reason(&FinishReason::BudgetExhausted),
            StopReason::MaxTurnRequests
        );
        assert_eq!(stop_reason(&FinishReason::Cancelled), StopReason::Cancelled);
        assert_eq!(
            stop_reason(&FinishReason::Error("x".into())),
            StopReason::Refusal
        );
    }

    #[test]
    fn a_prompt_takes_text_and_embedded_text_resources() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "fix it"},
            {"type": "resource", "resource": {"uri": "file:///ws/a.py", "text": "print(1)\n"}},
        ]))
        .unwrap();
        let task = prompt_text(&blocks).unwrap();
        assert!(
            task.starts_with("fix it\n<context uri=\"file:///ws/a.py\">"),
            "{task}"
        );
        assert!(task.contains("print(1)"), "{task}");
        let image: Vec<ContentBlock> = serde_json::from_value(
            json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}]),
        )
        .unwrap();
        assert!(prompt_text(&image).is_err());
        assert!(prompt_text(&[]).is_err());
    }

    #[test]
    fn a_replay_shows_each_call_with_how_it_ended() {
        let entries = vec![
            RestoredEntry::User { text: "t".into() },
            RestoredEntry::Tool {
                name: "run_tests".into(),
                arguments: "{}".into(),
                call_id: "c1".into(),
                call_kind: CallKind::Execute,
                target: "pytest".into(),
                status: Some(CallStatus::Failed),
                detail: "exit 1".into(),
                summary: String::new(),
                edited: false,
                output: String::new(),
            },
            RestoredEntry::Assistant { text: "a".into() },
        ];
        let updates: Vec<Value> = replay(&entries, &[], Path::new("/ws"), |i| format!("r{i}"))
            .into_iter()
            .map(as_json)
            .collect();
        assert_eq!(updates[0]["sessionUpdate"], "user_message_chunk");
        assert_eq!(updates[1]["sessionUpdate"], "tool_call");
        assert_eq!(updates[1]["status"], "failed");
        assert_eq!(updates[1]["toolCallId"], "r1");
        assert_eq!(updates[2]["sessionUpdate"], "agent_message_chunk");
    }
}
