//! Pending approvals: the queue of the core's requests (answered in order
//! through their `oneshot` replies), the optional decline reason being typed,
//! and the prompt bar that takes the keyboard while a request is open.

use super::text::{sanitize, truncate, width};
use crate::agent::{ApprovalRequest, Decision};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use std::collections::VecDeque;

/// What was answered, for the tool-call pane and the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub step: u32,
    pub call_id: String,
    pub tool: &'static str,
    pub decision: Decision,
}

#[derive(Debug, Default)]
pub struct Approvals {
    queue: VecDeque<ApprovalRequest>,
    /// `Some` while the user types a reason for declining the current request.
    pub reason: Option<String>,
}

impl Approvals {
    pub fn push(&mut self, request: ApprovalRequest) {
        self.queue.push_back(request);
    }

    pub fn current(&self) -> Option<&ApprovalRequest> {
        self.queue.front()
    }

    pub fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Forget requests the core stopped waiting for (e.g. after an interrupt).
    pub fn prune(&mut self) -> bool {
        let before = self.queue.len();
        self.queue.retain(|r| !r.reply.is_closed());
        if self.queue.is_empty() {
            self.reason = None;
        }
        before != self.queue.len()
    }

    /// Answer the current request.
    pub fn decide(&mut self, decision: Decision) -> Option<Answered> {
        let request = self.queue.pop_front()?;
        self.reason = None;
        let answered = Answered {
            step: request.step,
            call_id: request.call_id.clone(),
            tool: request.tool.as_str(),
            decision: decision.clone(),
        };
        // The core may have stopped waiting; then there is nothing to tell it.
        let _ = request.reply.send(decision);
        Some(answered)
    }

    /// Approve every queued request of `tool` (after "approve for the task").
    pub fn approve_tool(&mut self, tool: &str) -> Vec<Answered> {
        let (matching, rest): (VecDeque<_>, VecDeque<_>) =
            self.queue.drain(..).partition(|r| r.tool.as_str() == tool);
        self.queue = rest;
        matching
            .into_iter()
            .map(|request| {
                let answered = Answered {
                    step: request.step,
                    call_id: request.call_id.clone(),
                    tool: request.tool.as_str(),
                    decision: Decision::Approve,
                };
                let _ = request.reply.send(Decision::Approve);
                answered
            })
            .collect()
    }

    /// Decline everything (quit or interrupt): nothing gets written.
    pub fn decline_all(&mut self) -> Vec<Answered> {
        let mut out = Vec::new();
        while let Some(a) = self.decide(Decision::Decline { reason: None }) {
            out.push(a);
        }
        out
    }

    /// Rows the prompt bar needs.
    pub const HEIGHT: u16 = 2;

    /// The prompt bar: the question and the keys (or the reason being typed).
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let Some(request) = self.current() else {
            return;
        };
        let w = area.width as usize;
        let bar = Style::new()
            .bg(Color::Yellow)
            .fg(Color::Black)
            .add_modifier(Modifier::BOLD);
        let key = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        let dim = Style::new().fg(Color::Gray);
        let question = sanitize(&request.action.prompt());
        let queued = match self.queue.len() {
            1 => String::new(),
            n => format!("  (+{} queued)", n - 1),
        };
        buf.set_style(Rect { height: 1, ..area }, bar);
        let (first, second) = match &self.reason {
            None => {
                let text = format!(" Step {} · {question}? [y/N]{queued}", request.step);
                let tool = request.tool.as_str();
                let groups = [
                    ("y", " yes".to_string()),
                    ("n/Enter/Esc", " no".to_string()),
                    ("r", " no, with a reason".to_string()),
                    ("a", format!(" yes to every {tool} this task")),
                    ("↑↓ PgUp PgDn", " scroll diff".to_string()),
                ];
                let mut hints = Vec::new();
                let mut used = 0;
                for (k, what) in groups {
                    let need = 2 + width(k) + width(&what);
                    if used + need > w {
                        break;
                    }
                    used += need;
                    hints.push(Span::styled(format!("  {k}"), key));
                    hints.push(Span::styled(what, dim));
                }
                (Line::styled(truncate(&text, w), bar), Line::from(hints))
            }
            Some(reason) => {
                let head = format!(" Step {} · Decline “{question}” because: ", request.step);
                let room = w.saturating_sub(width(&head) + 1);
                let shown = super::text::truncate_left(&sanitize(reason), room);
                let first = Line::from(vec![
                    Span::styled(head, bar),
                    Span::styled(shown, bar.remove_modifier(Modifier::BOLD)),
                    Span::styled("▏", bar),
                ]);
                let hints = Line::from(vec![
                    Span::styled(" Enter", key),
                    Span::styled(" send the reason to the model  ", dim),
                    Span::styled("Esc", key),
                    Span::styled(" back to y/N", dim),
                ]);
                (first, hints)
            }
        };
        buf.set_line(area.x, area.y, &first, area.width);
        if area.height > 1 {
            buf.set_line(area.x, area.y + 1, &second, area.width);
        }
    }
}
