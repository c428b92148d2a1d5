//! The approved plan as an agreement (plan mode, issue 45): a `todo_write`
//! that adds, drops or rewords the items the user approved is a change to
//! the agreement. With `plan_changes = "tell"` it is made and shown; with
//! `"ask"` the user signs it off first (headless, where nobody can, it is
//! refused unless `--accept-plan-changes`); `"free"` lets it through
//! unremarked. An accepted change joins the agreement, so it is never
//! asked about again. Status changes (starting, completing) are the work,
//! never a change of scope.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;

use super::{Before, Call, CallStage, Said, StageCx, Verdict};
use crate::config::PlanChanges;
use crate::events::{ApprovalReason, Event, Refuser, ToolOutcome};
use crate::todo::TodoItem;
use crate::tools::ToolOutput;

/// The stage: the changes each pending `todo_write` would make, by call id.
#[derive(Default)]
pub(in crate::agent) struct Contract {
    pending: Mutex<HashMap<String, (Vec<String>, bool)>>,
}

impl CallStage for Contract {
    fn name(&self) -> &'static str {
        "plan-contract"
    }

    fn before<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        Box::pin(std::future::ready(self.judge(cx, call, said)))
    }

    fn after<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        output: &'a mut ToolOutput,
        said: &'a mut Said,
    ) -> BoxFuture<'a, ()> {
        let pending = super::super::shared::lock(&self.pending).remove(call.id);
        if let Some((lines, asked)) = pending {
            if output.plan.is_some() {
                // Made: the agreement is the plan as it is now (each
                // item's scope as the user approved it).
                let mut state = cx.plan.lock();
                let agreed = state.agreed.as_deref().unwrap_or_default();
                let now = super::scope::with_approved_scope(agreed, state.manager.items());
                state.agreed = Some(now);
                said.events.push(Event::PlanChangeAccepted { lines, asked });
            } else if matches!(output.outcome, ToolOutcome::Refused { .. }) {
                said.events.push(Event::PlanChangeRefused { lines });
            }
        }
        Box::pin(std::future::ready(()))
    }
}

impl Contract {
    /// What a `todo_write` that changes the agreement needs.
    fn judge(&self, cx: &StageCx<'_>, call: &Call<'_>, said: &mut Said) -> Before {
        let policy = cx.host.config.plan.changes;
        if call.name != "todo_write" || policy == PlanChanges::Free {
            return Before::go_on();
        }
        let lines = {
            let state = cx.plan.lock();
            let Some(agreed) = state.agreed.as_ref() else {
                return Before::go_on();
            };
            let mut next = state.manager.clone();
            if crate::tools::todo::todo_write(&mut next, call.input)
                .1
                .is_none()
            {
                // Refused by the plan's own rules: it changes nothing.
                return Before::go_on();
            }
            scope_change(agreed, next.items())
        };
        if lines.is_empty() {
            return Before::go_on();
        }
        let asking = policy == PlanChanges::Ask;
        if asking && cx.host.config.tools.bash.unattended {
            said.events.push(Event::PlanChangeRefused {
                lines: lines.clone(),
            });
            return Before {
                verdict: Verdict::Refuse(Box::new(refusal(&lines))),
                input: None,
            };
        }
        super::super::shared::lock(&self.pending)
            .insert(call.id.to_string(), (lines.clone(), asking));
        if !asking {
            return Before::go_on();
        }
        said.events.push(Event::PlanChangeRequested {
            lines: lines.clone(),
        });
        Before {
            verdict: Verdict::Ask(ApprovalReason::Tool {
                question: format!(
                    "The model wants to change the plan you approved: {}. Accept the change?",
                    lines.join("; ")
                ),
            }),
            input: None,
        }
    }
}

/// What the model reads when nobody can sign a change off.
fn refusal(lines: &[String]) -> ToolOutput {
    let reason = format!(
        "the plan is the agreement the user approved, and this write changes it ({}), which needs their sign-off; nobody can give it in a headless run (--accept-plan-changes allows such changes). Keep to the approved items (statuses may change), and say in your reply what you would change and why",
        lines.join("; ")
    );
    ToolOutput::ended(
        format!("Refused: {reason}."),
        ToolOutcome::Refused {
            by: Refuser::Plan,
            reason,
        },
    )
}

/// How `next` changes the scope of `agreed`, one line per item: added,
/// dropped, reworded (statuses aside).
pub fn scope_change(agreed: &[TodoItem], next: &[TodoItem]) -> Vec<String> {
    let mut lines = Vec::new();
    for item in next {
        match agreed.iter().find(|a| a.id == item.id) {
            None => lines.push(format!("+ {}", item.content)),
            Some(was) if was.content != item.content => {
                lines.push(format!("~ {} -> {}", was.content, item.content));
            }
            Some(_) => {}
        }
    }
    for was in agreed {
        if !next.iter().any(|i| i.id == was.id) {
            lines.push(format!("- {}", was.content));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::TodoStatus;

    fn item(id: &str, content: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            id: id.into(),
            content: content.into(),
            status,
            active_form: String::new(),
            scope: Default::default(),
        }
    }

    #[test]
    fn statuses_are_work_and_items_are_scope() {
        let agreed = vec![
            item("1", "Write the lexer", TodoStatus::Pending),
            item("2", "Write the parser", TodoStatus::Pending),
        ];
        let working = vec![
            item("1", "Write the lexer", TodoStatus::Completed),
            item("2", "Write the parser", TodoStatus::InProgress),
        ];
        assert!(scope_change(&agreed, &working).is_empty());
        let changed = vec![
            item("1", "Write the tokenizer", TodoStatus::Completed),
            item("3", "Add tests", TodoStatus::Pending),
        ];
        assert_eq!(
            scope_change(&agreed, &changed),
            [
                "~ Write the lexer -> Write the tokenizer",
                "+ Add tests",
                "- Write the parser"
            ]
        );
    }
}
