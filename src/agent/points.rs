//! The points checkpoints are taken at, as the engine asks for them:
//! before the user's message is worked on, at a turn's end (snapshotted
//! before the end is announced) and after an undo; a root plan item's
//! start is the [`super::observers`]' (`ItemPoints`), and a call's own
//! file the checkpoints stage's ([`super::stages`]). Invariant: only the
//! root thread makes points (a subagent's work lands in its parent item's
//! span).

use std::sync::Arc;

use super::voice::Voice;
use crate::checkpoint::History;
use crate::checkpoint::PointKind;
use crate::checkpoint::live::{Ask, Setup};
use crate::events::{ErrorKind, Event};
use crate::session::Record;

/// The session's checkpoints, as a thread asks for points.
pub(super) struct Points<'a>(pub Voice<'a>);

impl Points<'_> {
    /// Opens the checkpoints of the session just started (or resumed
    /// with `history`); notes for the user.
    pub fn open(&self, history: History) {
        let (Some(path), Some(store)) = (self.0.host.transcript.path(), &self.0.host.store) else {
            return;
        };
        // The checkpoints' thread may outlive the session: it never keeps
        // the transcript (or its lock) alive, nor writes to the next one.
        let log = self.0.host.transcript.weak();
        let events = self.0.host.events.clone();
        let notices = self.0.host.events.clone();
        let sink = Arc::new(move |mark: &crate::checkpoint::Mark| {
            if let Some(message) = log.record(&Record::Checkpoint { mark: mark.clone() }) {
                events.send(Event::Error {
                    kind: ErrorKind::SessionSave,
                    message,
                });
            }
        });
        self.0.host.shared.checkpoints.open(Setup {
            blobs: path.with_extension("blobs"),
            shadows: store.dir().join("shadow"),
            work_tree: self.0.host.shared.workspace.root().to_path_buf(),
            session: self.0.host.transcript.id(),
            history,
            sink,
            notify: Arc::new(move |message| {
                notices.send(Event::Error {
                    kind: ErrorKind::Checkpoint,
                    message,
                });
            }),
        });
    }

    /// Asks for a point of `kind` with the conversation at `messages`.
    pub fn ask(&self, kind: PointKind, turn: u32, messages: usize) {
        if !self.0.host.events.thread().is_root() {
            return;
        }
        self.0.host.shared.checkpoints.point(Ask {
            kind,
            turn,
            messages,
            tail: crate::checkpoint::tail_of(self.0.thread.conversation.messages(), messages),
            plan: self.0.thread.plan.items(),
        });
    }

    /// The point before the user's message `text` is worked on.
    pub fn before_prompt(&self, text: &str) {
        let kind = PointKind::Prompt {
            text: text.to_string(),
        };
        let messages = self.0.thread.conversation.messages().len();
        self.ask(kind, self.0.host.events.turn() + 1, messages);
    }

    /// The point at a turn's end, snapshotted before the end is announced:
    /// a change the user makes once the turn is over is never taken for
    /// the agent's.
    pub async fn at_turn_end(&self) {
        if !self.0.host.events.thread().is_root() || !self.0.host.shared.checkpoints.enabled() {
            return;
        }
        let turn = self.0.host.events.turn();
        let messages = self.0.thread.conversation.messages().len();
        self.ask(PointKind::TurnEnd, turn, messages);
        self.0.host.shared.checkpoints.settled().await;
    }
}
