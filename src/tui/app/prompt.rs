//! Answering the open approval request: the prompt's keys (y/n/r/a, hunk
//! navigation and toggling, `e` to edit the proposal), the decision that goes
//! back to the core, and what the tool-call rows and the header show after.
//! A patch's hunks are reviewed across its files (`]` / `[` jump a file).

use crate::agent::{ApprovalAction, Decision};
use crate::tui::app::{App, Effect, Focus, TaskState};
use crate::tui::approval::Confirm;
use crate::tui::input::keymap::{self, Action, Layer, scroll_move};
use crate::tui::panes::scroll::ScrollMove;
use crate::tui::panes::tool_calls::RowStatus;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

impl App {
    /// While an approval is open only its keys (and scrolling the diff) work.
    pub(in crate::tui) fn prompt_key(&mut self, key: KeyEvent, quit_key: bool) {
        if quit_key {
            return self.quit_key();
        }
        if self.approvals.arming_until(self.now()).is_some() {
            // Typed before the prompt could be read: never an answer. Text
            // stays text (and marks the user as composing), nothing is lost.
            let plain = !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
            if plain && matches!(key.code, KeyCode::Char(_) | KeyCode::Backspace) {
                self.focus = Focus::Input;
                self.input_key(key);
            }
            return;
        }
        if self.approvals.reason().is_some() {
            return self.reason_key(key);
        }
        // The focused pane takes Enter and the navigation keys; the
        // prompt's own letters (y n e f j k Space a) answer from anywhere.
        if let pane @ (Focus::ToolCalls | Focus::Conversation) = self.focus {
            match key.code {
                KeyCode::Enter if pane == Focus::ToolCalls => return self.open_detail(),
                KeyCode::Enter => {
                    self.focus = Focus::Input;
                    return;
                }
                code => {
                    if let Some(m) = scroll_move(code) {
                        return self.scroll(pane, m);
                    }
                }
            }
        }
        // Tab still moves between the panes, in the order help gives.
        match keymap::action(Layer::Main, &key) {
            Some(Action::FocusNext) => return self.cycle_focus(true),
            Some(Action::FocusPrev) => return self.cycle_focus(false),
            _ => {}
        }
        let action = keymap::action(Layer::Prompt, &key);
        let confirm = self.approvals.confirm();
        self.approvals.set_confirm(None);
        if action == Some(Action::Decline) && !self.deliberate(key.code) {
            let no = keymap::hint(Layer::Prompt, Action::Decline).0;
            let no = no.split('/').next().unwrap_or(no);
            let yes = keymap::hint(Layer::Prompt, Action::Approve).0;
            return self.show_flash(format!(
                "The prompt is still open: {yes} approves, {no} declines (an Esc or Enter right after closing a view does nothing)."
            ));
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let undo = self
            .approvals
            .current()
            .is_some_and(|r| matches!(r.action, ApprovalAction::Undo { .. }));
        let hunks = self.approvals.review().selectable();
        // Without hunks to move between, plain j/k and the arrows scroll the diff.
        let by_line = plain || matches!(key.code, KeyCode::Up | KeyCode::Down);
        let edited = self.approvals.review().edited.is_some();
        match action {
            Some(Action::Help) => self.open_help(),
            Some(Action::Approve) => self.approve(),
            Some(Action::ApproveForTask) => self.approve_for_task(confirm),
            Some(Action::Decline) if edited => self.decline_edited(key.code, confirm),
            Some(Action::Decline) => self.answer(Decision::Decline { reason: None }),
            Some(Action::DeclineWithReason) if !undo => self.approvals.start_reason(),
            Some(Action::EditProposal) => self.edit_proposal(),
            Some(Action::FullDiff) => self.layers.open(crate::tui::app::Overlay::FullDiff),
            Some(Action::ToggleHunk) if hunks => self.approvals.toggle_hunk(),
            Some(Action::NextHunk) if hunks => self.move_hunk(1),
            Some(Action::PrevHunk) if hunks => self.move_hunk(-1),
            Some(Action::NextFile) if hunks => self.move_file(1),
            Some(Action::PrevFile) if hunks => self.move_file(-1),
            Some(Action::NextHunk) if by_line => self.scroll(Focus::Diff, ScrollMove::Down(1)),
            Some(Action::PrevHunk) if by_line => self.scroll(Focus::Diff, ScrollMove::Up(1)),
            _ => {
                if let Some(m) = scroll_move(key.code) {
                    self.scroll(Focus::Diff, m);
                }
            }
        }
    }

    /// Whether a key that declines (`n`, Enter, Esc) was meant for the
    /// prompt: the letter always is; Esc and Enter are not right after a
    /// view closed over the prompt or the input gave it the keys (within
    /// `COMPOSING`, the type-ahead rule), when they are the reflex of the
    /// key that closed it.
    fn deliberate(&self, code: KeyCode) -> bool {
        let reflex = matches!(code, KeyCode::Esc | KeyCode::Enter);
        !(reflex
            && self
                .layers
                .closed_within(crate::tui::input::COMPOSING, self.now()))
    }

    /// Typing the reason for declining the open request.
    fn reason_key(&mut self, key: KeyEvent) {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let Some(reason) = self.approvals.reason_mut() else {
            return;
        };
        match keymap::action(Layer::Reason, &key) {
            Some(Action::SendReason) => {
                let reason = reason.trim().to_string();
                self.answer(Decision::Decline {
                    reason: (!reason.is_empty()).then_some(reason),
                });
            }
            Some(Action::CancelReason) => self.approvals.cancel_reason(),
            Some(Action::DeleteChar) => {
                reason.pop();
            }
            Some(Action::ClearReason) => reason.clear(),
            _ => {
                if let KeyCode::Char(c) = key.code
                    && plain
                {
                    reason.push(c);
                }
            }
        }
    }

    fn move_hunk(&mut self, delta: isize) {
        let cursor = self.approvals.move_hunk(delta);
        self.diff.reveal_hunk(cursor);
    }

    /// `]` / `[`: the first hunk of the next / previous file of a patch.
    fn move_file(&mut self, delta: isize) {
        let cursor = self.approvals.move_file(delta);
        self.diff.reveal_hunk(cursor);
    }

    /// `y`: the proposal, the accepted hunks of it, or the user's version.
    pub fn approve(&mut self) {
        if let Some(decision) = self.approvals.decision() {
            self.answer(decision);
        }
    }

    /// `n`, Enter or Esc on the user's own version: Enter and Esc only point
    /// to y/n; `n` asks once more, then declines (the version stays on record).
    fn decline_edited(&mut self, code: KeyCode, confirm: Option<Confirm>) {
        let is_n = matches!(code, KeyCode::Char('n' | 'N'));
        if !is_n {
            return self.show_flash("Your edited version is waiting: y writes it, n discards it.");
        }
        if confirm != Some(Confirm::DiscardEdit) {
            self.approvals.set_confirm(Some(Confirm::DiscardEdit));
            return self.show_flash(
                "Press n again to discard your edited version (it stays in the conversation); y writes it.",
            );
        }
        self.record_discarded_edit();
        self.answer(Decision::Decline { reason: None });
    }

    /// `a`: this call and every later one of the tool in this task, when
    /// allowed, after a second `a` (the first says what it covers).
    fn approve_for_task(&mut self, confirm: Option<Confirm>) {
        let Some(request) = self.approvals.current() else {
            return;
        };
        let tool = crate::tui::render::text::sanitize(&request.tool.to_string());
        if matches!(request.action, ApprovalAction::Undo { .. }) {
            return;
        }
        if !request.allow_for_task {
            self.show_flash(format!(
                "Configuration does not allow approving every {tool} for the task here: y approves this one."
            ));
        } else if self.approvals.review().modified() {
            self.show_flash(
                "a would approve the whole proposal: press y to write your selection or your version.",
            );
        } else if confirm != Some(Confirm::ForTask) {
            let key = |action| keymap::hint(Layer::Prompt, action).0;
            let (again, yes, no) = (
                key(Action::ApproveForTask),
                key(Action::Approve),
                key(Action::Decline),
            );
            let revoke = keymap::hint(Layer::Global, Action::Revoke).0;
            let text = format!(
                "Press {again} again to approve this and every later {tool} call until the task ends, without asking ({revoke} revokes); {yes} approves only this one, {no} declines it, any other key cancels."
            );
            self.approvals.set_confirm(Some(Confirm::ForTask));
            self.show_flash(text);
        } else {
            self.answer(Decision::ApproveToolForTask);
        }
    }

    /// `e`: open the proposal (or the user's earlier version) in their editor.
    fn edit_proposal(&mut self) {
        let Some(request) = self.approvals.current() else {
            return;
        };
        match self.approvals.review().editable(&request.action) {
            Some((path, content)) => {
                let effect = Effect::EditProposal {
                    serial: self.approvals.serial(),
                    path: path.to_string(),
                    content: content.to_string(),
                };
                self.effect(effect);
            }
            None => self.show_flash("Only a file edit can be edited before approving."),
        }
    }

    /// The editor closed: review the user's version (or say why not).
    pub(in crate::tui) fn edit_finished(&mut self, serial: u64, result: Result<String, String>) {
        if !self.approvals.is_open() || self.approvals.serial() != serial {
            self.show_flash(
                "The proposal was withdrawn while you edited it; your version was not used.",
            );
            return;
        }
        let content = match result {
            Ok(content) => content,
            Err(problem) => return self.show_flash(problem),
        };
        let before = self
            .approvals
            .current()
            .and_then(|r| self.approvals.review().editable(&r.action))
            .map(|(_, c)| c == content);
        if before == Some(true) {
            self.show_flash("Nothing was changed in the editor: the proposal is as it was.");
            return;
        }
        tracing::info!(bytes = content.len(), "proposal edited by the user");
        self.approvals.set_edited(content);
        self.show_flash("Your version, diffed against the file: y writes it, n declines.");
    }

    /// Answer the open approval request.
    pub fn answer(&mut self, decision: Decision) {
        let edit = match self.approvals.current().map(|r| &r.action) {
            Some(crate::agent::ApprovalAction::Edit {
                path,
                proposed,
                original,
                ..
            }) => Some((path.clone(), proposed.clone(), original.clone())),
            _ => None,
        };
        let Some(answered) = self.approvals.decide(decision) else {
            return;
        };
        if let Some(diff) = edit.and_then(|e| written_diff(e, &answered.decision)) {
            self.calls.set_diff(&answered.call_id, diff);
        }
        let now = self.now();
        self.layers
            .close_all(|o| matches!(o, crate::tui::app::Overlay::FullDiff), now);
        tracing::info!(step = answered.step, decision = %label(&answered.decision), "approval answered");
        let status = match answered.decision {
            Decision::Decline { .. } => RowStatus::Declined,
            _ => RowStatus::Approved,
        };
        self.calls.set_status(&answered.call_id, status);
        self.record_answer(&answered);
        if answered.undo {
            return self.undo_answered(matches!(answered.decision, Decision::Decline { .. }));
        }
        if answered.decision == Decision::ApproveToolForTask {
            self.approved_for_task(&answered.tool);
            // Requests of that tool already waiting are covered too.
            for other in self.approvals.approve_tool(&answered.tool) {
                self.calls.set_status(&other.call_id, RowStatus::Approved);
            }
        }
        if self.approvals.is_empty() {
            self.set_state(TaskState::Thinking);
        }
    }
}

/// The diff of what an approval of an edit writes, when that is not the
/// proposal: the user's edited version, or only the hunks they kept.
fn written_diff(
    (path, proposed, original): (String, String, Option<String>),
    decision: &Decision,
) -> Option<crate::diff::FileDiff> {
    let old = original.as_deref().map(|o| o.replace("\r\n", "\n"));
    let written = match decision {
        Decision::ApproveEdited { content } => content.clone(),
        Decision::ApproveHunks { accepted } => {
            let base = old.as_deref().unwrap_or("");
            let new = proposed.replace("\r\n", "\n");
            let hunks = crate::diff::FileDiff::compute(&path, Some(base), &new)
                .hunks
                .len();
            let keep: Vec<bool> = (0..hunks).map(|i| accepted.contains(&i)).collect();
            crate::diff::apply_hunks(base, &new, &keep)
        }
        _ => return None,
    };
    Some(crate::diff::FileDiff::compute(
        &path,
        old.as_deref(),
        &written,
    ))
}

/// A decision for the log, without the user's content.
fn label(d: &Decision) -> String {
    match d {
        Decision::ApproveEdited { content } => format!("approve_edited ({} bytes)", content.len()),
        Decision::ApproveHunks { accepted } => format!("approve_hunks {accepted:?}"),
        Decision::Decline { reason } => format!("decline (reason given: {})", reason.is_some()),
        other => format!("{other:?}"),
    }
}
