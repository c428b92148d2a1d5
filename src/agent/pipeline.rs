//! One tool call, in named steps: describe → the call stages' `before`
//! (hooks, the hook-script guard: [`super::stages`]) → gate (and the
//! user's approval) → checkpoint → run → the stages' `after`, in reverse →
//! announce. Every call goes through all of them, whatever the tool; a
//! feature that acts on calls is a stage of its own and touches no other.
//! Invariants: a `ToolCallBegin` is always followed by one `ToolCallEnd`
//! (a tool that panics becomes a `crashed` result), and every outcome is
//! typed ([`ToolOutcome`]): nothing downstream reads the output's text to
//! learn how the call ended.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::{Gate, refusal};
use super::compact::fit_result;
use super::invoke::Invocations;
use super::stages::{Call, StageCx, Verdict};
use super::tool_host::Serving;
use crate::events::{Decision, Event, ToolStatus, ToolSummary};
use crate::llm::ContentBlock;
use crate::session::live::LiveOutput;
use crate::tools::{
    Failure, Refuser, ToolCtx, ToolEnv, ToolHost, ToolOutcome, ToolOutput, cap_output,
};

/// How long a cancelled tool gets to stop on its own and return what it has
/// (bash kills its processes and drains its pipes in that time); after
/// that its future is dropped.
const CANCEL_GRACE: Duration = Duration::from_millis(300);
/// A subagent's: its own tools get [`CANCEL_GRACE`] first, then it ends
/// its turn and says what it had.
const TASK_CANCEL_GRACE: Duration = Duration::from_millis(1500);

/// A call done: its result (recorded), and whether it wrote the plan.
pub(super) struct Done {
    pub result: ContentBlock,
    pub plan_written: bool,
    /// Images the tool gave, shown to the model after the results.
    pub images: Vec<crate::chat::ImageSource>,
}

