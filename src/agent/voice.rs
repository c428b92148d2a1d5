//! What a component of the engine may do with a thread without holding the
//! session: read its host and its state, and speak. Speaking is emitting
//! an event: a durable one ([`Event::is_durable`]) is recorded first, in
//! the envelope it goes out in, after the user's plan changes made before
//! it, and shown to the thread's observers ([`super::observers`]); the
//! transcript and the driver get the same value.
//!
//! A [`Voice`] borrows the host and the thread shared, so a component
//! (the approval's questions, the checkpoints, the hooks of a moment) can
//! speak while others read; what it may change of the thread is behind
//! the thread's own locks (its observers, the plan changes not yet told).
//! Invariant: observers answer with events that are never durable, so
//! nothing they say is recorded or observed again (no re-entrant emit).

use super::observers::Seen;
use super::shared::lock;
use super::thread::{Host, Thread};
use crate::events::{Envelope, Event, HookReport, HookResult};
use crate::hooks::HookEvent;
use crate::session::{Record, now_ms};
use crate::todo::{Author, TodoItem, TodoStatus};

/// What a stage tells the session: events for the user (emitted, and
/// recorded when durable, in order), and why the turn must stop after this
/// round, if it must (a hook's `continue: false`).
#[derive(Debug, Default)]
pub(super) struct Said {
    pub events: Vec<Event>,
    pub stop: Option<String>,
}

impl Said {
    /// The turn stops after this round, for `why` (the first reason given
    /// is kept).
    pub fn stop(&mut self, why: Option<&String>) {
        if self.stop.is_none() {
            self.stop = why.cloned();
        }
    }
}

/// A thread in its host, as a component sees it.
#[derive(Clone, Copy)]
pub(super) struct Voice<'a> {
    pub host: &'a Host,
    pub thread: &'a Thread,
}

impl<'a> Voice<'a> {
    pub fn of(host: &'a Host, thread: &'a Thread) -> Self {
        Self { host, thread }
    }

    /// Sends `event`; a durable one is recorded first, in the envelope it
    /// goes out in.
    pub fn emit(&self, event: Event) {
        if !event.is_durable() {
            // A driver that hung up does not stop the engine from finishing cleanly.
            let _ = self.host.events.send(event);
            return;
        }
        let mut envelope = self.host.events.envelope(event);
        self.record_envelope(&mut envelope);
        let _ = self.host.events.post(envelope);
    }

    /// Records a durable event the driver is not sent (the answer of a
    /// call that was never announced).
    pub fn record_only(&self, event: Event) {
        let mut envelope = self.host.events.envelope(event);
        self.record_envelope(&mut envelope);
    }

    /// Writes `envelope` (a call's input is left out: its reply holds it)
    /// and shows it to the observers; a turn's end reaches the disk.
    fn record_envelope(&self, envelope: &mut Envelope) {
        // A user's plan change made before this event is recorded first.
        self.settle_user_changes();
        let input = match &mut envelope.event {
            Event::ToolCallBegin { input, .. } => Some(std::mem::take(input)),
            _ => None,
        };
        let record = Record::event(envelope, now_ms());
        self.observe(&record);
        let ends_turn = matches!(
            envelope.event,
            Event::TurnComplete { .. } | Event::TurnAborted { .. }
        );
        if let (Some(input), Event::ToolCallBegin { input: slot, .. }) =
            (input, &mut envelope.event)
        {
            *slot = input;
        }
        if ends_turn {
            self.host.sync_transcript();
        }
    }

    /// Writes `record`, then shows it to the thread's observers and sends
    /// what they answer.
    pub fn observe(&self, record: &Record<'_>) {
        self.host.record(record);
        let answered = lock(&self.thread.observers).on_record(&self.seen(), record);
        for event in answered {
            let _ = self.host.events.send(event);
        }
    }

    /// What the observers see.
    fn seen(&self) -> Seen<'a> {
        Seen {
            plan: &self.thread.plan,
            conversation: &self.thread.conversation,
            outbox: &self.host.events,
            checkpoints: &self.host.shared.checkpoints,
            prices: &self.host.config.prices,
        }
    }

    /// What stages or hooks said: their events emitted (recorded when
    /// durable), and a stop they asked for kept for the turn (the first
    /// one).
    pub fn hear(&self, said: Said) {
        for event in said.events {
            self.emit(event);
        }
        if let Some(why) = said.stop {
            lock(&self.thread.left).stop.get_or_insert(why);
        }
    }

    /// Sends every item's account (and keeps it for `todo_read`); nothing
    /// while there has been no plan.
    pub fn send_stats(&self) {
        let stats = lock(&self.thread.observers).accounts.stats(&self.seen());
        for event in stats {
            let _ = self.host.events.send(event);
        }
    }

    /// Records the user's plan changes made since the last call, counts
    /// them in the account and keeps their notes for the model.
    pub fn settle_user_changes(&self) {
        let changes = std::mem::take(&mut self.thread.plan.lock().user_changes);
        if changes.is_empty() {
            return;
        }
        let mut overrides = Vec::new();
        for change in changes {
            if change.author == Author::User {
                overrides.push((change.before.clone(), change.items.clone()));
            }
            // Recorded as it was sent, in the turn it is settled in.
            let revision = self.host.events.envelope(Event::PlanUpdated {
                items: change.items.clone(),
                rendered: change.rendered,
                diff: change.diff,
                revision: change.revision,
                author: change.author,
                at: change.at,
                note: Some(change.description),
            });
            self.observe(&Record::event(&revision, now_ms()));
            // Changes one after another by the same hand (no model write
            // between) are told as one net change.
            let mut left = lock(&self.thread.left);
            let unsaid = &mut left.unsaid;
            match unsaid.last_mut() {
                Some((author, _, after)) if *author == change.author && *after == change.before => {
                    *after = change.items;
                }
                _ => unsaid.push((change.author, change.before, change.items)),
            }
        }
        for (before, after) in overrides {
            self.note_overrides(&before, &after);
        }
    }

    /// The user completed items an `ItemCompleting` hook guards: each is
    /// reported as overridden (the hook was not asked).
    fn note_overrides(&self, before: &[TodoItem], after: &[TodoItem]) {
        if !self.host.hooks_at(HookEvent::ItemCompleting) {
            return;
        }
        for item in after.iter().filter(|i| i.status == TodoStatus::Completed) {
            let was_open = before
                .iter()
                .any(|b| b.id == item.id && b.status != TodoStatus::Completed);
            let guards = self
                .host
                .config
                .tools
                .hooks
                .matching(HookEvent::ItemCompleting, &[&item.content]);
            let Some(hook) = guards.first().filter(|_| was_open) else {
                continue;
            };
            self.emit(Event::Hook {
                report: HookReport {
                    event: HookEvent::ItemCompleting.name().to_string(),
                    command: hook.command.clone(),
                    subject: Some(item.content.clone()),
                    result: HookResult::Overridden,
                    exit_code: None,
                    duration_ms: 0,
                    message: Some("the user completed the item; the hook was not asked".into()),
                },
            });
        }
    }
}
