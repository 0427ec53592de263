//! Confinement, as a property: paths generated from `..`, `.`, empty parts,
//! absolute prefixes (including the real root and outside folders), symlinks
//! leading inside, outside, to `/`, dangling ones, `.stepwise`, unicode, NUL
//! bytes and overlong names. Every path is either resolved inside the
//! workspace or refused, and nothing outside is ever created, read or changed.

use proptest::prelude::*;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use stepwise::tools::Workspace;
use stepwise::tools::edits::edit::{apply_edit, prepare_replace, prepare_write};
use stepwise::tools::reading::files;

/// Text found only in files outside the workspace.
const OUTSIDE_TEXT: &str = "outside-only-7f3a";

struct Fixture {
    tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    ws: Workspace,
}

/// `tmp/d1/../d5/root` is the workspace, deep enough that five `..` still land
/// inside `tmp`; `tmp/outside` holds files and a folder.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("d1/d2/d3/d4/d5/root");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(root.join(".stepwise")).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    let secret = format!("SECRET = '{OUTSIDE_TEXT}'\nok = True\n");
    std::fs::write(outside.join("secret.py"), &secret).unwrap();
    std::fs::write(outside.join("dir/x.py"), &secret).unwrap();
    std::fs::write(root.join(".stepwise/lock.txt"), OUTSIDE_TEXT).unwrap();
    std::fs::write(root.join("inside.py"), "ok = True\n").unwrap();
    std::fs::write(root.join("sub/x.py"), "ok = True\n").unwrap();
    let links: [(&Path, &str); 9] = [
        (&outside.join("secret.py"), "link_file.py"),
        (&outside.join("dir"), "link_dir"),
        (Path::new("/"), "link_root"),
        (Path::new("../../../../../../outside"), "rel_out"),
        (&outside.join("ghost.py"), "dangling.py"),
        (&outside.join("nodir"), "dangling_dir"),
        (Path::new("inside.py"), "alias.py"),
        (Path::new("sub"), "sub_alias"),
        (Path::new(".stepwise"), "private"),
    ];
    for (target, name) in links {
        symlink(target, root.join(name)).unwrap();
    }
    let ws = Workspace::open(&root).unwrap();
    let root = root.canonicalize().unwrap();
    Fixture {
        tmp,
        root,
        outside,
        ws,
    }
}

/// Every entry under `dir` (except the workspace itself, but including its
/// `.stepwise/`): path, kind, mode, content or link target.
fn snapshot(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let what = if meta.is_symlink() {
            format!("link {:?}", std::fs::read_link(&path).unwrap())
        } else if meta.is_dir() {
            "dir".to_string()
        } else {
            format!("{:?}", std::fs::read(&path).unwrap())
        };
        out.push(format!("{} {:o} {what}", path.display(), meta.mode()));
        if meta.is_dir() && path != root {
            snapshot(&path, root, out);
        }
    }
}

fn world(f: &Fixture) -> Vec<String> {
    let mut out = Vec::new();
    snapshot(f.tmp.path(), &f.root, &mut out);
    snapshot(&f.root.join(".stepwise"), &f.root, &mut out);
    out
}

fn part() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just("..".to_string()),
        1 => Just(".".to_string()),
        1 => Just(String::new()),
        12 => prop::sample::select(vec![
            "sub", "inside.py", "x.py", "secret.py", "dir", "new", "link_file.py", "link_dir",
            "link_root", "rel_out", "dangling.py", "dangling_dir", "alias.py", "sub_alias",
            "private", ".stepwise", "outside", "root", "d5", "lock.txt", "etc", "passwd",
        ])
        .prop_map(str::to_string),
        2 => "[a-z]{1,6}(\\.py|\\.md)?",
        1 => "\\PC{1,5}(\\.py)?",
        1 => "[a-z]{0,3}\\x00[a-z]{0,3}(\\.py)?",
        1 => "[a-z]{250,300}\\.py",
    ]
}

/// An absolute prefix, decided when the fixture's folders are known.
#[derive(Debug, Clone, Copy)]
enum Prefix {
    Relative,
    Slash,
    DoubleSlash,
    Root,
    Outside,
}

