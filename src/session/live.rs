//! A running call's live output, kept on disk while it runs, so a session
//! cut off mid-call (`kill -9`, a power loss) still tells the model what
//! the call printed before: the repaired result carries it.
//!
//! Beside the transcript `ID.jsonl`, the folder `ID.live` holds one file
//! per call (`<thread>-<call id>`). Invariants: at most [`KEEP`] bytes (the
//! tail, from a character's start) are kept per call; while the call runs
//! its file is written at most once every [`EVERY`], whole (written aside,
//! then renamed over it); when the call ends the last of its output is
//! written at once and no write follows; the file goes when the call's
//! result is recorded ([`done`]), and the folder when a resume has put
//! what it kept into the repaired results ([`forget`]).

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::events::ThreadId;

/// The most output kept per call (its tail).
pub const KEEP: usize = 64 * 1024;

/// The shortest time between two writes of a running call's file.
pub const EVERY: Duration = Duration::from_millis(250);

/// The folder of live output beside the transcript at `transcript`.
pub fn folder(transcript: &Path) -> PathBuf {
    transcript.with_extension("live")
}

/// The file of call `id` of `thread` in `folder` (its name made of safe
/// characters only, and short enough for any file system).
fn file(folder: &Path, thread: ThreadId, id: &str) -> PathBuf {
    let id: String = id
        .chars()
        .take(128)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    folder.join(format!("{}-{id}", thread.0))
}

/// What call `id` of `thread` had printed when the session was cut off,
/// as kept beside the transcript at `transcript`; `None` when nothing was.
pub fn read(transcript: &Path, thread: ThreadId, id: &str) -> Option<String> {
    let bytes = std::fs::read(file(&folder(transcript), thread, id)).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (!text.is_empty()).then_some(text)
}

/// Call `id` of `thread` has its result recorded: its kept output goes
/// (and the folder, once empty).
pub fn done(transcript: &Path, thread: ThreadId, id: &str) {
    let folder = folder(transcript);
    if std::fs::remove_file(file(&folder, thread, id)).is_ok() {
        let _ = std::fs::remove_dir(&folder);
    }
}

/// Removes the live folder of the transcript at `transcript` (what it
/// kept is in the repaired results by now).
pub fn forget(transcript: &Path) {
    let _ = std::fs::remove_dir_all(folder(transcript));
}

/// The tail of a call's output and when it is due on disk: the throttle,
/// without a clock of its own (the caller says what time it is).
#[derive(Debug, Default)]
struct Tail {
    text: String,
    /// Output came since the last write.
    dirty: bool,
    /// When the file was last written.
    written: Option<Instant>,
}

impl Tail {
    /// Adds `chunk`, keeping the last [`KEEP`] bytes.
    fn push(&mut self, chunk: &str) {
        if chunk.is_empty() {
            return;
        }
        self.text.push_str(chunk);
        trim(&mut self.text);
        self.dirty = true;
    }

    /// When the next write is due: `None` while nothing new came; at once
    /// for the first; [`EVERY`] after the last write otherwise.
    fn due(&self) -> Option<Option<Instant>> {
        self.dirty.then(|| self.written.map(|at| at + EVERY))
    }

    /// The text to write at `now`, if a write is due then (it counts as
    /// written).
    fn take(&mut self, now: Instant) -> Option<&str> {
        let due = self.due()?;
        if due.is_some_and(|at| now < at) {
            return None;
        }
        self.dirty = false;
        self.written = Some(now);
        Some(&self.text)
    }

    /// The text not yet written, whatever the time (the call ended).
    fn rest(&mut self) -> Option<&str> {
        let dirty = std::mem::take(&mut self.dirty);
        dirty.then_some(self.text.as_str())
    }
}

/// Keeps the last [`KEEP`] bytes of `text`, from a character's start.
fn trim(text: &mut String) {
    if text.len() <= KEEP {
        return;
    }
    let mut cut = text.len() - KEEP;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text.drain(..cut);
}

/// What a keeper and its writing task share.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Rung when output comes or the call ends.
    bell: Notify,
}

#[derive(Debug)]
struct State {
    tail: Tail,
    /// The call ended: nothing is written any more.
    closed: bool,
    folder: PathBuf,
    path: PathBuf,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Writes `text` to the call's file whole: aside first, then renamed
    /// over it. Private to the user, as the transcript is.
    fn write(folder: &Path, path: &Path, text: &str) -> std::io::Result<()> {
        let aside = path.with_extension("new");
        let open = || {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)?;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&aside)
        };
        // Once more if another call's end took the empty folder meanwhile.
        let mut file = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => open(),
            opened => opened,
        }?;
        file.write_all(text.as_bytes())?;
        drop(file);
        std::fs::rename(&aside, path)
    }

    /// Writes what [`Tail::take`] (or, at the end, [`Tail::rest`]) gives.
    fn flush(&mut self, now: Option<Instant>) {
        let text = match now {
            Some(now) => self.tail.take(now),
            None => self.tail.rest(),
        };
        let Some(text) = text else { return };
        if let Err(e) = Self::write(&self.folder, &self.path, text) {
            tracing::warn!(error = %e, path = %self.path.display(), "live output not kept");
        }
    }
}

/// One running call's keeper: what is pushed reaches the call's file
/// soon (a task of its own writes it); dropping it (the call ended)
/// writes the rest at once. A session not recorded keeps nothing.
#[derive(Debug)]
pub struct LiveOutput {
    shared: Option<Arc<Shared>>,
}

