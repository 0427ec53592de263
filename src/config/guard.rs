//! Which values a project file (the workspace's `.stepwise/stepwise.toml`,
//! `./.env`) may set before the user trusts its folder: the [`Guard`] each
//! settings row carries, and the variables `./.env` may set at all
//! ([`ENV_ONLY`] besides the rows' own variables).
//!
//! What must stay true: a value that decides where requests (and the key)
//! go, or what runs, is never `Guard::Open`; a variable not listed here or
//! in a row is never read from `./.env`; this is the only place that says
//! which is which (`trust` and `dotenv` only ask).

/// Whether a project file may set a value before its folder is trusted.
#[derive(Clone, Copy)]
pub enum Guard {
    /// Any file may set it.
    Open,
    /// It decides where requests (and the key) go or what runs, as the text
    /// says: from a project file it is honoured only in a trusted folder.
    Trusted(&'static str),
    /// Only part of the value needs trust (the prices of the model table);
    /// the function splits a value into its open part and its guarded part.
    Part(&'static str, fn(&toml::Value) -> Split),
    /// A limit: an untrusted project file may make it stricter, never
    /// looser. The function says whether the configuration with the file's
    /// value (first) is at most as permissive as the one without it.
    Limit(fn(&super::Config, &super::Config) -> bool),
}

/// What a looser limit from an untrusted project file would decide.
pub const LOOSER_LIMIT: &str =
    "a looser limit than yours (a project file may only make limits stricter)";

/// A value split by a [`Guard::Part`]: what may apply anyway, what needs trust.
pub struct Split {
    pub open: Option<toml::Value>,
    pub guarded: Option<toml::Value>,
}

impl Guard {
    /// Split a value into what an untrusted project file may set and what it may not.
    pub fn split(&self, value: &toml::Value) -> Split {
        match self {
            Guard::Open => Split {
                open: Some(value.clone()),
                guarded: None,
            },
            Guard::Trusted(_) | Guard::Limit(_) => Split {
                open: None,
                guarded: Some(value.clone()),
            },
            Guard::Part(_, split) => split(value),
        }
    }

    /// What a guarded value decides, for the question and the refusal.
    pub fn decides(&self) -> Option<&'static str> {
        match self {
            Guard::Open => None,
            Guard::Trusted(what) | Guard::Part(what, _) => Some(what),
            Guard::Limit(_) => Some(LOOSER_LIMIT),
        }
    }
}

/// The keys of a model-table entry that wait for trust: with prices a
/// project file could make a task look free and so slip past `max_cost`;
/// with `context_window` it could lift the window past the `context_window`
/// limit (which only lets an untrusted file make it smaller), sending more
/// of the conversation, at more cost, with every request.
const GUARDED_MODEL_KEYS: [&str; 5] = [
    "input",
    "cached_input",
    "cache_write_input",
    "output",
    "context_window",
];

/// The model table without its guarded keys, and those keys alone.
pub(super) fn split_prices(value: &toml::Value) -> Split {
    let Some(models) = value.as_table() else {
        // Not a table: the row's reader refuses it either way.
        return Split {
            open: Some(value.clone()),
            guarded: None,
        };
    };
    let (mut open, mut guarded) = (toml::Table::new(), toml::Table::new());
    for (name, entry) in models {
        let Some(fields) = entry.as_table() else {
            open.insert(name.clone(), entry.clone());
            continue;
        };
        let (prices, rest): (toml::Table, toml::Table) = fields
            .clone()
            .into_iter()
            .partition(|(k, _)| GUARDED_MODEL_KEYS.contains(&k.as_str()));
        open.insert(name.clone(), toml::Value::Table(rest));
        if !prices.is_empty() {
            guarded.insert(name.clone(), toml::Value::Table(prices));
        }
    }
    Split {
        open: Some(toml::Value::Table(open)),
        guarded: (!guarded.is_empty()).then_some(toml::Value::Table(guarded)),
    }
}

/// What a base URL decides.
pub(super) const WHERE_REQUESTS_GO: &str = "where requests (and the API key) go";
/// What a proxy variable decides.
const THROUGH_A_PROXY: &str = "which proxy requests (and the API key) go through";

/// A variable `./.env` may set that is not the environment variable of a row.
pub struct EnvVar {
    pub name: &'static str,
    pub guard: Guard,
}

/// The variables `./.env` may set besides the rows' own (`OPENAI_BASE_URL`,
/// `STEPWISE_MODEL`); anything else in it is ignored.
pub const ENV_ONLY: &[EnvVar] = &[
    EnvVar {
        name: super::API_KEY_VAR,
        guard: Guard::Open,
    },
    EnvVar {
        name: "STEPWISE_PYTHON",
        guard: Guard::Trusted("which program runs the tests"),
    },
    EnvVar {
        name: "STEPWISE_LOG",
        guard: Guard::Trusted("which file the UI log is written to"),
    },
    EnvVar {
        name: "HTTPS_PROXY",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "https_proxy",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "HTTP_PROXY",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "http_proxy",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "ALL_PROXY",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "all_proxy",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "NO_PROXY",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    EnvVar {
        name: "no_proxy",
        guard: Guard::Trusted(THROUGH_A_PROXY),
    },
    // The other presets' keys: like OPENAI_API_KEY, a key only says who pays.
    EnvVar {
        name: "ANTHROPIC_API_KEY",
        guard: Guard::Open,
    },
    EnvVar {
        name: "OPENROUTER_API_KEY",
        guard: Guard::Open,
    },
    EnvVar {
        name: "GROQ_API_KEY",
        guard: Guard::Open,
    },
    EnvVar {
        name: "DEEPSEEK_API_KEY",
        guard: Guard::Open,
    },
    EnvVar {
        name: "GEMINI_API_KEY",
        guard: Guard::Open,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_and_windows_are_split_from_the_rest_of_the_model_table() {
        let table: toml::Value =
            toml::from_str("[m]\ncontext_window = 5000\ninput = 0.0\n[n]\nunknown = 1\n").unwrap();
        let split = split_prices(&table);
        let open = split.open.unwrap();
        assert!(open["m"].get("input").is_none());
        assert!(open["m"].get("context_window").is_none());
        assert_eq!(open["n"]["unknown"].as_integer(), Some(1));
        let guarded = split.guarded.unwrap();
        assert_eq!(guarded["m"]["input"].as_float(), Some(0.0));
        assert_eq!(guarded["m"]["context_window"].as_integer(), Some(5000));
        assert!(
            guarded.get("n").is_none(),
            "nothing guarded, nothing to trust"
        );
    }
}
