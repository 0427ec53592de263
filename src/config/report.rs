//! The `--print-config` report: each effective value and where it came from,
//! a line per settings row (as its `shown` says) and the closing lines.
//! What must stay true: the API key shows only as set or unset, and the
//! report's content (names, values, sources, order) does not change when
//! the code behind it does.

use super::Config;
use super::file::LoadedFiles;
use super::settings::{Setting, Shown};
use super::trust::Assignment;
use std::path::PathBuf;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env(&'static str),
    File(PathBuf),
    /// A default, as `--print-config` names it.
    Default(&'static str),
}

/// One line of `--print-config`: a setting, its value, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub name: &'static str,
    pub value: String,
    pub source: String,
}

/// The configuration after layering flags, environment, config files and defaults.
pub struct Resolved {
    pub config: Config,
    pub provenance: Vec<Provenance>,
    /// Guarded values the workspace's file sets that were not applied (folder not trusted).
    pub withheld: Vec<Assignment>,
    /// Guarded values the workspace's file sets that were applied (folder
    /// trusted), read from the same bytes as the configuration: what the
    /// trust question must have shown.
    pub trusted: Vec<Assignment>,
    /// The workspace's project file as this resolution read it (`None`: it
    /// has none), to tell whether it changed between two resolutions.
    pub project: Option<toml::Table>,
}

impl Resolved {
    /// The `--print-config` report. The key is shown only as set or unset.
    pub fn report(&self) -> String {
        let width = self
            .provenance
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0);
        let value_width = self
            .provenance
            .iter()
            .map(|p| p.value.chars().count())
            .max()
            .unwrap_or(0)
            .min(48);
        self.provenance
            .iter()
            .map(|p| {
                format!(
                    "{:width$}  {:value_width$}  ({})\n",
                    p.name, p.value, p.source
                )
            })
            .collect()
    }
}

/// Add a setting's `--print-config` line (or fold it into the line above).
pub fn show(setting: &Setting, source: Source, config: &Config, lines: &mut Vec<Provenance>) {
    let (value, names_file) = match setting.shown {
        Shown::Line(value) => (value, true),
        Shown::LineFileUnnamed(value) => (value, false),
        Shown::Hidden => return,
        Shown::WithAbove => {
            if let (Some(above), Source::File(_)) = (lines.last_mut(), &source) {
                above.source = "file".into();
            }
            return;
        }
    };
    let source = match source {
        Source::Flag => "flag".to_string(),
        Source::Env(var) => format!("env {var}"),
        Source::File(path) if names_file => format!("file {}", path.display()),
        Source::File(_) => "file".to_string(),
        Source::Default(label) => label.to_string(),
    };
    lines.push(Provenance {
        name: setting.key,
        value: value(config),
        source,
    });
}

/// The lines after the layered settings: the workspace, whether the key is
/// set, and which config files were read and looked for.
pub fn closing_lines(
    config: &Config,
    workspace_source: String,
    loaded: &LoadedFiles,
    looked_for: &[PathBuf],
) -> [Provenance; 3] {
    let read: Vec<_> = loaded.files().map(|f| f.display().to_string()).collect();
    let looked_for: Vec<_> = looked_for.iter().map(|f| f.display().to_string()).collect();
    [
        Provenance {
            name: "workspace",
            value: config.workspace.display().to_string(),
            source: workspace_source,
        },
        Provenance {
            name: "api_key",
            value: if config.api_key.is_some() {
                "set".into()
            } else {
                "unset".into()
            },
            source: match config.provider.preset().key_var {
                Some(var) => format!("env {var} (or .env)"),
                None => format!("none ({} takes no key)", config.provider.name()),
            },
        },
        Provenance {
            name: "config_files",
            value: if read.is_empty() {
                "none".into()
            } else {
                read.join(", ")
            },
            source: format!("looked for: {}", looked_for.join(", ")),
        },
    ]
}

/// A line per guarded value held back because its folder is not trusted.
pub fn withheld_lines(withheld: &[Assignment]) -> Vec<Provenance> {
    withheld
        .iter()
        .map(|a| Provenance {
            name: "not_applied",
            value: a.text.clone(),
            source: format!(
                "file {}: decides {}; folder not trusted (--trust)",
                a.file.display(),
                a.decides
            ),
        })
        .collect()
}
