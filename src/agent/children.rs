//! The subagents at work, by thread: what an op addressed to a child
//! reaches (its plan, and its outbox for what the op changed). A child is
//! entered when it starts working and leaves when it stops, whether it ran
//! in its parent's call or in the background.

use std::sync::{Arc, Mutex};

use super::Outbox;
use super::shared::lock;
use crate::events::ThreadId;
use crate::todo::SharedPlan;

/// The registry, shared by the session's threads and the dispatcher.
#[derive(Debug, Default)]
pub(super) struct Children {
    live: Mutex<Vec<(ThreadId, SharedPlan, Outbox)>>,
}

impl Children {
    /// `thread` is at work with `plan`, its events going to `outbox`,
    /// until the guard is dropped.
    pub fn enter(self: &Arc<Self>, thread: ThreadId, plan: SharedPlan, outbox: Outbox) -> AtWork {
        lock(&self.live).push((thread, plan, outbox));
        AtWork {
            children: self.clone(),
            thread,
        }
    }

    /// The plan and outbox of `thread`, while it works.
    pub fn plan_of(&self, thread: ThreadId) -> Option<(SharedPlan, Outbox)> {
        lock(&self.live)
            .iter()
            .find(|(t, ..)| *t == thread)
            .map(|(_, plan, outbox)| (plan.clone(), outbox.clone()))
    }
}

/// A child at work: it leaves the registry when this is dropped.
pub(super) struct AtWork {
    children: Arc<Children>,
    thread: ThreadId,
}

impl Drop for AtWork {
    fn drop(&mut self) {
        lock(&self.children.live).retain(|(t, ..)| *t != self.thread);
    }
}
