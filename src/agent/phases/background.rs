//! A turn does not end while its background subagents run: it waits for
//! their reports (which reach the model at the next request), or ends as
//! interrupted when the user interrupts the wait.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{BeforeEnd, Next};
use crate::agent::{Session, TurnEnd};
use crate::events::{AbortReason, StopReason};

/// The phase (the tasks' state is the session's task pool's).
pub(super) struct Background;

impl BeforeEnd for Background {
    fn name(&self) -> &'static str {
        "background-tasks"
    }

    fn check<'a>(
        &'a mut self,
        session: &'a mut Session,
        _stop: &'a StopReason,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Next> {
        Box::pin(async move {
            if !session.host.awaits_background() {
                return Next::End;
            }
            session.host.shared.tasks.wait_finished(cancel).await;
            if !cancel.is_cancelled() {
                return Next::GoOn;
            }
            let message = "interrupted while background tasks ran".into();
            Next::Ended(
                session
                    .abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
                    .await,
            )
        })
    }
}
