//! Layering the configuration: flags beat environment beat `stepwise.toml`
//! files beat defaults, using clap's value sources to tell a default from an
//! explicit value, row by row through the settings table.
//!
//! What must stay true: this file knows no setting by name (that is the
//! table's job); every value of every source goes through its row's `set`,
//! including file values a flag overrides, so a bad value anywhere is an
//! error naming its file (or flag, or environment variable) and key.

use super::file::{self, LoadedFiles};
use super::flags::Options;
use super::models::ModelTable;
use super::raw::Raw;
use super::report::{self, Resolved, Source};
use super::sandbox::SandboxSettings;
use super::settings::{self, Fallback, SETTINGS, Setting};
use super::trust;
use super::{ColorChoice, Config, Protocol, Provider, Review};
use clap::ArgMatches;
use clap::parser::ValueSource;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Layer the configuration: flags beat environment beat config files beat
/// defaults. The workspace's file sets guarded values only when
/// `trust_project` (its folder is trusted).
pub fn resolve(
    matches: &ArgMatches,
    options: &Options,
    trust_project: bool,
) -> Result<Resolved, String> {
    let files = file::candidate_paths(&options.workspace());
    resolve_files(matches, options, &files, trust_project)
}

/// `resolve` with explicit config-file paths, the folder not trusted (for tests).
pub fn resolve_with_files(
    matches: &ArgMatches,
    options: &Options,
    files: &[PathBuf],
) -> Result<Resolved, String> {
    resolve_files(matches, options, files, false)
}

fn resolve_files(
    matches: &ArgMatches,
    options: &Options,
    files: &[PathBuf],
    trust_project: bool,
) -> Result<Resolved, String> {
    let loaded = file::load(files)?;
    let mut resolved = layer(matches, options, files, &loaded, trust_project)?;
    let project = file::project_path(&options.workspace());
    resolved.project = (loaded.each.iter())
        .find(|(path, _)| *path == project)
        .map(|(_, table)| table.clone());
    if trust_project {
        // What the same bytes would have withheld: the values trust applied.
        resolved.trusted = layer(matches, options, files, &loaded, false)?.withheld;
    }
    Ok(resolved)
}

/// The layers of files read once (`loaded`).
fn layer(
    matches: &ArgMatches,
    options: &Options,
    files: &[PathBuf],
    loaded: &LoadedFiles,
    trust_project: bool,
) -> Result<Resolved, String> {
    let mut applied = loaded.clone();
    let mut withheld = Vec::new();
    let project = file::project_path(&options.workspace());
    let mut limits = Vec::new();
    for (path, table) in applied.each.iter_mut() {
        if !trust_project && *path == project {
            limits = take_limits(table);
            withheld.extend(trust::withhold(table, path, matches));
        }
    }
    // An untrusted project file's limit applies only when it is stricter
    // than what the other sources give.
    if !limits.is_empty() {
        let (without, _) = build(matches, options, loaded, &applied)?;
        for (key, value, stricter) in limits {
            let mut trial = applied.clone();
            if let Some((_, table)) = trial.each.iter_mut().find(|(p, _)| *p == project) {
                table.insert(key.clone(), value.clone());
            }
            let (with, _) = build(matches, options, loaded, &trial)?;
            if stricter(&with, &without) {
                applied = trial;
            } else {
                withheld.extend(trust::leaves(&key, &value).into_iter().map(|text| {
                    trust::Assignment {
                        file: project.clone(),
                        text,
                        decides: super::guard::LOOSER_LIMIT,
                    }
                }));
            }
        }
    }
    let (config, sources) = build(matches, options, loaded, &applied)?;
    let mut provenance = Vec::new();
    for (setting, source) in sources {
        report::show(setting, source, &config, &mut provenance);
    }
    let workspace = match matches.value_source("workspace") {
        Some(ValueSource::CommandLine) => "flag",
        _ => "default",
    };
    provenance.extend(report::closing_lines(
        &config,
        workspace.into(),
        loaded,
        files,
    ));
    provenance.extend(report::withheld_lines(&withheld));
    Ok(Resolved {
        config,
        provenance,
        withheld,
        trusted: Vec::new(),
        project: None,
    })
}

