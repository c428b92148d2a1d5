//! Engine-side helpers shared by the provider integration tests: a rig that
//! runs the agent against a loopback model server in a temp workspace, and
//! readers of the engine's event stream.
//!
//! A test crate that uses it declares `mod loopback;` and `mod support;` too.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use waypoint::agent::{Agent, AgentConfig, AgentHandle, ClientFactory, ModelChoice};
use waypoint::events::{AbortReason, Envelope, Event, Op, ToolStatus};
use waypoint::llm::{LlmError, ModelClient};

use crate::loopback::{ClientOpts, FakeServer, ProviderWire, Reply, Wire};
use crate::support::workspace::Fixture;

/// An agent in a temp workspace, talking to its own loopback server.
pub struct Rig<W: Wire> {
    pub server: FakeServer<W>,
    pub handle: AgentHandle,
    pub dir: tempfile::TempDir,
}

impl<W: Wire> Rig<W> {
    /// Starts a server that plays `replies`, and an agent whose model client
    /// `client` makes for the server's URL.
    pub async fn start(
        replies: Vec<Reply>,
        config: AgentConfig,
        client: impl FnOnce(&str) -> Arc<dyn ModelClient>,
    ) -> Self {
        let server = FakeServer::start(replies).await;
        let (dir, workspace) = Fixture::new().into_parts();
        let handle = Agent::builder(client(&server.url), workspace)
            .config(config)
            .spawn()
            .expect("engine");
        Rig {
            server,
            handle,
            dir,
        }
    }

    /// Like `start`, with `factory` building the engine's next clients
    /// (it gets the server's URL).
    pub async fn start_with_factory(
        replies: Vec<Reply>,
        config: AgentConfig,
        client: impl FnOnce(&str) -> Arc<dyn ModelClient>,
        factory: impl FnOnce(&str) -> Arc<dyn ClientFactory>,
    ) -> Self {
        let server = FakeServer::start(replies).await;
        let (dir, workspace) = Fixture::new().into_parts();
        let handle = Agent::builder(client(&server.url), workspace)
            .factory(factory(&server.url))
            .config(config)
            .spawn()
            .expect("engine");
        Rig {
            server,
            handle,
            dir,
        }
    }

    pub fn submit(&self, text: &str) {
        self.handle
            .ops
            .send(Op::Submit { text: text.into() })
            .expect("engine alive");
    }

    /// Events until the turn completes or aborts.
    pub async fn turn_events(&mut self) -> Vec<Event> {
        next_turn(&mut self.handle.events).await
    }

    /// Waits for a specific event and returns the events seen so far.
    pub async fn until(&mut self, pred: impl Fn(&Event) -> bool) -> Vec<Event> {
        until(&mut self.handle.events, pred).await
    }
}

impl<W: ProviderWire> Rig<W> {
    /// Starts a server that plays `replies`, and an agent with the wire's
    /// own client built with `opts`.
    pub async fn with(replies: Vec<Reply>, config: AgentConfig, opts: ClientOpts) -> Self {
        Self::start(replies, config, |url| W::client(url, &opts)).await
    }

    /// A default agent and client on a server that plays `replies`.
    pub async fn default_with(replies: Vec<Reply>) -> Self {
        Self::with(replies, AgentConfig::default(), ClientOpts::default()).await
    }

    /// After a failed turn: the service is back, the user resumes, the turn
    /// completes with a valid request.
    pub async fn survives(&mut self) {
        self.server.push(W::text("back"));
        self.handle.ops.send(Op::Resume).expect("engine alive");
        let events = self.turn_events().await;
        assert_completed(&events);
        W::assert_valid(&self.server.requests().last().expect("a request").body);
    }
}

/// Events until one matches `pred` (included); at most 30 s between two.
pub async fn until(
    events: &mut UnboundedReceiver<Envelope>,
    pred: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("engine went quiet for 30 s")
            .expect("engine stopped");
        assert!(
            ev.thread.is_root(),
            "only the root thread runs here: {ev:?}"
        );
        let ev = ev.event;
        let hit = pred(&ev);
        out.push(ev);
        if hit {
            return out;
        }
    }
}

/// Events until the turn completes or aborts.
pub async fn next_turn(events: &mut UnboundedReceiver<Envelope>) -> Vec<Event> {
    until(events, |ev| {
        matches!(ev, Event::TurnComplete { .. } | Event::TurnAborted { .. })
    })
    .await
}

/// Name, status and output of every finished tool call.
pub fn tool_ends(events: &[Event]) -> Vec<(String, ToolStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd {
                name,
                status,
                output,
                ..
            } => Some((name.clone(), *status, output.clone())),
            _ => None,
        })
        .collect()
}

/// The names of the tools the request `r` offered, in order.
pub fn tool_names(r: &crate::loopback::Recorded) -> Vec<String> {
    r.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn count(events: &[Event], pred: impl Fn(&Event) -> bool) -> usize {
    events.iter().filter(|e| pred(e)).count()
}

/// The first retry: its delay, reason and attempt number.
pub fn first_retry(events: &[Event]) -> Option<(u64, String, u32)> {
    events.iter().find_map(|e| match e {
        Event::Retrying {
            delay_ms,
            reason,
            attempt,
            ..
        } => Some((*delay_ms, reason.clone(), *attempt)),
        _ => None,
    })
}

pub fn retry_reasons(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

/// The message of a turn that ended as failed; panics on any other end.
pub fn failure(events: &[Event]) -> String {
    match events.last() {
        Some(Event::TurnAborted {
            reason: AbortReason::Failed,
            message,
            ..
        }) => message.clone(),
        other => panic!("expected a failed turn, got {other:?}"),
    }
}

/// Every plan the engine published, as `(content, status)` pairs.
pub fn plan_states(events: &[Event]) -> Vec<Vec<(String, String)>> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::PlanUpdated { items, .. } => Some(
                items
                    .iter()
                    .map(|i| {
                        let status = serde_json::to_value(i.status).unwrap();
                        (i.content.clone(), status.as_str().unwrap().to_string())
                    })
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// The model's visible text, all deltas joined.
pub fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The reasoning text streamed during a turn (shown dimmed, never as reply).
pub fn streamed_reasoning(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ReasoningDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The plan item the first call of `tool` was tagged with, if it ran.
pub fn plan_item_of(events: &[Event], tool: &str) -> Option<Option<String>> {
    events.iter().find_map(|e| match e {
        Event::ToolCallBegin {
            name, plan_item, ..
        } if name == tool => Some(plan_item.clone()),
        _ => None,
    })
}

/// The session's total input and output tokens at the last usage report.
pub fn last_usage(events: &[Event]) -> Option<(u64, u64)> {
    events.iter().rev().find_map(|e| match e {
        Event::Usage { totals, .. } => Some((totals.input_tokens, totals.output_tokens)),
        _ => None,
    })
}

/// Asserts that the turn these events belong to completed.
#[track_caller]
pub fn assert_completed(events: &[Event]) {
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { .. })),
        "{events:?}"
    );
}

/// A client factory made of a closure.
pub struct FnFactory<F>(pub F);

impl<F> ClientFactory for FnFactory<F>
where
    F: Fn(&ModelChoice, bool) -> Result<Arc<dyn ModelClient>, LlmError> + Send + Sync,
{
    fn build(&self, choice: &ModelChoice, reload: bool) -> Result<Arc<dyn ModelClient>, LlmError> {
        (self.0)(choice, reload)
    }
}
