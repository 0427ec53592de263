//! What the test process does between `fork` and `exec`: die with stepwise,
//! take its resource limits, enter a network namespace with only loopback
//! up and a mount namespace (see `mounts`), drop `CAP_SYS_PTRACE` (and the
//! capabilities that read past file modes, where files are hidden), restrict
//! itself with the Landlock ruleset, then install the seccomp filter.
//!
//! What must stay true: [`Plan::apply`] runs in the forked child of a
//! multi-threaded program, so it only makes system calls on data built
//! before the fork (no allocation, no locks); anything the plan promised
//! that fails returns an error, which makes the spawn fail.

use super::mounts::Mounts;
use super::seccomp;
use landlock::{RulesetCreated, RulesetStatus};
use std::ffi::CString;
use std::io;

/// `CAP_SYS_PTRACE` from `<linux/capability.h>` (not in the `libc` crate).
const CAP_SYS_PTRACE: libc::c_ulong = 19;
/// `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH`: without them root (in its
/// user namespace) cannot read the unreadable file that covers `.env`.
const CAP_DAC: [libc::c_ulong; 2] = [1, 2];

/// How the child enters a network namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetMethod {
    /// `unshare(CLONE_NEWNET)` (root, or `CAP_SYS_ADMIN`).
    Plain,
    /// A user namespace first (unprivileged), mapping the caller's ids.
    UserNs,
}

/// Everything the child needs, prepared in the parent.
pub struct Plan {
    pub rlimits: Vec<(libc::__rlimit_resource_t, libc::rlim_t, libc::rlim_t)>,
    pub net: Option<NetMethod>,
    /// Bring up loopback in a new network namespace (with `net`).
    pub new_net: bool,
    /// The mount namespace's plan (with `net`).
    pub mounts: Option<Mounts>,
    /// Install the seccomp filter that refuses Unix sockets.
    pub seccomp: bool,
    /// Only meaningful inside a fresh user namespace (it counts the user's
    /// processes in that namespace, that is, the run's).
    pub nproc: Option<libc::rlim_t>,
    pub ruleset: Option<RulesetCreated>,
    pub maps: IdMaps,
}

/// The files and lines that map the caller's ids into a user namespace.
pub struct IdMaps {
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    uid_line: Vec<u8>,
    gid_line: Vec<u8>,
}

impl IdMaps {
    pub fn new() -> Self {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let path = |p: &str| CString::new(p).unwrap_or_default();
        IdMaps {
            setgroups: path("/proc/self/setgroups"),
            uid_map: path("/proc/self/uid_map"),
            gid_map: path("/proc/self/gid_map"),
            uid_line: format!("{uid} {uid} 1\n").into_bytes(),
            gid_line: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Write `bytes` to the file at `path` (async-signal-safe).
fn write_file(path: &CString, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: plain system calls on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written < 0 || written as usize != bytes.len() {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Bring the loopback interface of the new namespace up.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a socket and two ioctls on a zeroed, NUL-terminated `ifreq`.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(sock)?;
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let mut result = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req);
        if result >= 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            result = libc::ioctl(sock, libc::SIOCSIFFLAGS, &mut req);
        }
        let error = io::Error::last_os_error();
        libc::close(sock);
        if result < 0 {
            return Err(error);
        }
    }
    Ok(())
}

impl Plan {
    /// Run in the child after `fork`.
    pub fn apply(&mut self) -> io::Result<()> {
        // SAFETY: each call is a plain system call with valid arguments.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
            for &(resource, soft, hard) in &self.rlimits {
                let limit = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
            // Root keeps no way to read stepwise's /proc entry; others never
            // had it (stepwise is not dumpable). Fails harmlessly unprivileged.
            libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE);
            let mut flags = 0;
            if self.new_net {
                flags |= libc::CLONE_NEWNET;
            }
            if self.mounts.is_some() {
                flags |= libc::CLONE_NEWNS;
            }
            match self.net {
                Some(NetMethod::Plain) => check(libc::unshare(flags))?,
                Some(NetMethod::UserNs) => {
                    check(libc::unshare(libc::CLONE_NEWUSER | flags))?;
                    write_file(&self.maps.setgroups, b"deny")?;
                    write_file(&self.maps.uid_map, &self.maps.uid_line)?;
                    write_file(&self.maps.gid_map, &self.maps.gid_line)?;
                }
                None => {}
            }
            if self.net.is_some() && self.new_net {
                loopback_up()?;
            }
            if let Some(mounts) = &self.mounts {
                mounts.apply()?;
                if mounts.hides_files() {
                    for cap in CAP_DAC {
                        check(libc::prctl(libc::PR_CAPBSET_DROP, cap))?;
                    }
                }
            }
            if let Some(n) = self.nproc {
                let limit = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                check(libc::setrlimit(libc::RLIMIT_NPROC, &limit))?;
            }
        }
        if let Some(ruleset) = self.ruleset.take() {
            match ruleset.restrict_self() {
                Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
                _ => return Err(io::Error::from_raw_os_error(libc::EPERM)),
            }
        }
        if self.seccomp {
            seccomp::install()?;
        }
        Ok(())
    }
}
