//! Where a thread's events go out: each is put in its envelope (the
//! thread, the parent's call that started it, the turn now) and sent.
//! Clones share the turn count, so what the dispatcher says mid-turn
//! carries the running turn's number.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::sync::mpsc::UnboundedSender;

use crate::events::{Envelope, Event, ThreadId};

#[derive(Clone, Debug)]
pub(crate) struct Outbox {
    tx: UnboundedSender<Envelope>,
    thread: ThreadId,
    parent_call: Option<String>,
    turn: Arc<AtomicU32>,
}

impl Outbox {
    /// The root thread's outbox, before its first turn.
    pub(crate) fn root(tx: UnboundedSender<Envelope>) -> Self {
        Self {
            tx,
            thread: ThreadId::ROOT,
            parent_call: None,
            turn: Arc::new(AtomicU32::new(0)),
        }
    }

    /// The outbox of child thread `thread`, started by call `parent_call`
    /// of this one's: its turns are its own.
    pub(crate) fn child(&self, thread: ThreadId, parent_call: &str) -> Self {
        Self {
            tx: self.tx.clone(),
            thread,
            parent_call: Some(parent_call.to_string()),
            turn: Arc::new(AtomicU32::new(0)),
        }
    }

    /// The thread it addresses.
    pub(crate) fn thread(&self) -> ThreadId {
        self.thread
    }

    /// Sends `event` in its envelope; false when the driver has hung up
    /// (which never stops the engine from finishing cleanly).
    pub(crate) fn send(&self, event: Event) -> bool {
        self.tx.send(self.envelope(event)).is_ok()
    }

    /// Sends an envelope made by [`Outbox::envelope`].
    pub(crate) fn post(&self, envelope: Envelope) -> bool {
        self.tx.send(envelope).is_ok()
    }

    /// `event` addressed as this outbox addresses it now.
    pub(crate) fn envelope(&self, event: Event) -> Envelope {
        Envelope {
            thread: self.thread,
            parent_call: self.parent_call.clone(),
            turn: self.turn(),
            event,
        }
    }

    /// The thread's turn now (0 before the first).
    pub(crate) fn turn(&self) -> u32 {
        self.turn.load(Ordering::Relaxed)
    }

    /// A new turn begins: its number.
    pub(crate) fn begin_turn(&self) -> u32 {
        self.turn.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Goes on counting from `turns` (a resumed session's), or from 0.
    pub(crate) fn set_turns(&self, turns: u32) {
        self.turn.store(turns, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_turn_and_address_what_they_send() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let outbox = Outbox::root(tx);
        let other = outbox.clone();
        assert_eq!(outbox.begin_turn(), 1);
        assert!(other.send(Event::Idle { ops: 0 }));
        let got = rx.try_recv().ok();
        assert_eq!(got, Some(Envelope::root(1, Event::Idle { ops: 0 })));
        outbox.set_turns(7);
        assert_eq!(other.turn(), 7);
        drop(rx);
        assert!(
            !outbox.send(Event::Idle { ops: 0 }),
            "a hung-up driver is reported"
        );
    }
}
