//! The tool-call pane: one row per step (status glyph, step, tool, key
//! argument, one-line result), the row selection, and which call's diff the
//! diff pane shows (the newest proposal unless an older row is selected).

use crate::agent::CallKind;
use crate::agent::CallStatus;
use crate::diff::FileDiff;
use crate::tools::ToolId;
use crate::tui::render::text::{sanitize, truncate, width};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    Pending,
    Awaiting,
    Approved,
    Declined,
    Ok,
    Failed,
}

impl RowStatus {
    pub fn glyph(self) -> (&'static str, Style) {
        match self {
            RowStatus::Pending => ("○", theme::DIM),
            RowStatus::Awaiting => ("?", theme::WARN_BOLD),
            RowStatus::Approved => ("▸", theme::ACCENT),
            RowStatus::Declined => ("⊘", theme::DECLINED),
            RowStatus::Ok => ("✓", theme::GOOD),
            RowStatus::Failed => ("✗", theme::BAD),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RowStatus::Pending => "pending",
            RowStatus::Awaiting => "awaiting approval",
            RowStatus::Approved => "approved",
            RowStatus::Declined => "declined",
            RowStatus::Ok => "ok",
            RowStatus::Failed => "failed",
        }
    }
}

impl From<CallStatus> for RowStatus {
    fn from(s: CallStatus) -> Self {
        match s {
            CallStatus::Ok => RowStatus::Ok,
            CallStatus::Failed => RowStatus::Failed,
            CallStatus::Declined => RowStatus::Declined,
        }
    }
}

/// One tool call of the session.
#[derive(Debug, Clone)]
pub struct CallRow {
    pub step: u32,
    pub call_id: String,
    pub tool: ToolId,
    /// What the call does (from its plan): words and states follow it.
    pub kind: CallKind,
    pub target: String,
    pub arguments: Value,
    pub diff: Option<FileDiff>,
    pub status: RowStatus,
    pub summary: String,
    pub result: Option<Value>,
    pub auto_approved: bool,
}

/// The rows and the selection. Rows change only through these methods.
#[derive(Debug, Default)]
pub struct ToolCalls {
    rows: Vec<CallRow>,
    /// A row the user picked; `None` follows the newest.
    selected: Option<usize>,
}

impl ToolCalls {
    pub fn rows(&self) -> &[CallRow] {
        &self.rows
    }

    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    /// The selected row, if the user picked one.
    pub fn selected_row(&self) -> Option<&CallRow> {
        self.selected.and_then(|i| self.rows.get(i))
    }

    /// Forget every row (a new conversation).
    pub fn clear(&mut self) {
        *self = ToolCalls::default();
    }

    /// The model proposed a call.
    pub fn propose(&mut self, row: CallRow) {
        self.rows.push(row);
    }

    fn find_mut(&mut self, call_id: &str) -> Option<&mut CallRow> {
        self.rows.iter_mut().rev().find(|r| r.call_id == call_id)
    }

    /// The diff of what was approved, when it is not the proposal (the
    /// user's edited version, some of its hunks): the pane shows that.
    pub fn set_diff(&mut self, call_id: &str, diff: FileDiff) {
        if let Some(row) = self.find_mut(call_id) {
            row.diff = Some(diff);
        }
    }

    /// Where call `call_id` stands now.
    pub fn set_status(&mut self, call_id: &str, status: RowStatus) {
        if let Some(row) = self.find_mut(call_id) {
            row.status = status;
        }
    }

    /// Call `call_id` runs; returns what it does, when known.
    pub fn running(&mut self, call_id: &str, auto_approved: bool) -> Option<CallKind> {
        let row = self.find_mut(call_id)?;
        row.status = RowStatus::Approved;
        row.auto_approved = auto_approved;
        Some(row.kind)
    }

    /// Call `call_id` finished with `status`.
    pub fn finished(&mut self, call_id: &str, status: RowStatus, summary: String, result: Value) {
        if let Some(row) = self.find_mut(call_id) {
            row.status = status;
            row.summary = summary;
            row.result = Some(result);
        }
    }

    /// Select the row drawn at `offset` in a view of `height` rows (a click).
    pub fn select_in_view(&mut self, offset: usize, height: usize) {
        let row = self.top(height) + offset;
        if row < self.rows.len() {
            self.selected = (row + 1 != self.rows.len()).then_some(row);
        }
    }

    /// First row drawn in a view of `height` rows (the selection kept in view).
    fn top(&self, height: usize) -> usize {
        let bottom = self.rows.len().saturating_sub(height);
        match self.selected {
            Some(sel) if sel < bottom => sel.saturating_sub(height / 2).min(bottom),
            _ => bottom,
        }
    }

    /// The highlighted row: the selection, else the newest.
    pub fn current(&self) -> Option<usize> {
        self.selected.or(self.rows.len().checked_sub(1))
    }

    /// Move the selection; reaching the newest row resumes following.
    pub fn select_by(&mut self, delta: isize) {
        let Some(cur) = self.current() else { return };
        let last = self.rows.len() - 1;
        let next = cur.saturating_add_signed(delta).min(last);
        self.selected = (next != last).then_some(next);
    }

    pub fn select_first(&mut self) {
        if self.rows.len() > 1 {
            self.selected = Some(0);
        }
    }

