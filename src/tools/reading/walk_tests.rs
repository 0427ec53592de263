use super::*;

#[test]
fn relative_paths_are_those_strip_prefix_gives() {
    let root = Path::new("/w/root");
    for (path, want) in [
        ("/w/root/a/b.rs", "a/b.rs"),
        ("/w/root", ""),
        ("/w/rootless/x", "/w/rootless/x"),
        ("/elsewhere/x", "/elsewhere/x"),
    ] {
        assert_eq!(
            relative_to(root, Path::new(path)),
            Path::new(want),
            "{path}"
        );
    }
}

/// The files of a walk: `split`'s upper files plus a walk of each of
/// its folders, as `search_text` reads them.
fn files_of(split: &Split, deny: &DenyList, root: &Path) -> Vec<PathBuf> {
    let mut all = split.files.clone();
    for folder in &split.folders {
        all.extend(
            walker(root, folder)
                .build()
                .flatten()
                .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
                .filter(|e| !denied(deny, root, e))
                .map(ignore::DirEntry::into_path),
        );
    }
    all.sort();
    all
}

/// A tree with nested `.gitignore` files (one re-including a file),
/// hidden, ignored and skipped folders, and denied names.
fn awkward_tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    for (path, text) in [
        (".gitignore", "*.log\nbuild/\n"),
        ("top.rs", ""),
        ("top.log", ""),
        (".env", "KEY=1"),
        ("a/one.rs", ""),
        ("a/b/.gitignore", "!keep.log\nsecret*\n"),
        ("a/b/keep.log", ""),
        ("a/b/secret.rs", ""),
        ("a/b/c/d/e/deep.rs", ""),
        ("a/b/c/d/e/deeper.log", ""),
        ("a/b/c/d/e/f/g/deepest.rs", ""),
        ("a/build/out.rs", ""),
        ("a/.hidden/h.rs", ""),
        ("node_modules/m.js", ""),
        ("x/y/id_rsa", ""),
        ("x/y/z.py", ""),
        ("x/y/secret/kept.rs", ""),
    ] {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    (tmp, root)
}

#[test]
fn a_split_tree_holds_exactly_the_files_of_one_walk() {
    let (_tmp, root) = awkward_tree();
    let deny = DenyList::new(&[]).unwrap();
    let whole = files_of(
        &Split {
            files: Vec::new(),
            folders: vec![root.clone()],
        },
        &deny,
        &root,
    );
    let shown: Vec<_> = whole.iter().map(|p| relative_to(&root, p)).collect();
    assert_eq!(
        shown,
        [
            "a/b/c/d/e/deep.rs",
            "a/b/c/d/e/f/g/deepest.rs",
            "a/b/keep.log",
            "a/one.rs",
            "top.rs",
            "x/y/secret/kept.rs",
            "x/y/z.py",
        ]
        .map(Path::new)
    );
    for parts in [1, 2, 3, 8, 100] {
        let cut = split(&deny, &root, &root, parts);
        assert_eq!(files_of(&cut, &deny, &root), whole, "{parts} parts");
        if parts == 100 {
            assert!(cut.files.len() > 1 && cut.folders.len() > 1, "{cut:?}");
        }
    }
}

#[test]
fn a_survey_counts_each_folder_as_its_own_listing_does() {
    let (_tmp, root) = awkward_tree();
    let deny = DenyList::new(&[]).unwrap();
    let whole = survey(&deny, &root, &root, None);
    let mut folders: Vec<_> = whole.iter().map(|f| f.path.clone()).collect();
    folders.sort();
    let mut walked: Vec<_> = walker(&root, &root)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(ignore::DirEntry::into_path)
        .collect();
    walked.sort();
    assert_eq!(folders, walked);
    for (i, folder) in whole.iter().enumerate() {
        let (files, _) = entries(&deny, &root, &folder.path);
        assert_eq!(folder.files, files.len(), "{:?}", folder.path);
        assert!(folder.entered);
        if i > 0 {
            let parent = &whole[folder.parent];
            assert_eq!(folder.path.parent(), Some(parent.path.as_path()));
            assert_eq!(folder.depth, parent.depth + 1);
            assert!(folder.parent < i, "parents come first");
        }
    }
    assert_eq!(whole.iter().map(|f| f.files).sum::<usize>(), 7);
    // One level: the same count for the folder, its folders not entered.
    let top = survey(&deny, &root, &root, Some(1));
    assert_eq!(top[0].files, whole[0].files);
    let names: Vec<_> = top[1..]
        .iter()
        .map(|f| relative_to(&root, &f.path))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(top[1..].iter().all(|f| !f.entered && f.files == 0));
}

#[test]
fn folders_surveyed_in_one_walk_are_surveyed_as_each_alone() {
    let (_tmp, root) = awkward_tree();
    let deny = DenyList::new(&[]).unwrap();
    let dirs: Vec<PathBuf> = ["a", "a/b", "missing", "x", "a/b/c"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    let together = survey_all(&deny, &root, &dirs, None);
    assert_eq!(together.len(), dirs.len());
    for (dir, found) in dirs.iter().zip(&together) {
        let alone = survey(&deny, &root, dir, None);
        let shown = |s: &[Surveyed]| -> Vec<_> {
            s.iter()
                .map(|f| (f.path.clone(), f.parent, f.depth, f.files))
                .collect()
        };
        assert_eq!(shown(found), shown(&alone), "{dir:?}");
    }
    assert_eq!(together[1].iter().map(|f| f.files).sum::<usize>(), 3);
}

#[test]
fn groups_keep_every_folder_in_order_in_at_most_max_jobs() {
    for n in [0, 1, 63, 64, 65, 1_000] {
        let folders: Vec<PathBuf> = (0..n).map(|i| PathBuf::from(format!("d{i}"))).collect();
        let cut = groups(&folders);
        assert!(cut.len() <= MAX_JOBS, "{n}: {}", cut.len());
        assert!(cut.iter().all(|g| !g.is_empty()));
        assert_eq!(cut.concat(), folders, "{n}");
    }
}
