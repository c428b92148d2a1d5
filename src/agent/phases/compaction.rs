//! At a round's start the conversation is compacted when the user asked
//! for it (`/compact` mid-turn) or when the next request would not fit;
//! an interrupt meanwhile ends the turn.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::RoundStart;
use crate::agent::shared::lock;
use crate::agent::{Session, TurnEnd};
use crate::events::{AbortReason, CompactReason};

/// The phase (what it acts on is the session's: the requests, the window).
pub(super) struct Compaction;

impl RoundStart for Compaction {
    fn name(&self) -> &'static str {
        "compaction"
    }

    fn start<'a>(
        &'a mut self,
        session: &'a mut Session,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<TurnEnd>> {
        Box::pin(async move {
            let asked = lock(&session.host.requests.compact).take();
            if let Some(focus) = asked {
                session.compact(CompactReason::User, focus, cancel).await;
            } else if session.thread.over_threshold(&session.host.config) {
                session
                    .compact(CompactReason::Threshold, None, cancel)
                    .await;
            }
            if !cancel.is_cancelled() {
                return None;
            }
            let message = "interrupted while the conversation was compacted".into();
            Some(
                session
                    .abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
                    .await,
            )
        })
    }
}
