//! A setting's value as a source gives it (a flag's or environment variable's
//! text, or a `stepwise.toml` value), and the readers that turn it into a
//! checked, typed value.
//!
//! What must stay true: numbers are read only through `ranges`, so text and
//! TOML are held to the same bounds; every reader refuses what it cannot
//! read, with a reason that reads after `key = value`.

use super::ranges::{Positive, Whole};
use crate::tool_id::{ToolName, ToolSelector};

/// One source's value of a setting.
#[derive(Debug, Clone, Copy)]
pub enum Raw<'a> {
    /// A flag's or an environment variable's text (or the flag's default).
    Text(&'a str),
    /// A value from `stepwise.toml`.
    Toml(&'a toml::Value),
}

impl Raw<'_> {
    pub fn whole<T: TryFrom<u64>>(self, range: Whole<T>) -> Result<T, String> {
        match self {
            Raw::Text(text) => range.parse(text),
            Raw::Toml(value) => range.from_toml(value),
        }
    }

    pub fn amount(self, range: Positive) -> Result<f64, String> {
        match self {
            Raw::Text(text) => range.parse(text),
            Raw::Toml(value) => range.from_toml(value),
        }
    }

    pub fn text(self) -> Result<String, String> {
        match self {
            Raw::Text(text) => Ok(text.to_string()),
            Raw::Toml(toml::Value::String(text)) => Ok(text.clone()),
            Raw::Toml(_) => Err("is not a string".into()),
        }
    }

    /// `true` or `false`.
    pub fn boolean(self) -> Result<bool, String> {
        match self {
            Raw::Text("true") | Raw::Toml(toml::Value::Boolean(true)) => Ok(true),
            Raw::Text("false") | Raw::Toml(toml::Value::Boolean(false)) => Ok(false),
            _ => Err("is not true or false".into()),
        }
    }

    /// A list of strings (only files hold lists).
    pub fn strings(self) -> Result<Vec<String>, String> {
        let Raw::Toml(toml::Value::Array(items)) = self else {
            return Err("is not a list of strings".into());
        };
        items
            .iter()
            .map(|item| match item {
                toml::Value::String(s) => Ok(s.clone()),
                _ => Err("is not a list of strings".to_string()),
            })
            .collect()
    }

    /// Tool names (`mcp`: every MCP tool; `mcp__SERVER__TOOL`: one); a
    /// name that is not a tool is an error listing the valid ones.
    pub fn tools(self) -> Result<Vec<ToolSelector>, String> {
        self.strings()?
            .iter()
            .map(|name| {
                ToolSelector::parse(name).map_err(|_| {
                    let valid: Vec<_> = ToolName::all().iter().map(|t| t.as_str()).collect();
                    format!(
                        "names an unknown tool {name:?} (valid names: {})",
                        valid.join(", ")
                    )
                })
            })
            .collect()
    }

    /// Path globs such as `*.toml` or `migrations/**`.
    pub fn globs(self) -> Result<Vec<globset::Glob>, String> {
        self.strings()?
            .iter()
            .map(|pattern| {
                globset::Glob::new(pattern)
                    .map_err(|e| format!("has a bad path pattern {pattern:?}: {e}"))
            })
            .collect()
    }

    /// `[test_commands]`: each entry a name and a non-empty argument array
    /// (program first), never a shell string.
    pub fn test_commands(self) -> Result<Vec<(String, Vec<String>)>, String> {
        let Raw::Toml(toml::Value::Table(table)) = self else {
            return Err(
                "is not a table of argument arrays (e.g. unit = [\"cargo\", \"test\"])".into(),
            );
        };
        let mut out = Vec::new();
        for (name, value) in table {
            let good_name = !name.is_empty()
                && name.len() <= 40
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
            if !good_name {
                return Err(format!(
                    "has a bad command name {name:?} (letters, digits, _ - . only)"
                ));
            }
            let argv = match value {
                toml::Value::Array(items) if !items.is_empty() => items
                    .iter()
                    .map(|item| match item {
                        toml::Value::String(s) if !s.is_empty() => Some(s.clone()),
                        _ => None,
                    })
                    .collect::<Option<Vec<String>>>(),
                _ => None,
            };
            let Some(argv) = argv else {
                return Err(format!(
                    "has {name} = {}, which is not a non-empty array of strings (an argument array, program first; never a shell string)",
                    show(value)
                ));
            };
            out.push((name.clone(), argv));
        }
        Ok(out)
    }

    /// A value of one of clap's value enums, by its name.
    pub fn choice<T: clap::ValueEnum>(self) -> Result<T, String> {
        let text = self.text()?;
        T::from_str(&text, false).map_err(|_| {
            let names: Vec<_> = T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|v| v.get_name().to_string())
                .collect();
            format!("is not one of {}", names.join(", "))
        })
    }

    /// A table deserialized as `T` (only files hold tables).
    pub fn table<T: serde::de::DeserializeOwned>(self) -> Result<T, String> {
        match self {
            Raw::Toml(value @ toml::Value::Table(_)) => value
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| format!("is not valid: {}", e.message())),
            _ => Err("is not a table".into()),
        }
    }
}

