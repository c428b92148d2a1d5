//! The checkpoint ops (list, preview, undo, diff) and what an undo tells
//! the model; the points themselves are asked for in [`super::points`].
//! Invariants: an undo is applied only as it was previewed, and the model
//! hears of every undo at its next request.

use super::Session;
use super::points::Points;
use crate::checkpoint::live::Ask;
use crate::checkpoint::{PointKind, Target};
use crate::events::{CheckpointAnswer, CheckpointOp, ErrorKind, Event, PointInfo};

impl Session {
    /// Does what `action` asks; the answer (or why not) goes to the driver.
    pub(super) async fn on_checkpoint(&mut self, action: CheckpointOp) {
        self.host.shared.checkpoints.settled().await;
        let answer = match action.clone() {
            CheckpointOp::List => Ok(list_points(&self.host.shared.checkpoints)),
            CheckpointOp::Diff { since } => self
                .host
                .shared
                .checkpoints
                .diff(since)
                .await
                .map(|text| CheckpointAnswer::Diff { text })
                .map_err(|e| e.to_string()),
            CheckpointOp::Undo {
                target,
                files,
                conversation,
                confirm: false,
            } => self.preview_undo(action, target, files, conversation).await,
            CheckpointOp::Undo { .. } => self.undo(action).await,
        };
        match answer {
            Ok(answer) => self.emit(Event::Checkpoint { answer }),
            Err(message) => self.emit(Event::Error {
                kind: ErrorKind::Checkpoint,
                message: format!("Nothing was undone: {message}."),
            }),
        }
    }

    async fn preview_undo(
        &mut self,
        action: CheckpointOp,
        target: Target,
        files: bool,
        conversation: bool,
    ) -> Result<CheckpointAnswer, String> {
        if !self.host.shared.checkpoints.enabled() {
            return Err("checkpoints are kept only for a recorded session".into());
        }
        if conversation && matches!(target, Target::Item { .. }) {
            return Err("the conversation goes back to a point, not to an item".into());
        }
        let mut preview = self.host.shared.checkpoints.preview(&target).await?;
        if !files {
            preview.actions.clear();
            preview.conflicts.clear();
            preview.not_undoable.clear();
        }
        self.thread.run.undo = Some((action, preview.clone()));
        Ok(CheckpointAnswer::Preview {
            preview,
            files,
            conversation,
        })
    }

    /// Applies the undo previewed last for the same request.
    async fn undo(&mut self, action: CheckpointOp) -> Result<CheckpointAnswer, String> {
        let CheckpointOp::Undo {
            target,
            files,
            conversation,
            ..
        } = &action
        else {
            return Err("not an undo".into());
        };
        let previewed = self.thread.run.undo.take();
        let Some((_, preview)) = previewed.filter(|(asked, _)| {
            matches!(asked, CheckpointOp::Undo { target: t, files: f, conversation: c, .. }
                if t == target && f == files && c == conversation)
        }) else {
            return Err("preview it first (the undo applied is the one previewed)".into());
        };
        let history = self.host.shared.checkpoints.history();
        let cut = match (conversation, preview.point.and_then(|id| history.point(id))) {
            (true, Some(point)) if point.tail != self.thread.tail(point.messages) => {
                return Err(
                    "the conversation was compacted (or rewound) since that point; /rewind P files still goes back"
                        .into(),
                );
            }
            (true, Some(point)) => Some((
                self.thread.valid_cut(point.messages),
                point.plan.clone(),
                point.label(),
            )),
            (true, None) => return Err("that point does not say where the conversation was".into()),
            (false, _) => None,
        };
        let messages = self.thread.conversation.messages().len();
        let before = Ask {
            kind: PointKind::BeforeRestore,
            turn: self.host.events.turn(),
            messages,
            tail: self.thread.tail(messages),
            plan: self.thread.plan.items(),
        };
        let target_text = preview.target.clone();
        let (mut report, planned) = (preview.report(), preview.actions.len());
        let (applied, restored) = self
            .host
            .shared
            .checkpoints
            .apply(preview, target.clone(), cut.as_ref().map(|c| c.0), before)
            .await?;
        if !applied.conflicts.is_empty() || applied.files.len() != planned {
            report.push_str(&format!(
                "Written: {} file(s); left alone: {}.\n",
                applied.files.len(),
                applied.conflicts.len()
            ));
        }
        if let Some((messages, plan, label)) = cut {
            self.rewind_conversation(messages, plan);
            report.push_str(&format!("The conversation went back to {label}.\n"));
        }
        let note = crate::checkpoint::undo_note(&target_text, &restored, &applied.conflicts);
        self.add_user_text(note, false);
        if restored.messages.is_some() {
            self.show_rewound();
        }
        Points(self.voice()).ask(
            PointKind::Restored {
                target: target_text,
            },
            self.host.events.turn(),
            self.thread.conversation.messages().len(),
        );
        let item = match target {
            Target::Item { id } => Some(id.clone()),
            _ => None,
        };
        Ok(CheckpointAnswer::Done { report, item })
    }