impl LiveOutput {
    /// Keeps the output of call `id` of `thread` beside the transcript at
    /// `transcript` (none: not kept). Must be called inside a Tokio runtime.
    pub fn start(transcript: Option<&Path>, thread: ThreadId, id: &str) -> Self {
        let shared = transcript.map(|transcript| {
            let folder = folder(transcript);
            let path = file(&folder, thread, id);
            let shared = Arc::new(Shared {
                state: Mutex::new(State {
                    tail: Tail::default(),
                    closed: false,
                    folder,
                    path,
                }),
                bell: Notify::new(),
            });
            tokio::spawn(write_loop(shared.clone()));
            shared
        });
        Self { shared }
    }

    /// Adds what the call printed.
    pub fn push(&self, chunk: &str) {
        if let Some(shared) = &self.shared {
            shared.lock().tail.push(chunk);
            shared.bell.notify_one();
        }
    }
}

impl Drop for LiveOutput {
    /// The call ended: the rest of its output is written now (it stays
    /// until the call's result is recorded), and nothing after.
    fn drop(&mut self) {
        let Some(shared) = &self.shared else { return };
        let mut state = shared.lock();
        state.flush(None);
        state.closed = true;
        drop(state);
        shared.bell.notify_one();
    }
}

/// Writes the keeper's tail when due, until the call ends. The lock is
/// held while writing, so no write of this task follows the last one.
async fn write_loop(shared: Arc<Shared>) {
    loop {
        let due = {
            let state = shared.lock();
            if state.closed {
                return;
            }
            state.tail.due()
        };
        match due {
            None => shared.bell.notified().await,
            Some(None) => {}
            Some(Some(at)) => tokio::time::sleep_until(at).await,
        }
        let mut state = shared.lock();
        if state.closed {
            return;
        }
        state.flush(Some(Instant::now()));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_64_kib_from_a_character_start() {
        let mut tail = Tail::default();
        tail.push("head\n");
        // Two-byte characters: KEEP - 1 bytes from the end falls inside one.
        tail.push(&"é".repeat(KEEP / 2));
        tail.push("!");
        assert!(tail.text.len() <= KEEP, "{}", tail.text.len());
        assert_eq!(tail.text.len(), KEEP - 1, "the cut char goes whole");
        assert!(tail.text.starts_with('é') && tail.text.ends_with("é!"));
        assert!(!tail.text.contains("head"));

        let mut short = String::from("short");
        trim(&mut short);
        assert_eq!(short, "short");
    }

    #[test]
    fn a_write_is_due_at_once_then_at_most_every_250_ms() {
        let t0 = Instant::now();
        let mut tail = Tail::default();
        assert_eq!(tail.take(t0), None, "nothing came: nothing to write");
        tail.push("one\n");
        assert_eq!(tail.due(), Some(None), "the first is due at once");
        assert_eq!(tail.take(t0), Some("one\n"));
        assert_eq!(tail.take(t0), None, "written: nothing new");
        tail.push("two\n");
        assert_eq!(tail.due(), Some(Some(t0 + EVERY)));
        assert_eq!(tail.take(t0 + EVERY / 2), None, "too soon");
        tail.push("three\n");
        assert_eq!(tail.take(t0 + EVERY - Duration::from_millis(1)), None);
        assert_eq!(tail.take(t0 + EVERY), Some("one\ntwo\nthree\n"));
        assert_eq!(tail.due(), None);
        tail.push("four\n");
        assert_eq!(tail.due(), Some(Some(t0 + EVERY * 2)));
        // The call ended: the rest is written at once, once.
        assert_eq!(tail.rest(), Some("one\ntwo\nthree\nfour\n"));
        assert_eq!(tail.rest(), None);
        tail.push("");
        assert_eq!(tail.due(), None, "an empty chunk is nothing new");
    }

    #[tokio::test]
    async fn output_reaches_the_disk_while_the_call_runs_and_goes_with_its_result() {
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("s.jsonl");
        let thread = ThreadId(2);
        let live = LiveOutput::start(Some(&transcript), thread, "toolu_1/x");
        live.push("BEFORE\n");
        let start = std::time::Instant::now();
        while read(&transcript, thread, "toolu_1/x").is_none() {
            assert!(start.elapsed() < Duration::from_secs(10), "never written");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(read(&transcript, ThreadId::ROOT, "toolu_1/x"), None);
        live.push("AFTER\n");
        drop(live);
        assert_eq!(
            read(&transcript, thread, "toolu_1/x").as_deref(),
            Some("BEFORE\nAFTER\n"),
            "the rest is written when the call ends"
        );
        done(&transcript, thread, "toolu_1/x");
        assert_eq!(read(&transcript, thread, "toolu_1/x"), None);
        assert!(!folder(&transcript).exists(), "the empty folder goes too");
        // A folder that still holds another call's output stays, until
        // the resume forgets it.
        let other = LiveOutput::start(Some(&transcript), thread, "toolu_2");
        other.push("2\n");
        drop(other);
        let third = LiveOutput::start(Some(&transcript), thread, "toolu_3");
        third.push("3\n");
        drop(third);
        done(&transcript, thread, "toolu_2");
        assert_eq!(read(&transcript, thread, "toolu_3").as_deref(), Some("3\n"));
        forget(&transcript);
        assert!(!folder(&transcript).exists());
    }
}
