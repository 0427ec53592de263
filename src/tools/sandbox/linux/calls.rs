//! The mount calls the sandbox's child makes, each async-signal-safe (no
//! allocation, no lock): binding, setting a mount read-only with
//! `mount_setattr`, and turning a path into the C string they take (that
//! one before `fork`).
//!
//! What must stay true: nothing here allocates but [`c_path`], which is
//! called only while the plan is prepared, before `fork`.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `struct mount_attr` and its flags from `<linux/mount.h>`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}
const MOUNT_ATTR_RDONLY: u64 = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// Set (`on`) or clear the read-only flag of the mount at `path`, and with
/// `recursive` of every mount below it. Async-signal-safe.
pub fn set_read_only(path: &CStr, on: bool, recursive: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if on { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if on { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr on a NUL-terminated path and a live struct.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

pub fn bind(source: &CStr, target: &CStr) -> io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: as in `apply`.
    check(unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })
}

pub fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
