//! The `bash` call's output: its two pipes read until the command ends,
//! each decoded as UTF-8 on its own, collected for the result (bounded in
//! memory, head and tail kept) and forwarded live (at most `LIVE_FACTOR`
//! × `output_cap` bytes).

use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::unix::pipe;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Sleep;

use crate::tools::shell::Handover;
use crate::tools::spawn::Child;
use crate::tools::{ToolEnv, cap_output};

/// How long output is still read after the shell exited while a background
/// process keeps the pipes open.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// How long pipes are drained after the group was killed.
const DRAIN_LIMIT: Duration = Duration::from_millis(100);

/// Output kept in memory before the middle is dropped (the model only ever
/// sees head and tail anyway).
const MIN_BUFFER: usize = 1 << 20;

/// Live output forwarded, as a multiple of `output_cap`, before the stream
/// is cut with a notice.
const LIVE_FACTOR: usize = 4;

/// The command's two pipes and where their text goes.
pub(super) struct Streams<'a> {
    out: Pipe<pipe::Receiver>,
    err: Pipe<pipe::Receiver>,
    sink: Sink<'a>,
}

impl<'a> Streams<'a> {
    /// Takes the child's pipes; the text goes to the result and to `env.output`.
    pub(super) fn new(child: &mut Child, env: &ToolEnv<'a>) -> Self {
        Self {
            out: Pipe::new(child.stdout.take()),
            err: Pipe::new(child.stderr.take()),
            sink: Sink::new(env),
        }
    }

    /// Forwards the output until the shell has exited and both pipes are
    /// closed (or `EXIT_GRACE` after its exit, while a background process
    /// keeps them open), the timeout passes, or the call is cancelled; with
    /// the shell's exit status if it was reaped.
    pub(super) async fn until_end(
        &mut self,
        child: &mut Child,
        env: &ToolEnv<'_>,
        timeout: Duration,
        background_at: Option<Duration>,
    ) -> (End, Option<ExitStatus>) {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        // Only before the timeout: a command that would time out first does.
        let mut background = background_at
            .filter(|at| *at < timeout)
            .map(|at| Box::pin(tokio::time::sleep(at)));
        let mut grace: Option<std::pin::Pin<Box<Sleep>>> = None;
        let mut status: Option<ExitStatus> = None;
        let end = loop {
            if !self.out.is_open()
                && !self.err.is_open()
                && let Some(st) = status
            {
                break End::Exited(st);
            }
            tokio::select! {
                biased;
                _ = env.cancel.cancelled() => break End::Cancelled,
                _ = &mut deadline => break End::TimedOut,
                _ = sleep_opt(&mut background), if status.is_none() => break End::Background,
                r = self.out.read(), if self.out.is_open() => {
                    let text = self.out.took(r).unwrap_or_else(|| self.out.decoder.finish());
                    self.sink.emit(&text);
                }
                r = self.err.read(), if self.err.is_open() => {
                    let text = self.err.took(r).unwrap_or_else(|| self.err.decoder.finish());
                    self.sink.emit(&text);
                }
                r = child.wait(), if status.is_none() => match r {
                    Ok(st) => {
                        status = Some(st);
                        grace = Some(Box::pin(tokio::time::sleep(EXIT_GRACE)));
                    }
                    Err(e) => break End::WaitFailed(e),
                },
                _ = sleep_opt(&mut grace) => {
                    if let Some(st) = status {
                        break End::Exited(st);
                    }
                }
            }
        };
        (end, status)
    }

    /// Whatever the dead processes left in the pipes (bounded by
    /// `DRAIN_LIMIT` in case one escaped every sweep and still holds a pipe
    /// open), then the collected output.
    pub(super) async fn drain(mut self) -> String {
        let _ = tokio::time::timeout(DRAIN_LIMIT, async {
            while self.out.is_open() || self.err.is_open() {
                tokio::select! {
                    r = self.out.read(), if self.out.is_open() => {
                        if let Some(text) = self.out.took(r) {
                            self.sink.emit(&text);
                        }
                    }
                    r = self.err.read(), if self.err.is_open() => {
                        if let Some(text) = self.err.took(r) {
                            self.sink.emit(&text);
                        }
                    }
                }
            }
        })
        .await;
        self.sink.emit(&self.out.decoder.finish());
        self.sink.emit(&self.err.decoder.finish());
        self.sink.collected.finish()
    }
}

