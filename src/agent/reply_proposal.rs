//! Plan mode without the model's todo tool (`plan_tool = false`): the
//! model cannot write the plan, so it proposes it in words, ending its
//! reply with a Markdown checklist (one `- [ ] item` line per item, as the
//! prompt asks: [`crate::events::PLAN_MODE_WORK_REPLY`]). When a plan-mode
//! turn of the root thread ends, the checklist of its final reply
//! ([`super::user_plan::checklist`]) becomes the plan, a revision by
//! [`Author::Reply`], and the proposal (`PlanProposed`), as a
//! `todo_write` in plan mode lands: the app, headless's exit code 5 and
//! `--approve-plan` read it alike. Invariants: a reply without a
//! checklist proposes nothing; the same plan proposed again changes
//! nothing (the earlier proposal stands).

use serde_json::{Value, json};

use super::shared::lock;
use super::voice::Voice;
use crate::events::{ApprovalMode, Event};
use crate::session::now_ms;
use crate::todo::Author;

/// At the end of a turn whose final reply is `text`: its checklist
/// proposed, in plan mode without the todo tool.
pub(super) fn at_turn_end(voice: Voice<'_>, text: &str) {
    let planning = lock(&voice.host.shared.policy).mode == ApprovalMode::Plan;
    if !planning || voice.host.config.plan.tool || !voice.host.events.thread().is_root() {
        return;
    }
    let items = super::user_plan::checklist(text);
    if items.is_empty() {
        return;
    }
    let todos: Vec<Value> = items
        .iter()
        .map(|item| json!({"content": item, "activeForm": item, "status": "pending"}))
        .collect();
    let (event, revision) = {
        let mut state = voice.thread.plan.lock();
        let before = state.manager.items().to_vec();
        let diff = match state.manager.update(&Value::Array(todos)) {
            Ok(diff) => diff,
            Err(e) => {
                tracing::warn!(error = %e, "a reply's checklist is no plan");
                return;
            }
        };
        if state.manager.items() == before.as_slice() {
            return;
        }
        let revision = state.next_revision();
        let event = Event::PlanUpdated {
            items: state.manager.items().to_vec(),
            rendered: state.manager.render(),
            diff,
            revision,
            author: Author::Reply,
            at: now_ms(),
            note: Some("proposed in the reply".into()),
        };
        (event, revision)
    };
    voice.emit(event);
    super::proposal::after_model_revision(voice, revision);
}
