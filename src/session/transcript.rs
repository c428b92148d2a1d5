//! Writing a session's transcript. Invariants: the file holds whole lines
//! only (a record that could not be written whole is cut off again before
//! the next one is written); it is created with the first record, so a
//! session in which nothing happened leaves no file; every record is handed
//! to the kernel as it happens (one `write` per record, so a killed process
//! loses nothing already recorded) and `fsync`ed at turn ends only; a
//! failing disk is reported once per run of failures and never stops the
//! session; a record that could not be written stays queued, in order, and
//! is written first once the disk takes writes again (none is lost, none
//! is written out of order). Records still queued when the transcript is
//! closed or dropped get one last try; those lost then are said in one
//! line ([`Transcript::close`], or [`unsaved_notes`] for the process's
//! end), never dropped silently.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::card::Card;
use super::images::{FORMAT_WITH_REFS, stored_once};
use super::record::{Header, Record};

/// Where a session's records go: a file, or nowhere (tests, and drivers
/// that keep no sessions).
#[derive(Debug)]
pub struct Transcript {
    target: Option<Target>,
    id: String,
}

#[derive(Debug)]
struct Target {
    path: PathBuf,
    card_path: PathBuf,
    header: Header,
    card: Card,
    file: Option<File>,
    /// Bytes known to be whole lines.
    good_len: u64,
    /// A write failed and nothing has been written whole since.
    failing: bool,
    /// Whole lines not written yet: the next record's, after any a failed
    /// write left (the oldest first).
    pending: Vec<u8>,
    /// The content addresses of the images written whole (or queued):
    /// later records refer to them (a file of format 3 on).
    images: std::collections::HashSet<String>,
}

impl Transcript {
    /// A session that is not recorded.
    pub fn off() -> Self {
        Self {
            target: None,
            id: String::new(),
        }
    }

    /// A new session in `dir`; the file appears with the first record.
    pub fn create(dir: &Path, header: Header) -> Self {
        let card = Card::from_header(&header);
        Self::with_target(dir, header, card, None, 0)
    }

    /// Appends to the transcript at `path` (loaded before), which holds
    /// `valid_len` bytes of whole lines: anything after them (a torn last
    /// line) is cut off.
    pub fn reopen(
        path: &Path,
        header: Header,
        card: Card,
        valid_len: u64,
        images: std::collections::HashSet<String>,
    ) -> std::io::Result<Self> {
        let mut file = OpenOptions::new().append(true).open(path)?;
        lock(&file)?;
        file.set_len(valid_len)?;
        file.seek(SeekFrom::End(0))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut transcript = Self::with_target(dir, header, card, Some(file), valid_len);
        if let Some(t) = transcript.target.as_mut() {
            t.images = images;
        }
        Ok(transcript)
    }

    fn with_target(
        dir: &Path,
        header: Header,
        card: Card,
        file: Option<File>,
        good_len: u64,
    ) -> Self {
        let id = header.id.clone();
        Self {
            target: Some(Target {
                path: dir.join(format!("{id}.jsonl")),
                card_path: dir.join(format!("{id}.card.json")),
                header,
                card,
                file,
                good_len,
                failing: false,
                pending: Vec::with_capacity(4096),
                images: std::collections::HashSet::new(),
            }),
            id,
        }
    }

    /// The session id (empty when not recorded).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The transcript's path, when recorded.
    pub fn path(&self) -> Option<&Path> {
        self.target.as_ref().map(|t| t.path.as_path())
    }

    /// True once the file exists (something was recorded).
    pub fn started(&self) -> bool {
        self.target.as_ref().is_some_and(|t| t.file.is_some())
    }

    /// Writes one record. Returns a message for the user when a run of
    /// failures begins (later failures in the same run are quiet).
    pub fn record(&mut self, record: &Record<'_>) -> Option<String> {
        let t = self.target.as_mut()?;
        t.card.observe(record);
        let result = t.write(record);
        t.settle(result)
    }

    /// The end of the session: the queued records get a last try; what
    /// could not be written is said in one line (and then forgotten).
    pub fn close(&mut self) -> Option<String> {
        let mut t = self.target.take()?;
        if t.pending.is_empty() {
            return None;
        }
        let error = match t.flush_pending() {
            Ok(()) => {
                // Best effort: the records are the kernel's now.
                let _ = t.file.as_ref().map(File::sync_data);
                return None;
            }
            Err(e) => e,
        };
        let lost = t.pending.iter().filter(|&&b| b == b'\n').count();
        Some(format!(
            "{} of session {} were not saved to {} ({error}); the transcript ends before them",
            crate::units::plural(lost, "record"),
            self.id,
            t.path.display()
        ))
    }

