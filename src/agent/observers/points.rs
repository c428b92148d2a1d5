//! Checkpoints as an observer: a recorded plan revision that puts a new
//! root item in progress asks for a point (its snapshot is taken before the
//! next call that may write). Only the root thread makes points.

use super::{Observer, Seen};
use crate::checkpoint::PointKind;
use crate::checkpoint::live::Ask;
use crate::events::Event;
use crate::session::Record;

/// The observer (the points' state is the session's checkpoints').
pub(super) struct ItemPoints;

impl Observer for ItemPoints {
    fn name(&self) -> &'static str {
        "item-points"
    }

    fn on_record(&mut self, seen: &Seen<'_>, record: &Record<'_>, _out: &mut Vec<Event>) {
        let Record::Event { envelope, .. } = record else {
            return;
        };
        let Event::PlanUpdated { items, .. } = &envelope.event else {
            return;
        };
        if !seen.outbox.thread().is_root() || !seen.checkpoints.enabled() {
            return;
        }
        let now = crate::checkpoint::in_progress(items);
        let Some(item) = items.iter().find(|i| Some(&i.id) == now.as_ref()) else {
            return;
        };
        if now == seen.checkpoints.current_item() {
            return;
        }
        let messages = seen.conversation.messages().len();
        seen.checkpoints.point(Ask {
            kind: PointKind::Item {
                item_id: item.id.clone(),
                content: item.content.clone(),
            },
            turn: seen.outbox.turn(),
            messages,
            tail: crate::checkpoint::tail_of(seen.conversation.messages(), messages),
            plan: seen.plan.items(),
        });
    }
}
