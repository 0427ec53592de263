//! The run's layers in its mount namespace: the overlay over the whole
//! workspace (every write of the run lands in its upper folder, see
//! `sandbox::layers`), the build layer's folders bound into it, and the
//! private `/tmp` and `/var/tmp` where the workspace is outside them, and
//! `/dev/shm`. All of it is planned before `fork`;
//! [`WorkspaceLayer::apply`] runs in the child.
//!
//! Where the kernel lets an overlay keep its upper folder on a tmpfs (user
//! extended attributes on tmpfs, Linux 6.6), the run's **disk** is one
//! tmpfs of its budget, mounted on the layer's folder first: the overlay's
//! upper and work folders and the private `/tmp`, `/var/tmp` and
//! `/dev/shm` are folders of it. The kernel then refuses every byte and
//! every file past the budget as it is written (`ENOSPC`), whatever the
//! run writes, however fast, with whatever call (`fallocate` included): no
//! sampling. That tmpfs lives in the run's mount namespace, which is gone
//! when the run ends, so the child hands stepwise a descriptor of its root
//! over a socket (`SCM_RIGHTS`) right after mounting it; the descriptor
//! keeps the tmpfs alive until stepwise has read the layer. Elsewhere the
//! upper folder is on the disk of the run's temporary folder, and each of
//! `/tmp`, `/var/tmp` and `/dev/shm` is a tmpfs of the budget.
//!
//! What must stay true: the overlay is mounted before anything is bound
//! inside the workspace (a mount beneath it would be hidden), the private
//! temporary folders after everything else (the binds may come from files
//! in `/tmp`), and the one of them that covers the run's disk last; an
//! options string the kernel would cut or split is never made; the
//! descriptor stepwise gets is of the tmpfs the child mounted, sent before
//! any code of the run runs.

use super::calls::{bind, c_path, check};
use crate::tools::sandbox::layers::LayerPlan;
use crate::tools::sandbox::limits::DISK_FILES;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The private temporary folders, and the folder of the run's disk each is
/// bound from (its name there).
const TEMPORARY: [(&str, &str); 3] = [
    ("/tmp", "tmp"),
    ("/var/tmp", "var-tmp"),
    ("/dev/shm", "shm"),
];

/// How a private temporary folder is made.
pub enum PrivateTmp {
    /// A tmpfs of its own, with these options.
    Tmpfs(CString),
    /// A folder of the run's disk, bound there.
    Bind(CString),
}

/// The folders a run gets private (`/tmp`, `/var/tmp`, `/dev/shm`), where
/// the workspace is not inside them (covering `/tmp` would hide it): each a
/// folder of the run's disk at `held` (the one that holds the run's own
/// temporary folder last: it covers the others' source; where none does,
/// the run's temporary folder itself is covered by the disk's `tmp`, last),
/// else each a tmpfs of `size_mb`, the run's disk budget.
pub fn private_tmp(root: &Path, size_mb: u64, held: Option<&Path>) -> Vec<(CString, PrivateTmp)> {
    let mut out: Vec<(CString, PrivateTmp)> = Vec::new();
    let options = CString::new(format!("size={size_mb}m,mode=1777")).unwrap_or_default();
    let mut last = None;
    for (dir, name) in TEMPORARY {
        let Ok(real) = std::fs::canonicalize(dir) else {
            continue;
        };
        // The run's own temporary folder may be covered: the layers and
        // covers made from it are mounted by then, and the run's `TMPDIR`
        // is the private folder itself.
        let covers_own = root.starts_with(&real);
        let twice = out
            .iter()
            .any(|(d, _)| d.as_bytes() == real.as_os_str().as_bytes());
        if covers_own || twice || !real.is_dir() {
            continue;
        }
        let Some(c) = c_path(&real) else {
            continue;
        };
        match held {
            Some(disk) => {
                let Some(source) = c_path(&disk.join(name)) else {
                    continue;
                };
                let entry = (c, PrivateTmp::Bind(source));
                match disk.starts_with(&real) {
                    true => last = Some(entry),
                    false => out.push(entry),
                }
            }
            None => out.push((c, PrivateTmp::Tmpfs(options.clone()))),
        }
    }
    // Where none of them covers the run's own temporary folder (a workspace
    // inside `/tmp`), that folder is covered by the disk's: the run cannot
    // reach its layer's folder there (it could replace the upper folder).
    if let Some(disk) = held
        && last.is_none()
        && let Some(temp) = disk.parent()
        && let (Some(target), Some(source)) = (c_path(temp), c_path(&disk.join("tmp")))
    {
        last = Some((target, PrivateTmp::Bind(source)));
    }
    out.extend(last);
    out
}

/// The run's disk: one tmpfs of its budget on the layer's folder, holding
/// the overlay's upper and work folders and the private temporary folders.
pub struct Disk {
    /// The layer's folder (the mount point).
    dir: CString,
    options: CString,
    /// Folders to make in it once mounted, and their modes.
    folders: Vec<(CString, libc::mode_t)>,
    /// The child's end of the socket the tmpfs's root goes to stepwise by.
    socket: OwnedFd,
}

