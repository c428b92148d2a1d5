//! Hooks around a tool call, as a stage: `PreToolUse` may block the call,
//! change its input, allow it or have the user asked; `PostToolUse` may
//! add to what the model reads of the result. The plan's own moments ride
//! on `todo_write`: `ItemCompleting` runs for every item the write would
//! complete, before it is applied, and one that blocks keeps the plan as it
//! was and tells the model why; `ItemStarted` and `PlanUpdated` run after
//! an accepted write.
//!
//! A hook written for Claude Code sees Claude Code's names: `tool_name`
//! is `Bash`, `Write`, `Edit`, `Read`, … for Waypoint's own tools (the
//! matcher takes either name), and `tool_input` carries `file_path`
//! beside `path`; an `updatedInput` in either shape is read back.
//!
//! What `before` learnt of a call (its notes for the model, whether a hook
//! blocked it, the plan before a plan write) waits for `after` in this
//! stage's own table, by thread and call id (the stage is shared by the
//! subagents, whose models may number their calls alike). Calls of one reply pass it one after
//! another before they run, so their hooks keep their order, and they may
//! still run together.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::{Before, Call, CallStage, Said, StageCx, Verdict};
use crate::agent::hook_run::{Hooked, Moment};
use crate::agent::shared::lock;
use crate::events::{ApprovalReason, ThreadId, ToolOutcome};
use crate::hooks::{Decision, HookEvent, claude_tool_name};
use crate::todo::{TodoItem, TodoStatus};
use crate::tools::{Refuser, ToolOutput};

/// The stage, with what each call's `before` left for its `after`.
#[derive(Default)]
pub(in crate::agent) struct CallHooks {
    pending: Mutex<HashMap<(ThreadId, String), Pending>>,
}

/// What the hooks before a call left for after it.
#[derive(Debug, Default)]
struct Pending {
    /// A hook blocked the call (it did not run): no `PostToolUse`.
    blocked: bool,
    /// The input it runs with instead, told to the model after the result.
    input: Option<Value>,
    /// For the model, after the result.
    context: Vec<String>,
    /// A plan write's plan before it (for `ItemStarted`).
    plan_before: Option<Vec<TodoItem>>,
}

impl CallStage for CallHooks {
    fn name(&self) -> &'static str {
        "hooks"
    }

    fn before<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        Box::pin(async move {
            let (before, pending) = pre(cx, call, said).await;
            let key = (cx.host.events.thread(), call.id.to_string());
            lock(&self.pending).insert(key, pending);
            before
        })
    }

    fn after<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        output: &'a mut ToolOutput,
        said: &'a mut Said,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let key = (cx.host.events.thread(), call.id.to_string());
            let pending = lock(&self.pending).remove(&key).unwrap_or_default();
            post(cx, call, output, pending, said).await;
        })
    }
}

/// `PreToolUse`, then a plan write's `ItemCompleting`.
async fn pre(cx: &StageCx<'_>, call: &Call<'_>, said: &mut Said) -> (Before, Pending) {
    let mut before = Before::go_on();
    let mut pending = Pending::default();
    if cx.host.hooks_at(HookEvent::PreToolUse) {
        let hooked = call_hooks(cx, HookEvent::PreToolUse, call, None, said).await;
        match hooked.decision {
            Decision::Block(why) => {
                pending.blocked = true;
                before.verdict = Verdict::Refuse(Box::new(ToolOutput::refused(
                    Refuser::Hook,
                    format!("Refused by a PreToolUse hook: {why}"),
                )));
                return (before, pending);
            }
            permission => before.verdict = verdict(&permission),
        }
        pending.input = hooked
            .updated_input
            .map(|fields| updated(call.input, fields));
        before.input.clone_from(&pending.input);
        pending.context = hooked.context;
    }
    if call.name == "todo_write" {
        pending.plan_before = Some(cx.plan.items());
        let input = pending.input.as_ref().unwrap_or(call.input);
        if let Some(refused) = item_gate(cx, input, said).await {
            pending.blocked = true;
            before.verdict = Verdict::Refuse(Box::new(refused));
        }
    }
    (before, pending)
}

/// A `PreToolUse` hook's `permissionDecision` as a verdict: `ask` asks
/// whatever the mode, `allow` runs what the mode would ask about (a
/// refusal of the gate, read-only or a deny rule, stands).
fn verdict(permission: &Decision) -> Verdict {
    match permission {
        Decision::Ask(why) => {
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            };
            Verdict::Ask(ApprovalReason::Tool {
                question: format!("A PreToolUse hook wants you asked{why}"),
            })
        }
        Decision::Allow => Verdict::Allow,
        Decision::Continue | Decision::Block(_) => Verdict::Continue,
    }
}

