//! The layering rules of `src/lib.rs`, checked on the source text: the core
//! never names a front end, and no files import each other in a circle
//! (through `use crate::…`, `use super::…` or such paths in code).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders and files of the core: they must not know any front end exists.
const CORE: &[&str] = &[
    "agent",
    "llm",
    "tools",
    "diff.rs",
    "present.rs",
    "present",
    "text",
    "tool_id.rs",
];
/// Names a core file must not mention in code (comments are skipped).
const FRONT_END_NAMES: &[&str] = &[
    "ratatui",
    "crossterm",
    "clap",
    "crate::tui",
    "crate::headless",
    "crate::acp",
    "agent_client_protocol",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without `//` comments (doc comments included), line by line.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_core_never_names_a_front_end() {
    let mut offences = Vec::new();
    for part in CORE {
        let path = src().join(part);
        let mut files = Vec::new();
        if path.is_file() {
            files.push(path);
        } else {
            rust_files(&path, &mut files);
        }
        for file in files {
            let text = code(&std::fs::read_to_string(&file).unwrap());
            for line in text.lines() {
                if FRONT_END_NAMES.iter().any(|name| line.contains(name)) {
                    offences.push(format!("{}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "the core names a front end:\n{}",
        offences.join("\n")
    );
}

/// The module path of a source file: `src/tools/edit.rs` → `tools::edit`,
/// `src/tools/mod.rs` → `tools`, `src/lib.rs` → ``.
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts.join("::")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// `a::b::{c::d, e}` (after a `crate::`/`super::` prefix) as whole paths:
/// `[a::b::c::d, a::b::e]`; deeper brace groups keep their first word.
fn expand(rest: &str) -> Vec<Vec<String>> {
    let mut base = Vec::new();
    let mut s = rest;
    loop {
        let word = ident_at(s);
        if word.is_empty() {
            break;
        }
        base.push(word.to_string());
        s = &s[word.len()..];
        match s.strip_prefix("::") {
            Some(next) => s = next.trim_start(),
            None => return vec![base],
        }
    }
    let Some(group) = s.strip_prefix('{') else {
        return vec![base];
    };
    let body = &group[..group.find('}').unwrap_or(group.len())];
    let mut paths: Vec<Vec<String>> = body
        .split(',')
        .map(|item| {
            let mut path = base.clone();
            for word in item.trim().split("::") {
                let word = ident_at(word.trim_start_matches('{').trim());
                if word.is_empty() {
                    break;
                }
                path.push(word.to_string());
            }
            path
        })
        .collect();
    paths.push(base);
    paths
}

/// The modules of this crate that a file's code names through `crate::` or
/// `super::` paths (`self` and `super` resolved against `module`).
fn imports(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let here: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let text = code(text);
    let mut found = BTreeSet::new();
    let bytes = text.as_bytes();
    for prefix in ["crate::", "super::"] {
        for (at, _) in text.match_indices(prefix) {
            // Only at the start of a path, not `foo::super::` or `my_crate::`.
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':')
            {
                continue;
            }
            let mut start: Vec<String> = Vec::new();
            let mut rest = &text[at + prefix.len()..];
            if prefix == "super::" {
                start = here.clone();
                start.pop();
                while let Some(more) = rest.strip_prefix("super::") {
                    start.pop();
                    rest = more;
                }
            }
            for tail in expand(rest) {
                let mut path = start.clone();
                path.extend(tail);
                while !path.is_empty() {
                    let candidate = path.join("::");
                    if known.contains(&candidate) {
                        if candidate != module {
                            found.insert(candidate);
                        }
                        break;
                    }
                    path.pop();
                }
            }
        }
    }
    found
}

/// Every set of modules that import each other in a circle (strongly
/// connected components of more than one module, Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Module → the modules it imports, for every file under `src/`. A folder's
/// `mod.rs` and its own children are one unit (children may use what the
/// folder re-exports), so edges between them are left out.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let modules: BTreeMap<String, PathBuf> =
        files.iter().map(|f| (module_of(f), f.clone())).collect();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let mut deps = imports(module, &text, &known);
        deps.retain(|d| !is_ancestor(d, module) && !is_ancestor(module, d));
        graph.insert(module.clone(), deps);
    }
    graph
}

fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || b.starts_with(&format!("{a}::"))
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let found = circles(&import_graph());
    let lines: Vec<String> = found.iter().map(|c| c.join(" -> ")).collect();
    assert!(
        found.is_empty(),
        "file-level import circles:\n{}",
        lines.join("\n")
    );
}

#[test]
fn the_import_reader_finds_circles_when_there_are_some() {
    // The checks above are worth something only if they can fail.
    let known: BTreeSet<String> = [
        "tools",
        "tools::edit",
        "tools::files",
        "tui::a",
        "tui::b",
        "tui::c",
        "tui",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let edit = imports(
        "tools::edit",
        "use super::{files::read_text, ToolOutput};\n",
        &known,
    );
    assert!(edit.contains("tools::files"), "{edit:?}");
    let files = imports("tools::files", "use crate::tools::edit::to_lf;\n", &known);
    assert!(files.contains("tools::edit"), "{files:?}");
    let commented = imports(
        "tools::files",
        "// use crate::tools::edit::to_lf;\n",
        &known,
    );
    assert!(commented.is_empty(), "{commented:?}");
    let mut graph = BTreeMap::new();
    graph.insert("tui::a".to_string(), BTreeSet::from(["tui::b".to_string()]));
    graph.insert("tui::b".to_string(), BTreeSet::from(["tui::c".to_string()]));
    graph.insert("tui::c".to_string(), BTreeSet::from(["tui::a".to_string()]));
    graph.insert("tools::edit".to_string(), edit);
    graph.insert("tools::files".to_string(), files);
    let found = circles(&graph);
    assert_eq!(found.len(), 2, "{found:?}");
}

/// The graph with every module replaced by its first `depth` path words
/// under `within` (`within` = "" and depth 1: the top-level modules;
/// "tui" and 1: the TUI's folders). Edges inside one group are dropped.
fn collapsed(within: &str, depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let group = |module: &str| -> Option<String> {
        let rest = match within {
            "" => module,
            w => module.strip_prefix(&format!("{w}::"))?,
        };
        let words: Vec<&str> = rest
            .split("::")
            .filter(|s| !s.is_empty())
            .take(depth)
            .collect();
        (!words.is_empty()).then(|| words.join("::"))
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, deps) in import_graph() {
        let Some(from) = group(&module) else { continue };
        let entry = out.entry(from.clone()).or_default();
        for dep in deps {
            if let Some(to) = group(&dep)
                && to != from
            {
                entry.insert(to);
            }
        }
    }
    out
}

/// Pairs of groups that import each other both ways.
fn both_ways(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut pairs = Vec::new();
    for (a, deps) in graph {
        for b in deps {
            if a < b && graph.get(b).is_some_and(|d| d.contains(a)) {
                pairs.push(format!("{a} <-> {b}"));
            }
        }
    }
    pairs
}

#[test]
fn no_two_tui_folders_import_each_other_both_ways() {
    let graph = collapsed("tui", 1);
    assert!(graph.len() > 4, "the TUI's folders were found: {graph:?}");
    let pairs = both_ways(&graph);
    assert!(
        pairs.is_empty(),
        "TUI folders importing each other (see the layers in src/tui/mod.rs):\n{}",
        pairs.join("\n")
    );
}

#[test]
fn the_top_level_modules_import_each_other_in_no_circle() {
    let graph = collapsed("", 1);
    assert!(graph.contains_key("agent") && graph.contains_key("tools"));
    let found = circles(&graph);
    let lines: Vec<String> = found.iter().map(|c| c.join(" -> ")).collect();
    assert!(
        found.is_empty(),
        "top-level modules in a circle (see the layers in src/lib.rs):\n{}",
        lines.join("\n")
    );
}

#[test]
fn folder_pairs_and_circles_are_found_when_there_are_some() {
    let mut graph = BTreeMap::new();
    graph.insert("app".to_string(), BTreeSet::from(["render".to_string()]));
    graph.insert("render".to_string(), BTreeSet::from(["app".to_string()]));
    graph.insert("term".to_string(), BTreeSet::from(["render".to_string()]));
    assert_eq!(both_ways(&graph), ["app <-> render"]);
    assert_eq!(circles(&graph).len(), 1);
}

#[test]
fn the_bottom_modules_import_nothing_of_stepwise() {
    let bottom = ["text", "tool_id"];
    let graph = import_graph();
    let mut offences = Vec::new();
    for (module, deps) in &graph {
        let Some(home) = bottom
            .iter()
            .find(|b| module == *b || module.starts_with(&format!("{b}::")))
        else {
            continue;
        };
        for dep in deps {
            if !(dep == home || dep.starts_with(&format!("{home}::"))) {
                offences.push(format!("{module} -> {dep}"));
            }
        }
    }
    assert!(graph.contains_key("text::sanitize") && graph.contains_key("tool_id"));
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

/// The fields of `pub struct NAME { ... }` in `text` (one per line, comments
/// skipped).
fn struct_fields(text: &str, name: &str) -> Vec<String> {
    let code = code(text);
    let Some(start) = code.find(&format!("pub struct {name} {{")) else {
        return Vec::new();
    };
    let body = &code[start..];
    let body = &body[body.find('{').unwrap_or(0) + 1..body.find("\n}").unwrap_or(body.len())];
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.contains(':'))
        .map(|l| l.split(':').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn the_tui_app_composes_components_in_at_most_20_fields() {
    let text = std::fs::read_to_string(src().join("tui/app/mod.rs")).unwrap();
    let fields = struct_fields(&text, "App");
    assert!(fields.len() > 5, "the App's fields were found: {fields:?}");
    assert!(
        fields.len() <= 20,
        "App has {} fields (a new concern goes into a component or a group): {fields:?}",
        fields.len()
    );
    let sample =
        "pub struct App {\n    a: u8,\n    // b: u8,\n    pub(in crate::tui) c: Vec<u8>,\n}\n";
    assert_eq!(struct_fields(sample, "App").len(), 2);
}
