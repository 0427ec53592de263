//! How much of a model server's answer stepwise holds: one reply's text,
//! reasoning and tool calls together, one tool call's arguments, one event
//! of a stream, and a body read whole (a reply that is not streamed, an
//! error). Each cap is far above any real reply (a 128k-token reply is
//! about 0.5 MiB of text), so only a broken or hostile server reaches one;
//! the reply then ends with [`LlmError::TooLarge`], saying which cap.
//!
//! What must stay true: memory for one reply is bounded by these caps,
//! whatever the server sends and however long it streams: bytes of a stream
//! are counted as they arrive (an event is never buffered past
//! [`MAX_EVENT_BYTES`]), a body is never read past its cap, and what a reply
//! keeps is checked after every piece it adds.

use super::LlmError;
use futures_util::Stream;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

/// Most bytes one reply keeps: its text, reasoning and tool calls together.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes of one tool call's arguments.
pub const MAX_ARGUMENT_BYTES: usize = 4 * 1024 * 1024;

/// Most bytes of one event of a stream, or of a body read whole.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes of an error body read (the rest is not needed to say what went wrong).
pub const MAX_ERROR_BODY_BYTES: usize = 1024 * 1024;

/// What each tool call or content block counts for beyond its text (a
/// stream of empty calls would otherwise grow without counting).
pub const PER_PART_BYTES: usize = 128;

const MIB: usize = 1024 * 1024;

/// Refuse a reply that keeps `kept` bytes, or whose largest tool call (its
/// name and the size of its arguments) is past its cap.
pub fn check(kept: usize, largest_call: Option<(&str, usize)>) -> Result<(), LlmError> {
    if let Some((name, size)) = largest_call.filter(|(_, size)| *size > MAX_ARGUMENT_BYTES) {
        return Err(LlmError::TooLarge(format!(
            "the arguments of one tool call ({}) passed {} MiB ({size} bytes so far)",
            crate::text::sanitize::sanitize(&name.chars().take(64).collect::<String>()),
            MAX_ARGUMENT_BYTES / MIB
        )));
    }
    if kept > MAX_REPLY_BYTES {
        return Err(LlmError::TooLarge(format!(
            "the reply passed {} MiB of text, reasoning and tool calls",
            MAX_REPLY_BYTES / MIB
        )));
    }
    Ok(())
}

/// The error of a stream cut at an event past [`MAX_EVENT_BYTES`].
pub fn event_too_large() -> LlmError {
    LlmError::TooLarge(format!(
        "one event of the stream passed {} MiB",
        MAX_EVENT_BYTES / MIB
    ))
}

/// Counts the bytes of the event a stream is in, as they arrive: an event
/// ends at an empty line (`\n\n` or `\r\n\r\n`).
#[derive(Debug, Default)]
pub struct EventSize {
    /// Bytes of the current event so far.
    event: usize,
    /// Bytes of the current line so far (a lone `\r` counts as none).
    line: usize,
    /// Whether the current line so far is just `\r`.
    only_cr: bool,
}

impl EventSize {
    /// Count `bytes`; `false` once the current event is past [`MAX_EVENT_BYTES`].
    pub fn add(&mut self, bytes: &[u8]) -> bool {
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', bytes) {
            self.add_to_line(&bytes[start..newline]);
            if self.line == 0 || self.only_cr {
                self.event = 0; // an empty line: the event ended
            }
            self.line = 0;
            self.only_cr = false;
            start = newline + 1;
        }
        self.add_to_line(&bytes[start..]);
        self.event <= MAX_EVENT_BYTES
    }

    fn add_to_line(&mut self, part: &[u8]) {
        if part.is_empty() {
            return;
        }
        self.only_cr = (self.line == 0 || self.only_cr) && part == b"\r";
        self.line += part.len();
        self.event += part.len() + 1;
    }
}

/// The bytes of a stream handed on in whole lines (a line cut by a chunk
/// waits for its end), and ended where one event passes
/// [`MAX_EVENT_BYTES`], setting `cut`. The SSE parser after it looks for a
/// line's end from the start of what it holds on every chunk: fed a long
/// line chunk by chunk that costs time growing with the square of the
/// line; fed whole lines, each byte is looked at once.
pub struct WholeLines<S> {
    inner: S,
    pending: Vec<u8>,
    size: EventSize,
    cut: Arc<AtomicBool>,
    done: bool,
}

impl<S> WholeLines<S> {
    pub fn new(inner: S, cut: Arc<AtomicBool>) -> Self {
        WholeLines {
            inner,
            pending: Vec::new(),
            size: EventSize::default(),
            cut,
            done: false,
        }
    }
}