/// A limit's check: is the configuration with the project's value (first)
/// at most as permissive as the one without it?
type Stricter = fn(&Config, &Config) -> bool;

/// Take the limit-guarded keys out of an untrusted project table, each with
/// its check.
fn take_limits(table: &mut toml::Table) -> Vec<(String, toml::Value, Stricter)> {
    let keys: Vec<String> = table.keys().cloned().collect();
    keys.into_iter()
        .filter_map(|key| {
            let super::guard::Guard::Limit(stricter) = settings::by_key(&key)?.guard else {
                return None;
            };
            let value = table.remove(&key)?;
            Some((key, value, stricter))
        })
        .collect()
}

/// Each row with where its value came from.
type Sources = Vec<(&'static Setting, Source)>;

/// Every row applied, in table order: the configuration and each row's source.
fn build(
    matches: &ArgMatches,
    options: &Options,
    loaded: &LoadedFiles,
    applied: &LoadedFiles,
) -> Result<(Config, Sources), String> {
    let mut config = flag_only(options);
    let mut sources = Vec::new();
    for setting in SETTINGS {
        check_every_file(setting, loaded, &config)?;
        sources.push((setting, apply(setting, matches, applied, &mut config)?));
    }
    Ok((config, sources))
}

/// The settings that are flags only. The table's settings start empty here:
/// each row either sets its field or keeps this value as its default.
fn flag_only(options: &Options) -> Config {
    Config {
        workspace: options.workspace(),
        workspace_given: options.workspace.is_some(),
        test_commands: Vec::new(),
        task: None,
        resume: options.resume_from(),
        // Set by the provider row, from that provider's key variable.
        api_key: None,
        log: options.log(),
        model_source: options.model_source(),
        model: String::new(),
        base_url: String::new(),
        max_steps: 0,
        test_timeout: Duration::ZERO,
        protocol: Protocol::default(),
        review: Review::default(),
        max_retries: 0,
        max_repeats: 0,
        idle_timeout: Duration::ZERO,
        token_timeout: Duration::ZERO,
        context_budget: 0,
        context_window: 0,
        max_cost: None,
        models: ModelTable::builtin(),
        no_auto_approve: Vec::new(),
        no_auto_approve_paths: Vec::new(),
        color: ColorChoice::Auto,
        sandbox: SandboxSettings::default(),
        test_env: Vec::new(),
        deny_paths: Vec::new(),
        notify: true,
        provider: Provider::default(),
        headers: Vec::new(),
        mcp: Default::default(),
        theme: crate::config::ThemeChoice::Auto,
    }
}

/// Check each file's value of a setting, also one that a later file or a flag overrides.
fn check_every_file(
    setting: &Setting,
    loaded: &LoadedFiles,
    config: &Config,
) -> Result<(), String> {
    for (path, table) in &loaded.each {
        if let Some(value) = table.get(setting.key) {
            (setting.set)(&mut config.clone(), Raw::Toml(value))
                .map_err(|why| file_error(path, setting.key, value, &why))?;
        }
    }
    Ok(())
}

fn file_error(path: &Path, key: &str, value: &toml::Value, why: &str) -> String {
    format!(
        "{}: {} {why}",
        path.display(),
        settings::assignment(key, value)
    )
}

/// Flags that stand for a setting's value: (flag, the setting's flag, value).
const SHORTHANDS: &[(&str, &str, &str)] = &[("stage", "review", "staged")];

/// Set one setting from the source that wins, and say which one it was.
fn apply(
    setting: &Setting,
    matches: &ArgMatches,
    loaded: &LoadedFiles,
    config: &mut Config,
) -> Result<Source, String> {
    let given = setting.flag.and_then(|id| {
        let source = match matches.value_source(id)? {
            ValueSource::CommandLine => Source::Flag,
            ValueSource::EnvVariable => Source::Env(setting.env.unwrap_or_default()),
            _ => return None,
        };
        Some((id, source))
    });
    // A shorthand flag given on the command line stands for its value.
    let shorthand = SHORTHANDS.iter().find(|(flag, id, _)| {
        setting.flag == Some(*id) && matches.try_get_one::<bool>(flag).ok().flatten() == Some(&true)
    });
    if let (None, Some((_, _, value))) = (&given, shorthand) {
        (setting.set)(config, Raw::Text(value))?;
        return Ok(Source::Flag);
    }
    if let Some((id, source)) = given {
        let text = raw_text(matches, id).unwrap_or_default();
        (setting.set)(config, Raw::Text(&text)).map_err(|why| match source {
            Source::Env(var) => format!("{var}={text} {why}"),
            _ => format!("--{} {text} {why}", id.replace('_', "-")),
        })?;
        return Ok(source);
    }
    if let Some((value, path)) = loaded.get(setting.key) {
        (setting.set)(config, Raw::Toml(&value))
            .map_err(|why| file_error(path, setting.key, &value, &why))?;
        return Ok(Source::File(path.to_path_buf()));
    }
    match setting.fallback {
        Fallback::FlagDefault => {
            let text = setting
                .flag
                .and_then(|id| raw_text(matches, id))
                .ok_or_else(|| format!("{} has no default value", setting.key))?;
            (setting.set)(config, Raw::Text(&text))
                .map_err(|why| format!("default {} = {text} {why}", setting.key))?;
            Ok(Source::Default("default"))
        }
        Fallback::Initial => Ok(Source::Default("default")),
        Fallback::Computed(default) => Ok(Source::Default(default(config))),
    }
}

/// A flag's value as text (its default when not given).
fn raw_text(matches: &ArgMatches, id: &str) -> Option<String> {
    let mut values = matches.try_get_raw(id).ok()??;
    values.next().map(|v| v.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::flags::Cli;
    use crate::tool_id::ToolName;
    use clap::FromArgMatches;

    fn resolve_args(args: &[&str], files: &[PathBuf]) -> Result<Resolved, String> {
        let argv = std::iter::once("stepwise").chain(args.iter().copied());
        let matches = crate::config::command().try_get_matches_from(argv).unwrap();
        let cli = Cli::from_arg_matches(&matches).unwrap();
        resolve_with_files(&matches, &cli.options, files)
    }

    fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn source<'a>(r: &'a Resolved, name: &str) -> &'a str {
        let line = r.provenance.iter().find(|p| p.name == name).unwrap();
        &line.source
    }

    #[test]
    fn every_row_sets_its_field_with_no_flags_and_no_files() {
        let c = resolve_args(&[], &[]).unwrap().config;
        assert_eq!(c.max_steps, 20);
        assert_eq!(c.test_timeout, Duration::from_secs(30));
        assert_eq!(c.max_retries, 4);
        assert_eq!(c.max_repeats, 5);
        assert_eq!(c.idle_timeout, Duration::from_secs(120));
        assert_eq!(c.token_timeout, Duration::from_secs(600));
        assert_eq!(c.context_budget, 70);
        assert_eq!(c.protocol, Protocol::Tools);
        assert_eq!(c.max_cost, None);
        assert_eq!(c.context_window, c.models.context_window(&c.model));
        assert!(c.no_auto_approve.is_empty() && c.no_auto_approve_paths.is_empty());
    }

    #[test]
    fn flags_beat_files_beat_defaults_row_by_row() {
        let dir = tempfile::tempdir().unwrap();
        let user = file(&dir, "user.toml", "max_steps = 7\nmax_retries = 2\n");
        let ws = file(&dir, "ws.toml", "max_steps = 9\ncontext_window = 4096\n");
        let r = resolve_args(&["--max-retries", "3"], &[user.clone(), ws.clone()]).unwrap();
        assert_eq!(r.config.max_steps, 9);
        assert_eq!(source(&r, "max_steps"), format!("file {}", ws.display()));
        assert_eq!(r.config.max_retries, 3);
        assert_eq!(source(&r, "max_retries"), "flag");
        assert_eq!(r.config.context_window, 4096);
        assert_eq!(source(&r, "context_window"), "file");
        assert_eq!(source(&r, "test_timeout"), "default");
    }

    #[test]
    fn max_repeats_comes_from_a_file_or_a_flag_and_zero_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let user = file(&dir, "user.toml", "max_repeats = 0\n");
        let r = resolve_args(&[], std::slice::from_ref(&user)).unwrap();
        assert_eq!(r.config.max_repeats, 0);
        let r = resolve_args(&["--max-repeats", "8"], &[user]).unwrap();
        assert_eq!(
            (r.config.max_repeats, source(&r, "max_repeats")),
            (8, "flag")
        );
    }

    #[test]
    fn file_values_are_checked_in_every_file_whatever_overrides_them() {
        let dir = tempfile::tempdir().unwrap();
        let user = file(&dir, "user.toml", "test_timeout = 0\n");
        let ws = file(&dir, "ws.toml", "test_timeout = 5\n");
        let err = resolve_args(&["--test-timeout", "8"], &[user.clone(), ws]).err();
        assert_eq!(
            err,
            Some(format!(
                "{}: test_timeout = 0 is out of range (1..=86400)",
                user.display()
            ))
        );
    }

    #[test]
    fn notify_is_on_unless_a_file_says_false() {
        let dir = tempfile::tempdir().unwrap();
        assert!(resolve_args(&[], &[]).unwrap().config.notify);
        let off = file(&dir, "off.toml", "notify = false\n");
        assert!(!resolve_args(&[], &[off]).unwrap().config.notify);
        let bad = file(&dir, "bad.toml", "notify = \"no\"\n");
        let err = resolve_args(&[], std::slice::from_ref(&bad)).err();
        assert_eq!(
            err,
            Some(format!(
                "{}: notify = \"no\" is not true or false",
                bad.display()
            ))
        );
    }

    #[test]
    fn no_auto_approve_lists_arrive_typed_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let ws = file(
            &dir,
            "ws.toml",
            "no_auto_approve = [\"run_tests\"]\nno_auto_approve_paths = [\"*.toml\"]\n",
        );
        let r = resolve_args(&[], std::slice::from_ref(&ws)).unwrap();
        assert_eq!(
            r.config.no_auto_approve,
            [crate::tool_id::ToolSelector::from(ToolName::RUN_TESTS)]
        );
        let globs: Vec<_> = r
            .config
            .no_auto_approve_paths
            .iter()
            .map(|g| g.glob())
            .collect();
        assert_eq!(globs, ["*.toml"]);
        assert_eq!(source(&r, "no_auto_approve"), "file");
        let only_paths = file(&dir, "paths.toml", "no_auto_approve_paths = [\"*.md\"]\n");
        let r = resolve_args(&[], &[only_paths]).unwrap();
        assert_eq!(source(&r, "no_auto_approve"), "file", "either list counts");
        let bad = file(&dir, "bad.toml", "no_auto_approve = [\"write-file\"]\n");
        let err = resolve_args(&[], &[bad]).err().unwrap_or_default();
        assert!(err.contains("unknown tool \"write-file\""), "{err}");
    }

    #[test]
    fn the_theme_comes_from_a_file_or_the_flag_and_is_checked() {
        use crate::config::ThemeChoice;
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve_args(&[], &[]).unwrap().config.theme,
            ThemeChoice::Auto
        );
        let light = file(&dir, "light.toml", "theme = \"light\"\n");
        let r = resolve_args(&[], std::slice::from_ref(&light)).unwrap();
        assert_eq!(r.config.theme, ThemeChoice::Light);
        let r = resolve_args(&["--theme", "dark"], &[light]).unwrap();
        assert_eq!(
            (r.config.theme, source(&r, "theme")),
            (ThemeChoice::Dark, "flag")
        );
        let bad = file(&dir, "bad.toml", "theme = \"purple\"\n");
        let err = resolve_args(&[], &[bad]).err().unwrap_or_default();
        assert!(err.contains("auto, dark, light"), "{err}");
    }
}
