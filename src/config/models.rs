//! The model table: context windows and prices per model, from
//! `assets/models.toml`, extended or overridden by the user's config file.
//!
//! What must stay true: this is a leaf of `config` (it knows nothing of the
//! model client); the cost estimate works on plain token counts, which the
//! client's usage type converts into.
use serde::Deserialize;
use std::collections::BTreeMap;

const BUILTIN: &str = include_str!("../../assets/models.toml");

/// What stepwise knows about one model. Prices are USD per million tokens.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    pub context_window: Option<u64>,
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    /// The price of prompt tokens written to the cache (Anthropic's cache
    /// writes cost more than plain input); the input price when unset.
    pub cache_write_input: Option<f64>,
    pub output: Option<f64>,
}

/// Token counts of one request, as the cost estimate needs them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    pub prompt: u64,
    pub completion: u64,
    /// Prompt tokens served from the server's cache (billed at the cached price).
    pub cached: u64,
    /// Prompt tokens written to the server's cache (billed at the cache-write price).
    pub cache_write: u64,
}

impl ModelInfo {
    /// Estimated cost of a request, when the prices are known.
    pub fn cost(&self, tokens: impl Into<TokenCounts>) -> Option<f64> {
        let tokens = tokens.into();
        let input = self.input?;
        let output = self.output?;
        let cached = tokens.cached.min(tokens.prompt);
        let written = tokens.cache_write.min(tokens.prompt - cached);
        let fresh = tokens.prompt - cached - written;
        let cached_price = self.cached_input.unwrap_or(input);
        let write_price = self.cache_write_input.unwrap_or(input);
        Some(
            (fresh as f64 * input
                + cached as f64 * cached_price
                + written as f64 * write_price
                + tokens.completion as f64 * output)
                / 1_000_000.0,
        )
    }

    /// Fill what `self` leaves open from `base`.
    fn over(self, base: &ModelInfo) -> ModelInfo {
        ModelInfo {
            context_window: self.context_window.or(base.context_window),
            input: self.input.or(base.input),
            cached_input: self.cached_input.or(base.cached_input),
            cache_write_input: self.cache_write_input.or(base.cache_write_input),
            output: self.output.or(base.output),
        }
    }
}

#[derive(Debug, Deserialize)]
struct Defaults {
    context_window: u64,
}

#[derive(Debug, Deserialize)]
struct TableFile {
    default: Defaults,
    models: BTreeMap<String, ModelInfo>,
}

/// All known models.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTable {
    pub default_window: u64,
    models: BTreeMap<String, ModelInfo>,
}

impl ModelTable {
    /// The built-in table.
    pub fn builtin() -> ModelTable {
        // The asset is part of the binary and checked by a test.
        let file: TableFile = toml::from_str(BUILTIN).unwrap_or(TableFile {
            default: Defaults {
                context_window: 32768,
            },
            models: BTreeMap::new(),
        });
        ModelTable {
            default_window: file.default.context_window,
            models: file.models,
        }
    }

    /// Apply user overrides (partial entries keep the built-in values they leave out).
    pub fn merge(&mut self, overrides: &BTreeMap<String, ModelInfo>) {
        for (name, info) in overrides {
            let base = self.models.get(name).cloned().unwrap_or_default();
            self.models.insert(name.clone(), info.clone().over(&base));
        }
    }

    /// The entry for a model: exact name, else its longest matching prefix.
    pub fn lookup(&self, model: &str) -> Option<&ModelInfo> {
        let name = model.rsplit('/').next().unwrap_or(model);
        self.models.get(name).or_else(|| {
            self.models
                .iter()
                .filter(|(key, _)| name.starts_with(key.as_str()))
                .max_by_key(|(key, _)| key.len())
                .map(|(_, info)| info)
        })
    }

    /// The context window of a model, or the default for unknown ones.
    pub fn context_window(&self, model: &str) -> u64 {
        self.lookup(model)
            .and_then(|m| m.context_window)
            .unwrap_or(self.default_window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_parses_and_matches_prefixes() {
        let file: TableFile = toml::from_str(BUILTIN).expect("assets/models.toml parses");
        assert!(file.models.len() >= 5);
        let table = ModelTable::builtin();
        assert_eq!(table.context_window("gpt-4.1-mini-2025-04-14"), 1047576);
        assert_eq!(table.lookup("gpt-4.1-mini").unwrap().input, Some(0.40));
        assert_eq!(
            table.lookup("openai/gpt-4o").unwrap().context_window,
            Some(128000)
        );
        // "gpt-4o-mini" must not fall back to "gpt-4o".
        assert_eq!(table.lookup("gpt-4o-mini-2024").unwrap().input, Some(0.15));
        assert_eq!(table.context_window("some-local-model"), 32768);
        assert!(table.lookup("some-local-model").is_none());
    }

    #[test]
    fn cost_uses_cached_and_output_prices() {
        let info = ModelInfo {
            context_window: None,
            input: Some(2.0),
            cached_input: Some(0.5),
            cache_write_input: None,
            output: Some(8.0),
        };
        let usage = TokenCounts {
            prompt: 1_000_000,
            completion: 500_000,
            cached: 400_000,
            cache_write: 0,
        };
        let cost = info.cost(usage).unwrap();
        assert!(
            (cost - (0.6 * 2.0 + 0.4 * 0.5 + 0.5 * 8.0)).abs() < 1e-9,
            "{cost}"
        );
        assert_eq!(
            ModelInfo::default().cost(usage),
            None,
            "unknown prices give no cost"
        );
    }

    #[test]
    fn cache_writes_and_reads_are_priced_from_the_table() {
        let table = ModelTable::builtin();
        let sonnet = table.lookup("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(
            (sonnet.input, sonnet.cache_write_input, sonnet.cached_input),
            (Some(3.0), Some(3.75), Some(0.30))
        );
        let usage = TokenCounts {
            prompt: 1_000_000,
            completion: 0,
            cached: 600_000,
            cache_write: 300_000,
        };
        let cost = sonnet.cost(usage).unwrap();
        assert!(
            (cost - (0.1 * 3.0 + 0.6 * 0.30 + 0.3 * 3.75)).abs() < 1e-9,
            "{cost}"
        );
    }

    #[test]
    fn overrides_extend_and_partially_replace() {
        let mut table = ModelTable::builtin();
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "gpt-4o".to_string(),
            ModelInfo {
                input: Some(9.0),
                ..ModelInfo::default()
            },
        );
        overrides.insert(
            "mine".to_string(),
            ModelInfo {
                context_window: Some(4096),
                ..ModelInfo::default()
            },
        );
        table.merge(&overrides);
        let gpt = table.lookup("gpt-4o").unwrap();
        assert_eq!(
            (gpt.input, gpt.output, gpt.context_window),
            (Some(9.0), Some(10.0), Some(128000))
        );
        assert_eq!(table.context_window("mine"), 4096);
    }
}