/// `ItemCompleting` for each item `input` (a `todo_write`) would complete:
/// the call's refusal when a hook keeps one open.
async fn item_gate(cx: &StageCx<'_>, input: &Value, said: &mut Said) -> Option<ToolOutput> {
    if !cx.host.hooks_at(HookEvent::ItemCompleting) {
        return None;
    }
    let (before, mut trial) = {
        let state = cx.plan.lock();
        (state.manager.items().to_vec(), state.manager.clone())
    };
    // A list the plan refuses is refused by the tool, with its reason.
    trial.update(input.get("todos")?).ok()?;
    let plan: Vec<Value> = trial.items().iter().map(item_json).collect();
    let completing = newly(&before, trial.items(), TodoStatus::Completed);
    let mut kept = Vec::new();
    for (n, item) in completing {
        let hooked = item_hooks(cx, HookEvent::ItemCompleting, (n, &item), &plan, said).await;
        if let Some(why) = hooked.blocked() {
            kept.push(format!("item {n} \"{}\" open: {why}", item.content));
        } else if item.scope.check.is_none() {
            hook_evidence(cx, n, &item, &hooked, said);
        }
    }
    if kept.is_empty() {
        return None;
    }
    let reason = format!(
        "an ItemCompleting hook keeps {}. Fix the cause, then send the plan again (the user can complete it by hand).",
        kept.join("; ")
    );
    let content = format!(
        "Error: plan refused: {reason} The previous plan is unchanged. Current plan:\n{}",
        cx.plan.lock().manager.render()
    );
    Some(ToolOutput::ended(
        content,
        ToolOutcome::Refused {
            by: Refuser::Plan,
            reason,
        },
    ))
}

/// `PostToolUse`, then a plan write's `ItemStarted` and `PlanUpdated`;
/// what they say is added to the result.
async fn post(
    cx: &StageCx<'_>,
    call: &Call<'_>,
    output: &mut ToolOutput,
    pending: Pending,
    said: &mut Said,
) {
    let mut notes = Vec::new();
    if let Some(input) = &pending.input {
        notes.push(format!(
            "[A PreToolUse hook changed this call's input to: {input}]"
        ));
    }
    notes.extend(
        pending
            .context
            .into_iter()
            .map(|c| format!("[PreToolUse hook: {c}]")),
    );
    if cx.host.hooks_at(HookEvent::PostToolUse) && !pending.blocked {
        let response = json!({
            "output": output.content,
            "is_error": output.outcome.is_error(),
            "exit_code": output.exit_code,
        });
        let hooked = call_hooks(cx, HookEvent::PostToolUse, call, Some(response), said).await;
        if let Some(why) = hooked.blocked() {
            notes.push(format!("[PostToolUse hook: {why}]"));
        }
        notes.extend(
            hooked
                .context
                .iter()
                .map(|c| format!("[PostToolUse hook: {c}]")),
        );
    }
    if let (Some(before), Some(change)) = (&pending.plan_before, &output.plan)
        && change.changed
    {
        let after = change.items.clone();
        notes.extend(plan_hooks(cx, before, &after, said).await);
    }
    if !notes.is_empty() {
        output.content = format!("{}\n\n{}", output.content.trim_end(), notes.join("\n"));
    }
}

/// `ItemStarted` for each item the write started, then `PlanUpdated`: what
/// they said for the model. A reply's `Done: N` lines run them too
/// ([`crate::agent::reply_done`]).
pub(in crate::agent) async fn plan_hooks(
    cx: &StageCx<'_>,
    before: &[TodoItem],
    after: &[TodoItem],
    said: &mut Said,
) -> Vec<String> {
    let mut notes = Vec::new();
    let plan: Vec<Value> = after.iter().map(item_json).collect();
    for (n, item) in newly(before, after, TodoStatus::InProgress) {
        let hooked = item_hooks(cx, HookEvent::ItemStarted, (n, &item), &plan, said).await;
        notes.extend(told("ItemStarted", &hooked));
    }
    if cx.host.hooks_at(HookEvent::PlanUpdated) {
        let fields = json!({"plan": plan, "previous_plan": before.iter().map(item_json).collect::<Vec<_>>()});
        let hooked = cx
            .host
            .run_hooks(Moment::of(HookEvent::PlanUpdated), fields, cx.cancel, said)
            .await;
        said.stop(hooked.stop.as_ref());
        notes.extend(told("PlanUpdated", &hooked));
    }
    notes
}

