//! A server's `notifications/tools/list_changed`, followed: its tools are
//! listed again and put in its slot. Invariant: however many notices come
//! (a review saw 200,000), at most one `tools/list` of a server start is
//! in flight, and notices that arrive meanwhile ask for exactly one more
//! after it, so the list kept is never older than the last notice.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use super::{Inner, State, ready};
use crate::mcp::server::OnToolsChanged;

/// Whether a re-list is in flight, and whether a notice came during it.
#[derive(Debug, Default)]
struct Gate {
    running: bool,
    dirty: bool,
}

/// The re-lists of one server start.
#[derive(Debug, Default)]
struct Coalesce(Mutex<Gate>);

impl Coalesce {
    /// A notice: `true` when the caller starts the re-list; `false` when
    /// one is in flight (it is marked to run once more).
    fn notice(&self) -> bool {
        let mut gate = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if gate.running {
            gate.dirty = true;
            false
        } else {
            gate.running = true;
            true
        }
    }

    /// A re-list ended: `true` when a notice came during it (run again);
    /// otherwise the gate is open for the next notice.
    fn again(&self) -> bool {
        let mut gate = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        gate.running = std::mem::take(&mut gate.dirty);
        gate.running
    }

    /// Nothing in flight and nothing asked for.
    fn open(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Gate::default();
    }
}

/// What a server's changed list of tools does: lists them again and puts
/// them in its slot (if the slot is still this start's), coalesced.
pub(super) fn on_tools_changed(
    servers: Weak<Mutex<Inner>>,
    name: String,
    generation: u64,
) -> OnToolsChanged {
    let gate = Arc::new(Coalesce::default());
    Arc::new(move || {
        if !gate.notice() {
            return;
        }
        let (servers, name, gate) = (servers.clone(), name.clone(), gate.clone());
        tokio::spawn(async move {
            loop {
                if !relist(&servers, &name, generation).await {
                    // Not ready yet (or gone): the next notice starts afresh.
                    gate.open();
                    return;
                }
                if !gate.again() {
                    return;
                }
            }
        });
    })
}

/// Lists the server's tools again into its slot; `false` when the slot is
/// not this start's ready server (still starting, gone or moved on).
async fn relist(servers: &Weak<Mutex<Inner>>, name: &str, generation: u64) -> bool {
    let peer = {
        let Some(inner) = servers.upgrade() else {
            return false;
        };
        let inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
        match inner.slots.get(name).map(|s| (&s.state, s.generation)) {
            Some((State::Ready { running, .. }, g)) if g == generation => running.peer(),
            _ => None,
        }
    };
    let Some(peer) = peer else {
        return false;
    };
    // A failed list keeps the last one; a later notice tries again.
    let Ok(fresh) = peer.list_all_tools().await else {
        return true;
    };
    let Some(inner) = servers.upgrade() else {
        return false;
    };
    let mut inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
    let status = inner.status.clone();
    let Some(slot) = inner.slots.get_mut(name) else {
        return false;
    };
    if slot.generation != generation {
        return false;
    }
    if let State::Ready { running } = &mut slot.state {
        let before = ready(&slot.config, &running.tools);
        running.tools = fresh;
        // Said again only when what it offers changed (it was said ready).
        let now = ready(&slot.config, &running.tools);
        if now != before {
            status(name, now);
        }
        inner.dirty = true;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_during_a_relist_ask_for_exactly_one_more() {
        let gate = Coalesce::default();
        assert!(gate.notice(), "the first notice starts a re-list");
        for _ in 0..1000 {
            assert!(!gate.notice(), "later ones wait");
        }
        assert!(gate.again(), "one more after the first");
        assert!(!gate.again(), "and no more: nothing came during it");
        assert!(gate.notice(), "the next notice starts again");
        assert!(!gate.again());
        // A re-list that could not run (the server still starting) leaves
        // the gate open for the next notice.
        assert!(gate.notice());
        assert!(!gate.notice());
        gate.open();
        assert!(gate.notice());
    }
}
