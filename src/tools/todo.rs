//! `todo_write` and `todo_read`: the plan tools, which act on the session's
//! plan in their context. Invariant: a refused `todo_write` leaves the plan
//! unchanged and tells the model why, which rule it broke, and what the
//! current plan is, so it can retry; an accepted one reports its change in
//! [`ToolOutput::plan`]; nothing here panics.

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{Invalid, TypedTool, parse};
use super::{
    Access, PlanChange, Refuser, ToolCtx, ToolDetail, ToolOutcome, ToolOutput, ToolSpec,
    ToolSummary, cap_output,
};
use crate::todo::{ItemStats, PlanDiff, TODOS_SHAPE, TodoManager};

/// The `todo_write` tool.
pub struct TodoWrite;

/// A `todo_write` call's arguments: the plan reads `todos` itself, and
/// tolerantly (a list in a string, a Python literal: [`crate::todo`]).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoWriteArgs {
    #[schemars(with = "Vec<PlanItem>")]
    pub todos: Value,
}

// A plan item, as the schema shows it (no description of its own).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct PlanItem {
    content: String,
    status: PlanStatus,
    #[serde(rename = "activeForm")]
    active_form: String,
    id: Option<String>,
    /// Workspace-relative paths or globs the item will write (optional).
    files: Option<Vec<String>>,
    /// Command prefixes the item will run, e.g. `cargo test` (optional).
    commands: Option<Vec<String>>,
    /// A command whose success proves the item done, e.g. `cargo test -p
    /// parser` (optional): run when the item is marked completed.
    check: Option<String>,
}

// An item's status, as the schema shows it.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

/// The plan tools take no arguments but the plan.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

impl TypedTool for TodoWrite {
    type Args = TodoWriteArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "todo_write",
            "Replace the whole plan (a checklist the user watches live). Send every item each time. \
Rules: at most 20 items; each needs non-empty one-line `content` (imperative, e.g. \"Run tests\") and \
`activeForm` (present tense, e.g. \"Running tests\"), at most 500 characters each; status is pending, in_progress or completed; at most ONE item \
in_progress; no duplicate content. Mark an item in_progress before starting it and completed as soon as it \
is done. Optional per-item `files` (paths or globs) and `commands` (prefixes) declare what the item will touch; \
an optional `check` (a command, e.g. `cargo test -p parser`) is run when the item is marked completed, \
and a failing check keeps it open. \
A list that breaks a rule is refused and the old plan stays. Returns the rendered plan.",
            schema,
            Access::Plan,
        )
    }
    fn summary_of(&self, args: Option<&TodoWriteArgs>) -> ToolSummary {
        let line = match args.map(|a| &a.todos) {
            Some(Value::Array(items)) => crate::units::plural(items.len(), "item"),
            _ => String::new(),
        };
        ToolSummary {
            line,
            detail: ToolDetail::Plan,
        }
    }
    fn invalid(&self, _why: Invalid) -> ToolOutput {
        missing_todos()
    }
    fn call<'a>(&'a self, args: TodoWriteArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let mut state = ctx.plan.lock();
            let before = state.manager.items().to_vec();
            let saved = (!state.busy.is_empty()).then(|| state.manager.clone());
            let (mut out, diff) = write_todos(&mut state.manager, &args.todos);
            if let (Some(saved), Some(why)) = (saved, state.busy_refusal()) {
                state.manager = saved;
                let reason = format!("{why}. The previous plan is unchanged.");
                let content = format!(
                    "Error: plan refused: {reason} Current plan:\n{}",
                    state.manager.render()
                );
                let outcome = crate::events::ToolOutcome::Refused {
                    by: crate::events::Refuser::Plan,
                    reason,
                };
                return ToolOutput::ended(content, outcome);
            }
            if let Some(diff) = diff {
                out.content.push_str(&dropped_note(&diff.dropped));
                let changed = state.manager.items() != before.as_slice();
                let revision = if changed {
                    state.next_revision()
                } else {
                    state.revision
                };
                out.plan = Some(PlanChange {
                    diff,
                    items: state.manager.items().to_vec(),
                    rendered: state.manager.render(),
                    revision,
                    changed,
                });
            }
            out.content = cap_output(&out.content, ctx.env.config.output_cap);
            out
        })
    }
}

/// The `todo_read` tool.
pub struct TodoRead;