fn path_parts() -> impl Strategy<Value = (Prefix, Vec<String>)> {
    let prefix = prop_oneof![
        8 => Just(Prefix::Relative),
        1 => Just(Prefix::Slash),
        1 => Just(Prefix::DoubleSlash),
        1 => Just(Prefix::Root),
        1 => Just(Prefix::Outside),
    ];
    (prefix, prop::collection::vec(part(), 1..6))
}

fn build(f: &Fixture, prefix: Prefix, parts: &[String]) -> String {
    let start = match prefix {
        Prefix::Relative => String::new(),
        Prefix::Slash => "/".into(),
        Prefix::DoubleSlash => "//".into(),
        Prefix::Root => format!("{}/", f.root.display()),
        Prefix::Outside => format!("{}/", f.outside.display()),
    };
    start + &parts.join("/")
}

/// Where a path that the tools accepted really is: inside, not in `.stepwise/`.
fn assert_inside(f: &Fixture, path: &str) {
    let rel = Workspace::check(path).expect("a path that worked passes the lexical check");
    let real = f
        .root
        .join(rel.as_path())
        .canonicalize()
        .unwrap_or_else(|e| panic!("{path:?} worked but does not resolve: {e}"));
    assert!(real.starts_with(&f.root), "{path:?} resolved to {real:?}");
    assert!(
        !real.starts_with(f.root.join(".stepwise")),
        "{path:?} reached {real:?}"
    );
}

fn exercise(f: &Fixture, path: &str) {
    if let Ok(rel) = Workspace::check(path) {
        let lexical = f.root.join(rel.as_path());
        assert!(lexical.starts_with(&f.root), "{path:?} -> {lexical:?}");
        assert!(!rel.display().split('/').any(|c| c == ".."), "{rel:?}");
    }
    let read = files::read_file(&f.ws, path);
    assert!(!read.body.to_string().contains(OUTSIDE_TEXT), "{path:?}");
    if read.success {
        assert_inside(f, path);
    }
    let listed = files::list_files(&f.ws, path);
    if listed.success {
        assert_inside(f, path);
        let names = listed.body["files"].to_string();
        assert!(
            !names.contains("secret.py") && !names.contains("lock.txt"),
            "{names}"
        );
    }
    if let Ok(edit) = prepare_write(&f.ws, path, "written = 1\n")
        && apply_edit(&f.ws, &edit).success
    {
        assert_inside(f, path);
    }
    if let Ok(edit) = prepare_replace(&f.ws, path, "ok = True", "ok = False")
        && apply_edit(&f.ws, &edit).success
    {
        assert_inside(f, path);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn every_path_is_resolved_inside_or_refused((prefix, parts) in path_parts()) {
        let f = fixture();
        let before = world(&f);
        let path = build(&f, prefix, &parts);
        exercise(&f, &path);
        prop_assert_eq!(world(&f), before, "changed outside with {:?}", path);
    }
}

/// A small alphabet of real names, so that many paths exist and succeed.
fn near_path() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "..",
        ".",
        "sub",
        "sub_alias",
        "inside.py",
        "x.py",
        "alias.py",
        "link_dir",
        "link_file.py",
        "private",
        "lock.txt",
        "rel_out",
        "secret.py",
        "d5",
        "root",
    ]);
    prop::collection::vec(name, 1..5).prop_map(|parts| parts.join("/"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn paths_among_real_names_are_resolved_inside_or_refused(path in near_path()) {
        let f = fixture();
        let before = world(&f);
        exercise(&f, &path);
        prop_assert_eq!(world(&f), before, "changed outside with {:?}", path);
    }
}

#[test]
fn the_generators_reach_inside_and_outside() {
    // Sanity for the property: these succeed, so the property is not vacuous.
    let f = fixture();
    for path in ["sub/../inside.py", "alias.py", "sub_alias/x.py"] {
        assert!(files::read_file(&f.ws, path).success, "{path}");
    }
    let root_abs = build(&f, Prefix::Root, &["inside.py".into()]);
    assert!(!files::read_file(&f.ws, &root_abs).success);
    let before = world(&f);
    for path in [
        "../../../../../../outside/secret.py",
        "rel_out/secret.py",
        "dangling.py",
        "dangling_dir/new.py",
        "link_root/etc/passwd",
        "private/lock.txt",
        &"a".repeat(300),
    ] {
        exercise(&f, path);
    }
    assert_eq!(world(&f), before);
}
