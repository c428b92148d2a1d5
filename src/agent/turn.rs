//! One turn: sample the model, run every tool call it asked for, answer
//! them all, and loop until it stops asking. Invariant: whatever happens
//! (interrupt, tool error, bad input), each `tool_use` gets exactly one
//! `tool_result` and each `ToolCallBegin` one `ToolCallEnd`. Every tool runs
//! the same way (live output, interrupt, a panic caught); the turn knows no
//! tool by name and learns of plan changes from the tool's output.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use futures_util::FutureExt;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::{Gate, refusal};
use super::compact::{fit_result, is_too_long};
use super::{Session, TurnEnd};
use crate::events::{
    AbortReason, ApprovalReason, CompactReason, Decision, ErrorKind, Event, StopReason, ToolStatus,
    ToolSummary,
};
use crate::llm::{AssistantReply, ContentBlock, LlmError, ModelRequest, StreamEvent};
use crate::session::{Record, now_ms};
use crate::tools::{ToolCtx, ToolEnv, ToolOutput, cap_output};

/// Corrective messages per turn for tool calls written as text.
const MAX_CORRECTIONS: u32 = 2;
const TEXT_TOOL_CALL_NOTE: &str = "Your last reply wrote a tool call as text, so nothing was run. To use a tool, \
call it through the tools interface (a structured tool call), not in your message text.";

/// How long a cancelled tool gets to stop on its own and return what it has
/// (bash kills its processes and drains its pipes in that time); after
/// that its future is dropped.
const CANCEL_GRACE: Duration = Duration::from_millis(300);

/// How a model request ended.
enum Sampled {
    Done(Result<AssistantReply, LlmError>),
    /// The user interrupted; `partial` is the reply's text streamed so far.
    Interrupted {
        partial: String,
    },
}

const NOT_RUN_RESULT: &str = "not run: the user interrupted the turn before this call started.";

