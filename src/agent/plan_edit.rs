//! The user's changes to the plan, applied at once (even mid-turn): each
//! accepted one takes the next revision and waits in `user_changes` until
//! the session records it and tells the model; a refused one leaves the
//! plan as it was (as does one that would complete an item subagents still
//! run for).

use crate::events::{ErrorKind, Event};
use crate::session::now_ms;
use crate::todo::{Author, PlanDiff, PlanEdit, PlanError, SharedPlan, TodoManager, UserChange};

/// Applies the user's `edit` to `plan` (made by `author`: the user, or the
/// plan file while a tool ran): the event to announce it, or why it was
/// refused (the plan is then unchanged).
pub(super) fn apply_user_edit(plan: &SharedPlan, edit: &PlanEdit, author: Author) -> Event {
    let event = apply_user_change(plan, author, |manager| manager.apply_edit(edit));
    // A check the user set runs unasked (one from the plan file may be
    // anybody's: it asks as the model's do).
    if let (
        PlanEdit::Check {
            n,
            command: Some(command),
        },
        Author::User,
    ) = (edit, author)
        && matches!(event, Event::PlanUpdated { .. })
    {
        let mut state = plan.lock();
        let id = n
            .checked_sub(1)
            .and_then(|i| state.manager.items().get(i))
            .map(|i| i.id.clone());
        if let Some(id) = id {
            state.checks.approve(&id, command.trim());
        }
    }
    event
}

/// Applies the user's `change` (which says what it did) to `plan`, like
/// `apply_user_edit`.
pub(super) fn apply_user_change(
    plan: &SharedPlan,
    author: Author,
    change: impl FnOnce(&mut TodoManager) -> Result<(PlanDiff, String), PlanError>,
) -> Event {
    let mut state = plan.lock();
    let before = state.manager.items().to_vec();
    let saved = (!state.busy.is_empty()).then(|| state.manager.clone());
    let applied = change(&mut state.manager);
    if let (Some(saved), Some(why), Ok(_)) = (saved, state.busy_refusal(), &applied) {
        state.manager = saved;
        return Event::Error {
            kind: ErrorKind::PlanEdit,
            message: format!("The plan was not changed: {why}."),
        };
    }
    match applied {
        Ok((diff, description)) => {
            let revision = state.next_revision();
            let at = now_ms();
            let items = state.manager.items().to_vec();
            let rendered = state.manager.render();
            state.user_changes.push(UserChange {
                before,
                items: items.clone(),
                description: description.clone(),
                rendered: rendered.clone(),
                diff: diff.clone(),
                revision,
                at,
                author,
            });
            Event::PlanUpdated {
                items,
                rendered,
                diff,
                revision,
                author,
                at,
                note: Some(description),
            }
        }
        Err(e) => Event::Error {
            kind: ErrorKind::PlanEdit,
            message: format!("The plan was not changed: {e}."),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_check_the_user_sets_runs_unasked_and_one_from_the_plan_file_asks() {
        let plan = SharedPlan::default();
        plan.lock().manager = crate::todo::test_helpers::three();
        let set = |n, command: &str| PlanEdit::Check {
            n,
            command: Some(command.into()),
        };
        let event = apply_user_edit(&plan, &set(3, "cargo test"), Author::User);
        assert!(matches!(event, Event::PlanUpdated { .. }), "{event:?}");
        let id = plan.items()[2].id.clone();
        assert!(plan.lock().checks.is_approved(&id, "cargo test"));
        apply_user_edit(&plan, &set(3, "make check"), Author::PlanFile);
        assert_eq!(plan.items()[2].scope.check.as_deref(), Some("make check"));
        assert!(!plan.lock().checks.is_approved(&id, "make check"));
    }
}