impl Streams<'_> {
    /// Gives the pipes up, with what was read of them.
    pub(super) fn handover(self) -> Handover {
        let mut pending = self.out.decoder.pending.clone();
        pending.extend_from_slice(&self.err.decoder.pending);
        Handover {
            out: self.out.reader,
            err: self.err.reader,
            shown: self.sink.collected.finish(),
            pending,
        }
    }
}

/// One pipe of the command, decoded as UTF-8 on its own.
struct Pipe<R> {
    /// `None` once closed (or never opened).
    reader: Option<R>,
    decoder: Utf8Stream,
    buf: [u8; 8192],
}

impl<R: AsyncRead + Unpin> Pipe<R> {
    fn new(reader: Option<R>) -> Self {
        Self {
            reader,
            decoder: Utf8Stream::default(),
            buf: [0; 8192],
        }
    }

    fn is_open(&self) -> bool {
        self.reader.is_some()
    }

    /// Reads what has arrived; pending forever once closed (the `select!`
    /// precondition keeps that branch disabled).
    async fn read(&mut self) -> std::io::Result<usize> {
        match &mut self.reader {
            Some(p) => p.read(&mut self.buf).await,
            None => std::future::pending().await,
        }
    }

    /// The text of a `read`; `None` when it ended the pipe (end of file or
    /// an error), which is then closed.
    fn took(&mut self, read: std::io::Result<usize>) -> Option<String> {
        match read {
            Ok(n) if n > 0 => Some(self.decoder.push(&self.buf[..n])),
            _ => {
                self.reader = None;
                None
            }
        }
    }
}

/// Where output goes: the result, and the live channel if any.
pub(super) struct Sink<'a> {
    collected: Collected,
    live: Live<'a>,
    /// Every byte, as it comes, in order (past the live limit too).
    kept: Option<&'a (dyn Fn(&str) + Sync)>,
}

impl<'a> Sink<'a> {
    /// The result's collection (head and tail kept past `output_cap`),
    /// `env.output` (bounded) and `env.kept`.
    pub(super) fn new(env: &ToolEnv<'a>) -> Self {
        Self {
            collected: Collected::new(env.config.output_cap),
            live: Live::new(env.output, env.config.output_cap),
            kept: env.kept,
        }
    }

    /// The collected output, as `cap_output` makes it.
    pub(super) fn finish(self) -> String {
        self.collected.finish()
    }

    pub(super) fn emit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.collected.push(text);
        if let Some(kept) = self.kept {
            kept(text);
        }
        self.live.send(text);
    }
}

/// Forwards live output, at most `LIVE_FACTOR` × `cap` bytes, then one notice
/// (a command like `yes` would otherwise flood the channel until it times
/// out).
struct Live<'a> {
    tx: Option<&'a UnboundedSender<String>>,
    cap: usize,
    left: usize,
}

impl<'a> Live<'a> {
    fn new(tx: Option<&'a UnboundedSender<String>>, cap: usize) -> Self {
        Self {
            tx,
            cap,
            left: cap.saturating_mul(LIVE_FACTOR),
        }
    }

    fn send(&mut self, text: &str) {
        let Some(tx) = self.tx else {
            return;
        };
        // The receiver may be gone; the output is still collected.
        if text.len() <= self.left {
            self.left -= text.len();
            let _ = tx.send(text.to_string());
            return;
        }
        let cut = text.floor_char_boundary(self.left);
        if cut > 0 {
            let _ = tx.send(text[..cut].to_string());
        }
        let _ = tx.send(format!(
            "\n[live output truncated; the full result is capped at {} byte{}]\n",
            self.cap,
            if self.cap == 1 { "" } else { "s" }
        ));
        // Nothing more is forwarded.
        self.tx = None;
    }
}

pub(super) enum End {
    Exited(ExitStatus),
    TimedOut,
    /// Still running at `auto_background_after`: it becomes a job.
    Background,
    Cancelled,
    WaitFailed(std::io::Error),
}

async fn sleep_opt(sleep: &mut Option<std::pin::Pin<Box<Sleep>>>) {
    match sleep {
        Some(s) => s.as_mut().await,
        None => std::future::pending().await,
    }
}

