//! A reply's `Done: N` lines against the plan's hooks, when the model has
//! no todo tool (`plan_tool = false`): each open item the lines name runs
//! the `ItemCompleting` hooks first, as a `todo_write` completion does;
//! one a hook blocks stays open, the user sees the hook's report as for
//! any hook, and the model reads why after the plan it is sent next
//! ([`super::phases`]). The items the reply then started run
//! `ItemStarted`, and the changed plan `PlanUpdated`, as after an
//! accepted `todo_write`. Invariants: a blocked item is never completed;
//! with no hook configured nothing runs and the plan advances as
//! [`super::user_plan`] says.

use tokio_util::sync::CancellationToken;

use super::shared::lock;
use super::stages::{Said, StageCx, item_hooks, item_json, plan_hooks};
use super::user_plan::done_numbers;
use super::voice::Voice;
use crate::hooks::HookEvent;
use crate::todo::{TodoItem, TodoStatus};

/// Advances the root's plan by the model's reply `text`. `more`: tool
/// calls follow in this round (a hook's `continue: false` then stops the
/// turn after them; without calls the turn ends anyway).
pub(super) async fn advance(voice: Voice<'_>, text: &str, more: bool, cancel: &CancellationToken) {
    if voice.host.config.plan.tool || !voice.host.events.thread().is_root() {
        return;
    }
    let numbers = done_numbers(text);
    if numbers.is_empty() {
        return;
    }
    let cx = StageCx::of(voice.host, voice.thread, cancel);
    let before = voice.thread.plan.items();
    let mut said = Said::default();
    let (numbers, mut notes) = gate(&cx, &before, numbers, &mut said).await;
    hear(voice, said, more);
    super::user_plan::advance(voice, &numbers);
    let after = voice.thread.plan.items();
    if after != before {
        let mut said = Said::default();
        notes.extend(plan_hooks(&cx, &before, &after, &mut said).await);
        hear(voice, said, more);
    }
    lock(&voice.thread.left).plan_notes.extend(notes);
}

/// `ItemCompleting` for each open item of `items` that `numbers` names:
/// the numbers the hooks let complete, and a line for the model for each
/// item kept open.
async fn gate(
    cx: &StageCx<'_>,
    items: &[TodoItem],
    numbers: Vec<usize>,
    said: &mut Said,
) -> (Vec<usize>, Vec<String>) {
    if !cx.host.hooks_at(HookEvent::ItemCompleting) {
        return (numbers, Vec::new());
    }
    let plan: Vec<serde_json::Value> = items.iter().map(item_json).collect();
    let mut passed = Vec::new();
    let mut notes = Vec::new();
    for n in numbers {
        let Some(item) = items
            .get(n - 1)
            .filter(|i| i.status != TodoStatus::Completed)
        else {
            // Nothing to complete: `user_plan` ignores it.
            continue;
        };
        let hooked = item_hooks(cx, HookEvent::ItemCompleting, (n, item), &plan, said).await;
        match hooked.blocked() {
            Some(why) => notes.push(format!(
                "[Item {n} \"{}\" was kept open by an ItemCompleting hook: {why}. Fix the cause, then say \"Done: {n}\" again (the user can complete it by hand).]",
                item.content
            )),
            None => passed.push(n),
        }
    }
    (passed, notes)
}

/// What the hooks said, heard; their stop only when calls follow.
fn hear(voice: Voice<'_>, mut said: Said, more: bool) {
    if !more {
        said.stop = None;
    }
    voice.hear(said);
}
