//! Evidence per plan item (issue 46), as a stage: a `todo_write` that
//! completes an item with a `check` runs the check (contained, see
//! [`crate::agent::goal::run_check`]) before the plan is changed, and a
//! check that fails refuses the write with its output: the item stays
//! open and the model reads why. Each run is recorded as the item's
//! evidence (`ItemChecked`).
//!
//! A check is a command, so it runs only as commands may: unasked when
//! the user wrote it (`/plan check`, an approved plan's item) or approved
//! it before, or in `auto` and `yolo`; in `ask` and `auto-edit` the write
//! is asked first, naming the checks it runs ("Completing item 2 runs its
//! check `cargo test`"), and runs them once approved; in `read-only` and
//! `plan` no check runs and such a completion is refused. Invariants: the
//! checks run after the approval, while the call is about to run, so a
//! refused or interrupted call runs none; an item whose current check
//! passed before is not checked again.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;

use super::{Before, Call, CallStage, Said, StageCx, Verdict};
use crate::agent::shared::lock;
use crate::events::{ApprovalMode, Event, ThreadId, ToolOutcome};
use crate::todo::{TodoItem, TodoStatus};
use crate::tools::{Refuser, ToolOutput};

/// A check a write will run: the item's number, id, text and command.
type Due = (usize, String, String, String);

/// The stage, with the checks each approved call runs.
#[derive(Default)]
pub(in crate::agent) struct ItemChecks {
    due: Mutex<HashMap<(ThreadId, String), Vec<Due>>>,
}

impl CallStage for ItemChecks {
    fn name(&self) -> &'static str {
        "item-checks"
    }

    fn before<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        Box::pin(async move {
            if call.name != "todo_write" {
                return Before::go_on();
            }
            let due = due_checks(cx, call);
            if due.is_empty() {
                return Before::go_on();
            }
            let mode = cx.mode();
            let before = match mode {
                ApprovalMode::ReadOnly | ApprovalMode::Plan => {
                    return Before {
                        verdict: Verdict::Refuse(Box::new(refusal(
                            cx,
                            &format!(
                                "checks do not run in {mode} mode, so no item with a check is completed here"
                            ),
                        ))),
                        input: None,
                    };
                }
                ApprovalMode::Auto | ApprovalMode::Yolo => Before::go_on(),
                ApprovalMode::Ask | ApprovalMode::AutoEdit => {
                    let state = cx.plan.lock();
                    let asked: Vec<String> = due
                        .iter()
                        .filter(|(_, id, _, command)| !state.checks.is_approved(id, command))
                        .map(|(n, _, _, command)| format!("item {n}'s check `{command}`"))
                        .collect();
                    match asked.is_empty() {
                        true => Before::go_on(),
                        false => Before::ask(format!(
                            "This plan update completes items whose checks run first: {}",
                            asked.join(", ")
                        )),
                    }
                }
            };
            let key = (cx.host.events.thread(), call.id.to_string());
            lock(&self.due).insert(key, due);
            before
        })
    }

    fn running<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        said: &'a mut Said,
    ) -> BoxFuture<'a, Option<ToolOutput>> {
        Box::pin(async move {
            let key = (cx.host.events.thread(), call.id.to_string());
            let due = lock(&self.due).remove(&key)?;
            let mut failed = Vec::new();
            for (n, id, content, command) in due {
                let evidence =
                    crate::agent::goal::run_check(cx.host, &command, (&id, &content), cx.cancel)
                        .await;
                {
                    let mut state = cx.plan.lock();
                    // Approved with this write: it runs unasked from now on.
                    state.checks.approve(&id, &command);
                    state.checks.record(evidence.clone());
                }
                if !evidence.passed {
                    let exit = evidence
                        .exit_code
                        .map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
                    failed.push(format!(
                        "item {n} \"{content}\" stays open: its check `{command}` failed ({exit}):\n{}",
                        evidence.tail
                    ));
                }
                said.events.push(Event::ItemChecked { n, evidence });
                if cx.cancel.is_cancelled() {
                    break;
                }
            }
            (!failed.is_empty()).then(|| refusal(cx, &failed.join("\n")))
        })
    }

    /// A call refused before it ran (asked and refused, a stage's or the
    /// gate's refusal) ran no check: what it would have run is dropped.
    fn after<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        _output: &'a mut ToolOutput,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, ()> {
        let key = (cx.host.events.thread(), call.id.to_string());
        lock(&self.due).remove(&key);
        Box::pin(std::future::ready(()))
    }
}

/// The checks `call` (a `todo_write`) would run: items it completes (or
/// leaves completed) whose current check has not passed.
fn due_checks(cx: &StageCx<'_>, call: &Call<'_>) -> Vec<Due> {
    let Some(todos) = call.input.get("todos") else {
        return Vec::new();
    };
    let (mut trial, checks) = {
        let state = cx.plan.lock();
        // Most plans have no check: no trial write for them.
        let kept = state
            .manager
            .items()
            .iter()
            .any(|i| i.scope.check.is_some());
        if !kept && !names_a_check(todos) {
            return Vec::new();
        }
        (state.manager.clone(), state.checks.clone())
    };
    // A list the plan refuses is refused by the tool, with its reason.
    if trial.update(todos).is_err() {
        return Vec::new();
    }
    trial
        .items()
        .iter()
        .enumerate()
        .filter(|(_, item)| item.status == TodoStatus::Completed)
        .filter_map(|(at, item): (usize, &TodoItem)| {
            let command = item.scope.check.clone()?;
            let passed = checks.last(item).is_some_and(|e| e.passed);
            (!passed).then(|| (at + 1, item.id.clone(), item.content.clone(), command))
        })
        .collect()
}

/// Whether the model's `todos` may give an item a check (a list in a
/// string is read by the plan: any mention counts).
fn names_a_check(todos: &serde_json::Value) -> bool {
    match todos {
        serde_json::Value::Array(items) => items.iter().any(|i| i.get("check").is_some()),
        serde_json::Value::String(text) => text.contains("check"),
        _ => false,
    }
}

/// The write's refusal: why, and the plan as it stays.
fn refusal(cx: &StageCx<'_>, why: &str) -> ToolOutput {
    let reason = format!(
        "{why}\nFix the cause, then mark it completed again (the user can accept an item without evidence)."
    );
    let content = format!(
        "Error: plan refused: {reason} The previous plan is unchanged. Current plan:\n{}",
        cx.plan.lock().manager.render()
    );
    ToolOutput::ended(
        content,
        ToolOutcome::Refused {
            by: Refuser::Plan,
            reason,
        },
    )
}
