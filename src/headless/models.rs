//! `stepwise models`: the model names the configured server offers, one per
//! line, sorted (`GET /models` of the provider's wire API).
//!
//! What must stay true: the request goes only to the configured base URL
//! with the configured provider's key; names are the server's text, so each
//! is sanitized onto one line; the exit code follows `exec`'s table (0
//! listed, 1 the server or network failed, 2 a configuration problem).

use super::{EXIT_ANSWERED, EXIT_NOT_ANSWERED, EXIT_USAGE, fail, out};
use crate::config::Config;
use crate::present::one_line;

/// List the server's models; returns the exit code.
pub async fn list(config: Config) -> i32 {
    if config.model_source.is_scripted() {
        fail("models: a scripted model (--demo, --script) has no server to list models from");
        return EXIT_USAGE;
    }
    if let Err(e) = config.validate() {
        fail(&e.to_string());
        return EXIT_USAGE;
    }
    let model = match crate::setup::http_model(&config) {
        Ok(model) => model,
        Err(e) => {
            fail(&e);
            return EXIT_USAGE;
        }
    };
    match model.list_models().await {
        Ok(names) => {
            for name in names {
                out(&one_line(&name));
            }
            EXIT_ANSWERED
        }
        Err(e) => {
            fail(&format!("cannot list models: {e}"));
            EXIT_NOT_ANSWERED
        }
    }
}
