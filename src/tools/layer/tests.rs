use super::*;
use std::os::unix::ffi::OsStringExt;

fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let lower = dir.path().join("lower");
    let upper = dir.path().join("upper");
    std::fs::create_dir_all(lower.join("src")).unwrap();
    std::fs::create_dir_all(&upper).unwrap();
    std::fs::write(lower.join("src/a.py"), "a = 1\n").unwrap();
    std::fs::write(lower.join("src/b.py"), "b = 1\n").unwrap();
    std::fs::write(lower.join("same.txt"), "same\n").unwrap();
    (dir, lower, upper)
}

fn file(entry: &Entry) -> (Option<&[u8]>, bool) {
    match &entry.written {
        Written::File { bytes, existed, .. } => (bytes.as_deref(), *existed),
        other => panic!("not a file: {other:?}"),
    }
}

#[test]
fn new_and_changed_files_are_read_and_an_identical_copy_is_no_change() {
    let (_dir, lower, upper) = tree();
    std::fs::create_dir_all(upper.join("src")).unwrap();
    std::fs::write(upper.join("src/a.py"), "a = 2\n").unwrap();
    std::fs::write(upper.join("same.txt"), "same\n").unwrap();
    std::fs::create_dir_all(upper.join("target/deep")).unwrap();
    std::fs::write(upper.join("target/deep/conftest.py"), "x").unwrap();
    let name = OsString::from_vec(b"\xff".to_vec());
    std::fs::create_dir_all(upper.join(&name)).unwrap();
    std::fs::write(upper.join(&name).join("conftest.py"), "y").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", upper.join("link")).unwrap();
    std::fs::create_dir_all(upper.join("empty")).unwrap();
    let entries = read(&upper, &lower).unwrap();
    let paths: Vec<String> = entries.iter().map(Entry::shown).collect();
    assert_eq!(
        paths,
        [
            "empty",
            "link",
            "src/a.py",
            "target/deep/conftest.py",
            "\\xff/conftest.py"
        ]
    );
    assert_eq!(entries[0].written, Written::Folder);
    assert!(matches!(entries[1].written, Written::Link { .. }));
    assert_eq!(file(&entries[2]), (Some(&b"a = 2\n"[..]), true));
    assert_eq!(file(&entries[3]), (Some(&b"x"[..]), false));
    assert_eq!(entries[4].utf8(), None);
}

#[test]
fn a_replaced_folder_deletes_what_the_new_one_lacks() {
    let (_dir, lower, upper) = tree();
    std::fs::create_dir_all(upper.join("src")).unwrap();
    std::fs::write(upper.join("src/a.py"), "a = 3\n").unwrap();
    let c = std::ffi::CString::new(upper.join("src").into_os_string().into_vec()).unwrap();
    // SAFETY: setting an xattr on a NUL-terminated path.
    let set = unsafe {
        libc::setxattr(
            c.as_ptr(),
            c"user.overlay.opaque".as_ptr(),
            b"y".as_ptr().cast(),
            1,
            0,
        )
    };
    if set != 0 {
        eprintln!("skipped: this file system has no user xattrs");
        return;
    }
    let entries = read(&upper, &lower).unwrap();
    let shown: Vec<(String, bool)> = entries
        .iter()
        .map(|e| (e.shown(), e.written == Written::Deleted))
        .collect();
    assert_eq!(
        shown,
        [
            ("src/a.py".to_string(), false),
            ("src/b.py".to_string(), true)
        ]
    );
}

#[test]
fn whiteouts_are_deletions_of_files_and_of_whole_folders() {
    let (_dir, lower, upper) = tree();
    let whiteout = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: mknod of a 0/0 character device, as overlayfs writes one.
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, 0) == 0 }
    };
    if !whiteout(&upper.join("same.txt")) || !whiteout(&upper.join("src")) {
        eprintln!("skipped: no mknod here");
        return;
    }
    let entries = read(&upper, &lower).unwrap();
    let deleted: Vec<String> = entries
        .iter()
        .filter(|e| e.written == Written::Deleted)
        .map(Entry::shown)
        .collect();
    assert_eq!(deleted, ["same.txt", "src/a.py", "src/b.py"]);
}

#[test]
fn a_large_file_is_known_by_its_size_only() {
    let (_dir, lower, upper) = tree();
    let big = std::fs::File::create(upper.join("big.bin")).unwrap();
    big.set_len(READ_LIMIT + 1).unwrap();
    let entries = read(&upper, &lower).unwrap();
    assert!(matches!(
        entries[0].written,
        Written::File { bytes: None, size, .. } if size == READ_LIMIT + 1
    ));
}

#[test]
fn below_a_link_of_the_workspace_nothing_of_the_workspace_is_read() {
    let (dir, lower, upper) = tree();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(&outside, lower.join("linked")).unwrap();
    // The run replaced the link by a folder with a file of the same name.
    std::fs::create_dir_all(upper.join("linked")).unwrap();
    std::fs::write(upper.join("linked/secret.txt"), "s").unwrap();
    let entries = read(&upper, &lower).unwrap();
    let shown: Vec<(String, bool)> = entries
        .iter()
        .map(|e| (e.shown(), e.written == Written::Deleted))
        .collect();
    // The link is gone; the file is new (not "unchanged" by the outside one).
    assert_eq!(
        shown,
        [
            ("linked".to_string(), true),
            ("linked/secret.txt".to_string(), false)
        ]
    );
}

#[test]
fn an_upper_folder_replaced_by_a_link_is_not_read_through_it() {
    let (dir, lower, upper) = tree();
    let users = dir.path().join("users");
    std::fs::create_dir_all(&users).unwrap();
    std::fs::write(users.join("notes.txt"), "private").unwrap();
    std::fs::remove_dir(&upper).unwrap();
    std::os::unix::fs::symlink(&users, &upper).unwrap();
    let error = read(&upper, &lower).unwrap_err();
    assert!(error.to_string().contains("replaced"), "{error}");
}