/// Decodes a byte stream as UTF-8 without splitting characters across chunks;
/// invalid bytes become U+FFFD.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    out.push_str(&String::from_utf8_lossy(valid));
                    match e.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            rest = &after[bad..];
                        }
                        None => {
                            // Incomplete character at the end: wait for more.
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

/// Collects output in arrival order. Bounded in memory: past a limit only the
/// head and a sliding tail are kept, and `finish` renders exactly what
/// `cap_output` would have made of the whole text.
struct Collected {
    cap: usize,
    limit: usize,
    head: String,
    tail: String,
    omitted: usize,
    compacted: bool,
}

impl Collected {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            limit: cap.saturating_mul(4).max(MIN_BUFFER),
            head: String::new(),
            tail: String::new(),
            omitted: 0,
            compacted: false,
        }
    }

    fn keep(&self) -> usize {
        self.cap / 2
    }

    fn push(&mut self, text: &str) {
        if !self.compacted {
            self.head.push_str(text);
            if self.head.len() > self.limit {
                let split = self.head.floor_char_boundary(self.keep());
                self.tail = self.head.split_off(split);
                self.compacted = true;
                self.trim_tail();
            }
        } else {
            self.tail.push_str(text);
            if self.tail.len() > self.limit {
                self.trim_tail();
            }
        }
    }

    fn trim_tail(&mut self) {
        let start = self
            .tail
            .ceil_char_boundary(self.tail.len().saturating_sub(self.keep()));
        self.omitted += start;
        self.tail.drain(..start);
    }

    fn finish(mut self) -> String {
        if !self.compacted {
            return cap_output(&self.head, self.cap);
        }
        self.trim_tail();
        format!(
            "{}\n[… {} bytes truncated …]\n{}",
            self.head, self.omitted, self.tail
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn live_cut_keeps_characters_whole() {
        let drain = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>| {
            let mut chunks = Vec::new();
            while let Ok(chunk) = rx.try_recv() {
                chunks.push(chunk);
            }
            chunks
        };
        let notice = "\n[live output truncated; the full result is capped at 1 byte]\n";
        // Cap 1: 4 bytes are forwarded.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut live = Live::new(Some(&tx), 1);
        live.send("ab");
        live.send("é€");
        live.send("more");
        assert_eq!(drain(&mut rx), ["ab", "é", notice]);
        let mut live = Live::new(Some(&tx), 1);
        live.send("aaaé");
        live.send("x");
        assert_eq!(drain(&mut rx), ["aaa", notice]);
        let mut live = Live::new(Some(&tx), 1);
        live.send("abcd");
        live.send("e");
        assert_eq!(drain(&mut rx), ["abcd", notice]);
    }

    #[test]
    fn every_byte_is_kept_in_order_past_the_live_limit_too() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let kept = std::sync::Mutex::new(String::new());
        let keep = |text: &str| kept.lock().unwrap().push_str(text);
        let mut sink = Sink {
            collected: Collected::new(1),
            live: Live::new(Some(&tx), 1),
            kept: Some(&keep),
        };
        for text in ["ab", "é€", "the end"] {
            sink.emit(text);
        }
        let mut forwarded = Vec::new();
        while let Ok(chunk) = rx.try_recv() {
            forwarded.push(chunk);
        }
        assert_eq!(forwarded.len(), 3, "{forwarded:?}");
        assert_eq!(forwarded[..2], ["ab", "é"]);
        assert_eq!(*kept.lock().unwrap(), "abé€the end");
    }

    #[test]
    fn utf8_stream_keeps_split_characters_whole() {
        let mut d = Utf8Stream::default();
        let bytes = "é€".as_bytes();
        assert_eq!(d.push(&bytes[..1]), "");
        assert_eq!(d.push(&bytes[1..3]), "é");
        assert_eq!(d.push(&bytes[3..]), "€");
        assert_eq!(d.push(&[0xff, b'x']), "\u{FFFD}x");
        assert_eq!(d.push(&[0xe2]), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }

    #[test]
    fn collected_matches_cap_output_past_the_memory_limit() {
        let text: String = (0..200_000).map(|i| format!("{i}é\n")).collect();
        let mut c = Collected::new(1000);
        for piece in text.split_inclusive('\n') {
            c.push(piece);
        }
        assert!(c.compacted);
        assert_eq!(c.finish(), cap_output(&text, 1000));
    }
}