impl Session {
    pub(super) async fn run_turn(&mut self, cancel: &CancellationToken) -> TurnEnd {
        let mut round = 0;
        let mut corrections = 0;
        loop {
            if round >= self.config.max_rounds {
                self.emit(Event::TurnAborted {
                    reason: AbortReason::MaxTurns,
                    message: format!(
                        "stopped after {round} model requests (--max-turns); resume to go on"
                    ),
                    error: None,
                });
                return TurnEnd::Stopped;
            }
            round += 1;
            self.emit(Event::RoundStarted { round });
            // A round boundary: compact when asked to, or when the request would not fit.
            let asked = self
                .compact_request
                .lock()
                .ok()
                .and_then(|mut slot| slot.take());
            if let Some(focus) = asked {
                self.compact(CompactReason::User, focus, cancel).await;
            } else if self.over_threshold() {
                self.compact(CompactReason::Threshold, None, cancel).await;
            }
            if cancel.is_cancelled() {
                self.emit(Event::TurnAborted {
                    reason: AbortReason::Interrupted,
                    message: "interrupted while the conversation was compacted".into(),
                    error: None,
                });
                return TurnEnd::Interrupted;
            }
            let mut retried = false;
            let result = loop {
                match self.sample(cancel).await {
                    Sampled::Done(Err(e)) if !retried && is_too_long(&e) => {
                        tracing::warn!(error = %e, "prompt too long; compacting and retrying");
                        retried = true;
                        self.compact(CompactReason::TooLong, None, cancel).await;
                    }
                    other => break other,
                }
            };
            let result = match result {
                Sampled::Done(result) => result,
                Sampled::Interrupted { partial } => {
                    // What the user saw stays the model's: resuming, it
                    // continues from there (the interrupt note follows).
                    if !partial.trim().is_empty() {
                        self.add_assistant(vec![ContentBlock::Text { text: partial }]);
                    }
                    self.emit(Event::TurnAborted {
                        reason: AbortReason::Interrupted,
                        message: "interrupted while the model was answering".into(),
                        error: None,
                    });
                    return TurnEnd::Interrupted;
                }
            };
            let reply = match result {
                Ok(reply) => reply,
                Err(e) => {
                    tracing::error!(error = %e, "model request failed");
                    self.emit(Event::TurnAborted {
                        reason: AbortReason::Failed,
                        message: e.to_string(),
                        error: Some(e.kind()),
                    });
                    return TurnEnd::Stopped;
                }
            };
            let u = reply.usage;
            let prompt = u.prompt_tokens();
            if prompt > 0 {
                self.last_prompt = Some((prompt, self.conversation.bytes()));
            }
            self.emit(Event::ContextUsage {
                used: prompt,
                window: self.window(),
            });
            self.count_usage(&u);
            let calls = reply.tool_calls();
            self.add_assistant(reply.content);
            if calls.is_empty()
                && reply.stop_reason == StopReason::TextToolCall
                && corrections < MAX_CORRECTIONS
            {
                // The model wrote a tool call as text: it was not run; say how to call tools.
                corrections += 1;
                self.emit(Event::Error {
                    kind: ErrorKind::TextToolCall,
                    message: "The model wrote a tool call as text; it was not run, and the model was asked to use the tools API."
                        .into(),
                });
                self.add_user_text(TEXT_TOOL_CALL_NOTE, false);
                continue;
            }
            if calls.is_empty() {
                let open_items = self.plan.lock().manager.open_items().len();
                self.emit(Event::TurnComplete {
                    stop_reason: reply.stop_reason,
                    open_items,
                });
                return TurnEnd::Complete;
            }

            let mut results = Vec::with_capacity(calls.len());
            let mut plan_written = false;
            for (id, name, input) in calls {
                if cancel.is_cancelled() {
                    let output = ToolOutput::error(NOT_RUN_RESULT);
                    results.push(self.answer(&id, &name, output, ToolStatus::Interrupted, 0));
                    continue;
                }
                let invalid = reply
                    .invalid_inputs
                    .iter()
                    .find(|(bad, _)| *bad == id)
                    .map(|(_, why)| why.clone());
                let (result, status, written) =
                    self.run_tool(&id, &name, &input, invalid, cancel).await;
                plan_written |= written;
                results.push(result);
                if status == ToolStatus::Interrupted {
                    tracing::info!(tool = %name, "tool interrupted");
                }
            }
            if cancel.is_cancelled() {
                self.add_tool_results(results, Vec::new());
                self.emit(Event::TurnAborted {
                    reason: AbortReason::Interrupted,
                    message: "interrupted while tools were running".into(),
                    error: None,
                });
                return TurnEnd::Interrupted;
            }
            let nag = {
                let plan = self.plan.lock();
                self.reminders.after_round(plan_written, &plan.manager)
            };
            let note = self.take_plan_note();
            self.add_tool_results(results, nag.into_iter().chain(note).collect());
        }
    }

    /// One model request over the conversation as it is.
    async fn sample(&mut self, cancel: &CancellationToken) -> Sampled {
        let request = ModelRequest {
            system: &self.config.system_prompt,
            messages: self.conversation.messages(),
            tools: &self.tool_defs,
            max_tokens: self.config.max_tokens,
        };
        let events = self.events.clone();
        // The reply's text so far (since the last retry), kept if interrupted.
        let mut partial = String::new();
        let mut on_stream = |ev: StreamEvent| {
            let event = match ev {
                StreamEvent::TextDelta(text) => {
                    partial.push_str(&text);
                    Event::TextDelta { text }
                }
                StreamEvent::ReasoningDelta(text) => Event::ReasoningDelta { text },
                StreamEvent::Retrying {
                    attempt,
                    delay_ms,
                    reason,
                } => {
                    partial.clear();
                    Event::Retrying {
                        attempt,
                        delay_ms,
                        reason,
                    }
                }
            };
            let _ = events.send(event);
        };
        let done = tokio::select! {
            r = self.client.stream(&request, &mut on_stream) => Some(r),
            _ = cancel.cancelled() => None,
        };
        match done {
            Some(result) => Sampled::Done(result),
            None => Sampled::Interrupted { partial },
        }
    }

