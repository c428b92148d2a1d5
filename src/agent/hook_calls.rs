//! Hooks around a tool call (the pipeline's stages 2 and 6): `PreToolUse`
//! may block the call, change its input, allow it or have the user asked;
//! `PostToolUse` may add to what the model reads of the result. The
//! plan's own moments ride on `todo_write`: `ItemCompleting` runs for
//! every item the write would complete, before it is applied, and one
//! that blocks keeps the plan as it was and tells the model why;
//! `ItemStarted` and `PlanUpdated` run after an accepted write.
//!
//! A hook written for Claude Code sees Claude Code's names: `tool_name`
//! is `Bash`, `Write`, `Edit`, `Read`, … for Waypoint's own tools (the
//! matcher takes either name), and `tool_input` carries `file_path`
//! beside `path`; an `updatedInput` in either shape is read back.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::Gate;
use super::hooks::Hooked;
use super::pipeline::Call;
use crate::events::ApprovalReason;
use crate::hooks::{Decision, HookEvent, claude_tool_name};
use crate::todo::{TodoItem, TodoStatus};
use crate::tools::{Refuser, ToolOutput};

/// What the hooks before a call decided.
#[derive(Debug, Default)]
pub(super) struct PreHooked {
    /// The call's answer when it must not run (blocked).
    pub refusal: Option<ToolOutput>,
    /// A hook blocked the call (it did not run).
    pub blocked: bool,
    /// The input it runs with instead.
    pub input: Option<Value>,
    /// `Allow` or `Ask` from a hook; `Continue` leaves the gate alone.
    pub permission: Decision,
    /// For the model, after the result.
    pub context: Vec<String>,
    /// A plan write's plan before it (for `ItemStarted`).
    pub plan_before: Option<Vec<TodoItem>>,
}

impl Session {
    /// Stage 2: `PreToolUse`, then a plan write's `ItemCompleting`.
    pub(super) async fn pre_hooks(
        &mut self,
        call: &Call<'_>,
        cancel: &CancellationToken,
    ) -> PreHooked {
        let mut pre = PreHooked::default();
        if self.hooks_at(HookEvent::PreToolUse) {
            let hooked = self
                .call_hooks(HookEvent::PreToolUse, call, None, cancel)
                .await;
            match hooked.decision {
                Decision::Block(why) => {
                    pre.blocked = true;
                    pre.refusal = Some(ToolOutput::refused(
                        Refuser::Hook,
                        format!("Refused by a PreToolUse hook: {why}"),
                    ));
                    return pre;
                }
                other => pre.permission = other,
            }
            pre.input = hooked
                .updated_input
                .map(|fields| updated(call.input, fields));
            pre.context = hooked.context;
        }
        if call.name == "todo_write" {
            pre.plan_before = Some(self.thread.plan.items());
            let input = pre.input.as_ref().unwrap_or(call.input);
            if let Some(refused) = self.item_gate(input, cancel).await {
                pre.blocked = true;
                pre.refusal = Some(refused);
            }
        }
        pre
    }

    /// `ItemCompleting` for each item `input` (a `todo_write`) would
    /// complete: the call's refusal when a hook keeps one open.
    async fn item_gate(&mut self, input: &Value, cancel: &CancellationToken) -> Option<ToolOutput> {
        if !self.hooks_at(HookEvent::ItemCompleting) {
            return None;
        }
        let (before, mut trial) = {
            let state = self.thread.plan.lock();
            (state.manager.items().to_vec(), state.manager.clone())
        };
        // A list the plan refuses is refused by the tool, with its reason.
        trial.update(input.get("todos")?).ok()?;
        let plan: Vec<Value> = trial.items().iter().map(item_json).collect();
        let completing = newly(&before, trial.items(), TodoStatus::Completed);
        let mut kept = Vec::new();
        for (n, item) in completing {
            let hooked = self
                .item_hooks(HookEvent::ItemCompleting, n, &item, &plan, cancel)
                .await;
            if let Some(why) = hooked.blocked() {
                kept.push(format!("item {n} \"{}\" open: {why}", item.content));
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
            self.thread.plan.lock().manager.render()
        );
        Some(ToolOutput::ended(
            content,
            crate::events::ToolOutcome::Refused {
                by: Refuser::Plan,
                reason,
            },
        ))
    }

    /// Stage 3's gate as a `PreToolUse` hook's `permissionDecision` bends
    /// it: `ask` asks whatever the mode, `allow` runs what the mode would
    /// ask about; a refusal (read-only, a deny rule) stands.
    pub(super) fn hooked_gate(&self, gate: Gate, permission: &Decision) -> Gate {
        match (gate, permission) {
            (gate @ Gate::Refuse(..), _) => gate,
            (_, Decision::Ask(why)) => {
                let why = if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                };
                Gate::Ask(ApprovalReason::Tool {
                    question: format!("A PreToolUse hook wants you asked{why}"),
                })
            }
            (Gate::Ask(_), Decision::Allow) => Gate::Run { sandboxed: false },
            (gate, _) => gate,
        }
    }

