//! Every crate `Cargo.toml` declares is used: a dependency nothing names
//! costs every build its compile time and every review its supply chain.
//! A crate counts as used when some Rust file under `src/`, `tests/` or
//! `benches/` names a path in it (`name::`) or imports it (`use name`).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names under every `[dependencies]`-like table, target-specific ones too.
fn declared(manifest: &toml::Table) -> Vec<String> {
    let mut tables: Vec<&toml::Table> = Vec::new();
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        tables.extend(manifest.get(key).and_then(|t| t.as_table()));
    }
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values().filter_map(|t| t.as_table()) {
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                tables.extend(target.get(key).and_then(|t| t.as_table()));
            }
        }
    }
    tables.iter().flat_map(|t| t.keys().cloned()).collect()
}

#[test]
fn every_declared_dependency_is_named_in_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let names = declared(&manifest);
    assert!(names.iter().any(|n| n == "serde"), "{names:?}");

    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    let sources: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let unused: Vec<&String> = names
        .iter()
        .filter(|name| {
            let ident = regex::escape(&name.replace('-', "_"));
            let used = regex::Regex::new(&format!(
                r"\b{ident}::|\buse {ident}\b|\bextern crate {ident}\b"
            ))
            .unwrap();
            !sources.iter().any(|s| used.is_match(s))
        })
        .collect();
    assert!(
        unused.is_empty(),
        "declared in Cargo.toml but never named in src/, tests/ or benches/: {unused:?}"
    );
}
