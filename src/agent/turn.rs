//! One turn: sample the model, run every tool call it asked for, answer
//! them all, and loop until it stops asking. Invariant: whatever happens
//! (interrupt, tool error, bad input), each `tool_use` gets exactly one
//! `tool_result` and each `ToolCallBegin` one `ToolCallEnd`. Every tool runs
//! the same way, through the stages of [`super::pipeline`]; the turn knows
//! no tool by name and learns of plan changes from the tool's output.

use tokio_util::sync::CancellationToken;

use super::compact::is_too_long;
use super::phases::{Next, TurnPhases};
use super::shared::lock;
use super::stages::Call;
use super::{Session, TurnEnd};
use crate::events::{AbortReason, CompactReason, Event};
use crate::llm::{AssistantReply, ContentBlock, LlmError, ModelRequest, StreamEvent};
use crate::mcp::manager::Boundary;
use crate::tools::task::TaskEnd;

/// How a model request ended.
enum Sampled {
    Done(Result<AssistantReply, LlmError>),
    /// The user interrupted; `partial` is the reply's text streamed so far.
    Interrupted {
        partial: String,
    },
}

impl Session {
    pub(super) async fn run_turn(&mut self, cancel: &CancellationToken) -> TurnEnd {
        let mut phases = TurnPhases::new();
        if let Some(end) = phases.turn_start(self, cancel).await {
            return end;
        }
        let mut round = 0;
        loop {
            let over = self.thread.run.budget.as_ref().and_then(|b| b.exceeded());
            if let Some(why) = over {
                return self
                    .abort(AbortReason::MaxTurns, why, TurnEnd::Stopped)
                    .await;
            }
            if round >= self.host.config.max_rounds {
                // A subagent's limit is the config's, not the command line's.
                let message = if self.host.events.thread().is_root() {
                    format!("stopped after {round} model requests (--max-turns); resume to go on")
                } else {
                    format!("it reached its request limit ({round}, [task] max_turns)")
                };
                return self
                    .abort(AbortReason::MaxTurns, message, TurnEnd::Stopped)
                    .await;
            }
            round += 1;
            self.emit(Event::RoundStarted { round });
            if let Some(end) = phases.round_start(self, cancel).await {
                return end;
            }
            let reply = match self.request(cancel).await {
                Ok(reply) => reply,
                Err(end) => return end,
            };
            let calls = reply.tool_calls();
            let text = reply.text();
            self.add_assistant(reply.content);
            super::reply_done::advance(self.voice(), &text, !calls.is_empty(), cancel).await;
            if calls.is_empty() {
                match phases.before_end(self, &reply.stop_reason, cancel).await {
                    Next::End => {}
                    Next::GoOn => continue,
                    Next::Ended(end) => return end,
                }
                super::reply_proposal::at_turn_end(self.voice(), &text);
                let open_items = self.thread.plan.lock().manager.open_items().len();
                super::points::Points(self.voice()).at_turn_end().await;
                self.emit(Event::TurnComplete {
                    stop_reason: reply.stop_reason,
                    open_items,
                });
                return TurnEnd::Complete;
            }
            if let Some(end) = self.run_calls(calls, &reply.invalid_inputs, cancel).await {
                return end;
            }
            let stop = lock(&self.thread.left).stop.take();
            if let Some(why) = stop {
                return self.abort(AbortReason::Hook, why, TurnEnd::Stopped).await;
            }
        }
    }

    /// Ends the turn early: says why, and how it ended.
    pub(super) async fn abort(
        &mut self,
        reason: AbortReason,
        message: String,
        end: TurnEnd,
    ) -> TurnEnd {
        self.abort_for(reason, message, None, end).await
    }

    /// [`Session::abort`], for a failure of kind `error` too.
    async fn abort_for(
        &mut self,
        reason: AbortReason,
        message: String,
        error: Option<crate::events::ErrorKind>,
        end: TurnEnd,
    ) -> TurnEnd {
        match reason {
            AbortReason::MaxTurns => {
                self.thread.run.stopped = Some(TaskEnd::Limit(message.clone()));
            }
            AbortReason::Failed => {
                self.thread.run.stopped = Some(TaskEnd::Failed(message.clone()));
            }
            _ => {}
        }
        super::points::Points(self.voice()).at_turn_end().await;
        super::goal::on_abort(self, reason);
        self.emit(Event::TurnAborted {
            reason,
            message,
            error,
        });
        end
    }

    /// One model request (compacting and asking again once if the prompt
    /// was too long), counted; the turn's end when it failed or was
    /// interrupted.
    async fn request(&mut self, cancel: &CancellationToken) -> Result<AssistantReply, TurnEnd> {
        let mut retried = false;
        let result = loop {
            match self.sample(cancel).await {
                Sampled::Done(Err(e)) if !retried && is_too_long(&e) => {
                    tracing::warn!(error = %e, "prompt too long; compacting and retrying");
                    retried = true;
                    self.compact(CompactReason::TooLong, None, cancel).await;
                }
                Sampled::Done(result) => break result,
                Sampled::Interrupted { partial } => {
                    // What the user saw stays the model's: resuming, it
                    // continues from there (the interrupt note follows).
                    if !partial.trim().is_empty() {
                        self.add_assistant(vec![ContentBlock::Text { text: partial }]);
                    }
                    let message = "interrupted while the model was answering".into();
                    return Err(self
                        .abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
                        .await);
                }
            }
        };
        let reply = match result {
            Ok(reply) => reply,
            Err(e) => {
                tracing::error!(error = %e, "model request failed");
                let (message, kind) = (e.to_string(), Some(e.kind()));
                let end = self.abort_for(AbortReason::Failed, message, kind, TurnEnd::Stopped);
                return Err(end.await);
            }
        };
        let u = reply.usage;
        let prompt = u.prompt_tokens();
        if prompt > 0 {
            self.thread.last_prompt = Some((prompt, self.thread.conversation.bytes()));
        }
        self.emit(Event::ContextUsage {
            used: prompt,
            window: self.thread.window(&self.host.config),
        });
        self.count_usage(&u);
        Ok(reply)
    }

