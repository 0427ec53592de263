//! The Landlock ruleset of a run, built before `fork`: full access beneath
//! the workspace, the temporary folder and the build output folders; read and
//! execute everywhere else except the hidden paths and the terminal devices
//! (`/dev/tty`, `/dev/pts`, `/dev/console`, …); no TCP connect or bind
//! unless a network namespace already cuts the network off (or the policy
//! allows it); no signals to processes outside the run, and no connecting
//! to abstract Unix sockets made outside it (ABI 6; the seccomp filter
//! refuses every Unix socket anyway, and a network namespace has its own
//! abstract names). `/dev/shm` is writable only when the run has its own
//! private one (see `mounts`).
//!
//! What must stay true: Landlock only grants, so hiding a path means granting
//! read on each of its siblings and on the siblings of each of its ancestors,
//! never on an ancestor itself; an entry that is a symbolic link to a hidden
//! path, its ancestor or anything inside it gets no grant (Landlock follows
//! it when opening). The home folders' hidden entries (see `paths`) are
//! hidden paths like any other.

use super::super::Policy;
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use std::path::{Path, PathBuf};

/// The newest ABI this code asks for; older kernels get what they support.
const ABI_WANTED: ABI = ABI::V7;

/// Device files every runtime writes (not `/dev/tty`: a run has no terminal).
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Whether a name in `/dev` is a terminal (the user's `/dev/pts/N`, the
/// console, virtual consoles and their screen memory, serial lines, the
/// pty multiplexer): none of them may be opened by a run, so it can neither
/// read the user's keystrokes nor draw on their screen.
fn terminal_device(name: &str) -> bool {
    ["tty", "pts", "ptmx", "console", "vcs", "hvc"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The terminal devices in `/dev`, hidden from every run.
fn terminals() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/dev") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| terminal_device(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect()
}

/// Build the ruleset; `block_tcp`: refuse TCP connect and bind; `shm`:
/// the run's own folder that it sees as `/dev/shm`, which may be written.
pub fn build(
    root: &Path,
    temp: &Path,
    policy: &Policy,
    block_tcp: bool,
    shm: Option<&Path>,
) -> Result<RulesetCreated, String> {
    let fail = |e: landlock::RulesetError| format!("could not build the sandbox rules: {e}");
    let abi = ABI_WANTED;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(fail)?;
    if block_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(fail)?;
    }
    let mut created = ruleset.create().map_err(fail)?;
    let mut hidden: Vec<PathBuf> = policy
        .hidden
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    hidden.extend(terminals());
    for path in read_roots(Path::new("/"), &hidden) {
        created = add(created, &path, AccessFs::from_read(abi))?;
    }
    let mut writable = vec![root.to_path_buf(), temp.to_path_buf()];
    writable.extend(policy.writable.iter().cloned());
    writable.extend(shm.map(Path::to_path_buf));
    for path in writable {
        // A cache folder that does not exist has nothing to grant.
        if path.exists() {
            created = add(created, &path, AccessFs::from_all(abi))?;
        }
    }
    for device in DEVICES {
        if Path::new(device).exists() {
            created = add(created, Path::new(device), AccessFs::from_file(abi))?;
        }
    }
    Ok(created)
}

fn add(
    created: RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<RulesetCreated, String> {
    let Ok(fd) = PathFd::new(path) else {
        // Gone since it was listed (or unreadable): nothing to grant.
        return Ok(created);
    };
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| format!("could not add the sandbox rule for {}: {e}", path.display()))
}

/// The paths to grant read on so that everything but `hidden` is readable.
pub fn read_roots(dir: &Path, hidden: &[PathBuf]) -> Vec<PathBuf> {
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        return vec![dir.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let is_link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(true);
        let target = if is_link {
            match std::fs::canonicalize(&path) {
                Ok(t) => t,
                Err(_) => continue,
            }
        } else {
            path.clone()
        };
        if hidden.iter().any(|h| h.starts_with(&target)) {
            if !is_link && !hidden.contains(&target) {
                out.extend(read_roots(&path, hidden));
            }
            continue;
        }
        // A link into a hidden folder (`~/.gitconfig` leading into a
        // hidden dotfiles folder) would grant what it leads to.
        if is_link && hidden.iter().any(|h| target.starts_with(h)) {
            continue;
        }
        out.push(path);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hiding_a_path_grants_its_siblings_and_its_ancestors_siblings() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        for sub in ["home/.ssh", "home/code", "etc"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        std::os::unix::fs::symlink(base.join("home/.ssh"), base.join("home/keys")).unwrap();
        std::fs::write(base.join("home/.ssh/config"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("home/.ssh/config"), base.join("home/cfg")).unwrap();
        let mut roots = read_roots(&base, &[base.join("home/.ssh")]);
        roots.sort();
        assert_eq!(roots, [base.join("etc"), base.join("home/code")]);
        assert_eq!(read_roots(&base, &[]), vec![base]);
    }
}
