//! The seccomp filter of a run, the second wall behind the namespaces and
//! Landlock. It refuses with `EPERM`:
//!
//! - `socket()` of every family but IPv4 and IPv6 (cut off by the network
//!   namespace, or allowed by the policy) and `NETLINK_ROUTE` (address
//!   lookups read the run's own interfaces through it). So no Unix socket
//!   reaches the user's D-Bus, `docker.sock` or `ssh-agent` (Landlock does
//!   not check `connect()` to a socket file), and no vsock, packet, Bluetooth
//!   or other family reaches the host (vsock is shared with the host on VMs
//!   and WSL2). `socketpair` stays allowed (pipes between a test's own
//!   processes, Python's `multiprocessing.Pipe`).
//! - `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`: typing into a terminal (CVE-2017-5226);
//!   the run has no controlling terminal and no terminal device anyway.
//! - `keyctl`, `add_key`, `request_key`: the kernel keyrings are not
//!   namespaced, so a test could read the session keyring.
//! - `io_uring_setup`: a ring can create sockets without the `socket` call.
//! - any system call of another architecture (32-bit `int 0x80`, x32): its
//!   numbers are not the ones checked here.
//!
//! A second filter, built per run ([`budget`]), refuses with `ENOSPC` a
//! `fallocate` longer than the run's disk budget (`disk_mb`).
//!
//! What must stay true: the program is built before `fork`; installing it
//! is two system calls; it only ever makes calls fail, never succeed; an
//! argument is compared on its low 32 bits only where the kernel reads just
//! those (the socket family, the ioctl request and the netlink protocol are
//! `int`s), so the high half cannot smuggle a value past it. Hand-built
//! rather than through a crate: two dozen instructions on the two
//! architectures stepwise builds for, where a filter compiler would add a
//! dependency.

use std::sync::OnceLock;

