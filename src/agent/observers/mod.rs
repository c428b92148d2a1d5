//! Record observers: what the engine does because something was recorded,
//! each a component of its own instead of a hidden step of `emit`.
//!
//! Every durable event the engine emits, a user's plan change it settles
//! and an approval wait it notes is written to the transcript first and then
//! shown to the observers, in the order [`Observers::in_order`] documents.
//! An observer keeps its own state, reads the session through [`Seen`]
//! (shared handles, read-only) and answers with events, which the session
//! sends before the recorded event goes out. Invariant: an observer's
//! events are never durable, so nothing it says is recorded or observed
//! again (no re-entrant emit).

mod accounts;
mod points;

pub(super) use accounts::PlanAccounts;

use crate::chat::Conversation;
use crate::events::Event;
use crate::session::Record;
use crate::todo::SharedPlan;

/// What an observer sees of the session besides the record.
pub(super) struct Seen<'a> {
    pub plan: &'a SharedPlan,
    pub conversation: &'a Conversation,
    /// Where the thread's events go (which thread, which turn).
    pub outbox: &'a super::Outbox,
    pub checkpoints: &'a crate::checkpoint::live::Checkpoints,
    /// The config's `[prices]`.
    pub prices: &'a std::collections::BTreeMap<String, crate::pricing::Price>,
}

/// One reaction to what is recorded.
pub(super) trait Observer: Send + Sync {
    /// Its name, for the log.
    fn name(&self) -> &'static str;

    /// `record` was written: events for the user go to `out` (never
    /// durable ones).
    fn on_record(&mut self, seen: &Seen<'_>, record: &Record<'_>, out: &mut Vec<Event>);
}

/// A thread's observers (each thread has its own: a subagent's plan has
/// its own account).
pub(super) struct Observers {
    /// The plan's account: what each item cost, and the stats it makes.
    pub accounts: PlanAccounts,
    points: points::ItemPoints,
}

impl Observers {
    pub fn new() -> Self {
        Self {
            accounts: PlanAccounts::default(),
            points: points::ItemPoints,
        }
    }

    /// The order they see a record in: the plan's account first (its stats
    /// go out before the event that changed them), then the checkpoints (a
    /// root item newly in progress is a point).
    fn in_order(&mut self) -> [&mut dyn Observer; 2] {
        [&mut self.accounts, &mut self.points]
    }

    /// Shows `record` to every observer, in order: the events they answer.
    pub fn on_record(&mut self, seen: &Seen<'_>, record: &Record<'_>) -> Vec<Event> {
        let mut out = Vec::new();
        for observer in self.in_order() {
            let from = out.len();
            observer.on_record(seen, record, &mut out);
            if out[from..].iter().any(Event::is_durable) {
                tracing::error!(
                    observer = observer.name(),
                    "an observer answered a durable event; dropped"
                );
            }
        }
        out.retain(|event| !event.is_durable());
        out
    }
}
