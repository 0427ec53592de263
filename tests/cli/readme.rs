//! The README and the `docs/` pages stay true to the repository: every file
//! or folder of the repo they name (in backticks or as a link) exists, every
//! page they link to exists, and every stepwise flag they name is one the
//! binary takes, so a test, a module, a script or a flag that moves takes
//! its documentation with it.

use crate::support::docs;
use std::collections::BTreeSet;
use std::path::Path;

/// The folders of the repo whose paths the documentation names.
const ROOTS: &[&str] = &[
    "src/",
    "tests/",
    "benches/",
    "fuzz/",
    ".ci/",
    "workspace/",
    "docs/",
];

/// Every repo path a page names: backticked spans and link targets that
/// start with one of `ROOTS` (a page in `docs/` links one level up, `../`),
/// globs left out.
fn named_paths(page: &str) -> BTreeSet<String> {
    let mut candidates: Vec<&str> = page.split('`').skip(1).step_by(2).collect();
    candidates.extend(
        page.split("](")
            .skip(1)
            .filter_map(|rest| rest.split([')', '#']).next())
            .map(|target| target.strip_prefix("../").unwrap_or(target)),
    );
    candidates
        .into_iter()
        .map(|c| c.trim())
        .filter(|c| ROOTS.iter().any(|root| c.starts_with(root)))
        .filter(|c| !c.contains(['*', ' ', '?', '{']))
        .map(str::to_string)
        .collect()
}

/// The pages a page links to by a relative `.md` target, as repo paths.
fn linked_pages(page_path: &Path, page: &str) -> BTreeSet<String> {
    let folder = page_path.parent().unwrap_or(Path::new(""));
    page.split("](")
        .skip(1)
        .filter_map(|rest| rest.split([')', '#']).next())
        .filter(|t| t.ends_with(".md") && !t.contains("://"))
        .map(|t| {
            let joined = folder.join(t);
            let text = joined.to_string_lossy().into_owned();
            text.replace("docs/../", "")
        })
        .collect()
}

#[test]
fn every_repo_path_the_docs_name_exists() {
    let mut paths = BTreeSet::new();
    for (_, text) in docs::pages() {
        paths.extend(named_paths(&text));
    }
    // The reliability table alone names dozens of test files.
    assert!(paths.len() >= 40, "too few paths found: {paths:?}");
    assert!(paths.contains("tests/cli/json_schema.rs"), "{paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !docs::root().join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "the docs name paths that do not exist: {missing:?}"
    );
}

#[test]
fn every_page_a_page_links_to_exists_and_the_readme_links_every_page() {
    let pages = docs::pages();
    let mut linked_from_readme = BTreeSet::new();
    for (path, text) in &pages {
        let links = linked_pages(path, text);
        let missing: Vec<&String> = links
            .iter()
            .filter(|l| !docs::root().join(l).is_file())
            .collect();
        assert!(
            missing.is_empty(),
            "{} links to {missing:?}",
            path.display()
        );
        if path == Path::new("README.md") {
            linked_from_readme = links;
        }
    }
    for (path, _) in pages.iter().skip(1) {
        let name = path.to_string_lossy().into_owned();
        assert!(
            linked_from_readme.contains(&name),
            "the README does not link {name}"
        );
    }
}

#[test]
fn paths_are_found_in_backticks_and_links_but_not_in_globs() {
    let text = "see `tests/core/tools.rs`, [the seeds](fuzz/README.md#seeds), \
                [up](../benches/x.rs), `src/**/*.ts` and `cargo test`";
    let found: Vec<String> = named_paths(text).into_iter().collect();
    assert_eq!(
        found,
        ["benches/x.rs", "fuzz/README.md", "tests/core/tools.rs"]
    );
    let links = linked_pages(
        Path::new("docs/gate.md"),
        "[a](sandbox.md#x), [b](../README.md), [c](https://x.org/y.md)",
    );
    let links: Vec<String> = links.into_iter().collect();
    assert_eq!(links, ["README.md", "docs/sandbox.md"]);
}

/// Flags of other programs the docs name (cargo, bubblewrap, setsid, …).
const OTHER_PROGRAMS_FLAGS: &[&str] = &[
    "--all-targets",
    "--bench",
    "--check",
    "--dev",
    "--die-with-parent",
    "--lib",
    "--locked",
    "--new-session",
    "--no-run",
    "--open",
    "--path",
    "--release",
    "--test",
    "--unshare-all",
    "--verbose",
];

/// Every long flag of the binary, its subcommands' included.
fn stepwise_flags() -> BTreeSet<String> {
    fn walk(cmd: &clap::Command, out: &mut BTreeSet<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                out.insert(format!("--{long}"));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, out);
        }
    }
    let mut flags = BTreeSet::from(["--help".to_string(), "--version".to_string()]);
    walk(&stepwise::config::command(), &mut flags);
    flags
}

#[test]
fn every_flag_the_docs_name_is_one_the_binary_takes() {
    let flag = regex::Regex::new(r"(?:^|[\s`(\[])(--[a-z][a-z0-9-]*)").unwrap();
    let known = stepwise_flags();
    assert!(known.contains("--untrusted") && known.contains("--json"));
    let mut unknown = BTreeSet::new();
    for (path, text) in docs::pages() {
        for found in flag.captures_iter(&text) {
            let name = found[1].to_string();
            if !known.contains(&name) && !OTHER_PROGRAMS_FLAGS.contains(&name.as_str()) {
                unknown.insert(format!("{}: {name}", path.display()));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "the docs name flags stepwise does not take: {unknown:?}"
    );
}

/// The fenced block right after `heading`.
fn first_block_after<'a>(readme: &'a str, heading: &str) -> &'a str {
    let section = readme.split(heading).nth(1).expect("the heading");
    let block = section.split("```").nth(1).expect("a fenced block");
    block
        .split_once('\n')
        .map(|(_, body)| body)
        .unwrap_or_default()
}

#[test]
fn the_readme_is_read_in_five_minutes() {
    let readme = std::fs::read_to_string(docs::root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines < 200, "the README has {lines} lines");
}

#[test]
fn the_quick_start_is_two_commands_and_names_the_rust_version_cargo_requires() {
    let root = docs::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let commands: Vec<&str> = first_block_after(&readme, "## Quick start")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(commands, ["cargo run --release -- --demo", "cargo test"]);

    // An install builds what was tested: the lock file's versions.
    let all = docs::all_text();
    assert!(readme.contains("cargo install --locked --path ."));
    assert!(
        !all.contains("cargo install --path"),
        "an install without --locked"
    );

    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let version = manifest["package"]["rust-version"].as_str().unwrap();
    assert!(
        readme.contains(&format!("**Rust {version}** or later")),
        "the README does not name rust-version {version}"
    );
}