    /// Runs one call and emits its Begin/End (and the plan it changed);
    /// returns the result (recorded), its status and whether the plan was
    /// written.
    async fn run_tool(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        invalid_input: Option<String>,
        cancel: &CancellationToken,
    ) -> (ContentBlock, ToolStatus, bool) {
        let started = Instant::now();
        let waited_before = self.approval_wait;
        let active = self.plan.lock().manager.in_progress().cloned();
        // Described once (a file change reads its file): the approval
        // request shows the same.
        let summary = self.tools.describe(name, input, &self.workspace);
        self.emit(Event::ToolCallBegin {
            id: id.to_string(),
            name: name.to_string(),
            summary: summary.clone(),
            input: input.clone(),
            plan_item_id: active.as_ref().map(|i| i.id.clone()),
            plan_item: active.map(|i| i.content),
        });
        let output = if let Some(why) = invalid_input {
            ToolOutput::error(format!(
                "{why}. Call `{name}` again with a JSON object matching its schema."
            ))
        } else if !input.is_object() {
            ToolOutput::error(format!("the input of `{name}` must be a JSON object"))
        } else {
            self.apply_mode_request();
            match self.gate(name, input) {
                Gate::Refuse(why) => ToolOutput::refused(why),
                Gate::Run { sandboxed } => {
                    self.run_gated(id, name, input, summary, sandboxed, cancel)
                        .await
                }
                Gate::Ask(reason) => match self.ask(id, name, input, summary, reason, cancel).await
                {
                    None => ToolOutput::interrupted("It was waiting for approval and did not run."),
                    Some(Decision::Refuse { reason }) => {
                        ToolOutput::refused(refusal(reason.as_deref()))
                    }
                    Some(Decision::Once | Decision::Always) => {
                        self.call_tool(id, name, input, false, cancel).await
                    }
                },
            }
        };
        let mut plan_written = false;
        if let Some(change) = &output.plan {
            // Re-sending the same plan still counts as tending it (no nag),
            // but only a real change is announced.
            plan_written = true;
            if change.changed {
                self.model_revision(change);
            }
        }
        let status = if output.interrupted {
            ToolStatus::Interrupted
        } else if output.is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        let waited = self.approval_wait.saturating_sub(waited_before);
        let ran = started.elapsed().saturating_sub(waited);
        let duration_ms = u64::try_from(ran.as_millis()).unwrap_or(u64::MAX);
        self.emit(Event::ToolCallEnd {
            id: id.to_string(),
            name: name.to_string(),
            status,
            duration_ms,
            output: output.content.clone(),
            exit_code: output.exit_code,
        });
        let result = self.answer(id, name, output, status, duration_ms);
        (result, status, plan_written)
    }

    /// A call's result as the model gets it (fitted to the window), recorded.
    fn answer(
        &mut self,
        id: &str,
        name: &str,
        out: ToolOutput,
        status: ToolStatus,
        duration_ms: u64,
    ) -> ContentBlock {
        let content = fit_result(out.content, self.window());
        self.record(&Record::ToolResult {
            id: Cow::Borrowed(id),
            name: Cow::Borrowed(name),
            content: Cow::Borrowed(&content),
            is_error: out.is_error,
            status,
            duration_ms,
            exit_code: out.exit_code,
            at: now_ms(),
        });
        ContentBlock::ToolResult {
            tool_use_id: id.to_string(),
            content,
            is_error: out.is_error,
        }
    }

    /// Counts one request's tokens in the session's totals and reports
    /// them (`Usage`, recorded and fed to the per-item account): every
    /// request the engine sends, a compaction's summary included.
    pub(super) fn count_usage(&mut self, u: &crate::llm::Usage) {
        self.totals.add(u);
        self.emit(Event::Usage {
            model: self.client.model().to_string(),
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
            total_input_tokens: self.totals.input_tokens,
            total_output_tokens: self.totals.output_tokens,
            total_cache_read_tokens: self.totals.cache_read_tokens,
            total_cache_write_tokens: self.totals.cache_write_tokens,
        });
    }

