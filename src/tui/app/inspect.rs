//! The App's read-only inspection API: what the renderer, the run loop and
//! the tests may look at. Nothing here changes state; changes go through
//! `App::update` (and the components' own methods inside the App).

use crate::llm::TokenUsage;
use crate::tools::ToolId;
use crate::tui::app::{App, Focus, Overlay, TaskState};
use crate::tui::approval::Approvals;
use crate::tui::input::input_box::InputBox;
use crate::tui::panes::conversation::Conversation;
use crate::tui::panes::diff::live::LivePreviews;
use crate::tui::panes::diff::view::DiffView;
use crate::tui::panes::tool_calls::ToolCalls;
use crate::tui::render::layout::Panes;
use std::time::Instant;

impl App {
    pub fn model(&self) -> &str {
        &self.status.model
    }

    pub fn workspace(&self) -> &str {
        &self.status.workspace
    }

    pub fn state(&self) -> TaskState {
        self.status.state
    }

    pub fn step(&self) -> u32 {
        self.status.step
    }

    pub fn max_steps(&self) -> u32 {
        self.status.max_steps
    }

    pub fn task_tokens(&self) -> TokenUsage {
        self.status.task_tokens
    }

    pub fn session_tokens(&self) -> TokenUsage {
        self.status.session_tokens
    }

    pub fn task_cost(&self) -> Option<f64> {
        self.status.task_cost
    }

    pub fn session_cost(&self) -> Option<f64> {
        self.status.session_cost
    }

    /// Project rule files the model follows (e.g. `AGENTS.md`).
    pub fn rules(&self) -> &[String] {
        &self.status.rules
    }

    /// How test runs are confined, as the core reported it (empty: not told).
    /// The stage tasks work in, if they are staged.
    pub fn stage(&self) -> Option<&str> {
        self.status.stage.as_deref()
    }

    pub fn sandbox(&self) -> &str {
        &self.status.sandbox
    }

    /// The test run's timeout, when the configuration is known.
    pub fn test_timeout(&self) -> Option<std::time::Duration> {
        self.facts.test_timeout
    }

    /// The clock as of the last event.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Advance the App's clock (the run loop does before each event and frame).
    pub fn set_now(&mut self, now: Instant) {
        self.now = now;
        self.timers_passed();
    }

    /// Tools the user approved for the rest of the task.
    pub fn auto_approved(&self) -> &[ToolId] {
        &self.status.auto_approved
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    pub fn calls(&self) -> &ToolCalls {
        &self.calls
    }

    pub fn diff(&self) -> &DiffView {
        &self.diff
    }

    pub fn live(&self) -> &LivePreviews {
        &self.live
    }

    /// When a throttled live preview is due to be recomputed.
    pub fn live_refresh_due(&self) -> Option<Instant> {
        self.live.next_refresh()
    }

    pub fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    pub fn input(&self) -> &InputBox {
        &self.input
    }

    pub fn focus(&self) -> Focus {
        self.focus
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        self.layers.top()
    }

    /// `f` at a prompt: the prompt's diff takes the whole body.
    pub fn diff_full(&self) -> bool {
        self.approvals.is_open() && self.layers.any(|o| matches!(o, Overlay::FullDiff))
    }

    /// First row of the help overlay shown.
    pub fn help_top(&self) -> usize {
        self.layers.help_top()
    }

    pub fn mouse_capture(&self) -> bool {
        self.term.mouse_capture
    }

    /// The one-off message shown until the next key.
    pub fn flash(&self) -> &Option<String> {
        &self.flash
    }

    /// Pane rectangles of the last layout.
    pub fn panes(&self) -> &Panes {
        &self.panes
    }

    /// The user asked to leave.
    pub fn quitting(&self) -> bool {
        self.life.quit
    }
}