impl Session {
    /// Runs `calls` through every stage, one path whether they are one or
    /// many: each is described (in order), then passes the hooks before it
    /// and the gate, in order; those the registry lets run beside others
    /// (judged on their input as the hooks left it) run together, any
    /// other where it stands, on its own (a checkpoint first when it may
    /// write; an approval asked of the user first when the gate asks);
    /// then each passes the hooks after it and is finished, in order. So
    /// hooks never make calls run one at a time.
    pub(super) async fn run_calls_in_batch(
        &mut self,
        calls: &[Call<'_>],
        cancel: &CancellationToken,
    ) -> Vec<Done> {
        let started = Instant::now();
        let waited_before = self.thread.run.approval_wait;
        let summaries: Vec<ToolSummary> = calls.iter().map(|call| self.describe(call)).collect();
        let fan_out = self.ask_fan_out(calls, &summaries, cancel).await;
        // The input each call runs with: the stages' change (a hook's), else
        // the model's; and what they say of it.
        let mut changed: Vec<Option<Value>> = Vec::with_capacity(calls.len());
        let mut verdicts = Vec::with_capacity(calls.len());
        for call in calls {
            let before = self.stages.pass_before(self.voice(), call, cancel).await;
            changed.push(before.input);
            verdicts.push(before.verdict);
        }
        let calls: Vec<Call<'_>> = calls
            .iter()
            .zip(&changed)
            .map(|(call, changed)| Call {
                input: changed.as_ref().unwrap_or(call.input),
                invalid_input: call.invalid_input.clone(),
                ..*call
            })
            .collect();
        let lone = calls.len() == 1;
        let mut outputs: Vec<Option<ToolOutput>> = Vec::with_capacity(calls.len());
        let mut runs = Vec::new();
        for (at, (call, summary)) in calls.iter().zip(summaries).enumerate() {
            let verdict = std::mem::take(&mut verdicts[at]);
            let ready = match (verdict, &fan_out) {
                (Verdict::Refuse(output), _) => Err(*output),
                (_, Some(output)) if self.thread.tools.is_agent(call.name) => Err(output.clone()),
                (verdict, _) => match unusable_input(call) {
                    Some(output) => Err(output),
                    None => Ok(verdict),
                },
            };
            let ready = match ready {
                Err(output) => Some(output),
                Ok(verdict) if lone || !self.thread.tools.parallel(call.name, call.input) => {
                    let judged = self.judge(call, verdict);
                    Some(self.run_judged(call, summary, judged, cancel).await)
                }
                Ok(verdict) => match self.judge(call, verdict) {
                    Ok(Gate::Run { sandboxed }) => {
                        runs.push((at, sandboxed, summary));
                        None
                    }
                    judged => Some(self.run_judged(call, summary, judged, cancel).await),
                },
            };
            outputs.push(ready);
        }
        self.run_together(&calls, runs, &mut outputs, cancel).await;
        // The batch's time without the user's answers; each call adds the
        // time of its own hooks after it.
        let waited = self.thread.run.approval_wait.saturating_sub(waited_before);
        let ran = started.elapsed().saturating_sub(waited);
        let mut done = Vec::with_capacity(calls.len());
        for (call, output) in calls.iter().zip(outputs) {
            let mut output = output.unwrap_or_else(|| ToolOutput::error("the call was lost"));
            let after = Instant::now();
            self.stages
                .pass_after(self.voice(), call, &mut output, cancel)
                .await;
            done.push(self.finish(call, output, ran + after.elapsed()));
        }
        done
    }

    /// Stage 5 for the calls the gate let run beside each other (`runs`:
    /// where each stands in `calls`, whether it is sandboxed, how it is
    /// shown): they run at the same time, their outputs go to `outputs`;
    /// a command the sandbox stopped may then be run again outside it,
    /// one at a time, if the user says so.
    async fn run_together(
        &mut self,
        calls: &[Call<'_>],
        runs: Vec<(usize, bool, ToolSummary)>,
        outputs: &mut [Option<ToolOutput>],
        cancel: &CancellationToken,
    ) {
        let this = &*self;
        let ran = futures_util::future::join_all(
            runs.iter()
                .map(|(at, sandboxed, _)| this.execute(&calls[*at], *sandboxed, cancel)),
        )
        .await;
        let mut waited = Duration::ZERO;
        for ((at, sandboxed, summary), (output, wait)) in runs.into_iter().zip(ran) {
            waited = waited.max(wait);
            let output = match &output.outcome {
                ToolOutcome::SandboxBlocked { what } if sandboxed => {
                    let what = what.clone();
                    self.outside_sandbox(&calls[at], summary, output, what, cancel)
                        .await
                }
                _ => output,
            };
            outputs[at] = Some(output);
        }
        self.thread.run.approval_wait += waited;
    }

    /// A call the turn's interrupt kept from starting: answered, never run.
    pub(super) fn not_run(&mut self, id: &str, name: &str) -> ContentBlock {
        let output = ToolOutput::ended(crate::events::NOT_RUN.to_string(), ToolOutcome::NotRun);
        self.answer(id, name, output, 0, false)
    }

    /// Stage 1: how the call is shown (a file change reads its file, so
    /// the approval request shows the same), told as `ToolCallBegin`.
    fn describe(&mut self, call: &Call<'_>) -> ToolSummary {
        self.thread.run.tool_calls = self.thread.run.tool_calls.saturating_add(1);
        let active = self.thread.plan.lock().manager.in_progress().cloned();
        let summary =
            self.thread
                .tools
                .describe(call.name, call.input, &self.host.shared.workspace);
        self.emit(Event::ToolCallBegin {
            id: call.id.to_string(),
            name: call.name.to_string(),
            summary: summary.clone(),
            input: call.input.clone(),
            plan_item_id: active.as_ref().map(|i| i.id.clone()),
            plan_item: active.map(|i| i.content),
        });
        summary
    }

    /// Stage 3's judgement: the approval mode and the rules, as the
    /// stages' `verdict` (a hook's among them) bends them; `Err` is the answer of a call
    /// a stage refused.
    fn judge(&mut self, call: &Call<'_>, verdict: Verdict) -> Result<Gate, Box<ToolOutput>> {
        super::approval::apply_mode_request(self.voice());
        let judge = super::rule_gate::Judge {
            host: &self.host,
            tools: &self.thread.tools,
        };
        verdict.bend(judge.gate(call.name, call.input))
    }

    /// Stage 3's end: the user decides what was to be asked; then the call
    /// runs (stages 4 and 5), and a command the sandbox stopped may be run
    /// again outside it if the user says so.
    async fn run_judged(
        &mut self,
        call: &Call<'_>,
        summary: ToolSummary,
        judged: Result<Gate, Box<ToolOutput>>,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let gate = match judged {
            Ok(gate) => gate,
            Err(output) => return *output,
        };
        match gate {
            Gate::Refuse(by, why) => ToolOutput::refused(by, why),
            Gate::Run { sandboxed } => {
                let out = self.checkpoint_and_run(call, sandboxed, cancel).await;
                match &out.outcome {
                    ToolOutcome::SandboxBlocked { what } if sandboxed => {
                        let what = what.clone();
                        self.outside_sandbox(call, summary, out, what, cancel).await
                    }
                    _ => out,
                }
            }
            Gate::Ask(reason) => match self.ask(call.parts(), summary, reason, cancel).await {
                None => ToolOutput::interrupted("It was waiting for approval and did not run.", ""),
                Some(Decision::Refuse { reason }) => {
                    ToolOutput::refused(Refuser::User, refusal(reason.as_deref()))
                }
                Some(Decision::Once | Decision::Always) => {
                    self.checkpoint_and_run(call, false, cancel).await
                }
            },
        }
    }

    /// Stage 4, the checkpoint, then stage 5, the run: a call that may
    /// write waits for the points asked for before it (their snapshots),
    /// and an own tool's file keeps its pre-image (see
    /// [`Session::checkpoint_before`], called where the call takes its
    /// turn to write).
    pub(super) async fn checkpoint_and_run(
        &mut self,
        call: &Call<'_>,
        sandboxed: bool,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let (output, waited) = self.execute(call, sandboxed, cancel).await;
        self.thread.run.approval_wait += waited;
        output
    }

    /// Stage 7: the plan revision the call made, then its `ToolCallEnd`
    /// with its result as the model gets it.
    fn finish(&mut self, call: &Call<'_>, output: ToolOutput, ran: Duration) -> Done {
        let mut plan_written = false;
        if let Some(change) = &output.plan {
            // Re-sending the same plan still counts as tending it (no nag),
            // but only a real change is announced.
            plan_written = true;
            if change.changed {
                super::plan::model_revision(self.voice(), change);
            }
        }
        if output.outcome.status() == ToolStatus::Interrupted {
            tracing::info!(tool = %call.name, "tool interrupted");
        }
        self.record_tasks(call.id);
        if let Some(skill) = &output.skill {
            Invocations(self.voice()).skill_loaded(skill, &output.content);
        }
        Invocations(self.voice()).tell_jobs();
        let duration_ms = u64::try_from(ran.as_millis()).unwrap_or(u64::MAX);
        let mut output = output;
        let images = std::mem::take(&mut output.images);
        let result = self.answer(call.id, call.name, output, duration_ms, true);
        Done {
            result,
            plan_written,
            images,
        }
    }

    /// A call's result as the model gets it (fitted to the window): its
    /// `ToolCallEnd` (sent when the call was announced), which the
    /// transcript keeps as the result.
    fn answer(
        &mut self,
        id: &str,
        name: &str,
        out: ToolOutput,
        duration_ms: u64,
        announced: bool,
    ) -> ContentBlock {
        let content = fit_result(out.content, self.thread.window(&self.host.config));
        let is_error = out.outcome.is_error();
        let end = Event::ToolCallEnd {
            id: id.to_string(),
            name: name.to_string(),
            status: out.outcome.status(),
            outcome: out.outcome,
            duration_ms,
            output: content.clone(),
            exit_code: out.exit_code,
        };
        if announced {
            self.emit(end);
        } else {
            self.voice().record_only(end);
        }
        // Recorded: what was kept of its live output is not needed now.
        if let Some(path) = self.host.transcript.path() {
            crate::session::live::done(&path, self.host.events.thread(), id);
        }
        ContentBlock::ToolResult {
            tool_use_id: id.to_string(),
            content: content.into(),
            is_error,
        }
    }

    /// Runs the tool from the registry, forwarding its live output; a
    /// panic is a `crashed` result, and an interrupted tool that does not
    /// stop in [`CANCEL_GRACE`] is dropped with what it streamed. Also
    /// how long its questions waited for the user. Calls of one thread
    /// may run at once ([`Session::run_calls_in_batch`]): this takes the
    /// session shared.
    async fn execute(
        &self,
        call: &Call<'_>,
        sandboxed: bool,
        cancel: &CancellationToken,
    ) -> (ToolOutput, Duration) {
        let (out_tx, mut out_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let (host_tx, mut host_rx) = tokio::sync::mpsc::unbounded_channel();
        let tool_cancel = cancel.child_token();
        // A writing tool's plan-file changes meanwhile are not the user's.
        let writes = self.thread.tools.may_write(call.name);
        let _running = writes.then(|| self.thread.plan.tool_running());
        let Ok(_writing) = self.host.turn_to_write(writes, &tool_cancel).await else {
            let note = "It was waiting for another agent's write and did not run.";
            return (ToolOutput::interrupted(note, ""), Duration::ZERO);
        };
        let running = self.stages.pass_running(self.voice(), call, &tool_cancel);
        if let Some(refused) = running.await {
            return (refused, Duration::ZERO);
        }
        let stage_cx = StageCx::of(&self.host, &self.thread, &tool_cancel);
        let read_only = stage_cx.mode() == crate::events::ApprovalMode::Plan; // nothing writable
        let narrowing = super::stages::scope::narrowing(&stage_cx, call).filter(|_| sandboxed);
        let spawner = super::subagent::Spawner {
            session: self,
            call: call.id,
            cancel: &tool_cancel,
        };
        let events = &self.host.events;
        // Kept on disk as it runs: a session cut off now has its true end.
        let path = self.host.transcript.path();
        let live = LiveOutput::start(path.as_deref(), events.thread(), call.id);
        let keep_output = |chunk: &str| live.push(chunk);
        let ctx = ToolCtx {
            env: ToolEnv {
                workspace: &self.host.shared.workspace,
                config: &self.host.config.tools,
                cancel: &tool_cancel,
                output: Some(&out_tx),
                kept: Some(&keep_output),
                sandboxed: sandboxed || read_only,
                read_only,
                narrowed: narrowing.as_ref(),
                call: Some((events.thread().0, call.id)),
            },
            plan: &self.thread.plan,
            host: self.tool_host(&host_tx, &spawner),
        };
        let cwd = self.host.shared.workspace.root().display().to_string();
        let shared = (&*self.host.shared.policy, &self.host.shared.approvals);
        let mut serving = Serving::new((call.id, call.name), cwd, events, shared);
        let mut waiting: Option<tokio::sync::oneshot::Receiver<crate::events::Decision>> = None;
        let forward = |chunk: String| {
            events.send(Event::ToolCallOutputDelta {
                id: call.id.to_string(),
                chunk,
            });
        };
        let run = AssertUnwindSafe(self.thread.tools.run(call.name, call.input, ctx))
            .catch_unwind()
            .map(|r| r.unwrap_or_else(|_| crashed()));
        tokio::pin!(run);
        // What the tool streamed, for the result when it must be dropped.
        let mut streamed = String::new();
        let cap = self.host.config.tools.output_cap;
        let mut keep = |chunk: &str| {
            // Bounded: head and tail are all the model would see anyway.
            if streamed.len() < cap.saturating_mul(4) {
                streamed.push_str(chunk);
            }
        };
        let grace_of = grace_of(&self.thread.tools, call.name);
        let grace = tokio::time::sleep(grace_of);
        tokio::pin!(grace);
        let mut cancelled = false;
        loop {
            tokio::select! {
                out = &mut run => {
                    while let Ok(chunk) = out_rx.try_recv() {
                        forward(chunk);
                    }
                    self.stages.ran(&stage_cx, call);
                    return (out, serving.waited());
                }
                Some(request) = host_rx.recv() => {
                    if let Some(rx) = serving.take(request) {
                        waiting = Some(rx);
                    }
                }
                answer = async {
                    match waiting.as_mut() {
                        Some(rx) => rx.await.ok(),
                        None => std::future::pending().await,
                    }
                }, if waiting.is_some() && serving.is_asking() => {
                    waiting = None;
                    serving.answered(answer);
                }
                _ = tool_cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    serving.withdraw();
                    grace.as_mut().reset(tokio::time::Instant::now() + grace_of);
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
        self.stages.ran(&stage_cx, call);
        let interrupted = ToolOutput::interrupted("", &cap_output(&streamed, cap));
        (interrupted, serving.waited())
    }
}

/// The result of a tool that panicked.
fn crashed() -> ToolOutput {
    ToolOutput::failed(
        Failure::Crashed,
        "the tool crashed (a bug in Waypoint); see the log",
    )
}

impl Session {
    /// What a call's tool may ask of its host: the user, subagents, the
    /// session's background jobs.
    fn tool_host<'a>(
        &'a self,
        requests: &'a tokio::sync::mpsc::UnboundedSender<crate::tools::HostRequest>,
        spawner: &'a super::subagent::Spawner<'a>,
    ) -> ToolHost<'a> {
        ToolHost::new(requests)
            .with_subagents(spawner)
            .with_jobs(&self.host.shared.tasks.jobs)
            .with_model(
                self.thread.client.model(),
                self.thread.takes_images(&self.host.config),
            )
            .with_image_budget(&self.thread.run.images)
    }
}

/// How long a cancelled call of `name` gets to stop on its own.
fn grace_of(tools: &crate::tools::ToolRegistry, name: &str) -> Duration {
    if tools.is_agent(name) {
        TASK_CANCEL_GRACE
    } else {
        CANCEL_GRACE
    }
}

/// The result that asks the model to call again, when the input is not a
/// JSON object the provider could read; `None` when it is.
fn unusable_input(call: &Call<'_>) -> Option<ToolOutput> {
    let name = call.name;
    let why = match &call.invalid_input {
        Some(why) => format!("{why}. Call `{name}` again with a JSON object matching its schema."),
        None if !call.input.is_object() => format!("the input of `{name}` must be a JSON object"),
        None => return None,
    };
    Some(ToolOutput::failed(Failure::InvalidInput, why))
}