impl Disk {
    /// The run's disk for `plan`, of `plan.tmp_mb`; the child sends its root
    /// over `socket`.
    pub fn new(plan: &LayerPlan, socket: OwnedFd) -> Option<Disk> {
        let options = disk_options(plan.tmp_mb)?;
        let mut folders = vec![
            (c_path(&plan.upper())?, 0o755),
            (c_path(&plan.dir.join("work"))?, 0o755),
        ];
        for (_, name) in TEMPORARY {
            folders.push((c_path(&plan.dir.join(name))?, 0o1777));
        }
        Some(Disk {
            dir: c_path(&plan.dir)?,
            options,
            folders,
            socket,
        })
    }

    /// Mount the tmpfs, make its folders, and send its root to stepwise.
    /// Async-signal-safe.
    fn apply(&self) -> io::Result<()> {
        // SAFETY: mount, mkdir, chmod and open on NUL-terminated paths
        // prepared before fork; `send_fd` as it says.
        unsafe {
            check(libc::mount(
                c"tmpfs".as_ptr(),
                self.dir.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.options.as_ptr().cast(),
            ))?;
            for (folder, mode) in &self.folders {
                check(libc::mkdir(folder.as_ptr(), *mode))?;
                // Past the umask.
                check(libc::chmod(folder.as_ptr(), *mode))?;
            }
            let root = libc::open(
                self.dir.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            check(root)?;
            let sent = send_fd(self.socket.as_raw_fd(), root);
            libc::close(root);
            sent
        }
    }
}

/// The tmpfs options of a run's disk of `size_mb`: as many files as the
/// budget allows, the folder the run's user's alone.
pub fn disk_options(size_mb: u64) -> Option<CString> {
    CString::new(format!("size={size_mb}m,nr_inodes={DISK_FILES},mode=0700")).ok()
}

/// One byte and room for one descriptor's control header, aligned for it:
/// what a descriptor travels in.
struct Envelope {
    space: [u64; 4],
    byte: [u8; 1],
    iov: libc::iovec,
}

impl Envelope {
    fn new() -> Envelope {
        Envelope {
            space: [0; 4],
            byte: [0],
            iov: libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 1,
            },
        }
    }

    /// The message over this envelope's buffers, with `control` bytes of
    /// control data (valid while the envelope stays where it is).
    fn message(&mut self, control: usize) -> libc::msghdr {
        self.iov.iov_base = self.byte.as_mut_ptr().cast();
        // SAFETY: a zeroed `msghdr` is an empty message.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut self.iov;
        msg.msg_iovlen = 1;
        msg.msg_control = self.space.as_mut_ptr().cast();
        msg.msg_controllen = control.min(std::mem::size_of_val(&self.space)) as _;
        msg
    }
}

/// Send `fd` over the Unix socket `socket` (`SCM_RIGHTS`).
/// Async-signal-safe.
fn send_fd(socket: RawFd, fd: RawFd) -> io::Result<()> {
    let mut envelope = Envelope::new();
    // SAFETY: `CMSG_SPACE` of one descriptor fits the envelope's room, so
    // the control header is written within it.
    unsafe {
        let size = std::mem::size_of::<RawFd>() as u32;
        let msg = envelope.message(libc::CMSG_SPACE(size) as usize);
        let header = libc::CMSG_FIRSTHDR(&msg);
        if header.is_null() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        if libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Take the descriptor the child sent over `socket`, without waiting
/// (`None`: none was sent).
pub fn receive_fd(socket: &OwnedFd) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut envelope = Envelope::new();
    let mut msg = envelope.message(usize::MAX);
    // SAFETY: the message points at the envelope's live buffers; a
    // descriptor the kernel installed is owned here from then on
    // (`MSG_CMSG_CLOEXEC`: never inherited by a run).
    unsafe {
        let flags = libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC;
        if libc::recvmsg(socket.as_raw_fd(), &mut msg, flags) < 1 {
            return None;
        }
        let header = libc::CMSG_FIRSTHDR(&msg);
        if header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<RawFd>());
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    }
}

/// The two ends of the socket a run's disk is handed over by: stepwise's,
/// and the child's.
pub fn disk_socket() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [-1; 2];
    // SAFETY: socketpair into a live array; both descriptors are owned here.
    unsafe {
        check(libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ))?;
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// The overlay over the workspace, and the build layer's binds in it.
pub struct WorkspaceLayer {
    target: CString,
    options: CString,
    /// The run's disk, mounted first (`None`: the upper folder is on the
    /// disk of the run's temporary folder).
    disk: Option<Disk>,
    /// Each build output folder: the build layer's folder, where it is
    /// bound, and the folders to make first (mount points the workspace
    /// does not have yet; they land in the run's layer and are dropped).
    binds: Vec<(CString, CString, Vec<CString>)>,
}

