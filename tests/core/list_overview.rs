//! `list_files` on trees too big to list: breadth first, at most 200
//! entries, a folder that does not fit shown with its file count, `depth`
//! limiting the levels, skipped folders never counted.

use serde_json::json;
use stepwise::tools::Workspace;
use stepwise::tools::files::{list_files, list_files_depth};

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
