//! The plan's account as an observer: every record that tells what a plan
//! item cost (a turn's time, a call, usage, a subagent's work, an approval
//! wait) is fed to the [`Ledger`], and a change sends the user the
//! items' stats (`PlanStats`), which the plan keeps too.

use super::{Observer, Seen};
use crate::events::{ErrorKind, Event};
use crate::session::{Record, now_ms};
use crate::todo::Ledger;

/// The observer, with the ledger it feeds.
#[derive(Default)]
pub(in crate::agent) struct PlanAccounts {
    ledger: Ledger,
}

impl PlanAccounts {
    /// The account starts afresh (a new session) or as a replay made it (a
    /// resumed one).
    pub fn replace(&mut self, ledger: Ledger) {
        self.ledger = ledger;
    }

    /// The stats as they stand (and a plan file's error since the last
    /// ones), kept in the plan too; nothing when there is no plan and no
    /// account.
    pub fn stats(&self, seen: &Seen<'_>) -> Vec<Event> {
        let items = seen.plan.items();
        if items.is_empty() && self.ledger.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(message) = seen.plan.lock().file_error.take() {
            out.push(Event::Error {
                kind: ErrorKind::PlanFile,
                message,
            });
        }
        let report = self.ledger.report(&items, now_ms(), seen.prices);
        seen.plan.lock().stats.clone_from(&report);
        out.push(Event::PlanStats {
            items: report,
            running: self.ledger.running().map(str::to_string),
        });
        out
    }
}

impl Observer for PlanAccounts {
    fn name(&self) -> &'static str {
        "plan-accounts"
    }

    fn on_record(&mut self, seen: &Seen<'_>, record: &Record<'_>, out: &mut Vec<Event>) {
        if record.feed(&mut self.ledger) {
            out.extend(self.stats(seen));
        }
    }
}
