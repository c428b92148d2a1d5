//! At a round's start (the root thread's), when the model has no todo
//! tool (`plan_tool = false`) and the plan has items, the model reads the
//! plan the user keeps: one block in the newest user message, after the
//! conversation's prefix (earlier bytes stay as they were, for the
//! provider's cache). Sent at the turn's first round, and again at a later
//! round only when the plan changed since, or when its hooks kept an
//! item a reply said was done open (why follows the plan).

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::RoundStart;
use crate::agent::shared::lock;
use crate::agent::user_plan::plan_block;
use crate::agent::{Session, TurnEnd};
use crate::todo::TodoItem;

/// The phase; it keeps what it sent this turn.
#[derive(Default)]
pub(super) struct PlanContext {
    sent: Option<Vec<TodoItem>>,
}

impl RoundStart for PlanContext {
    fn name(&self) -> &'static str {
        "plan-context"
    }

    fn start<'a>(
        &'a mut self,
        session: &'a mut Session,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<TurnEnd>> {
        Box::pin(async move {
            if session.host.config.plan.tool || !session.host.events.thread().is_root() {
                return None;
            }
            let items = session.thread.plan.items();
            let notes = std::mem::take(&mut lock(&session.thread.left).plan_notes);
            if items.is_empty() || (self.sent.as_ref() == Some(&items) && notes.is_empty()) {
                return None;
            }
            let mut block = plan_block(&items);
            for note in notes {
                block.push('\n');
                block.push_str(&note);
            }
            session.add_user_text(block, false);
            self.sent = Some(items);
            None
        })
    }
}
