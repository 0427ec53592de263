//! Opening a file a walk found, from its folder's handle: one name opens
//! the file it names and nothing else; a symlink, a path and `..` do not.

use super::*;
use std::os::unix::fs::symlink;

#[test]
fn a_file_opened_for_a_scan_is_only_ever_the_name_in_its_folder() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    std::fs::create_dir(root.join("sub")).expect("mkdir");
    std::fs::write(root.join("sub/a.txt"), "inside").expect("write");
    std::fs::write(root.join("secret.txt"), "one level up").expect("write");
    symlink("a.txt", root.join("sub/link")).expect("symlink");
    symlink("../secret.txt", root.join("sub/up")).expect("symlink");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("sub/fifo"),
        FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("fifo");
    let ws = Workspace::open(root).expect("workspace");
    let folder = ws.open_folder_for_scan(Path::new("sub")).expect("folder");
    let read = |name: &str| {
        Workspace::open_for_scan(&folder, Path::new(name)).map(|mut f| {
            let mut text = String::new();
            let _ = f.read_to_string(&mut text);
            (Workspace::scan_check(&f), text)
        })
    };
    let (check, text) = read("a.txt").expect("the file");
    assert!(matches!(check, ScanCheck::Single(6)), "{check:?}");
    assert_eq!(text, "inside");
    for refused in [
        "link",
        "up",
        "..",
        "../secret.txt",
        "",
        "sub/a.txt",
        "missing",
    ] {
        assert!(read(refused).is_none(), "{refused:?} is refused");
    }
    // Opened without blocking, and known for what it is before any use.
    for other in ["fifo", "."] {
        let (check, _) = read(other).expect("opened");
        assert!(matches!(check, ScanCheck::Other), "{other}: {check:?}");
    }
}

#[test]
fn a_folder_swapped_for_a_symlink_after_the_walk_is_not_opened_for_a_scan() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    std::fs::write(root.join(".git/config"), "[remote]").expect("write");
    std::fs::create_dir(root.join("src")).expect("mkdir");
    let ws = Workspace::open(root).expect("workspace");
    assert!(
        ws.open_folder_for_scan(Path::new("src")).is_some(),
        "as walked"
    );
    // Between the walk and the open, `src/` becomes a symlink to `.git/`.
    std::fs::remove_dir(root.join("src")).expect("rmdir");
    symlink(".git", root.join("src")).expect("symlink");
    assert!(ws.open_folder_for_scan(Path::new("src")).is_none());
}
