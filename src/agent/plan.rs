//! The engine's side of the plan: revisions announced with their number,
//! author and time; the user's edits applied at once (even mid-turn) and
//! told to the model at its next step; the per-item account kept from the
//! same records a replay reads. Invariants: a user's revision is recorded
//! before any record that follows it in time is written by a later step
//! (it is settled before every request, after every tool call and before a
//! turn's end); the model hears about every user change exactly once, with
//! the plan as it is then.

use std::borrow::Cow;

use super::Session;
use crate::events::{ErrorKind, Event};
use crate::session::{Record, now_ms};
use crate::todo::{Author, PlanEdit, SharedPlan, UserChange};
use crate::tools::PlanChange;

/// Applies the user's `edit` to `plan`: the event to announce it, or why
/// it was refused (the plan is then unchanged).
pub(super) fn apply_user_edit(plan: &SharedPlan, edit: &PlanEdit) -> Event {
    let mut state = plan.lock();
    match state.manager.apply_edit(edit) {
        Ok((diff, description)) => {
            let revision = state.next_revision();
            let at = now_ms();
            let items = state.manager.items().to_vec();
            let rendered = state.manager.render();
            state.user_changes.push(UserChange {
                items: items.clone(),
                description,
                revision,
                at,
            });
            Event::PlanUpdated {
                items,
                rendered,
                diff,
                revision,
                author: Author::User,
                at,
            }
        }
        Err(e) => Event::Error {
            kind: ErrorKind::PlanEdit,
            message: format!("The plan was not changed: {e}."),
        },
    }
}

impl Session {
    /// Announces (and records) the model's accepted plan write.
    pub(super) fn model_revision(&mut self, change: &PlanChange) {
        self.emit(Event::PlanUpdated {
            items: change.items.clone(),
            rendered: change.rendered.clone(),
            diff: change.diff.clone(),
            revision: change.revision,
            author: Author::Model,
            at: now_ms(),
        });
    }

    /// Records the user's plan changes made since the last call, counts
    /// them in the account and keeps their notes for the model.
    pub(super) fn settle_user_changes(&mut self) {
        let changes = std::mem::take(&mut self.plan.lock().user_changes);
        if changes.is_empty() {
            return;
        }
        for change in changes {
            let record = Record::Plan {
                items: Cow::Borrowed(&change.items),
                at: change.at,
                author: Author::User,
                note: Some(Cow::Borrowed(&change.description)),
            };
            self.record(&record);
            record.feed(&mut self.ledger);
            self.unsaid.push(change.description);
        }
        self.send_stats();
    }

    /// What the user changed in the plan since the model last heard, with
    /// the plan as it is now; `None` when nothing changed.
    pub(super) fn take_plan_note(&mut self) -> Option<String> {
        self.settle_user_changes();
        if self.unsaid.is_empty() {
            return None;
        }
        let changes = std::mem::take(&mut self.unsaid).join("; ");
        let rendered = self.plan.lock().manager.render();
        Some(format!(
            "[The user changed the plan: {changes}. Take it into account; the plan is yours to keep up to date with todo_write.]\n\nCurrent plan:\n{rendered}"
        ))
    }

    /// Sends every item's account (and keeps it for `todo_read`); nothing
    /// while there has been no plan.
    pub(super) fn send_stats(&mut self) {
        let items = self.plan.items();
        if items.is_empty() && self.ledger.is_empty() {
            return;
        }
        let report = self.ledger.report(&items, now_ms());
        self.plan.lock().stats.clone_from(&report);
        let _ = self.events.send(Event::PlanStats {
            items: report,
            running: self.ledger.running().map(str::to_string),
        });
    }
}