/// The hooks of `event` for `call` (with its result, after it); a
/// `continue: false` among them stops the turn after this round.
async fn call_hooks(
    cx: &StageCx<'_>,
    event: HookEvent,
    call: &Call<'_>,
    response: Option<Value>,
    said: &mut Said,
) -> Hooked {
    let (names, mut fields) = tool_fields(call);
    if let Some(response) = response {
        fields["tool_response"] = response;
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let moment = Moment {
        event,
        subjects: &names,
        label: Some(call.name),
    };
    let hooked = cx.host.run_hooks(moment, fields, cx.cancel, said).await;
    said.stop(hooked.stop.as_ref());
    hooked
}

/// An item without a check of its own whose `ItemCompleting` hooks all
/// passed (exit 0) has them as its evidence (issue 46).
fn hook_evidence(cx: &StageCx<'_>, n: usize, item: &TodoItem, hooked: &Hooked, said: &mut Said) {
    if hooked.runs.is_empty() || !hooked.runs.iter().all(|(_, passed)| *passed) {
        return;
    }
    let commands: Vec<&str> = hooked.runs.iter().map(|(c, _)| c.as_str()).collect();
    let evidence = crate::todo::Evidence {
        item: item.id.clone(),
        content: item.content.clone(),
        command: format!(
            "{}{}",
            crate::todo::evidence::HOOK_EVIDENCE,
            commands.join("; ")
        ),
        exit_code: Some(0),
        passed: true,
        duration_ms: 0,
        tail: String::new(),
    };
    cx.plan.lock().checks.record(evidence.clone());
    said.events
        .push(crate::events::Event::ItemChecked { n, evidence });
}

/// The hooks of an item's moment (`ItemStarted`, `ItemCompleting`): item
/// `n` of `plan`, matched on its text.
pub(in crate::agent) async fn item_hooks(
    cx: &StageCx<'_>,
    event: HookEvent,
    (n, item): (usize, &TodoItem),
    plan: &[Value],
    said: &mut Said,
) -> Hooked {
    let fields = json!({"item": item_json(item), "item_number": n, "plan": plan});
    let moment = Moment {
        event,
        subjects: &[&item.content],
        label: Some(&item.content),
    };
    let hooked = cx.host.run_hooks(moment, fields, cx.cancel, said).await;
    said.stop(hooked.stop.as_ref());
    hooked
}

/// The items of `after` (numbered from 1) that have `status` now and did
/// not have it in `before` (identity by id).
fn newly(before: &[TodoItem], after: &[TodoItem], status: TodoStatus) -> Vec<(usize, TodoItem)> {
    after
        .iter()
        .enumerate()
        .filter(|(_, item)| item.status == status)
        .filter(|(_, item)| !before.iter().any(|b| b.id == item.id && b.status == status))
        .map(|(at, item)| (at + 1, item.clone()))
        .collect()
}

/// What a hook said for the model: its block reason and its context.
fn told(event: &str, hooked: &Hooked) -> Vec<String> {
    hooked
        .blocked()
        .into_iter()
        .chain(hooked.context.iter().map(String::as_str))
        .map(|text| format!("[{event} hook: {text}]"))
        .collect()
}

/// An item as hooks read it.
pub(in crate::agent) fn item_json(item: &TodoItem) -> Value {
    json!({
        "id": item.id,
        "content": item.content,
        "activeForm": item.active_form,
        "status": item.status,
    })
}

/// The names a call's matcher is tried on, and its payload fields.
fn tool_fields(call: &Call<'_>) -> (Vec<String>, Value) {
    let alias = claude_tool_name(call.name);
    let mut input = call.input.clone();
    if let Some(fields) = input.as_object_mut()
        && let Some(path) = fields.get("path").cloned()
        && !fields.contains_key("file_path")
    {
        fields.insert("file_path".into(), path);
    }
    let mut names = vec![call.name.to_string()];
    names.extend(alias.map(str::to_string));
    let fields = json!({
        "tool_name": alias.unwrap_or(call.name),
        "tool_input": input,
        "tool_use_id": call.id,
    });
    (names, fields)
}

/// The input a hook's `updatedInput` makes: its fields over the call's
/// (Claude Code's `file_path` read back as `path`).
fn updated(input: &Value, mut fields: Map<String, Value>) -> Value {
    let mut out = input.as_object().cloned().unwrap_or_default();
    if out.contains_key("path")
        && !out.contains_key("file_path")
        && let Some(path) = fields.remove("file_path")
    {
        fields.insert("path".into(), path);
    }
    out.extend(fields);
    Value::Object(out)
}