    /// Runs the reply's calls in order and answers them all (a call after
    /// an interrupt is answered as not run), then the nag and the user's
    /// plan changes; the turn's end when it was interrupted.
    async fn run_calls(
        &mut self,
        calls: Vec<(String, String, serde_json::Value)>,
        invalid_inputs: &[(String, String)],
        cancel: &CancellationToken,
    ) -> Option<TurnEnd> {
        // Each reply's calls have their own images to show.
        self.thread.run.images = crate::tools::image_budget::ImageBudget::default();
        let mut results = Vec::with_capacity(calls.len());
        let mut plan_written = false;
        let calls: Vec<Call<'_>> = calls
            .iter()
            .map(|(id, name, input)| Call {
                id,
                name,
                input,
                invalid_input: invalid_inputs
                    .iter()
                    .find(|(bad, _)| bad == id)
                    .map(|(_, why)| why.clone()),
            })
            .collect();
        let mut rest = &calls[..];
        while let Some(first) = rest.first() {
            if cancel.is_cancelled() {
                results.push(self.not_run(first.id, first.name));
                rest = &rest[1..];
                continue;
            }
            // Calls that may run beside each other, in a row, run at once
            // (hooks and all); any other call is a batch of its own.
            let together = rest
                .iter()
                .take_while(|c| {
                    c.invalid_input.is_none() && self.thread.tools.parallel(c.name, c.input)
                })
                .count()
                .max(1);
            let done = self.run_calls_in_batch(&rest[..together], cancel).await;
            rest = &rest[together..];
            for done in done {
                plan_written |= done.plan_written;
                results.push(done.result);
                // After every result (the conversation keeps results first).
                results.extend(
                    done.images
                        .into_iter()
                        .map(|source| ContentBlock::Image { source }),
                );
            }
        }
        if cancel.is_cancelled() {
            self.add_tool_results(results, Vec::new());
            let message = "interrupted while tools were running".into();
            return Some(
                self.abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
                    .await,
            );
        }
        let nag = {
            let plan = self.thread.plan.lock();
            self.thread
                .reminders
                .after_round(plan_written, &plan.manager)
        };
        let note = self.take_plan_note();
        self.add_tool_results(results, nag.into_iter().chain(note).collect());
        None
    }

    /// Brings the MCP tools in line: at a turn boundary those of servers
    /// that became ready or changed their list join, after the others (so
    /// the provider's cache of the earlier tools survives), and those of
    /// servers gone leave; before every request (a round boundary), those
    /// of servers that became ready join, after the others, and the tools
    /// `mcp_search` loaded.
    pub(super) fn sync_mcp(&mut self, at: Boundary) {
        let window = self.thread.window(&self.host.config);
        if let Some(event) = self.host.mcp.sync(&mut self.thread.tools, window, at) {
            self.emit(event);
        }
    }

    /// One model request over the conversation as it is.
    async fn sample(&mut self, cancel: &CancellationToken) -> Sampled {
        self.sync_mcp(Boundary::Round);
        self.thread.offer_tools();
        let session = self.host.transcript.id();
        let request = ModelRequest {
            system: &self.host.config.system_prompt,
            messages: self.thread.conversation.messages(),
            tools: &self.thread.offered.defs,
            max_tokens: self.host.config.max_tokens,
            conversation: Some(self.thread.conversation.key()),
            session: Some(&session),
        };
        let events = self.host.events.clone();
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
            r = self.thread.client.stream(&request, &mut on_stream) => Some(r),
            _ = cancel.cancelled() => None,
        };
        let kept = self
            .thread
            .client
            .kept_texts(self.thread.conversation.key());
        self.thread.conversation.keep_texts(kept);
        match done {
            Some(result) => Sampled::Done(result),
            None => Sampled::Interrupted { partial },
        }
    }

    /// Counts one request's tokens in the session's totals and reports
    /// them (`Usage`, recorded and fed to the per-item account): every
    /// request the engine sends, a compaction's summary included.
    pub(super) fn count_usage(&mut self, u: &crate::llm::Usage) {
        self.thread.totals.add(u);
        if let Some(budget) = &mut self.thread.run.budget {
            budget.spend(u.prompt_tokens().saturating_add(u.output_tokens));
        }
        self.emit(Event::Usage {
            model: self.thread.client.model().to_string(),
            request: *u,
            totals: self.thread.totals,
        });
    }
}

impl super::thread::Host {
    /// Starts the configured MCP servers in the background; each one's
    /// state goes out as an event as it changes.
    pub(super) fn start_mcp(&mut self) {
        let settings = &self.config.tools.mcp;
        if settings.servers.is_empty() && settings.problems.is_empty() {
            return;
        }
        let events = self.events.clone();
        let status: crate::mcp::manager::StatusSink = std::sync::Arc::new(move |name, status| {
            events.send(Event::McpServer {
                name: name.to_string(),
                status,
            });
        });
        self.mcp = crate::mcp::Servers::start(
            settings,
            self.shared.workspace.root().to_path_buf(),
            status,
        );
    }
}
