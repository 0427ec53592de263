//! `[sandbox] mode = "require"` where a part of the sandbox is missing,
//! through the real binary. This kernel offers everything, so the harness
//! takes one part away from outside: it starts `stepwise exec` under a
//! seccomp filter that makes `unshare()` fail (as a kernel without user
//! namespaces would), which nothing in a project folder can do. `require`
//! must then refuse with exit code 2 before asking the model anything, and
//! `auto` must say what the run got instead of "sandboxed".

use crate::sandbox::{Setup, exec_command, kernel_lacks, output_of, setup};
use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;

const LD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Make every `unshare()` of the started process fail with `EPERM`.
fn without_namespaces(cmd: &mut Command) {
    let program = vec![
        op(LD, 0, 0, 4),
        op(JEQ, 0, 3, ARCH),
        op(LD, 0, 0, 0),
        op(JEQ, 0, 1, libc::SYS_unshare as u32),
        op(RET, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        op(RET, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    with_filter(cmd, program);
}

/// Make only `unshare(CLONE_NEWUSER | …)` fail, as on a kernel without user
/// namespaces (`user.max_user_namespaces = 0`): root still makes the others.
fn without_user_namespaces(cmd: &mut Command) {
    let program = vec![
        op(LD, 0, 0, 4),
        op(JEQ, 0, 5, ARCH),
        op(LD, 0, 0, 0),
        op(JEQ, 0, 3, libc::SYS_unshare as u32),
        op(LD, 0, 0, 16),
        op(JSET, 0, 1, libc::CLONE_NEWUSER as u32),
        op(RET, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        op(RET, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    with_filter(cmd, program);
}

fn with_filter(cmd: &mut Command, program: Vec<libc::sock_filter>) {
    // SAFETY: two prctl calls in the child; `program` is copied into the
    // closure and outlives them.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: program.len() as u16,
                filter: program.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const libc::sock_fprog) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Run `exec` without namespaces; the output and the requests the model got.
async fn run_without_namespaces(s: &Setup) -> (Output, Vec<Value>) {
    run_filtered(s, without_namespaces).await
}

async fn run_filtered(s: &Setup, filter: fn(&mut Command)) -> (Output, Vec<Value>) {
    let model = MockModel::start(vec![
        tool_call("run_tests", json!({"command": "unittest"})),
        text("Done."),
    ])
    .await;
    let mut cmd = exec_command(s, &model.base_url());
    filter(&mut cmd);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    (out, model.requests().await)
}

#[tokio::test]
async fn require_refuses_with_exit_2_when_namespaces_are_missing() {
    if kernel_lacks(true, false) {
        return;
    }
    let s = setup(
        "open('ran.txt', 'w').write('x')\n",
        "[sandbox]\nmode = \"require\"\n",
    );
    let (out, requests) = run_without_namespaces(&s).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mode = \"require\""), "{stderr}");
    assert!(stderr.contains("a mount namespace"), "{stderr}");
    assert!(requests.is_empty(), "the model was asked: {requests:?}");
    assert!(!s.ws.path().join("ran.txt").exists());
}

#[tokio::test]
async fn auto_says_what_the_run_lacks_without_namespaces() {
    if kernel_lacks(true, false) {
        return;
    }
    let s = setup("print('RAN')\n", "");
    let (out, requests) = run_without_namespaces(&s).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(requests.len() >= 2, "{stderr}");
    let tool = tool_messages(&requests[1]);
    let result: Value = serde_json::from_str(tool[0]["content"].as_str().unwrap()).unwrap();
    assert!(output_of(&result).contains("RAN"), "{result}");
    let label = result["sandbox"].as_str().unwrap_or_default();
    assert_ne!(label, "sandboxed", "{result}");
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        // Root without any namespace keeps its real capabilities.
        assert_eq!(
            label, "not sandboxed: root without user namespaces",
            "{result}"
        );
    } else {
        assert!(label.starts_with("sandbox: "), "{result}");
    }
}

/// Whether this test runs as root (the case of finding 6).
fn root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Root where user namespaces are off ran the tests as real root (`mknod`,
/// `chown` outside, every capability) and said `not sandboxed`. The run
/// makes its namespaces without a user namespace and drops every
/// capability and the bounding set, with `no_new_privs`: it is
/// `sandboxed`, and `require` runs it.
#[tokio::test]
async fn root_without_user_namespaces_runs_without_capabilities_and_sandboxed() {
    if kernel_lacks(true, false) {
        return;
    }
    if !root() {
        eprintln!("skipped: only root makes namespaces without a user namespace");
        return;
    }
    let body = "import stat\n\
        status = open('/proc/self/status').read().splitlines()\n\
        for key in ['CapEff', 'CapPrm', 'CapInh', 'CapBnd', 'CapAmb', 'NoNewPrivs']:\n\
        \x20   print(key, [l.split()[1] for l in status if l.startswith(key + ':')][0])\n\
        print('UIDMAP', ' '.join(open('/proc/self/uid_map').read().split()))\n\
        try:\n\
        \x20   os.mknod('node', 0o666 | stat.S_IFCHR, os.makedev(1, 3))\n\
        \x20   print('MKNOD OK')\n\
        except OSError as e:\n\
        \x20   print('MKNOD', e.errno)\n\
        try:\n\
        \x20   os.chown('test_escape.py', 12345, 12345)\n\
        \x20   print('CHOWN OK')\n\
        except OSError as e:\n\
        \x20   print('CHOWN', e.errno)\n";
    for mode in ["auto", "require"] {
        let s = setup(body, &format!("[sandbox]\nmode = \"{mode}\"\n"));
        let (out, requests) = run_filtered(&s, without_user_namespaces).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(requests.len() >= 2, "{stderr}");
        let tool = tool_messages(&requests[1]);
        let result: Value = serde_json::from_str(tool[0]["content"].as_str().unwrap()).unwrap();
        let output = output_of(&result);
        // No user namespace: the run's ids are the machine's.
        assert!(output.contains("UIDMAP 0 0 4294967295"), "{output}");
        for key in ["CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"] {
            assert!(
                output.contains(&format!("{key} 0000000000000000")),
                "{output}"
            );
        }
        assert!(output.contains("NoNewPrivs 1"), "{output}");
        assert!(output.contains("MKNOD 1"), "{output}");
        assert!(output.contains("CHOWN 1"), "{output}");
        assert_eq!(result["sandbox"], "sandboxed", "{result}");
        assert_eq!(result["success"], true, "{result}");
    }
}
