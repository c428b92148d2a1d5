//! A scripted model that keeps every request's messages, and the helpers to
//! run an engine on it: for tests that check what the model was sent.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;
use waypoint::agent::{Agent, AgentConfig, AgentHandle, FixedClient, SessionSetup};
use waypoint::events::{Envelope, Event, Op};
use waypoint::llm::scripted::{Scenario, ScriptedClient};
use waypoint::llm::{
    AssistantReply, BoxFuture, ContentBlock, LlmError, Message, ModelClient, ModelRequest,
    StreamEvent,
};
use waypoint::tools::Workspace;

pub struct Recording {
    inner: ScriptedClient,
    pub requests: Mutex<Vec<Vec<Message>>>,
    /// Each request's system prompt and the names of its tools.
    pub offered: Mutex<Vec<(String, Vec<String>)>>,
}

impl ModelClient for Recording {
    fn model(&self) -> &str {
        "scripted"
    }
    fn provider(&self) -> &str {
        "scripted"
    }
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>> {
        self.requests
            .lock()
            .unwrap()
            .push(request.messages.to_vec());
        self.offered.lock().unwrap().push((
            request.system.to_string(),
            request.tools.iter().map(|t| t.name.clone()).collect(),
        ));
        self.inner.stream(request, on_event)
    }
}

/// A scripted model playing `turns` (the scenario's `turns` array).
pub fn scenario(turns: serde_json::Value) -> Arc<Recording> {
    let scenario = Scenario::parse(&json!({ "turns": turns }).to_string()).unwrap();
    Arc::new(Recording {
        inner: ScriptedClient::new(scenario),
        requests: Mutex::new(Vec::new()),
        offered: Mutex::new(Vec::new()),
    })
}

/// A `todo_write` input of `(content, status)` items.
pub fn plan(items: &[(&str, &str)]) -> serde_json::Value {
    let todos: Vec<_> = items
        .iter()
        .map(|(content, status)| json!({"content": content, "status": status, "activeForm": format!("Doing {content}")}))
        .collect();
    json!({ "todos": todos })
}

/// A scenario file's text that carries out an approved plan: write
/// `greet.sh`, mark `items` completed, say so.
pub fn carry_out_greet(items: &[&str]) -> String {
    let write =
        json!({"name": "write_file", "input": {"path": "greet.sh", "content": "echo hi\n"}});
    let done: Vec<(&str, &str)> = items.iter().map(|i| (*i, "completed")).collect();
    json!({"turns": [
        {"text": "Writing.", "tool_calls": [write]},
        {"text": "Done.", "tool_calls": [{"name": "todo_write", "input": plan(&done)}]},
        {"text": "Both items are done."}
    ]})
    .to_string()
}

/// An engine on `client` in `workspace`.
pub fn start_with(
    client: Arc<Recording>,
    workspace: &std::path::Path,
    config: AgentConfig,
    setup: SessionSetup,
) -> AgentHandle {
    let client: Arc<dyn ModelClient> = client;
    Agent::builder(client.clone(), Workspace::new(workspace).unwrap())
        .factory(Arc::new(FixedClient(client)))
        .config(config)
        .session(setup)
        .spawn()
        .unwrap()
}

/// Events until `pred` holds (the matching one included).
pub async fn until(
    events: &mut UnboundedReceiver<Envelope>,
    pred: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    envelopes_until(events, pred)
        .await
        .into_iter()
        .map(|e| e.event)
        .collect()
}

/// Envelopes until `pred` holds for the event of one (that one included).
pub async fn envelopes_until(
    events: &mut UnboundedReceiver<Envelope>,
    pred: impl Fn(&Event) -> bool,
) -> Vec<Envelope> {
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("an event within 30 s")
            .expect("engine alive");
        assert!(
            ev.thread.is_root(),
            "only the root thread runs here: {ev:?}"
        );
        let done = pred(&ev.event);
        seen.push(ev);
        if done {
            return seen;
        }
    }
}

pub fn turn_end(e: &Event) -> bool {
    matches!(e, Event::TurnComplete { .. } | Event::TurnAborted { .. })
}

pub async fn stop(handle: AgentHandle) {
    let _ = handle.ops.send(Op::Quit);
    tokio::time::timeout(Duration::from_secs(10), handle.task)
        .await
        .unwrap()
        .unwrap();
}

/// The tool results in `messages`, by call id.
pub fn tool_results(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id.clone(), content.to_string())),
            _ => None,
        })
        .collect()
}

/// Plan mode's round trip on `h`: `task` proposed (its turn run to the
/// end), the proposal approved into `mode`, and the approved turn run to
/// its end with every approval request answered `answer`. The approved
/// turn's events.
pub async fn propose_then_approve(
    h: &mut AgentHandle,
    task: &str,
    mode: waypoint::events::ApprovalMode,
    answer: waypoint::events::Decision,
) -> Vec<Event> {
    h.ops.send(Op::Submit { text: task.into() }).unwrap();
    until(&mut h.events, turn_end).await;
    h.ops
        .send(Op::ApprovePlan {
            mode: Some(mode),
            fresh: false,
            items: None,
        })
        .unwrap();
    let mut events = Vec::new();
    loop {
        let envelope = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("an event within 30 s")
            .expect("engine alive");
        if let Event::ApprovalRequested { id, .. } = &envelope.event {
            h.ops
                .send(Op::Approve {
                    id: id.clone(),
                    decision: answer.clone(),
                })
                .unwrap();
        }
        let end = turn_end(&envelope.event);
        events.push(envelope.event);
        if end {
            return events;
        }
    }
}