impl TypedTool for TodoRead {
    type Args = NoArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "todo_read",
            "Return the current plan.",
            schema,
            Access::Read,
        )
    }
    fn summary_of(&self, _args: Option<&NoArgs>) -> ToolSummary {
        ToolSummary {
            line: String::new(),
            detail: ToolDetail::Plan,
        }
    }
    fn call<'a>(&'a self, _args: NoArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let state = ctx.plan.lock();
            let mut out = todo_read(&state.manager, &state.stats);
            out.content = cap_output(&out.content, ctx.env.config.output_cap);
            out
        })
    }
}

/// Applies a `todo_write` call. On success returns the rendered plan and the diff.
pub fn todo_write(plan: &mut TodoManager, input: &Value) -> (ToolOutput, Option<PlanDiff>) {
    match parse::<TodoWriteArgs>(input) {
        Ok(args) => write_todos(plan, &args.todos),
        Err(_) => (missing_todos(), None),
    }
}

/// The answer to a `todo_write` without a plan: what to send.
fn missing_todos() -> ToolOutput {
    ToolOutput::error(format!(
        "missing required argument `todos`. Send the whole plan as \
         {{\"todos\": {TODOS_SHAPE}}}; an empty list clears the plan."
    ))
}

/// Writes `todos` (`null`: none sent) as the plan.
fn write_todos(plan: &mut TodoManager, todos: &Value) -> (ToolOutput, Option<PlanDiff>) {
    if todos.is_null() {
        return (missing_todos(), None);
    }
    match plan.update(todos) {
        Ok(diff) => (ToolOutput::ok(plan.render()), Some(diff)),
        Err(e) => {
            let reason = format!(
                "{e}. The previous plan is unchanged; fix the list and send the whole list again."
            );
            let content = format!(
                "Error: plan refused: {reason} Current plan:\n{}",
                plan.render()
            );
            let outcome = ToolOutcome::Refused {
                by: Refuser::Plan,
                reason,
            };
            (ToolOutput::ended(content, outcome), None)
        }
    }
}

/// Names the items a write dropped (its diff's `dropped`: gone without
/// being completed), so dropped work is never silent (empty when none).
pub fn dropped_note(dropped: &[String]) -> String {
    if dropped.is_empty() {
        return String::new();
    }
    let named: Vec<String> = dropped.iter().map(|c| format!("\"{c}\"")).collect();
    format!(
        "\n\nNote: removed without completion: {}. If it is no longer needed, say why.",
        named.join(", ")
    )
}

