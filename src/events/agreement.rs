//! The approved plan (plan mode's agreement) read from the events, for
//! a resume and for a headless run's last word.

use super::Event;
use crate::todo::{Author, TodoItem};

/// The agreement as a session's events tell it, one event at a time: the
/// items approved, with the changes accepted since (an accepted change
/// comes just before the revision that made it), and the plan now.
#[derive(Debug, Default)]
pub struct Agreement {
    /// The agreed items; none when no plan was approved (or the session
    /// was reset since).
    pub agreed: Option<Vec<TodoItem>>,
    /// The plan as the last revision left it.
    pub now: Vec<TodoItem>,
    accepted: bool,
}

impl Agreement {
    /// Takes in one event of the root thread.
    pub fn note(&mut self, event: &Event) {
        match event {
            Event::PlanUpdated { author, items, .. } => {
                if *author == Author::Approved || (self.accepted && self.agreed.is_some()) {
                    self.agreed = Some(items.clone());
                    self.accepted = false;
                }
                self.now.clone_from(items);
            }
            Event::PlanChangeAccepted { .. } => self.accepted = true,
            Event::SessionReset => self.agreed = None,
            _ => {}
        }
    }
}
