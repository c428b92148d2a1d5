//! A stage before a turn's first request: the task given at start waits
//! for the MCP servers still starting, so their tools are in its first
//! request. Invariant: only the first turn of an engine told to
//! (`McpSettings::wait_at_start`) waits, once; the wait is said
//! (`McpWait::Waiting`, then `McpWait::Over`), never outlasts a server's startup
//! timeout, does not wait for a failed server, and ends when the user
//! skips it; an interrupt ends the turn.

use tokio_util::sync::CancellationToken;

use super::{Session, TurnEnd};
use crate::events::{AbortReason, Event, McpWait};
use crate::mcp::manager::wait::WaitEnd;

impl Session {
    /// Waits for the MCP servers still starting when this is the task
    /// given at start; the turn's end when it was interrupted meanwhile.
    pub(super) async fn wait_for_mcp(&mut self, cancel: &CancellationToken) -> Option<TurnEnd> {
        if !std::mem::take(&mut self.host.config.tools.mcp.wait_at_start) {
            return None;
        }
        let servers = self.host.mcp.clone();
        let names = servers.starting();
        if names.is_empty() {
            return None;
        }
        self.emit(Event::McpWait {
            wait: McpWait::Waiting {
                names: names.clone(),
            },
        });
        let end = servers.wait_started(cancel).await;
        let standing = servers.standing(&names);
        self.emit(Event::McpWait {
            wait: McpWait::Over {
                skipped: end == WaitEnd::Skipped,
                failed: standing.failed,
                starting: standing.starting,
            },
        });
        if end != WaitEnd::Cancelled {
            return None;
        }
        let message = "interrupted while waiting for MCP servers".into();
        Some(
            self.abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
                .await,
        )
    }
}
