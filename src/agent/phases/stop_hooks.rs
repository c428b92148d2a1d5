//! The `Stop` hooks (`SubagentStop` for a child) may block the end: their
//! reason goes to the model and the turn goes on, a bounded number of
//! times (`STOP_CONTINUES`).

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{BeforeEnd, Next};
use crate::agent::Session;
use crate::events::StopReason;

/// The phase, with the times the hooks sent this turn on.
#[derive(Default)]
pub(super) struct StopHooks {
    continues: u32,
}

impl BeforeEnd for StopHooks {
    fn name(&self) -> &'static str {
        "stop-hooks"
    }

    fn check<'a>(
        &'a mut self,
        session: &'a mut Session,
        _stop: &'a StopReason,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Next> {
        Box::pin(async move {
            let said = crate::agent::hooks::Moments(session.voice())
                .stop(&mut self.continues, cancel)
                .await;
            match said {
                Some(why) => {
                    session.add_user_text(why, false);
                    Next::GoOn
                }
                None => Next::End,
            }
        })
    }
}