    pub fn select_last(&mut self) {
        self.selected = None;
    }

    /// The row whose diff the diff pane shows: the selected row if it has a
    /// diff, else the newest row with one.
    pub fn diff_row(&self) -> Option<usize> {
        match self.selected {
            Some(i) => self.rows.get(i).and_then(|r| r.diff.as_ref()).map(|_| i),
            None => self.rows.iter().rposition(|r| r.diff.is_some()),
        }
    }

    /// Draw the visible rows into `area`, keeping the highlighted row in view.
    pub fn render(&self, area: Rect, buf: &mut Buffer, focused: bool) {
        let height = area.height as usize;
        if self.rows.is_empty() {
            if height > 0 {
                let hint = Line::styled("No tool calls yet.", theme::DIM);
                buf.set_line(area.x, area.y, &hint, area.width);
            }
            return;
        }
        let current = self.current().unwrap_or(0);
        let top = self.top(height);
        for (i, row) in self.rows.iter().enumerate().skip(top).take(height) {
            let mut line = row_line(row, area.width as usize);
            if i == current && (focused || self.selected.is_some()) {
                line = line.patch_style(Style::new().add_modifier(Modifier::REVERSED));
            }
            buf.set_line(area.x, area.y + (i - top) as u16, &line, area.width);
        }
    }
}

/// `✓  4 replace_text  calculator.py            +5 −0`
fn row_line(row: &CallRow, total: usize) -> Line<'static> {
    let (glyph, glyph_style) = row.status.glyph();
    let summary = match row.status {
        RowStatus::Awaiting => "awaiting approval".to_string(),
        RowStatus::Pending => row.diff.as_ref().map(|d| d.stat()).unwrap_or_default(),
        RowStatus::Approved => if row.auto_approved {
            "auto-approved, running"
        } else {
            "running"
        }
        .to_string(),
        RowStatus::Declined => "declined".to_string(),
        // Auto-approved stays visible after the run.
        _ if row.auto_approved => format!(
            "auto · {}",
            sanitize(row.summary.lines().next().unwrap_or(""))
        ),
        _ => sanitize(row.summary.lines().next().unwrap_or("")),
    };
    let summary_style = match row.status {
        RowStatus::Failed => theme::BAD,
        RowStatus::Declined => theme::DECLINED,
        RowStatus::Awaiting => theme::WARN,
        _ => theme::DIM,
    };
    let head = format!(
        " {:>2} {:<12} ",
        row.step,
        truncate(&row.tool.to_string(), 12)
    );
    let summary = truncate(&summary, (total / 3).max(8));
    let used = 1 + width(&head) + width(&summary) + 1;
    let target_room = total.saturating_sub(used);
    let target = truncate(&sanitize(&row.target), target_room);
    let pad = target_room.saturating_sub(width(&target));
    Line::from(vec![
        Span::styled(glyph, glyph_style),
        Span::styled(head, theme::MUTED),
        Span::raw(target),
        Span::raw(" ".repeat(pad + 1)),
        Span::styled(summary, summary_style),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: u32) -> CallRow {
        CallRow {
            step,
            call_id: format!("call_{step}"),
            tool: "read_file".into(),
            kind: CallKind::Read,
            target: "a.py".into(),
            arguments: Value::Null,
            diff: None,
            status: RowStatus::Pending,
            summary: String::new(),
            result: None,
            auto_approved: false,
        }
    }

    #[test]
    fn rows_change_through_the_component() {
        let mut calls = ToolCalls::default();
        for step in 1..=3 {
            calls.propose(row(step));
        }
        calls.set_status("call_2", RowStatus::Awaiting);
        assert_eq!(calls.running("call_2", true), Some(CallKind::Read));
        assert_eq!(calls.running("nope", true), None);
        calls.finished(
            "call_2",
            RowStatus::Ok,
            "11 lines".into(),
            Value::Bool(true),
        );
        let r = &calls.rows()[1];
        assert_eq!((r.status, r.auto_approved), (RowStatus::Ok, true));
        assert_eq!(
            (r.summary.as_str(), r.result.clone()),
            ("11 lines", Some(Value::Bool(true)))
        );
        calls.clear();
        assert!(calls.rows().is_empty());
    }

    #[test]
    fn a_click_selects_the_row_drawn_there_and_the_newest_follows() {
        let mut calls = ToolCalls::default();
        for step in 1..=10 {
            calls.propose(row(step));
        }
        // A view of 4 rows shows the newest four: rows 6..10.
        calls.select_in_view(1, 4);
        assert_eq!(calls.selected(), Some(7));
        assert_eq!(calls.selected_row().map(|r| r.step), Some(8));
        // Near the end the view stays on the newest rows.
        calls.select_in_view(0, 4);
        assert_eq!(calls.selected(), Some(6));
        // Further up, the selection sits in the middle of the view.
        calls.select_by(-4);
        calls.select_in_view(0, 4);
        assert_eq!(calls.selected(), Some(0));
        // A taller view than there are rows: a click below them changes nothing.
        calls.select_in_view(11, 12);
        assert_eq!(calls.selected(), Some(0));
        calls.select_last();
        calls.select_in_view(3, 4);
        assert_eq!(calls.selected(), None, "the newest row follows again");
    }
}