/// `AUDIT_ARCH_*` from `<linux/audit.h>` (not in the `libc` crate).
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: u32 = 0;
/// x32 system calls are x86-64 ones with this bit set.
const X32_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`: the call number, the architecture,
/// and the low halves of the arguments (little-endian).
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const fn arg_low(n: u32) -> u32 {
    16 + 8 * n
}

/// `TIOCSTI` and `TIOCLINUX` (the same numbers on x86-64 and arm64).
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

const LD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

/// Whether this architecture has a filter (the others run without one,
/// and the state says Unix sockets are open).
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// One instruction with named jump targets (resolved by [`assemble`]).
enum Op {
    Load(u32),
    /// Jump to the label when the accumulator equals the value, else go on.
    IfEq(u32, &'static str),
    /// Jump to the label when the accumulator is at least the value.
    IfAtLeast(u32, &'static str),
    Return(u32),
    Label(&'static str),
}

/// The filter, in order: architecture, call number, then each call's arguments.
fn source() -> Vec<Op> {
    use Op::*;
    let call = |nr: libc::c_long| nr as u32;
    vec![
        Load(ARCH_AT),
        IfEq(ARCH, "native"),
        Return(DENY),
        Label("native"),
        Load(NR),
        IfAtLeast(X32_BIT, "deny"),
        IfEq(call(libc::SYS_socket), "socket"),
        IfEq(call(libc::SYS_ioctl), "ioctl"),
        IfEq(call(libc::SYS_io_uring_setup), "deny"),
        IfEq(call(libc::SYS_keyctl), "deny"),
        IfEq(call(libc::SYS_add_key), "deny"),
        IfEq(call(libc::SYS_request_key), "deny"),
        Return(ALLOW),
        Label("socket"),
        Load(arg_low(0)),
        IfEq(libc::AF_INET as u32, "allow"),
        IfEq(libc::AF_INET6 as u32, "allow"),
        IfEq(libc::AF_NETLINK as u32, "netlink"),
        Return(DENY),
        Label("netlink"),
        Load(arg_low(2)),
        IfEq(libc::NETLINK_ROUTE as u32, "allow"),
        Return(DENY),
        Label("ioctl"),
        Load(arg_low(1)),
        IfEq(TIOCSTI, "deny"),
        IfEq(TIOCLINUX, "deny"),
        Return(ALLOW),
        Label("deny"),
        Return(DENY),
        Label("allow"),
        Return(ALLOW),
    ]
}

/// Resolve the labels into relative jumps (forward only, as BPF wants).
fn assemble(ops: &[Op]) -> Result<Vec<libc::sock_filter>, String> {
    let mut at = std::collections::HashMap::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(name) => {
                at.insert(*name, n);
            }
            _ => n += 1,
        }
    }
    let mut out = Vec::with_capacity(n);
    for op in ops {
        let here = out.len();
        let jump = |label: &str| -> Result<u8, String> {
            let target = at.get(label).ok_or(format!("no label {label}"))?;
            target
                .checked_sub(here + 1)
                .and_then(|d| u8::try_from(d).ok())
                .ok_or(format!("jump to {label} out of range"))
        };
        let insn = |code, jt, k| libc::sock_filter { code, jt, jf: 0, k };
        out.push(match op {
            Op::Label(_) => continue,
            Op::Load(offset) => insn(LD, 0, *offset),
            Op::IfEq(k, label) => insn(JEQ, jump(label)?, *k),
            Op::IfAtLeast(k, label) => insn(JGE, jump(label)?, *k),
            Op::Return(k) => insn(RET, 0, *k),
        });
    }
    Ok(out)
}

/// The high half of argument `n` (little-endian).
const fn arg_high(n: u32) -> u32 {
    arg_low(n) + 4
}
const JGT: u16 = (libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K) as u16;

/// A second filter, built for each run: `fallocate` (and so
/// `posix_fallocate`) of more than `bytes` fails with `ENOSPC`, whatever
/// the file system would allocate, so one call cannot take more than the
/// run's disk budget before the watch sees it. The length is compared as
/// the 64-bit value it is (high half, then low half); a negative one is
/// refused too.
pub fn budget(bytes: u64) -> Vec<libc::sock_filter> {
    let (high, low) = ((bytes >> 32) as u32, bytes as u32);
    let insn = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let no_space = libc::SECCOMP_RET_ERRNO | libc::ENOSPC as u32;
    vec![
        insn(LD, 0, 0, ARCH_AT),
        insn(JEQ, 1, 0, ARCH),
        insn(RET, 0, 0, ALLOW), // the first filter refuses other architectures
        insn(LD, 0, 0, NR),
        insn(JEQ, 1, 0, libc::SYS_fallocate as u32),
        insn(RET, 0, 0, ALLOW),
        insn(LD, 0, 0, arg_high(3)),
        insn(JGT, 4, 0, high), // to the refusal
        insn(JEQ, 0, 2, high), // lower: allowed
        insn(LD, 0, 0, arg_low(3)),
        insn(JGT, 1, 0, low),
        insn(RET, 0, 0, ALLOW),
        insn(RET, 0, 0, no_space),
    ]
}

/// Install `program` (built before `fork`) on the calling thread.
/// Async-signal-safe.
pub fn install_program(program: &[libc::sock_filter]) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: plain prctl calls; `prog` points at a program that outlives
    // the call (the kernel copies it).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &prog as *const libc::sock_fprog,
            ) < 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The program, assembled once (before any `fork`: see [`prepare`]).
fn program() -> &'static [libc::sock_filter] {
    static PROGRAM: OnceLock<Vec<libc::sock_filter>> = OnceLock::new();
    PROGRAM.get_or_init(|| assemble(&source()).unwrap_or_default())
}

/// Build the program in the parent, so the child only installs it.
/// `false`: it could not be built (a bug), and must not be promised.
pub fn prepare() -> bool {
    SUPPORTED && !program().is_empty()
}

/// Install the filter on the calling thread (inherited by everything it
/// starts). Needs `no_new_privs`, which Landlock sets; set here again for
/// the case without Landlock. Async-signal-safe once [`prepare`] returned
/// `true` in the parent.
pub fn install() -> std::io::Result<()> {
    let program = program();
    if !SUPPORTED || program.is_empty() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOSYS));
    }
    install_program(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a forked child: `install` a filter, then `bits()`, which becomes
    /// the child's exit code (255: the filter did not install).
    fn in_filtered_child(install: impl Fn() -> std::io::Result<()>, bits: impl Fn() -> i32) -> i32 {
        // SAFETY: the child only makes system calls and `_exit`s.
        let status = unsafe {
            let pid = libc::fork();
            if pid == 0 {
                if install().is_err() {
                    libc::_exit(255);
                }
                libc::_exit(bits());
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::WEXITSTATUS(status)
        };
        assert_ne!(status, 255, "the filter did not install");
        status
    }

    /// In a forked child: install the filter, then try each call; the
    /// exit code's bits say which calls failed with `EPERM`.
    fn refused_in_child() -> Vec<&'static str> {
        type Check = (&'static str, fn() -> libc::c_long);
        let checks: [Check; 8] = [
            ("unix", || unsafe {
                libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) as libc::c_long
            }),
            ("vsock", || unsafe {
                libc::socket(libc::AF_VSOCK, libc::SOCK_STREAM, 0) as libc::c_long
            }),
            ("netlink_audit", || unsafe {
                libc::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_AUDIT) as libc::c_long
            }),
            ("tiocsti", || unsafe {
                libc::ioctl(1, libc::TIOCSTI, c"x".as_ptr()) as libc::c_long
            }),
            ("keyctl", || unsafe {
                libc::syscall(libc::SYS_keyctl, 0, 0, 0)
            }),
            ("inet", || unsafe {
                libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) as libc::c_long
            }),
            ("inet6", || unsafe {
                libc::socket(libc::AF_INET6, libc::SOCK_DGRAM, 0) as libc::c_long
            }),
            ("netlink_route", || unsafe {
                libc::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE) as libc::c_long
            }),
        ];
        assert!(prepare());
        let status = in_filtered_child(install, || {
            let mut bits = 0;
            for (i, (_, call)) in checks.iter().enumerate() {
                // SAFETY: reading errno.
                if call() < 0 && unsafe { *libc::__errno_location() } == libc::EPERM {
                    bits |= 1 << i;
                }
            }
            bits
        });
        checks
            .iter()
            .enumerate()
            .filter(|(i, _)| status & (1 << i) != 0)
            .map(|(_, (name, _))| *name)
            .collect()
    }

    #[test]
    fn the_filter_refuses_other_families_terminal_typing_and_keyrings() {
        assert_eq!(
            refused_in_child(),
            ["unix", "vsock", "netlink_audit", "tiocsti", "keyctl"]
        );
    }

    #[test]
    fn fallocate_beyond_the_budget_is_refused_by_its_64_bit_length() {
        let file = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let program = budget(6 << 30);
        const GIB: i64 = 1 << 30;
        // Lengths around the budget (6 GiB): only a hole is punched, so
        // nothing is allocated either way.
        let lengths: [i64; 5] = [7 * GIB, 6 * GIB + 1, 6 * GIB, 5 * GIB, 9 * GIB];
        let status = in_filtered_child(
            || install_program(&program),
            || {
                let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
                let mut bits = 0;
                for (i, len) in lengths.iter().enumerate() {
                    // SAFETY: fallocate on a live descriptor; reading errno.
                    if unsafe { libc::fallocate(fd, mode, 0, *len) } < 0
                        && unsafe { *libc::__errno_location() } == libc::ENOSPC
                    {
                        bits |= 1 << i;
                    }
                }
                bits
            },
        );
        assert_eq!(status, 0b10011, "refused: 7 GiB, 6 GiB + 1, 9 GiB");
    }
}
