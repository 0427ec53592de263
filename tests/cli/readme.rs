//! The README stays true to the repository: every file or folder of the
//! repo it names (in backticks or as a link) exists, so a test, a module or
//! a script that moves takes its README references with it.

use std::collections::BTreeSet;
use std::path::Path;

/// The folders of the repo whose paths the README names.
const ROOTS: &[&str] = &[
    "src/",
    "tests/",
    "benches/",
    "fuzz/",
    ".ci/",
    "workspace/",
    "docs/",
];

/// Every repo path the README names: backticked spans and link targets that
/// start with one of `ROOTS`, globs left out.
fn named_paths(readme: &str) -> BTreeSet<String> {
    let mut candidates: Vec<&str> = readme.split('`').skip(1).step_by(2).collect();
    candidates.extend(
        readme
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split([')', '#']).next()),
    );
    candidates
        .into_iter()
        .map(|c| c.trim())
        .filter(|c| ROOTS.iter().any(|root| c.starts_with(root)))
        .filter(|c| !c.contains(['*', ' ', '?', '{']))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_repo_path_the_readme_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let paths = named_paths(&readme);
    // The reliability table alone names dozens of test files.
    assert!(paths.len() >= 40, "too few paths found: {paths:?}");
    assert!(paths.contains("tests/cli/json_schema.rs"), "{paths:?}");
    let missing: Vec<&String> = paths.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "the README names paths that do not exist: {missing:?}"
    );
}

#[test]
fn paths_are_found_in_backticks_and_links_but_not_in_globs() {
    let text = "see `tests/core/tools.rs`, [the seeds](fuzz/README.md#seeds), \
                `src/**/*.ts` and `cargo test`";
    let found: Vec<String> = named_paths(text).into_iter().collect();
    assert_eq!(found, ["fuzz/README.md", "tests/core/tools.rs"]);
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
fn the_quick_start_is_two_commands_and_names_the_rust_version_cargo_requires() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let commands: Vec<&str> = first_block_after(&readme, "## Quick start")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(commands, ["cargo run --release -- --demo", "cargo test"]);

    // An install builds what was tested: the lock file's versions.
    assert!(readme.contains("cargo install --locked --path ."));
    assert!(
        !readme.contains("cargo install --path"),
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
