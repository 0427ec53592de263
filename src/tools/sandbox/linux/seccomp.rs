//! The seccomp filter of a run: `socket(AF_UNIX, …)` fails with `EPERM`, so
//! a test cannot reach the user's D-Bus, `docker.sock` or `ssh-agent`
//! (Landlock does not check `connect()` to a socket file); `socketpair`
//! stays allowed (pipes between a test's own processes, Python's
//! `multiprocessing.Pipe`). `io_uring_setup` fails too, since a ring can
//! create sockets without the `socket` system call. A system call of another
//! architecture (32-bit `int 0x80`, x32) fails with `EPERM`: its numbers are
//! not the ones checked here.
//!
//! What must stay true: the program is a constant built before `fork`;
//! installing it is two system calls; it only ever makes calls fail, never
//! succeed. Hand-built rather than through a crate: twelve instructions on
//! the two architectures stepwise builds for, where a filter compiler would
//! add a dependency for one rule.

/// `AUDIT_ARCH_*` from `<linux/audit.h>` (not in the `libc` crate).
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;
/// x32 system calls are x86-64 ones with this bit set.
const X32_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`: the call number, the architecture,
/// and the low half of the first argument (little-endian).
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const ARG0_LOW: u32 = 16;

const LD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

const fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Whether this architecture has a filter (the others run without one,
/// and the state says Unix sockets are open).
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// The program; jumps count the instructions skipped.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const PROGRAM: [libc::sock_filter; 12] = [
    op(LD, 0, 0, ARCH_AT),
    op(JEQ, 1, 0, ARCH),
    op(RET, 0, 0, DENY),
    op(LD, 0, 0, NR),
    op(JGE, 6, 0, X32_BIT),
    op(JEQ, 2, 0, libc::SYS_socket as u32),
    op(JEQ, 4, 0, libc::SYS_io_uring_setup as u32),
    op(RET, 0, 0, ALLOW),
    op(LD, 0, 0, ARG0_LOW),
    op(JEQ, 1, 0, libc::AF_UNIX as u32),
    op(RET, 0, 0, ALLOW),
    op(RET, 0, 0, DENY),
];

/// Install the filter on the calling thread (inherited by everything it
/// starts). Needs `no_new_privs`, which Landlock sets; set here again for
/// the case without Landlock. Async-signal-safe.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn install() -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: PROGRAM.len() as u16,
        filter: PROGRAM.as_ptr().cast_mut(),
    };
    // SAFETY: plain prctl calls; `prog` points at a constant program that
    // outlives the call (the kernel copies it).
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

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn install() -> std::io::Result<()> {
    Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
}
