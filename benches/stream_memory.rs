//! Memory of one streamed reply of 100 MB: a server on 127.0.0.1 streams
//! each shape below to `stepwise exec`, and this prints the child's peak RSS
//! (`ru_maxrss` from `wait4`) and how the run ended. The shapes: text in
//! 1 KiB pieces, one tool call's arguments in 1 KiB pieces, one event that
//! never ends, and 100 MB of chunks that carry nothing followed by a short
//! answer (read to the end: memory must not grow with what was streamed).
//! Run with `cargo bench --bench stream_memory` (`STEPWISE_BENCH_BIN=path`
//! measures another build of the binary).

// A benchmark may panic on what it sets up itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Longest a shape may run before the child is killed.
const LIMIT_SECS: u64 = 120;

/// Bytes streamed for each shape.
const STREAMED: usize = 100 * 1000 * 1000;

#[derive(Clone, Copy)]
enum Shape {
    Text,
    Arguments,
    OneEvent,
    Padding,
}

impl Shape {
    fn label(self) -> &'static str {
        match self {
            Shape::Text => "100 MB of text in 1 KiB pieces",
            Shape::Arguments => "100 MB of one call's arguments, 1 KiB pieces",
            Shape::OneEvent => "one event of 100 MB",
            Shape::Padding => "100 MB of empty chunks, then an answer",
        }
    }
}

/// Answer one request on `stream` with `shape`, until done or the client leaves.
fn serve(mut stream: TcpStream, shape: Shape) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let piece = "x".repeat(1024);
    let (first, each, last): (String, String, String) = match shape {
        Shape::Text => (
            String::new(),
            format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{piece}\"}}}}]}}\n\n"),
            "data: [DONE]\n\n".into(),
        ),
        Shape::Arguments => (
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\",\\\"content\\\":\\\"\"}}]}}]}\n\n".into(),
            format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{piece}\"}}}}]}}}}]}}\n\n"),
            "data: [DONE]\n\n".into(),
        ),
        Shape::OneEvent => (
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".into(),
            piece.clone(),
            "\"}}]}\n\ndata: [DONE]\n\n".into(),
        ),
        Shape::Padding => (
            String::new(),
            format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{}}}}],\"pad\":\"{piece}\"}}\n\n"),
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into(),
        ),
    };
    let _ = stream.write_all(first.as_bytes());
    let mut sent = 0;
    while sent < STREAMED {
        if stream.write_all(each.as_bytes()).is_err() {
            return; // the client stopped reading
        }
        sent += each.len();
    }
    let _ = stream.write_all(last.as_bytes());
}

/// Run `exec` against a server streaming `shape`; (peak RSS in KiB, exit
/// code, the line saying how it ended, seconds).
// The child is reaped by `wait4` (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run(shape: Shape) -> (i64, i32, String, f64) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            serve(stream, shape);
        }
    });
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.py"), "x = 1\n").unwrap();
    let err_path = project.path().join("output.txt");
    let bin = std::env::var_os("STEPWISE_BENCH_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_stepwise").into(),
        std::path::PathBuf::from,
    );
    let start = Instant::now();
    let child = Command::new(bin)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("STEPWISE_MODEL")
        .args([
            "exec",
            "--yes",
            "--no-log",
            "--max-retries",
            "0",
            "--base-url",
        ])
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .arg("--workspace")
        .arg(project.path())
        .arg("Say done")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&err_path).unwrap())
        .stderr(std::fs::File::create(project.path().join("stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain FFI calls with valid pointers to locals; the child is
    // ours and reaped only here, so `kill` reaches it (a build that never
    // finishes one shape is stopped) and never another process.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        let waited = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if waited == pid {
            break;
        }
        assert_eq!(waited, 0, "wait4");
        if !killed && start.elapsed().as_secs() >= LIMIT_SECS {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let took = start.elapsed().as_secs_f64();
    let _ = server.join();
    // The line saying how the run ended: the error, else the answer.
    let said = std::fs::read_to_string(&err_path).unwrap_or_default()
        + &std::fs::read_to_string(project.path().join("stderr.txt")).unwrap_or_default();
    let last = (said
        .lines()
        .find(|l| l.contains("stopped") || l.contains("error")))
    .or_else(|| said.lines().find(|l| l.contains("Done.")))
    .unwrap_or("")
    .trim()
    .to_string();
    let last = if killed {
        format!("killed after {LIMIT_SECS} s")
    } else {
        last
    };
    (usage.ru_maxrss, libc::WEXITSTATUS(status), last, took)
}

fn main() {
    for shape in [
        Shape::Text,
        Shape::Arguments,
        Shape::OneEvent,
        Shape::Padding,
    ] {
        let (rss_kib, code, last, took) = run(shape);
        println!(
            "{:<48} {:>8.1} MiB peak RSS, exit {code} in {took:.1} s: {}",
            shape.label(),
            rss_kib as f64 / 1024.0,
            last.chars().take(140).collect::<String>()
        );
    }
}