    /// Runs a call the gate let through; one the sandbox stopped may be run
    /// again outside it if the user says so (the model is told otherwise).
    async fn run_gated(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        summary: ToolSummary,
        sandboxed: bool,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let out = self.call_tool(id, name, input, sandboxed, cancel).await;
        if !sandboxed || out.interrupted {
            return out;
        }
        let Some(sandbox) = self.config.tools.sandbox.as_ref() else {
            return out;
        };
        let Some(what) = crate::safety::sandbox::blocked(&out.content, sandbox).map(str::to_string)
        else {
            return out;
        };
        let reason = ApprovalReason::SandboxBlocked { what: what.clone() };
        match self.ask(id, name, input, summary, reason, cancel).await {
            Some(Decision::Once | Decision::Always) => {
                self.call_tool(id, name, input, false, cancel).await
            }
            None => out,
            Some(Decision::Refuse { .. }) => ToolOutput {
                content: format!(
                    "{}\n[blocked by the sandbox: {what}. Commands run with writes limited to the workspace, the temp folder and cargo's download caches; the user did not allow running it outside.]",
                    out.content
                ),
                ..out
            },
        }
    }

    /// Runs the tool `name` from the registry, forwarding its live output.
    async fn call_tool(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        sandboxed: bool,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let tool_cancel = cancel.child_token();
        // A tool that can write files marks the plan file's changes
        // meanwhile as its own, not the user's.
        let writes = self.tools.get(name).is_some_and(|t| {
            matches!(
                t.access(),
                crate::tools::Access::Write | crate::tools::Access::Exec
            )
        });
        let _running = writes.then(|| self.plan.tool_running());
        let ctx = ToolCtx {
            env: ToolEnv {
                workspace: &self.workspace,
                config: &self.config.tools,
                cancel: &tool_cancel,
                output: Some(&out_tx),
                sandboxed,
            },
            plan: &self.plan,
        };
        let events = &self.events;
        let forward = |chunk: String| {
            let _ = events.send(Event::ToolCallOutputDelta {
                id: id.to_string(),
                chunk,
            });
        };
        // A bug in a tool becomes an error result, so its Begin still gets an End.
        let run = AssertUnwindSafe(self.tools.run(name, input, ctx))
            .catch_unwind()
            .map(|r| {
                r.unwrap_or_else(|_| {
                    ToolOutput::error("the tool crashed (a bug in Waypoint); see the log")
                })
            });
        tokio::pin!(run);
        // What the tool streamed, for the result when it must be dropped.
        let mut streamed = String::new();
        let cap = self.config.tools.output_cap;
        let mut keep = |chunk: &str| {
            // Bounded: head and tail are all the model would see anyway.
            if streamed.len() < cap.saturating_mul(4) {
                streamed.push_str(chunk);
            }
        };
        // Interrupted: a tool that watches the token (bash kills its
        // processes) returns what it has, output so far included; one that
        // does not is dropped after the grace, and the model gets what it
        // streamed.
        let grace = tokio::time::sleep(CANCEL_GRACE);
        tokio::pin!(grace);
        let mut cancelled = false;
        loop {
            tokio::select! {
                out = &mut run => {
                    while let Ok(chunk) = out_rx.try_recv() {
                        forward(chunk);
                    }
                    return out;
                }
                _ = tool_cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                }
                _ = &mut grace, if cancelled => break,
                Some(chunk) = out_rx.recv() => {
                    keep(&chunk);
                    forward(chunk);
                }
            }
        }
        while let Ok(chunk) = out_rx.try_recv() {
            keep(&chunk);
            forward(chunk);
        }
        if streamed.is_empty() {
            ToolOutput::interrupted("")
        } else {
            ToolOutput::interrupted(format!("Output so far:\n{}", cap_output(&streamed, cap)))
        }
    }
}
