//! `/model NAME`: the session asks for another model from the next request
//! on. The model client makes a copy of itself for the new name (same
//! server, key and headers); the prices follow the model table's entry for
//! the new name (none if unknown); the context window stays the session's.
//!
//! What must stay true: a name is one line of printable text (it goes into
//! a JSON body and the header); whether the server knows the name is the
//! server's to say, on the next request; a scripted model cannot switch and
//! says so.

use crate::agent::contract::{AgentEvent, EventSender};
use crate::agent::session::Session;

/// Longest model name accepted.
const MAX_NAME: usize = 200;

impl Session {
    /// Switch to `name` for the requests that follow; `ModelChanged` or `Error`.
    /// `/model` alone: the model asked now and the server's list.
    pub async fn list_models(&self, events: &EventSender) {
        let current = self
            .saved
            .model
            .clone()
            .unwrap_or_else(|| self.model.label());
        let (models, error) = match self.model.list_models().await {
            Ok(models) => (models, None),
            Err(e) => {
                let mut text = e.to_string();
                crate::tools::scrub::string(&mut text);
                (Vec::new(), Some(text))
            }
        };
        let _ = events.send(AgentEvent::ModelsListed {
            current,
            models,
            error,
        });
    }

    pub fn set_model(&mut self, name: &str, events: &EventSender) {
        let name = name.trim();
        if name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
            let _ = events.send(AgentEvent::Error {
                message: format!(
                    "/model needs a model name of 1 to {MAX_NAME} printable characters"
                ),
            });
            return;
        }
        let Some(next) = self.model.with_model(name) else {
            let _ = events.send(AgentEvent::Error {
                message: format!(
                    "{} cannot switch models: a scripted model plays its script",
                    self.model.label()
                ),
            });
            return;
        };
        self.model = next;
        self.saved.model = Some(name.to_string());
        self.settings.pricing = self.settings.model_table.lookup(name).cloned();
        let _ = events.send(AgentEvent::ModelChanged {
            model: name.to_string(),
        });
    }
}
