//! The provider presets of `--provider`: for each one its base URL, the
//! environment variable its key is read from, the wire API its server
//! speaks, and the model asked when none is given. This table is the one place these facts live (the README's
//! provider table mirrors it; `tests/cli/provider_keys.rs` checks they agree).
//!
//! What must stay true: a preset's key variable is read only for that
//! preset, so a key meant for one provider is never sent to another; every
//! key variable of the table is in [`KEY_VARS`], which the `.env` reader, the
//! scrubbing and the test-run environment all use.

/// Which HTTP API a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WireApi {
    /// OpenAI chat completions (`/chat/completions`, `Authorization: Bearer`).
    OpenAi,
    /// Anthropic's Messages API (`/v1/messages`, `x-api-key`).
    Anthropic,
}

/// A named provider (`--provider`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI (the default: today's behaviour, `--base-url` still wins).
    #[default]
    Openai,
    /// Anthropic's native Messages API.
    Anthropic,
    /// OpenRouter.
    Openrouter,
    /// A local Ollama server (no key).
    Ollama,
    /// Groq.
    Groq,
    /// DeepSeek.
    Deepseek,
    /// Google Gemini through its OpenAI-compatible endpoint.
    Gemini,
    /// Any OpenAI-compatible server at `--base-url`, with `OPENAI_API_KEY`.
    Custom,
}

/// What a preset sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub provider: Provider,
    pub name: &'static str,
    pub base_url: &'static str,
    /// The variable its key is read from; `None`: the server takes no key.
    pub key_var: Option<&'static str>,
    pub wire: WireApi,
    /// The model asked when none is given (`--model`, `STEPWISE_MODEL`,
    /// `model` in a file): one this provider serves.
    pub model: &'static str,
}

/// Every preset, in `--provider` order.
pub const PRESETS: [Preset; 8] = [
    preset(
        Provider::Openai,
        "openai",
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
        WireApi::OpenAi,
        super::DEFAULT_MODEL,
    ),
    preset(
        Provider::Anthropic,
        "anthropic",
        "https://api.anthropic.com",
        Some("ANTHROPIC_API_KEY"),
        WireApi::Anthropic,
        "claude-sonnet-4-5",
    ),
    preset(
        Provider::Openrouter,
        "openrouter",
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_API_KEY"),
        WireApi::OpenAi,
        "openai/gpt-4.1-mini",
    ),
    preset(
        Provider::Ollama,
        "ollama",
        "http://localhost:11434/v1",
        None,
        WireApi::OpenAi,
        "qwen2.5-coder",
    ),
    preset(
        Provider::Groq,
        "groq",
        "https://api.groq.com/openai/v1",
        Some("GROQ_API_KEY"),
        WireApi::OpenAi,
        "llama-3.3-70b-versatile",
    ),
    preset(
        Provider::Deepseek,
        "deepseek",
        "https://api.deepseek.com/v1",
        Some("DEEPSEEK_API_KEY"),
        WireApi::OpenAi,
        "deepseek-chat",
    ),
    preset(
        Provider::Gemini,
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        Some("GEMINI_API_KEY"),
        WireApi::OpenAi,
        "gemini-2.5-flash",
    ),
    preset(
        Provider::Custom,
        "custom",
        super::DEFAULT_BASE_URL,
        Some("OPENAI_API_KEY"),
        WireApi::OpenAi,
        super::DEFAULT_MODEL,
    ),
];

const fn preset(
    provider: Provider,
    name: &'static str,
    base_url: &'static str,
    key_var: Option<&'static str>,
    wire: WireApi,
    model: &'static str,
) -> Preset {
    Preset {
        provider,
        name,
        base_url,
        key_var,
        wire,
        model,
    }
}

/// Every variable a key may be read from (each preset's, once).
pub const KEY_VARS: [&str; 6] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "GEMINI_API_KEY",
];

impl Provider {
    /// This provider's row of the table.
    pub fn preset(self) -> &'static Preset {
        // The table has a row per variant (a test checks it); `Custom` is last.
        let index = PRESETS.iter().position(|p| p.provider == self);
        &PRESETS[index.unwrap_or(PRESETS.len() - 1)]
    }

    /// Its name, as `--provider` takes it.
    pub fn name(self) -> &'static str {
        self.preset().name
    }
}

/// Whether `name` is one of the key variables (any case, as the environment may).
pub fn is_key_var(name: &str) -> bool {
    KEY_VARS.iter().any(|v| v.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_provider_has_one_row_and_every_key_var_is_listed() {
        for p in Provider::value_variants() {
            let rows = PRESETS.iter().filter(|r| r.provider == *p).count();
            assert_eq!(rows, 1, "{p:?}");
            let name = p.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(name.as_deref(), Some(p.name()));
        }
        for row in PRESETS {
            assert!(row.key_var.is_none_or(|v| KEY_VARS.contains(&v)), "{row:?}");
        }
        assert_eq!(
            Provider::default().preset().base_url,
            super::super::DEFAULT_BASE_URL
        );
        assert!(is_key_var("anthropic_api_key") && !is_key_var("HOME"));
    }
}