    /// After a rewind, the driver is sent the session as it now reads
    /// (the transcript replayed: what came after the point is gone).
    fn show_rewound(&mut self) {
        self.host.sync_transcript();
        let Some(path) = self.host.transcript.path() else {
            return;
        };
        match crate::session::load(&path).and_then(crate::session::replay) {
            Ok(read) => self.emit(Event::History {
                events: read.history,
            }),
            Err(e) => tracing::warn!(error = %e, "the rewound session was not shown again"),
        }
    }

    /// Cuts the root conversation back to `messages` and the plan to
    /// `plan` (a user revision the model is told of).
    fn rewind_conversation(&mut self, messages: usize, plan: Vec<crate::todo::TodoItem>) {
        let kept = self.thread.conversation.messages()
            [..messages.min(self.thread.conversation.messages().len())]
            .to_vec();
        self.thread.conversation = crate::chat::Conversation::from_messages(kept);
        if self.thread.plan.items() == plan {
            return;
        }
        let edit = crate::todo::PlanEdit::Restore { items: plan };
        let event =
            super::plan::apply_user_edit(&self.thread.plan, &edit, crate::todo::Author::User);
        // Sent now; recorded (once) as the user's revision it is.
        let _ = self.host.events.send(event);
        self.voice().settle_user_changes();
    }
}

impl super::thread::Thread {
    /// The fingerprint of the conversation's message `messages - 1`
    /// (what a point's `tail` holds).
    pub(super) fn tail(&self, messages: usize) -> Option<String> {
        crate::checkpoint::tail_of(self.conversation.messages(), messages)
    }

    /// The longest whole conversation of at most `messages` messages: a
    /// point taken mid-round (a plan item's start) falls after a reply
    /// whose calls are not answered yet, so the cut goes before it.
    pub(super) fn valid_cut(&self, messages: usize) -> usize {
        let all = self.conversation.messages();
        let mut n = messages.min(all.len());
        let whole = |n: usize| {
            let asks = all[..n].last().is_some_and(|m| {
                m.content
                    .iter()
                    .any(|b| matches!(b, crate::llm::ContentBlock::ToolUse { .. }))
            });
            !asks
                && crate::chat::Conversation::from_messages(all[..n].to_vec())
                    .validate()
                    .is_ok()
        };
        while n > 0 && !whole(n) {
            n -= 1;
        }
        n
    }
}

/// The points kept, oldest first, and whether commands are tracked.
fn list_points(checkpoints: &crate::checkpoint::live::Checkpoints) -> CheckpointAnswer {
    let history = checkpoints.history();
    let mut points: Vec<PointInfo> = history
        .points
        .iter()
        .map(|p| PointInfo {
            id: p.id,
            label: p.label(),
            turn: p.turn,
            at: p.at,
        })
        .collect();
    points.sort_by_key(|p| p.id);
    CheckpointAnswer::List {
        points,
        commands: checkpoints.tracks_commands(),
    }
}
