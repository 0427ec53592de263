//! The big tree the benches share: 100 small Rust files in each of
//! `top` x 10 x 10 folders (`top = 10`: 100,000 files in 1,110 folders),
//! every 997th file holding "needle here", and a `.gitignore`.

// Each bench uses what it needs of this module.
#![allow(dead_code)]

/// Files in each leaf folder.
pub const FILES_PER_FOLDER: usize = 100;

/// Generate the tree under `root`; returns how many files it made.
pub fn generate(root: &std::path::Path, top: usize) -> usize {
    let mut n = 0;
    for a in 0..top {
        for b in 0..10 {
            for c in 0..10 {
                let dir = root.join(format!("pkg{a}/mod{b}/part{c}"));
                std::fs::create_dir_all(&dir).unwrap();
                for f in 0..FILES_PER_FOLDER {
                    let body = format!(
                        "// file {n}\npub fn item_{f}() -> u32 {{\n    {n}\n}}\n// {}\n",
                        if n % 997 == 0 {
                            "needle here"
                        } else {
                            "nothing to see"
                        }
                    );
                    std::fs::write(dir.join(format!("file{f}.rs")), body).unwrap();
                    n += 1;
                }
            }
        }
    }
    std::fs::write(root.join(".gitignore"), "*.tmp\nbuild/\n").unwrap();
    n
}