/// A TOML value as written in a file, for error messages (the `toml` crate's
/// own display is not built in).
pub fn show(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(n) if n.is_nan() => "nan".into(),
        toml::Value::Float(n) if n.is_infinite() => (if *n > 0.0 { "inf" } else { "-inf" }).into(),
        toml::Value::Float(n) => n.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(items) => {
            let items: Vec<_> = items.iter().map(show).collect();
            format!("[{}]", items.join(", "))
        }
        toml::Value::Table(_) => "{...}".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Protocol;

    fn toml(text: &str) -> toml::Value {
        let table: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        table["v"].clone()
    }

    #[test]
    fn misspelt_tool_names_are_refused_with_the_valid_names() {
        let err = Raw::Toml(&toml(r#"["run-tests"]"#)).tools().unwrap_err();
        assert_eq!(
            err,
            r#"names an unknown tool "run-tests" (valid names: list_files, read_file, write_file, replace_text, apply_patch, run_tests, search_text)"#
        );
        assert_eq!(
            Raw::Toml(&toml(r#"["run_tests", "write_file"]"#)).tools(),
            Ok(vec![
                ToolName::RUN_TESTS.into(),
                ToolName::WRITE_FILE.into()
            ])
        );
        assert!(Raw::Toml(&toml(r#""run_tests""#)).tools().is_err());
        assert_eq!(
            Raw::Toml(&toml(r#"["mcp"]"#)).tools(),
            Ok(vec![ToolSelector::AnyMcp]),
            "every MCP tool"
        );
        assert_eq!(
            Raw::Toml(&toml(r#"["mcp__fs__write_file"]"#)).tools(),
            Ok(vec![ToolSelector::Tool(crate::tool_id::ToolId::mcp(
                "fs",
                "write_file"
            ))]),
            "one MCP tool"
        );
        assert!(Raw::Toml(&toml("[1]")).tools().is_err());
    }

    #[test]
    fn test_commands_are_argument_arrays_only() {
        let table = toml(r#"{unit = ["cargo", "test", "--lib"], e2e = ["npm", "run", "e2e"]}"#);
        let mut got = Raw::Toml(&table).test_commands().unwrap();
        got.sort();
        assert_eq!(
            got,
            [
                (
                    "e2e".to_string(),
                    vec!["npm".into(), "run".into(), "e2e".into()]
                ),
                (
                    "unit".to_string(),
                    vec!["cargo".into(), "test".into(), "--lib".into()]
                ),
            ]
        );
        for bad in [
            r#"{unit = "cargo test"}"#,
            r#"{unit = []}"#,
            r#"{unit = [1]}"#,
            r#"{unit = [""]}"#,
            r#"{"a b" = ["x"]}"#,
            r#"["cargo"]"#,
        ] {
            assert!(Raw::Toml(&toml(bad)).test_commands().is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_globs_protocols_and_types_are_refused() {
        assert!(Raw::Toml(&toml(r#"["["]"#)).globs().is_err());
        assert_eq!(
            Raw::Toml(&toml(r#"["*.toml"]"#)).globs().map(|g| g.len()),
            Ok(1)
        );
        assert_eq!(Raw::Text("json").choice(), Ok(Protocol::Json));
        assert_eq!(
            Raw::Toml(&toml(r#""xml""#)).choice::<Protocol>(),
            Err("is not one of tools, json".into())
        );
        assert!(Raw::Toml(&toml("5")).text().is_err());
        assert!(Raw::Toml(&toml("5")).table::<toml::Table>().is_err());
    }

    #[test]
    fn values_show_as_written() {
        assert_eq!(show(&toml(r#"["run-tests", 3]"#)), r#"["run-tests", 3]"#);
        assert_eq!(show(&toml("0")), "0");
        assert_eq!(show(&toml("-1.5")), "-1.5");
        assert_eq!(show(&toml("nan")), "nan");
        assert_eq!(show(&toml("-inf")), "-inf");
    }
}