    /// The end of a turn: everything reaches the disk (`fsync`) and the
    /// session's card (what listings show) is rewritten.
    pub fn sync(&mut self) -> Option<String> {
        let t = self.target.as_mut()?;
        t.file.as_ref()?;
        let result = t.flush_pending().and_then(|()| {
            t.file
                .as_ref()
                .map_or(Ok(()), File::sync_data)
                .and_then(|()| t.write_card())
        });
        t.settle(result)
    }
}

impl Drop for Transcript {
    /// A transcript nobody closed (the process is ending): its lost
    /// records are kept for [`unsaved_notes`].
    fn drop(&mut self) {
        if let Some(note) = self.close() {
            tracing::warn!("{note}");
            lock_notes().push(note);
        }
    }
}

/// What dropped transcripts could not save, for the process to say on
/// stderr once the terminal is its own again.
static UNSAVED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn lock_notes() -> std::sync::MutexGuard<'static, Vec<String>> {
    UNSAVED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The lines about records lost since the last call (see [`Transcript::close`]).
pub fn unsaved_notes() -> Vec<String> {
    std::mem::take(&mut *lock_notes())
}

impl Target {
    fn write(&mut self, record: &Record<'_>) -> std::io::Result<()> {
        // An image the file holds already is written as a reference.
        let once = (self.header.format >= FORMAT_WITH_REFS)
            .then(|| stored_once(record, &mut self.images))
            .flatten();
        let record: &Record<'_> = once.as_ref().unwrap_or(record);
        // Queued first: if the write fails, the record waits for the next.
        serde_json::to_writer(&mut self.pending, record)?;
        self.pending.push(b'\n');
        self.flush_pending()
    }

    /// Writes the queued lines in one `write`, or keeps them all.
    fn flush_pending(&mut self) -> std::io::Result<()> {
        if self.file.is_none() {
            self.open_new()?;
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.failing {
            // The last write may have left part of a line: cut it off.
            file.set_len(self.good_len)?;
            file.seek(SeekFrom::End(0))?;
        }
        file.write_all(&self.pending)?;
        self.good_len += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Creates the file with its header (and the card, so a session killed
    /// in its first turn is listed with its prompt).
    fn open_new(&mut self) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            // Transcripts hold the user's code and words: theirs alone.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        let mut file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.path)?;
        let mut line = serde_json::to_vec(&self.header)?;
        line.push(b'\n');
        if let Err(e) = lock(&file).and_then(|()| file.write_all(&line)) {
            // No half-made file stays in the way of the next try.
            drop(file);
            let _ = std::fs::remove_file(&self.path);
            return Err(e);
        }
        self.good_len = line.len() as u64;
        self.file = Some(file);
        Ok(())
    }

    /// The card, replaced atomically (a temporary file renamed over it).
    fn write_card(&mut self) -> std::io::Result<()> {
        self.card.size = self.good_len;
        let dir = self.card_path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        serde_json::to_writer(&mut tmp, &self.card)?;
        tmp.persist(&self.card_path).map_err(|e| e.error)?;
        Ok(())
    }

    fn settle(&mut self, result: std::io::Result<()>) -> Option<String> {
        match result {
            Ok(()) => {
                if std::mem::take(&mut self.failing) {
                    tracing::info!(path = %self.path.display(), "the transcript is written again");
                }
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, path = %self.path.display(), "transcript write failed");
                if std::mem::replace(&mut self.failing, true) {
                    None
                } else {
                    Some(format!(
                        "The session could not be saved to {} ({e}); it goes on, what is not saved yet is kept in memory, and saving is tried again with each step.",
                        self.path.display()
                    ))
                }
            }
        }
    }
}

/// Holds the transcript for this process (an advisory lock, released when
/// the file is closed): a second Waypoint continuing the same session would
/// interleave its records with this one's.
fn lock(file: &File) -> std::io::Result<()> {
    // A lock can outlive its holder by a moment: a process forked by
    // another thread (a command, git) holds a copy of every descriptor
    // until it execs (they close on exec). A holder still there after
    // this wait is another Waypoint.
    const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);
    let started = std::time::Instant::now();
    let mut held = !try_lock(file)?;
    while held && started.elapsed() < SETTLE {
        std::thread::sleep(std::time::Duration::from_millis(10));
        held = !try_lock(file)?;
    }
    if !held {
        Ok(())
    } else {
        // `WouldBlock`: the opener turns it into `SessionError::Locked`.
        Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "the session is open in another Waypoint process; quit that one first",
        ))
    }
}