    /// Stage 6: `PostToolUse`, then a plan write's `ItemStarted` and
    /// `PlanUpdated`; what they say is added to the result.
    pub(super) async fn post_hooks(
        &mut self,
        call: &Call<'_>,
        mut output: ToolOutput,
        pre: PreHooked,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let mut notes = Vec::new();
        if let Some(input) = &pre.input {
            notes.push(format!(
                "[A PreToolUse hook changed this call's input to: {input}]"
            ));
        }
        notes.extend(
            pre.context
                .into_iter()
                .map(|c| format!("[PreToolUse hook: {c}]")),
        );
        if self.hooks_at(HookEvent::PostToolUse) && !pre.blocked {
            let response = json!({
                "output": output.content,
                "is_error": output.outcome.is_error(),
                "exit_code": output.exit_code,
            });
            let hooked = self
                .call_hooks(HookEvent::PostToolUse, call, Some(response), cancel)
                .await;
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
        if let (Some(before), Some(change)) = (&pre.plan_before, &output.plan)
            && change.changed
        {
            let after = change.items.clone();
            notes.extend(self.plan_hooks(before, &after, cancel).await);
        }
        if !notes.is_empty() {
            output.content = format!("{}\n\n{}", output.content.trim_end(), notes.join("\n"));
        }
        output
    }

    /// `ItemStarted` for each item the write started, then `PlanUpdated`:
    /// what they said for the model.
    async fn plan_hooks(
        &mut self,
        before: &[TodoItem],
        after: &[TodoItem],
        cancel: &CancellationToken,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        let plan: Vec<Value> = after.iter().map(item_json).collect();
        for (n, item) in newly(before, after, TodoStatus::InProgress) {
            let hooked = self
                .item_hooks(HookEvent::ItemStarted, n, &item, &plan, cancel)
                .await;
            notes.extend(said("ItemStarted", &hooked));
        }
        if self.hooks_at(HookEvent::PlanUpdated) {
            let fields = json!({"plan": plan, "previous_plan": before.iter().map(item_json).collect::<Vec<_>>()});
            let hooked = self
                .run_hooks(HookEvent::PlanUpdated, &[], None, fields, cancel)
                .await;
            self.hook_stop(&hooked);
            notes.extend(said("PlanUpdated", &hooked));
        }
        notes
    }

    /// The hooks of `event` for `call` (with its result, after it), and
    /// a `continue: false` among them kept for the turn.
    async fn call_hooks(
        &mut self,
        event: HookEvent,
        call: &Call<'_>,
        response: Option<Value>,
        cancel: &CancellationToken,
    ) -> Hooked {
        let (names, mut fields) = tool_fields(call);
        if let Some(response) = response {
            fields["tool_response"] = response;
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let hooked = self
            .run_hooks(event, &names, Some(call.name), fields, cancel)
            .await;
        self.hook_stop(&hooked);
        hooked
    }

    /// The hooks of an item's moment (`ItemStarted`, `ItemCompleting`):
    /// item `n` of `plan`, matched on its text.
    async fn item_hooks(
        &mut self,
        event: HookEvent,
        n: usize,
        item: &TodoItem,
        plan: &[Value],
        cancel: &CancellationToken,
    ) -> Hooked {
        let fields = json!({"item": item_json(item), "item_number": n, "plan": plan});
        let hooked = self
            .run_hooks(event, &[&item.content], Some(&item.content), fields, cancel)
            .await;
        self.hook_stop(&hooked);
        hooked
    }

    /// A hook's `continue: false`: the turn stops after this round.
    pub(super) fn hook_stop(&mut self, hooked: &Hooked) {
        if let Some(why) = &hooked.stop
            && self.thread.run.hook_stop.is_none()
        {
            self.thread.run.hook_stop = Some(why.clone());
        }
    }
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
fn said(event: &str, hooked: &Hooked) -> Vec<String> {
    hooked
        .blocked()
        .into_iter()
        .chain(hooked.context.iter().map(String::as_str))
        .map(|text| format!("[{event} hook: {text}]"))
        .collect()
}

/// An item as hooks read it.
fn item_json(item: &TodoItem) -> Value {
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