/// Answers a `todo_read` call: the rendered plan, then what each item has
/// cost so far (when anything was spent).
pub fn todo_read(plan: &TodoManager, stats: &[ItemStats]) -> ToolOutput {
    let mut out = plan.render();
    if stats.iter().any(|s| s.time_ms > 0 || s.tool_calls > 0) {
        out.push_str("\n\nPer item so far:\n");
        out.push_str(crate::todo::ledger::stats_table(stats).trim_end());
    }
    ToolOutput::ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::todo::{TodoItem, TodoStatus};
    use crate::tools::Tool;
    use serde_json::json;

    fn input(items: Value) -> Value {
        json!({ "todos": items })
    }

    #[test]
    fn write_renders_plan_and_returns_diff() {
        let mut plan = TodoManager::new();
        let (out, diff) = todo_write(
            &mut plan,
            &input(json!([
                {"content": "Write code", "activeForm": "Writing code", "status": "in_progress"},
                {"content": "Run tests", "activeForm": "Running tests", "status": "pending"}
            ])),
        );
        assert!(!out.is_error());
        assert_eq!(
            out.content,
            "[>] Write code <- Writing code\n[ ] Run tests\n\n(0/2 completed)"
        );
        let diff = diff.unwrap();
        assert_eq!(diff.added, vec!["Write code", "Run tests"]);
        assert_eq!(diff.started, vec!["Write code"]);
        assert_eq!(todo_read(&plan, &[]), ToolOutput::ok(plan.render()));
    }

    #[tokio::test]
    async fn the_tool_reports_whether_the_plan_changed() {
        let f = crate::tools::test_support::Fixture::new();
        let plan = crate::todo::SharedPlan::default();
        let one = input(json!([{"content": "A", "activeForm": "Doing A", "status": "pending"}]));
        let call = |plan: &crate::todo::SharedPlan, v: &Value| {
            let ctx = ToolCtx {
                env: f.env(),
                plan,
                host: crate::tools::ToolHost::detached(),
            };
            futures_util::FutureExt::now_or_never(TodoWrite.run(v, ctx)).unwrap()
        };
        let first = call(&plan, &one).plan.unwrap();
        assert!(first.changed);
        assert_eq!(first.diff.added, vec!["A"]);
        assert_eq!(first.revision, 1);
        // The same plan again is a write (no nag) but not a change, and
        // takes no revision number.
        let again = call(&plan, &one).plan.unwrap();
        assert!(!again.changed);
        assert_eq!(again.revision, 1);
        assert!(call(&plan, &json!({})).plan.is_none());
        assert_eq!(plan.lock().revision, 1);
    }

    #[test]
    fn missing_todos_explains_the_shape() {
        let mut plan = TodoManager::new();
        for bad in [
            json!({}),
            json!({"todos": null}),
            json!({"items": []}),
            json!("x"),
        ] {
            let (out, diff) = todo_write(&mut plan, &bad);
            assert!(out.is_error());
            assert!(diff.is_none());
            assert!(
                out.content
                    .starts_with("Error: missing required argument `todos`"),
                "{}",
                out.content
            );
            assert!(out.content.contains("\"activeForm\""));
            assert!(out.content.contains("in_progress"));
        }
    }

    #[test]
    fn refusal_names_rule_keeps_plan_and_shows_it() {
        let mut plan = TodoManager::new();
        let (ok, _) = todo_write(
            &mut plan,
            &input(json!([{"content": "Build", "activeForm": "Building", "status": "completed"}])),
        );
        assert!(!ok.is_error());
        let before = plan.items().to_vec();
        let (out, diff) = todo_write(
            &mut plan,
            &input(json!([
                {"content": "A", "activeForm": "a", "status": "in_progress"},
                {"content": "B", "activeForm": "b", "status": "in_progress"}
            ])),
        );
        assert!(out.is_error());
        assert!(diff.is_none());
        assert_eq!(
            out.content,
            "Error: plan refused: items 1 (\"A\") and 2 (\"B\") are both in_progress; at most one \
             item may be in_progress at a time. The previous plan is unchanged; fix the list and \
             send the whole list again. Current plan:\n[x] Build\n\n(1/1 completed)"
        );
        // The reason travels typed: no driver reads it out of the text.
        assert_eq!(
            out.outcome,
            ToolOutcome::Refused {
                by: Refuser::Plan,
                reason: "items 1 (\"A\") and 2 (\"B\") are both in_progress; at most one item may \
                         be in_progress at a time. The previous plan is unchanged; fix the list and \
                         send the whole list again."
                    .into()
            }
        );
        assert_eq!(plan.items(), before.as_slice());
        assert_eq!(plan.items()[0].status, TodoStatus::Completed);
    }

    #[test]
    fn string_todos_and_empty_list() {
        let mut plan = TodoManager::new();
        let (out, _) = todo_write(
            &mut plan,
            &input(json!(
                "[{'content': 'A', 'activeForm': 'Doing A', 'status': 'Completed'},]"
            )),
        );
        assert_eq!(out, ToolOutput::ok("[x] A\n\n(1/1 completed)"));
        let (out, diff) = todo_write(&mut plan, &input(json!([])));
        assert_eq!(out, ToolOutput::ok("No todos."));
        assert_eq!(diff.unwrap().removed, vec!["A"]);
        assert_eq!(todo_read(&plan, &[]), ToolOutput::ok("No todos."));
    }

    #[test]
    fn garbage_string_is_an_error_result() {
        let mut plan = TodoManager::new();
        let (out, diff) = todo_write(&mut plan, &input(json!("[{'content': oops")));
        assert!(out.is_error());
        assert!(diff.is_none());
        assert!(
            out.content
                .starts_with("Error: plan refused: `todos` is a string"),
            "{}",
            out.content
        );
        assert!(
            out.content.ends_with("Current plan:\nNo todos."),
            "{}",
            out.content
        );
    }

    #[test]
    fn items_dropped_without_completion_are_named() {
        let item = |id: &str, content: &str, status: TodoStatus| TodoItem {
            id: id.into(),
            content: content.into(),
            status,
            active_form: "Doing".into(),
            scope: Default::default(),
        };
        let before = [
            item("1", "Write code", TodoStatus::Completed),
            item("2", "Write the tests", TodoStatus::InProgress),
            item("3", "Update docs", TodoStatus::Pending),
        ];
        // Completed items may go; reworded items keep their id.
        let after = [item("3", "Update the docs", TodoStatus::Pending)];
        let note =
            |old: &[TodoItem], new: &[TodoItem]| dropped_note(&PlanDiff::between(old, new).dropped);
        assert_eq!(
            note(&before, &after),
            "\n\nNote: removed without completion: \"Write the tests\". If it is no longer needed, say why."
        );
        assert_eq!(note(&before, &before), "");
    }
}