/// Takes the transcript's lock without waiting: `false` when another
/// process holds it.
pub(super) fn try_lock(file: &File) -> std::io::Result<bool> {
    use rustix::fs::FlockOperation;
    match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn note(text: &str) -> Record<'static> {
        Record::User {
            text: Cow::Owned(text.into()),
            prompt: true,
            at: 1,
        }
    }

    /// A transcript whose file is `/dev/full` once its first record is in.
    fn on_a_full_disk(dir: &Path, id: &str) -> Transcript {
        let mut t = Transcript::create(dir, Header::new(id, "/ws", "p", "m", 1));
        assert_eq!(t.record(&note("saved")), None);
        let full = OpenOptions::new().write(true).open("/dev/full").unwrap();
        t.target.as_mut().unwrap().file = Some(full);
        assert!(t.record(&note("lost one")).is_some(), "a failure is said");
        assert_eq!(t.record(&note("lost two")), None, "once per run");
        t
    }

    #[test]
    fn records_a_full_disk_kept_are_said_when_the_transcript_ends() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = on_a_full_disk(dir.path(), "closed-one");
        let said = t.close().unwrap();
        assert!(
            said.starts_with("2 records of session closed-one were not saved to ")
                && said.contains("closed-one.jsonl")
                // /dev/full refuses the cut before the write (EINVAL).
                && said.contains("(os error ")
                && !said.contains('\n'),
            "{said}"
        );
        assert_eq!(t.close(), None, "said once");
        // Dropped without a close (the process ends): kept for stderr.
        drop(on_a_full_disk(dir.path(), "dropped-one"));
        let notes = unsaved_notes();
        let ours: Vec<&String> = notes.iter().filter(|n| n.contains("dropped-one")).collect();
        assert_eq!(ours.len(), 1, "{notes:?}");
        assert!(
            ours[0].starts_with("2 records of session dropped-one"),
            "{}",
            ours[0]
        );
        // A transcript that saved everything says nothing.
        let mut fine = Transcript::create(dir.path(), Header::new("fine", "/ws", "p", "m", 1));
        assert_eq!(fine.record(&note("saved")), None);
        assert_eq!(fine.close(), None);
    }

    #[test]
    fn an_image_is_written_once_and_read_back_wherever_it_was() {
        use crate::chat::{ContentBlock, ImageSource, Message, Role};
        let dir = tempfile::tempdir().unwrap();
        let image = |n: u8| ImageSource {
            kind: "base64".into(),
            media_type: "image/png".into(),
            data: format!("iVBORw0KGgo{}", "A".repeat(4000) + &n.to_string()),
        };
        let (a, b) = (image(1), image(2));
        let mut t = Transcript::create(dir.path(), Header::new("imgs", "/ws", "p", "m", 1));
        let images = |list: Vec<ImageSource>| Record::Images {
            images: Cow::Owned(list),
            at: 2,
        };
        assert_eq!(t.record(&images(vec![a.clone()])), None);
        // Read again, twice in one reply, beside a new one.
        assert_eq!(
            t.record(&images(vec![a.clone(), b.clone(), a.clone()])),
            None
        );
        // A compaction keeps messages that hold them.
        let kept = vec![Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text { text: "see".into() },
                ContentBlock::Image { source: a.clone() },
                ContentBlock::Image { source: b.clone() },
            ],
        }];
        let compaction = Record::Compaction {
            reason: crate::events::CompactReason::User,
            summary: None,
            before_tokens: 10,
            after_tokens: 5,
            fallback: false,
            messages: Cow::Owned(kept),
            at: 3,
        };
        assert_eq!(
            t.record(&Record::Thread {
                thread: crate::events::ThreadId::ROOT,
                record: Box::new(compaction.clone()),
            }),
            None
        );
        let path = t.path().unwrap().to_path_buf();
        drop(t);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(&a.data).count(), 1, "image a once");
        assert_eq!(text.matches(&b.data).count(), 1, "image b once");
        let loaded = crate::session::load(&path).unwrap();
        assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
        assert_eq!(loaded.records[0], images(vec![a.clone()]));
        assert_eq!(loaded.records[1], images(vec![a.clone(), b, a]));
        let Record::Thread { record, .. } = &loaded.records[2] else {
            panic!("{:?}", loaded.records[2]);
        };
        assert_eq!(**record, compaction);
    }
}