impl WorkspaceLayer {
    pub fn new(root: &Path, plan: &LayerPlan, disk: Option<Disk>) -> Option<WorkspaceLayer> {
        let lower: Vec<&Path> = plan
            .stage
            .iter()
            .map(PathBuf::as_path)
            .chain([root])
            .collect();
        let options = overlay_options(&lower, &plan.dir)?;
        let mut binds = Vec::new();
        if let Some(build) = &plan.build {
            for rel in &build.outputs {
                let mut dirs = Vec::new();
                let mut at = root.to_path_buf();
                for part in rel.components() {
                    at.push(part);
                    dirs.push(c_path(&at)?);
                }
                binds.push((
                    c_path(&build.dir.join(rel))?,
                    c_path(&root.join(rel))?,
                    dirs,
                ));
            }
        }
        Some(WorkspaceLayer {
            target: c_path(root)?,
            options,
            disk,
            binds,
        })
    }

    /// Mount the run's disk, the overlay, then bind the build layer's
    /// folders into it. Async-signal-safe.
    pub fn apply(&self) -> io::Result<()> {
        if let Some(disk) = &self.disk {
            disk.apply()?;
        }
        // SAFETY: mount(2) and mkdir(2) on NUL-terminated paths.
        unsafe {
            check(libc::mount(
                c"overlay".as_ptr(),
                self.target.as_ptr(),
                c"overlay".as_ptr(),
                0,
                self.options.as_ptr().cast(),
            ))?;
            for (source, target, dirs) in &self.binds {
                for dir in dirs {
                    libc::mkdir(dir.as_ptr(), 0o755);
                }
                bind(source, target)?;
            }
        }
        Ok(())
    }
}

/// The overlay options for the layers `lower` (the top one first) with the
/// run's own layers in `dir` (created here), each path escaped (see
/// `layers::spelt`); `None` where they would not fit in the page the
/// kernel takes.
pub fn overlay_options(lower: &[&Path], dir: &Path) -> Option<CString> {
    use crate::tools::sandbox::layers::spelt;
    let (upper, work) = (dir.join("upper"), dir.join("work"));
    std::fs::create_dir_all(&upper).ok()?;
    std::fs::create_dir_all(&work).ok()?;
    let mut text = b"userxattr,lowerdir=".to_vec();
    for (i, path) in lower.iter().enumerate() {
        if i > 0 {
            text.push(b':');
        }
        text.extend(spelt(path));
    }
    for (key, path) in [(&b",upperdir="[..], &upper), (b",workdir=", &work)] {
        text.extend_from_slice(key);
        text.extend(spelt(path));
    }
    // The kernel takes one page of mount options and cuts the rest.
    if text.len() >= 4096 {
        return None;
    }
    CString::new(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binds(list: &[(CString, PrivateTmp)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(dir, how)| {
                let source = match how {
                    PrivateTmp::Bind(source) => source.to_string_lossy().into_owned(),
                    PrivateTmp::Tmpfs(options) => format!("tmpfs {}", options.to_string_lossy()),
                };
                (dir.to_string_lossy().into_owned(), source)
            })
            .collect()
    }

    #[test]
    fn a_descriptor_sent_over_the_disk_socket_arrives_as_the_same_file() {
        use std::os::unix::fs::MetadataExt;
        let (ours, theirs) = disk_socket().unwrap();
        assert!(receive_fd(&ours).is_none(), "nothing was sent yet");
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        send_fd(theirs.as_raw_fd(), folder.as_raw_fd()).unwrap();
        let got = std::fs::File::from(receive_fd(&ours).unwrap());
        let (sent, arrived) = (folder.metadata().unwrap(), got.metadata().unwrap());
        assert_eq!((sent.dev(), sent.ino()), (arrived.dev(), arrived.ino()));
    }

    #[test]
    fn the_private_folder_that_holds_the_runs_disk_is_bound_last() {
        let tmp = std::fs::canonicalize("/tmp").unwrap();
        let disk = tmp.join("stepwise-runs-1/run-x/workspace-layer");
        let outside = Path::new("/nonexistent/workspace");
        let held = binds(&private_tmp(outside, 8, Some(&disk)));
        let last = held.last().unwrap();
        assert_eq!(last.0, tmp.to_string_lossy());
        assert_eq!(last.1, disk.join("tmp").to_string_lossy());
        for (dir, source) in &held {
            assert!(
                source.starts_with(&*disk.to_string_lossy()),
                "{dir}: {source}"
            );
        }
        // Each its own tmpfs of the budget without a disk.
        let own = binds(&private_tmp(outside, 8, None));
        assert_eq!(own.len(), held.len());
        assert!(own.iter().all(|(_, s)| s == "tmpfs size=8m,mode=1777"));
        // A workspace inside `/tmp` keeps `/tmp`; the run's temporary folder
        // is covered by its disk's instead, last.
        let inside = binds(&private_tmp(&tmp.join("ws"), 8, Some(&disk)));
        assert!(inside.iter().all(|(dir, _)| *dir != tmp.to_string_lossy()));
        let last = inside.last().unwrap();
        assert_eq!(last.0, disk.parent().unwrap().to_string_lossy());
        assert_eq!(last.1, disk.join("tmp").to_string_lossy());
        assert_eq!(
            disk_options(8).unwrap().to_string_lossy(),
            format!("size=8m,nr_inodes={DISK_FILES},mode=0700")
        );
    }
}
