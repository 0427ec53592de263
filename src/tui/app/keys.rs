//! Key, mouse and paste routing: which layer gets a key (global keys, the
//! layers on top (`layers`), the approval prompt (`prompt`), then the
//! focused pane) and what it does there. What a key means
//! in a layer is looked up in the key map (`keymap`), never matched here.

use crate::tui::app::{App, Effect, Focus, Handled, Overlay};
use crate::tui::overlays::detail::DetailView;
use crate::tui::overlays::help;
use crate::tui::panes::scroll::ScrollMove;
use crate::tui::render::layout::detail_area;
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use keymap::{Action, Layer, scroll_move};
use ratatui::layout::{Position, Rect};
use ratatui_textarea::Input;

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

use crate::tui::input::{COMPOSING, keymap, slash};

impl App {
    /// One event from the terminal.
    pub(in crate::tui) fn on_terminal(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            Event::Mouse(mouse) => self.on_mouse(mouse),
            Event::Paste(text) => self.on_paste(&text),
            Event::FocusLost => self.term.focused = false,
            Event::FocusGained => self.term.focused = true,
            // The next frame lays out for the new size.
            _ => {}
        }
    }

    pub(in crate::tui) fn on_key(&mut self, key: KeyEvent) {
        self.clear_flash();
        let global = keymap::action(Layer::Global, &key);
        if global == Some(Action::Interrupt) {
            return self.interrupt_key();
        }
        let quit_key = global == Some(Action::Quit);
        if self.panes.too_small {
            // Nothing on screen to act on; only quitting works.
            if quit_key {
                self.quit_key();
            }
            return;
        }
        // The layers first, top down: what one consumes goes no further.
        if self.layer_key(key, global) == Handled::Consumed {
            return;
        }
        match global {
            Some(Action::Help) => return self.open_help(),
            Some(Action::ToggleMouse) => return self.toggle_mouse(),
            Some(Action::Revoke) => return self.revoke_approvals(),
            _ => {}
        }
        if self.approvals.is_open() {
            if self.composing() && !self.approvals.taken() && !quit_key {
                return self.composing_key(key);
            }
            return self.prompt_key(key, quit_key);
        }
        if quit_key && (self.focus != Focus::Input || self.input.is_empty()) {
            return self.quit_key();
        }
        if self.focus == Focus::Input && self.picker_key(&key) {
            return;
        }
        if self.focus == Focus::Input && key.code == KeyCode::Tab && self.complete_command() {
            return;
        }
        match keymap::action(Layer::Main, &key) {
            Some(Action::FocusNext) => return self.cycle_focus(true),
            Some(Action::FocusPrev) => return self.cycle_focus(false),
            _ => {}
        }
        match self.focus {
            Focus::Input => self.input_key(key),
            pane => self.pane_key(pane, key),
        }
    }

    /// The top layer's turn at a key. The help and the detail views are
    /// modal (they consume every key but the global ones the views leave
    /// to the app); the full diff passes on all but the keys that close it,
    /// so the prompt beneath still answers.
    fn layer_key(&mut self, key: KeyEvent, global: Option<Action>) -> Handled {
        let now = self.now();
        let Some(top) = self.layers.top() else {
            return Handled::NotConsumed;
        };
        match top {
            Overlay::Help => {
                match keymap::action(Layer::HelpOverlay, &key) {
                    Some(Action::Close) => {
                        self.layers.close(now);
                    }
                    _ => {
                        if let Some(m) = scroll_move(key.code) {
                            let top = help::scrolled(self.layers.help_top(), m, self.panes.area);
                            self.layers.set_help_top(top);
                        }
                    }
                }
                Handled::Consumed
            }
            Overlay::Detail(_) | Overlay::SessionDiff(_) => {
                if global.is_some_and(|g| g != Action::Quit) {
                    return Handled::NotConsumed;
                }
                match keymap::action(Layer::Overlay, &key) {
                    Some(Action::Close) => {
                        self.layers.close(now);
                    }
                    Some(Action::Help) => self.open_help(),
                    _ => {
                        if let Some(m) = scroll_move(key.code) {
                            self.scroll_overlay(m);
                        }
                    }
                }
                Handled::Consumed
            }
            Overlay::FullDiff => {
                let closes = key.code == KeyCode::Esc
                    || keymap::action(Layer::Prompt, &key) == Some(Action::FullDiff);
                if !closes {
                    return Handled::NotConsumed;
                }
                self.layers.close(now);
                Handled::Consumed
            }
        }
    }

    /// Scroll the detail or `/diff` overlay.
    fn scroll_overlay(&mut self, m: ScrollMove) {
        let h = detail_area(self.panes.body).height as usize;
        match self.layers.covering_mut() {
            Some(Overlay::Detail(d)) => d.scroll_by(m, h),
            Some(Overlay::SessionDiff(d)) => d.scroll_by(m, h),
            _ => {}
        }
    }

    /// Whether the user is writing in the input: a key went into it within
    /// the last `COMPOSING` (before the prompt opened, or since). A draft
    /// left there does not count: once the keys stop, the user is reading.
    pub fn composing(&self) -> bool {
        self.last_typed
            .is_some_and(|typed| self.now().saturating_duration_since(typed) < COMPOSING)
    }

    /// A key while a prompt waits for a user who is composing: Esc or Tab
    /// moves to the prompt; anything else stays text in the input.
    fn composing_key(&mut self, key: KeyEvent) {
        if matches!(key.code, KeyCode::Esc | KeyCode::Tab) {
            self.approvals.take();
            // Leaving the input is a closing too: a reflexive second Esc
            // must not decide (see `App::deliberate`).
            let now = self.now();
            self.layers.note_closed(now);
            self.show_flash(
                "The prompt has the keys now: y approves, n declines (Enter declines too).",
            );
            return;
        }
        self.focus = Focus::Input;
        self.input_key(key);
    }

    pub(in crate::tui) fn input_key(&mut self, key: KeyEvent) {
        let action = keymap::action(Layer::Input, &key);
        if !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            && matches!(key.code, KeyCode::Char(_) | KeyCode::Backspace)
        {
            self.last_typed = Some(self.now());
        }
        if self.input.searching() {
            match action {
                Some(Action::HistorySearch) => {}
                Some(Action::Ignore) => return self.input.cancel_search(),
                _ => self.input.end_search(),
            }
        }
        match action {
            Some(Action::HistorySearch) => self.search_history(),
            Some(Action::NewLine) => self.input.newline(),
            Some(Action::Submit) => self.submit(),
            Some(Action::Help) if self.input.is_empty() => self.open_help(),
            Some(Action::HistoryOlder) if self.input.recalls() => self.input.recall_older(),
            Some(Action::HistoryNewer) if self.input.recalls() => self.input.recall_newer(),
            Some(Action::ScrollConversation) => {
                if let Some(m) = scroll_move(key.code) {
                    self.scroll(Focus::Conversation, m);
                }
            }
            Some(Action::KillToStart) => self.input.kill_to_start(),
            Some(Action::Ignore) => {}
            _ => {
                self.input.edit(Input::from(key));
            }
        }
        self.sync_picker(&key);
    }

    fn pane_key(&mut self, pane: Focus, key: KeyEvent) {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match keymap::action(Layer::Panes, &key) {
            Some(Action::Activate) if pane == Focus::ToolCalls => self.open_detail(),
            Some(Action::Back) if pane == Focus::ToolCalls && self.calls.selected().is_some() => {
                self.calls.select_last()
            }
            Some(Action::Activate | Action::Back) => self.focus = Focus::Input,
            Some(Action::Help) => self.open_help(),
            Some(Action::ScrollPane) => {
                if let Some(m) = scroll_move(key.code) {
                    self.scroll(pane, m);
                }
            }
            _ if plain && matches!(key.code, KeyCode::Char(_)) => {
                // Typing goes to the input wherever the focus is.
                self.focus = Focus::Input;
                self.input_key(key);
            }
            _ => {}
        }
    }

    /// Tab while a `/command` is being typed: the first command it could
    /// be, completed (`false`: no command is being typed, Tab moves focus).
    fn complete_command(&mut self) -> bool {
        let text = self.input.text();
        let Some(typed) = slash::typing(&text) else {
            return false;
        };
        let Some(first) = slash::matching(typed).first().map(|s| s.name) else {
            return false;
        };
        self.input.take();
        self.input.insert_str(&format!("/{first}"));
        true
    }

    /// The `/` menu's filter, while it is open: a `/command` is being typed
    /// in the focused input and nothing covers it.
    pub fn command_menu(&self) -> Option<String> {
        let open = self.focus == Focus::Input
            && self.layers.is_empty()
            && self.picking.picker.is_none()
            && !self.approvals.is_open();
        if !open {
            return None;
        }
        slash::typing(&self.input.text()).map(str::to_string)
    }

    /// Ctrl+R: the next older task containing what was typed, said above the input.
    fn search_history(&mut self) {
        let search = self.input.search_older();
        let query = crate::tui::render::text::sanitize(&search.query);
        let text = match search.at {
            Some(_) => {
                format!("History search “{query}”: Ctrl+R older · Esc puts back what you typed")
            }
            None => format!("No earlier task contains “{query}” (Esc puts back what you typed)"),
        };
        self.show_flash(text);
    }

    fn submit(&mut self) {
        let text = self.input.text();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        if let Some(command) = trimmed.strip_prefix('/') {
            let command = command.trim().to_string();
            self.input.take();
            return self.run_command(&command);
        }
        if self.is_running() {
            self.show_flash("A task is running: wait for it, or press Ctrl+C to interrupt it.");
            return;
        }
        let task = self.input.take();
        self.start_task(task.trim().to_string());
    }

    pub(in crate::tui) fn open_detail(&mut self) {
        if let Some(row) = self.calls.current() {
            self.layers.open(Overlay::Detail(DetailView::new(row)));
        }
    }

    pub(in crate::tui) fn cycle_focus(&mut self, forward: bool) {
        let mut order = vec![Focus::Input, Focus::Conversation, Focus::ToolCalls];
        if self.panes.diff.is_some() {
            order.push(Focus::Diff);
        }
        let i = order.iter().position(|f| *f == self.focus).unwrap_or(0);
        let n = order.len();
        self.focus = order[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    pub(in crate::tui) fn toggle_mouse(&mut self) {
        self.term.mouse_capture = !self.term.mouse_capture;
        self.effect(Effect::SetMouseCapture(self.term.mouse_capture));
    }

    /// Scroll a pane (for the tool calls: move the selection).
    pub fn scroll(&mut self, pane: Focus, m: ScrollMove) {
        let p = self.panes;
        match pane {
            Focus::Conversation => {
                let h = p.conversation.inner().height as usize;
                self.conversation.scroll_by(m, h);
            }
            Focus::Diff => {
                let h = p.diff.map_or(0, |d| d.inner().height as usize);
                self.diff.scroll_by(m, h);
            }
            Focus::ToolCalls => {
                let page = p.tools.inner().height.max(1) as isize;
                match m {
                    ScrollMove::Up(n) => self.calls.select_by(-(n as isize)),
                    ScrollMove::Down(n) => self.calls.select_by(n as isize),
                    ScrollMove::PageUp => self.calls.select_by(-page),
                    ScrollMove::PageDown => self.calls.select_by(page),
                    ScrollMove::Top => self.calls.select_first(),
                    ScrollMove::Bottom => self.calls.select_last(),
                }
            }
            Focus::Input => {}
        }
    }

    fn on_mouse(&mut self, mouse: MouseEvent) {
        if self.panes.too_small {
            return;
        }
        let at = Position::new(mouse.column, mouse.row);
        let m = match mouse.kind {
            MouseEventKind::ScrollUp => ScrollMove::Up(WHEEL_ROWS),
            MouseEventKind::ScrollDown => ScrollMove::Down(WHEEL_ROWS),
            MouseEventKind::Down(MouseButton::Left) => return self.click(at),
            _ => return,
        };
        match self.layers.covering() {
            Some(Overlay::Help) => {
                let top = help::scrolled(self.layers.help_top(), m, self.panes.area);
                return self.layers.set_help_top(top);
            }
            Some(_) => return self.scroll_overlay(m),
            None => {}
        }
        if let Some(pane) = self.pane_at(at) {
            let m = match (pane, m) {
                (Focus::ToolCalls, ScrollMove::Up(_)) => ScrollMove::Up(1),
                (Focus::ToolCalls, ScrollMove::Down(_)) => ScrollMove::Down(1),
                _ => m,
            };
            self.scroll(pane, m);
        }
    }

    /// A click focuses a pane; on a tool-call row it selects the row.
    fn click(&mut self, at: Position) {
        if !self.layers.is_empty() || self.approvals.is_open() {
            return;
        }
        let Some(pane) = self.pane_at(at) else { return };
        self.focus = pane;
        let inner = self.panes.tools.inner();
        if pane == Focus::ToolCalls && inner.contains(at) {
            let offset = (at.y - inner.y) as usize;
            self.calls.select_in_view(offset, inner.height as usize);
        }
    }

    fn pane_at(&self, at: Position) -> Option<Focus> {
        let p = &self.panes;
        let hit = |r: Rect| r.contains(at);
        if hit(p.conversation.outer) {
            Some(Focus::Conversation)
        } else if hit(p.tools.outer) {
            Some(Focus::ToolCalls)
        } else if p.diff.is_some_and(|d| hit(d.outer)) {
            Some(Focus::Diff)
        } else if p.input.is_some_and(|i| hit(i.outer)) {
            Some(Focus::Input)
        } else {
            None
        }
    }

    /// A paste is text, never an answer: into the reason being typed, or
    /// else into the draft (which stays on screen while a prompt waits).
    fn on_paste(&mut self, text: &str) {
        if let Some(reason) = self.approvals.reason_mut() {
            reason.push_str(text.lines().next().unwrap_or(""));
            return;
        }
        if !self.approvals.is_open() && self.layers.is_empty() {
            self.focus = Focus::Input;
        }
        self.input.insert_str(text);
        self.last_typed = Some(self.now());
    }
}
