//! Before a turn's first request: the task given at start waits for the
//! MCP servers still starting, so their tools are in its first request;
//! then the tools of servers that became ready or changed their list join
//! (after the others, so the provider's cache of the earlier tools
//! survives), and those of servers gone leave. Invariant: only the first
//! turn of an engine told to (`McpSettings::wait_at_start`) waits, once;
//! the wait is said (`McpWait::Waiting`, then `McpWait::Over`), never
//! outlasts a server's startup timeout, does not wait for a failed server,
//! and ends when the user skips it; an interrupt ends the turn.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::RoundStart;
use crate::agent::{Session, TurnEnd};
use crate::events::{AbortReason, Event, McpWait};
use crate::mcp::manager::Boundary;
use crate::mcp::manager::wait::WaitEnd;

/// The phase (the servers are the host's).
pub(super) struct McpJoin;

impl RoundStart for McpJoin {
    fn name(&self) -> &'static str {
        "mcp-join"
    }

    fn start<'a>(
        &'a mut self,
        session: &'a mut Session,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<TurnEnd>> {
        Box::pin(async move {
            if let Some(end) = wait_for_mcp(session, cancel).await {
                return Some(end);
            }
            session.sync_mcp(Boundary::Turn);
            None
        })
    }
}

/// Waits for the MCP servers still starting when this is the task given
/// at start; the turn's end when it was interrupted meanwhile.
async fn wait_for_mcp(session: &mut Session, cancel: &CancellationToken) -> Option<TurnEnd> {
    if !std::mem::take(&mut session.host.config.tools.mcp.wait_at_start) {
        return None;
    }
    let servers = session.host.mcp.clone();
    let names = servers.starting();
    if names.is_empty() {
        return None;
    }
    session.emit(Event::McpWait {
        wait: McpWait::Waiting {
            names: names.clone(),
        },
    });
    let end = servers.wait_started(cancel).await;
    let standing = servers.standing(&names);
    session.emit(Event::McpWait {
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
        session
            .abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
            .await,
    )
}
