//! `list_files` on trees too big to list: breadth first, at most 200
//! entries, a folder that does not fit shown with its file count, `depth`
//! limiting the levels, skipped folders never counted.

use serde_json::json;
use stepwise::tools::Workspace;
use stepwise::tools::reading::files::{list_files, list_files_depth};

fn tree(files: &[String]) -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    for path in files {
        let p = tmp.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x\n").unwrap();
    }
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

#[test]
fn a_big_folder_is_one_entry_with_its_count() {
    let mut files: Vec<String> = (0..1_234)
        .map(|i| format!("src/components/c{i}.tsx"))
        .collect();
    files.extend((0..5).map(|i| format!("src/lib/l{i}.ts")));
    files.extend(["README.md".to_string(), "package.json".to_string()]);
    files.extend((0..3_000).map(|i| format!("node_modules/dep/f{i}.js")));
    let (_tmp, ws) = tree(&files);
    let out = list_files(&ws, ".");
    assert_eq!(
        out.body["files"],
        json!([
            "README.md",
            "package.json",
            "src/components/ (1,234 files)",
            "src/lib/l0.ts",
            "src/lib/l1.ts",
            "src/lib/l2.ts",
            "src/lib/l3.ts",
            "src/lib/l4.ts",
        ])
    );
    assert_eq!(out.body["total_files"], 1_241);
    assert_eq!(out.body["truncated"], true);
    assert!(
        out.body["note"]
            .as_str()
            .unwrap()
            .contains("call list_files on it")
    );
    // Listing the folder itself shows what fits of it.
    let inner = list_files(&ws, "src/components");
    assert_eq!(inner.body["files"].as_array().unwrap().len(), 200);
}

#[test]
fn breadth_first_and_depth_limited() {
    let files: Vec<String> = (0..3)
        .flat_map(|a| (0..3).map(move |b| format!("a{a}/b{b}/f.txt")))
        .collect();
    let (_tmp, ws) = tree(&files);
    let all = list_files(&ws, ".");
    assert_eq!(all.body["files"].as_array().unwrap().len(), 9);
    assert_eq!(all.body["truncated"], false);
    let top = list_files_depth(&ws, ".", Some(1));
    assert_eq!(
        top.body["files"],
        json!(["a0/ (3 files)", "a1/ (3 files)", "a2/ (3 files)"])
    );
    let two = list_files_depth(&ws, ".", Some(2));
    assert_eq!(two.body["files"].as_array().unwrap().len(), 9);
    assert!(two.body["files"][0].as_str().unwrap().ends_with("(1 file)"));
    assert!(list_files_depth(&ws, ".", Some(0)).body["error"].is_string());
}

/// A folder shown closed is counted by a walk of its own, a folder opened
/// by its listing: both see what a walk of the whole tree sees (the
/// `.gitignore` of the folders above, nested ones, hidden and skipped
/// folders, symlinks, the deny list and `deny_paths`).
#[test]
fn closed_and_open_folders_count_the_same_files() {
    let mut files: Vec<String> = (0..250).map(|i| format!("big/f{i}.txt")).collect();
    files.extend(
        [
            "a/keep.txt",
            "a/b/y.txt",
            "a/b/x.log",
            "a/b/c/z.txt",
            "a/b/c/w.tmp",
            "a/b/.env",
            "a/b/c/server.pem",
            "a/b/secret/k.txt",
            "a/b/.hidden/h.txt",
            "a/b/node_modules/n.js",
            "big/sub/y.txt",
            "big/sub/x.log",
            "big/sub/id_rsa",
            "big/sub/.cache/c.txt",
        ]
        .map(String::from),
    );
    let tmp = tempfile::tempdir().unwrap();
    for path in &files {
        let p = tmp.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x\n").unwrap();
    }
    std::fs::write(tmp.path().join(".gitignore"), "*.tmp\n").unwrap();
    std::fs::write(tmp.path().join("a/.gitignore"), "*.log\n").unwrap();
    std::fs::write(tmp.path().join("big/.gitignore"), "*.log\n").unwrap();
    std::os::unix::fs::symlink("y.txt", tmp.path().join("a/b/link.txt")).unwrap();
    let deny = [globset::Glob::new("a/b/secret/**").unwrap()];
    let ws = Workspace::open(tmp.path())
        .unwrap()
        .with_deny_paths(&deny)
        .unwrap();
    // `a` and `big` closed: each counted by a walk.
    let top = list_files_depth(&ws, ".", Some(1));
    assert_eq!(
        top.body["files"],
        json!(["a/ (3 files)", "big/ (251 files)"])
    );
    assert_eq!(top.body["total_files"], 254);
    // `a` opened level by level; `big` (251 entries) never fits.
    let two = list_files_depth(&ws, ".", Some(2));
    assert_eq!(
        two.body["files"],
        json!(["a/b/ (2 files)", "a/keep.txt", "big/ (251 files)"])
    );
    let all = list_files(&ws, ".");
    assert_eq!(
        all.body["files"],
        json!([
            "a/b/c/z.txt",
            "a/b/secret/ (0 files)",
            "a/b/y.txt",
            "a/keep.txt",
            "big/ (251 files)"
        ])
    );
    assert_eq!(all.body["total_files"], 254);
    // Listed on its own, `big/sub` still honours `big/.gitignore`.
    let sub = list_files(&ws, "big/sub");
    assert_eq!(sub.body["files"], json!(["big/sub/y.txt"]));
}

/// A wide tree (more folders than walks are made, so folders are walked in
/// groups) is counted as a walk of each folder alone would count it.
#[test]
fn a_wide_tree_is_counted_folder_by_folder() {
    let mut files = Vec::new();
    for a in 0..3 {
        for b in 0..40 {
            files.push(format!("a{a}/b{b:02}/one.txt"));
            files.push(format!("a{a}/b{b:02}/two.txt"));
            files.push(format!("a{a}/b{b:02}/deep/three.txt"));
            files.push(format!("a{a}/b{b:02}/.hidden/no.txt"));
        }
    }
    let (tmp, ws) = tree(&files);
    std::fs::write(tmp.path().join("a1/.gitignore"), "two.txt\n").unwrap();
    let out = list_files(&ws, ".");
    assert_eq!(out.body["total_files"], 3 * 40 * 3 - 40, "{:?}", out.body);
    let shown: Vec<&str> = out.body["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    // a0's folders open (their entries fit in 200); a1's and a2's stay
    // closed, each with its own count.
    assert_eq!(shown.len(), 200);
    assert!(shown.contains(&"a0/b39/deep/three.txt"));
    assert!(shown.contains(&"a1/b00/ (2 files)"));
    assert!(shown.contains(&"a2/b39/ (3 files)"));
    let depth = list_files_depth(&ws, ".", Some(1));
    assert_eq!(
        depth.body["files"],
        json!(["a0/ (120 files)", "a1/ (80 files)", "a2/ (120 files)"])
    );
    let one = list_files(&ws, "a1/b07");
    assert_eq!(
        one.body["files"],
        json!(["a1/b07/deep/three.txt", "a1/b07/one.txt"])
    );
}