impl<S, B, E> Stream for WholeLines<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    type Item = Result<Vec<u8>, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            let next = match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(next) => next,
                Poll::Pending => return Poll::Pending,
            };
            match next {
                Some(Ok(chunk)) => {
                    let bytes = chunk.as_ref();
                    if !this.size.add(bytes) {
                        this.cut.store(true, Ordering::Relaxed);
                        this.done = true;
                        this.pending = Vec::new();
                        return Poll::Ready(None);
                    }
                    let Some(last) = memchr::memrchr(b'\n', bytes) else {
                        this.pending.extend_from_slice(bytes);
                        continue;
                    };
                    let mut lines = std::mem::take(&mut this.pending);
                    lines.extend_from_slice(&bytes[..=last]);
                    this.pending.extend_from_slice(&bytes[last + 1..]);
                    return Poll::Ready(Some(Ok(lines)));
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    this.done = true;
                    let rest = std::mem::take(&mut this.pending);
                    return Poll::Ready((!rest.is_empty()).then_some(Ok(rest)));
                }
            }
        }
    }
}

/// The body of `response` as text, read up to `cap` bytes, each chunk within
/// `idle`. `Ok(Err(text))`: the body went on past `cap` (`text` is its start).
pub async fn body_text(
    mut response: reqwest::Response,
    idle: Duration,
    cap: usize,
) -> Result<Result<String, String>, BodyError> {
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let chunk = tokio::time::timeout(idle, response.chunk())
            .await
            .map_err(|_| BodyError::Idle)?
            .map_err(BodyError::Transport)?;
        let Some(chunk) = chunk else { break };
        let room = cap.saturating_sub(bytes.len());
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Err(String::from_utf8_lossy(&bytes).into_owned()));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Ok(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Why a body could not be read.
pub enum BodyError {
    /// Nothing came for the idle limit.
    Idle,
    Transport(reqwest::Error),
}

/// The error of a body read whole that went past [`MAX_EVENT_BYTES`].
pub fn body_too_large() -> LlmError {
    LlmError::TooLarge(format!(
        "the reply's body passed {} MiB",
        MAX_EVENT_BYTES / MIB
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_counted_until_its_empty_line_wherever_chunks_split() {
        let mut size = EventSize::default();
        assert!(size.add(b"data: {\"a\":1}\n\ndata: x"));
        assert_eq!(size.event, 8);
        // `\r\n\r\n` split across chunks ends the event too.
        assert!(size.add(b"yz\r\n\r"));
        assert!(size.add(b"\n"));
        assert_eq!(size.event, 0);
        // Many short lines of one event add up.
        let line = b"data: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
        let mut kept = true;
        for _ in 0..(MAX_EVENT_BYTES / line.len() + 2) {
            kept &= size.add(line);
        }
        assert!(!kept, "one event of many lines is still one event");
        // A stream of small events never is.
        let mut size = EventSize::default();
        let event = b"data: {\"choices\":[]}\n\n";
        assert!((0..(2 * MAX_EVENT_BYTES / event.len())).all(|_| size.add(event)));
    }

    #[tokio::test]
    async fn lines_are_handed_on_whole_and_a_long_event_is_cut() {
        use futures_util::StreamExt;
        let chunks: Vec<Result<&[u8], ()>> = vec![
            Ok(b"data: a"),
            Ok(b"bc\n\ndata: d"),
            Ok(b"ef"),
            Ok(b"\n\nda"),
        ];
        let cut = Arc::new(AtomicBool::new(false));
        let out: Vec<Vec<u8>> = WholeLines::new(futures_util::stream::iter(chunks), cut.clone())
            .map(Result::unwrap)
            .collect()
            .await;
        let out: Vec<&[u8]> = out.iter().map(Vec::as_slice).collect();
        assert_eq!(out, [&b"data: abc\n\n"[..], b"data: def\n\n", b"da"]);
        assert!(!cut.load(Ordering::Relaxed));
        let piece = vec![b'x'; 1024 * 1024];
        let endless = futures_util::stream::iter((0..100).map(|_| Ok::<_, ()>(piece.clone())));
        let out: Vec<_> = WholeLines::new(endless, cut.clone()).collect().await;
        assert!(out.is_empty() && cut.load(Ordering::Relaxed));
    }

    #[test]
    fn the_caps_name_what_passed() {
        assert!(check(MAX_REPLY_BYTES, Some(("write_file", MAX_ARGUMENT_BYTES))).is_ok());
        let err = check(10, Some(("write_file", MAX_ARGUMENT_BYTES + 1))).unwrap_err();
        assert!(
            err.to_string()
                .contains("one tool call (write_file) passed 4 MiB"),
            "{err}"
        );
        let err = check(MAX_REPLY_BYTES + 1, None).unwrap_err();
        assert!(err.to_string().contains("passed 8 MiB"), "{err}");
        assert!(!err.is_retryable());
    }
}
