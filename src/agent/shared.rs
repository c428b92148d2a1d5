//! What every thread of a session shares with the others: the user's
//! answers to approval requests, routed to the call that asked ([`Answers`]);
//! and the transcript, which each thread writes under its own id ([`Log`]). Invariant: no part here has a single
//! consumer, so a child thread asking, recording or deciding never takes
//! anything from its parent, and its parent never from it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::events::{Decision, ThreadId};
use crate::session::{Record, Transcript};

/// Locks `m`, whatever a panicking holder left: the data is plain and
/// stays usable.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The calls waiting for the user's answer, by call id: an `Op::Approve`
/// reaches exactly the call it names, whichever thread made it.
#[derive(Clone, Debug, Default)]
pub(super) struct Answers(Arc<Mutex<HashMap<String, oneshot::Sender<Decision>>>>);

impl Answers {
    /// Call `id` waits for an answer: where it will come (a second wait
    /// for the same id replaces the first, whose receiver then ends).
    pub(super) fn wait(&self, id: &str) -> oneshot::Receiver<Decision> {
        let (tx, rx) = oneshot::channel();
        lock(&self.0).insert(id.to_string(), tx);
        rx
    }

    /// The user's answer to call `id`; false when nothing waits for it
    /// (settled already, or interrupted).
    pub(super) fn answer(&self, id: &str, decision: Decision) -> bool {
        match lock(&self.0).remove(id) {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }

    /// Call `id` no longer waits (its turn was interrupted).
    pub(super) fn withdraw(&self, id: &str) {
        lock(&self.0).remove(id);
    }
}

/// The session's transcript as one thread writes it: a child thread's
/// records other than its events (which carry their thread in their
/// envelope) are wrapped with its id, so a replay tells the threads apart
/// and an older Waypoint skips a child's records as unknown.
#[derive(Clone, Debug)]
pub(super) struct Log {
    transcript: Arc<Mutex<Transcript>>,
    thread: ThreadId,
}

impl Log {
    /// The root thread's log of `transcript`.
    pub(super) fn root(transcript: Transcript) -> Self {
        Self {
            transcript: Arc::new(Mutex::new(transcript)),
            thread: ThreadId::ROOT,
        }
    }

    /// The same transcript, written by thread `thread`.
    pub(super) fn for_thread(&self, thread: ThreadId) -> Self {
        Self {
            transcript: self.transcript.clone(),
            thread,
        }
    }

    /// Writes `record` (see [`Transcript::record`]).
    pub(super) fn record(&self, record: &Record<'_>) -> Option<String> {
        if self.thread.is_root() || matches!(record, Record::Event { .. }) {
            return lock(&self.transcript).record(record);
        }
        let wrapped = Record::Thread {
            thread: self.thread,
            record: Box::new(record.clone()),
        };
        lock(&self.transcript).record(&wrapped)
    }

    /// A handle that writes to this session's transcript while the
    /// session is open, and never keeps it (or its lock) alive: for work
    /// that may outlive the session (the checkpoints' thread).
    pub(super) fn weak(&self) -> WeakLog {
        WeakLog {
            transcript: Arc::downgrade(&self.transcript),
            session: self.id(),
        }
    }

    /// The records reach the disk (see [`Transcript::sync`]).
    pub(super) fn sync(&self) -> Option<String> {
        lock(&self.transcript).sync()
    }

    /// Another transcript replaces the session's (for every thread); what
    /// the old one could not save is said (see [`Transcript::close`]).
    #[must_use]
    pub(super) fn replace(&self, transcript: Transcript) -> Option<String> {
        let mut old = std::mem::replace(&mut *lock(&self.transcript), transcript);
        old.close()
    }

    /// The session's id ("" when it is not recorded).
    pub(super) fn id(&self) -> String {
        lock(&self.transcript).id().to_string()
    }

    /// Where it is written, when it is.
    pub(super) fn path(&self) -> Option<PathBuf> {
        lock(&self.transcript).path().map(PathBuf::from)
    }
}

/// See [`Log::weak`]: the root thread's records, for one session.
pub(super) struct WeakLog {
    transcript: std::sync::Weak<Mutex<Transcript>>,
    session: String,
}

impl WeakLog {
    /// Writes `record` if the session is still the one open; `None` too
    /// when it is not.
    pub(super) fn record(&self, record: &Record<'_>) -> Option<String> {
        let transcript = self.transcript.upgrade()?;
        let mut transcript = lock(&transcript);
        if transcript.id() != self.session {
            return None;
        }
        transcript.record(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_reaches_only_the_call_it_names() {
        let answers = Answers::default();
        let first = answers.wait("a");
        let second = answers.wait("b");
        assert!(answers.answer("b", Decision::Once));
        assert!(!answers.answer("b", Decision::Once), "settled already");
        assert!(!answers.answer("zzz", Decision::Once), "nobody waits");
        assert_eq!(second.await.ok(), Some(Decision::Once));
        answers.withdraw("a");
        assert!(first.await.is_err(), "a withdrawn wait ends");
    }
}
