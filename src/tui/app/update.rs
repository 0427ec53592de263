//! The one way into the App: `update(Msg)`. A message is a terminal event, a
//! core event, or the result of work done off the loop (the editor hand-off,
//! the file list, a grammar made ready); `update` routes it to
//! the components that own what it changes. What the run loop must do comes
//! back through `take_effects` (in order), never by touching the terminal.

use crate::agent::AgentEvent;
use crate::tui::app::App;
use crossterm::event::{Event, KeyEvent};

/// Everything that can change the App.
// A `Msg` lives only from the loop into `update`, so a large core event is
// moved once, not stored; boxing each would cost an allocation per event.
// (It grew past clippy's limit when `serde_json`'s `preserve_order` came in
// with the ACP schema crate: a `Value` map keeps its insertion order now.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Msg {
    /// A key, mouse, paste or resize event from the terminal.
    Terminal(Event),
    /// An event from the core.
    Agent(AgentEvent),
    /// The editor closed on the proposal of approval `serial`.
    Edited {
        serial: u64,
        result: Result<String, String>,
    },
    /// The workspace's files for the `@` picker (`more`: the list was capped).
    Files { files: Vec<String>, more: bool },
    /// `lang`'s grammar is ready (`known`: it has colours at all).
    GrammarReady { lang: String, known: bool },
}

impl From<Event> for Msg {
    fn from(event: Event) -> Self {
        Msg::Terminal(event)
    }
}

impl From<KeyEvent> for Msg {
    fn from(key: KeyEvent) -> Self {
        Msg::Terminal(Event::Key(key))
    }
}

impl From<AgentEvent> for Msg {
    fn from(event: AgentEvent) -> Self {
        Msg::Agent(event)
    }
}

impl App {
    /// Apply one message.
    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Terminal(event) => self.on_terminal(event),
            Msg::Agent(event) => self.on_agent(event),
            Msg::Edited { serial, result } => self.edit_finished(serial, result),
            Msg::Files { files, more } => self.files_listed(files, more),
            Msg::GrammarReady { lang, known } => self.conversation.grammars().ready(&lang, known),
        }
        self.timers_passed();
        self.maybe_notify();
    }
}
