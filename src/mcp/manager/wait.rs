//! Waiting for the servers still starting: a task given at start (`-p`,
//! `waypoint "TASK"`) waits for them before its first request, so their
//! tools are in it. Invariant: the wait never outlasts a server's startup
//! timeout, a failed server ends its part at once, and the user can end it
//! (`McpAction::SkipWait`) or interrupt it.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{Servers, State};

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitEnd {
    /// Every server is ready, failed, or past its startup timeout.
    Settled,
    /// The user asked to stop waiting.
    Skipped,
    /// The turn was interrupted.
    Cancelled,
}

/// Where the servers waited for stand when the wait ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    /// Those that failed to start.
    pub failed: Vec<String>,
    /// Still starting (slow): their tools join when they are ready.
    pub starting: Vec<String>,
}

impl Servers {
    /// The servers still starting within their startup timeout, by name;
    /// a wait begun now waits for them (a skip asked for earlier is
    /// forgotten).
    pub fn starting(&self) -> Vec<String> {
        let mut inner = self.lock();
        inner.skip_wait = false;
        let now = Instant::now();
        inner
            .slots
            .iter()
            .filter(|(_, s)| matches!(s.state, State::Starting { until, .. } if until > now))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Waits until no server is starting within its startup timeout, the
    /// user skips the wait, or `cancel` is cancelled.
    pub async fn wait_started(&self, cancel: &CancellationToken) -> WaitEnd {
        loop {
            let changes = self.lock().changes.clone();
            let changed = changes.notified();
            tokio::pin!(changed);
            // Registered before looking, so a change in between wakes us.
            changed.as_mut().enable();
            let next = {
                let mut inner = self.lock();
                if std::mem::take(&mut inner.skip_wait) {
                    return WaitEnd::Skipped;
                }
                let now = Instant::now();
                let next = inner
                    .slots
                    .values()
                    .filter_map(|s| match s.state {
                        State::Starting { until, .. } if until > now => Some(until),
                        _ => None,
                    })
                    .min();
                match next {
                    Some(next) => next,
                    None => return WaitEnd::Settled,
                }
            };
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(next.into()) => {}
                () = cancel.cancelled() => return WaitEnd::Cancelled,
            }
        }
    }

    /// Where the servers `names` stand: those not ready, failed or still
    /// starting.
    pub fn standing(&self, names: &[String]) -> Standing {
        let inner = self.lock();
        let mut standing = Standing::default();
        for name in names {
            match inner.slots.get(name).map(|s| &s.state) {
                Some(State::Starting { .. }) => standing.starting.push(name.clone()),
                Some(State::Failed) => standing.failed.push(name.clone()),
                // Ready, or turned off meanwhile by the user.
                Some(State::Ready { .. } | State::Off) | None => {}
            }
        }
        standing
    }
}
