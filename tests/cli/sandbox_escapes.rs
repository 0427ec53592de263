//! The sandbox's second round of escapes, through the real binary: Unix
//! sockets (a path outside the workspace and an abstract name, both bound by
//! the harness), the workspace's own `.git`, `.stepwise` and `.env`, and
//! `/dev/shm` for Python's `multiprocessing`. Each test lets the mock model
//! ask for an approved `run_tests` of a test file that tries it.

use crate::sandbox::{Setup, kernel_lacks, output_of, run, setup};
use std::io::ErrorKind;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

fn nothing_accepted(listener: &UnixListener) -> bool {
    matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock)
}

#[tokio::test]
async fn unix_sockets_are_refused_but_socketpairs_work() {
    if kernel_lacks(true, false) {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("agent.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let name = format!("stepwise-test-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let hidden = UnixListener::bind_addr(&addr).unwrap();
    hidden.set_nonblocking(true).unwrap();
    let body = format!(
        "import socket, multiprocessing\n\
         for addr in [{path:?}, '\\0{name}']:\n\
         \x20   try:\n\
         \x20       s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
         \x20       s.connect(addr)\n\
         \x20       s.sendall(b'leak')\n\
         \x20       print('CONNECTED', repr(addr))\n\
         \x20   except OSError as e:\n\
         \x20       print('REFUSED', e.errno, flush=True)\n\
         a, b = socket.socketpair()\n\
         a.sendall(b'pair')\n\
         print('PAIR', b.recv(4).decode(), flush=True)\n\
         a.close()\n\
         b.close()\n\
         r, w = multiprocessing.Pipe()\n\
         w.send('pipe')\n\
         print('PIPE', r.recv(), flush=True)\n",
        path = path.display().to_string()
    );
    let s = setup(&body, "");
    let (_out, result) = run(&s).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "sandboxed", "{result}");
    // EPERM from `socket()` itself, for both addresses.
    assert_eq!(output.matches("REFUSED 1").count(), 2, "{output}");
    assert!(!output.contains("CONNECTED"), "{output}");
    assert!(
        output.contains("PAIR pair") && output.contains("PIPE pipe"),
        "{output}"
    );
    assert!(
        nothing_accepted(&listener),
        "the socket file's listener saw a connection"
    );
    assert!(
        nothing_accepted(&hidden),
        "the abstract listener saw a connection"
    );
}

/// A workspace with a git folder, stepwise's folder and secrets at its root.
fn workspace_with_secrets(body: &str) -> Setup {
    let s = setup(body, "");
    let ws = s.ws.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(ws.join(".stepwise")).unwrap();
    std::fs::write(ws.join(".env"), "OPENAI_API_KEY=sk-hunter2-in-dotenv\n").unwrap();
    std::fs::write(ws.join(".env.local"), "TOKEN=hunter3\n").unwrap();
    s
}

#[tokio::test]
async fn git_and_stepwise_are_read_only_and_env_files_unreadable() {
    if kernel_lacks(true, false) {
        return;
    }
    let body = "def attempt(label, f):\n\
        \x20   try:\n\
        \x20       f()\n\
        \x20       print('DONE', label)\n\
        \x20   except OSError as e:\n\
        \x20       print('REFUSED', label, e.errno)\n\
        attempt('hook', lambda: open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ntouch /tmp/owned\\n'))\n\
        attempt('config', lambda: open('.git/config', 'a').write('[core]\\n\\thooksPath = /tmp\\n'))\n\
        attempt('stepwise', lambda: open('.stepwise/planted', 'w').write('x'))\n\
        attempt('env', lambda: print('SECRET', open('.env').read()))\n\
        attempt('envlocal', lambda: print('SECRET', open('.env.local').read()))\n\
        print('GITREAD', open('.git/config').read().strip())\n\
        open('new_at_root.txt', 'w').write('fresh')\n\
        print('ROOT', open('new_at_root.txt').read())\n\
        os.makedirs('made/deeper', exist_ok=True)\n\
        open('made/deeper/f', 'w').write('deep')\n\
        print('SUB', open('made/deeper/f').read())\n\
        os.rename('new_at_root.txt', 'renamed.txt')\n";
    let s = workspace_with_secrets(body);
    let (_out, result) = run(&s).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["sandbox"], "sandboxed", "{result}");
    for label in ["hook", "config", "stepwise"] {
        // EROFS: the read-only bind mount.
        assert!(output.contains(&format!("REFUSED {label} 30")), "{output}");
    }
    for label in ["env", "envlocal"] {
        assert!(output.contains(&format!("REFUSED {label} 13")), "{output}");
    }
    assert!(
        !output.contains("DONE") && !output.contains("hunter"),
        "{output}"
    );
    assert!(output.contains("GITREAD [core]"), "{output}");
    assert!(
        output.contains("ROOT fresh") && output.contains("SUB deep"),
        "{output}"
    );
    let ws = s.ws.path();
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!ws.join(".stepwise/planted").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("renamed.txt")).unwrap(),
        "fresh"
    );
    assert!(ws.join("made/deeper/f").is_file());
}

#[tokio::test]
async fn multiprocessing_queues_get_a_private_dev_shm() {
    if kernel_lacks(true, false) {
        return;
    }
    let probe = format!("stepwise-shm-probe-{}", std::process::id());
    let body = format!(
        "import multiprocessing as mp\n\
         q = mp.Queue()\n\
         lock = mp.Lock()\n\
         def work(q):\n\
         \x20   with lock:\n\
         \x20       q.put('queued')\n\
         p = mp.Process(target=work, args=(q,))\n\
         p.start()\n\
         print('GOT', q.get(timeout=20))\n\
         p.join()\n\
         open('/dev/shm/{probe}', 'w').write('x')\n\
         print('SHM', sorted(os.listdir('/dev/shm')))\n"
    );
    let s = setup(&body, "");
    let (_out, result) = run(&s).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("GOT queued"), "{output}");
    // The run's /dev/shm held only its own file, and is gone with the run.
    assert!(output.contains(&format!("SHM ['{probe}']")), "{output}");
    assert!(!std::path::Path::new("/dev/shm").join(&probe).exists());
}
