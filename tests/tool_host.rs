//! A tool from outside the standard set (as an MCP server's or a `task`
//! tool will be) uses its host handle: it reports progress and asks the
//! user a question of its own, through the same approval flow and mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use std::sync::Arc;

use scripted_support::{Recording, scenario, stop, tool_results, turn_end, until};
use serde_json::{Value, json};
use waypoint::agent::{Agent, AgentConfig, AgentHandle, FixedClient, SessionSetup};
use waypoint::events::{ApprovalMode, ApprovalReason, Decision, Event, Op, ToolOutcome};
use waypoint::llm::{BoxFuture, ModelClient};
use waypoint::tools::{
    Access, Origin, Tool, ToolCtx, ToolOutput, ToolRegistry, ToolSpec, ToolSummary, Workspace,
};

const QUESTION: &str = "Push the release tag to origin?";

/// Reports progress, asks, and says what it was told.
struct Release;

impl Tool for Release {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            origin: Origin::Mcp {
                server: "git".into(),
            },
            ..ToolSpec::builtin(
                "release",
                "Tags a release.",
                json!({"type": "object"}),
                Access::Read,
            )
        }
    }
    fn summarize(&self, _input: &Value) -> ToolSummary {
        ToolSummary {
            line: "v1.0".into(),
            ..ToolSummary::default()
        }
    }
    fn run<'a>(&'a self, _input: &'a Value, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            ctx.host.progress("tagged v1.0\nsecond line is dropped");
            match ctx.host.ask(QUESTION).await {
                Some(Decision::Once | Decision::Always) => ToolOutput::ok("pushed"),
                Some(Decision::Refuse { reason }) => {
                    ToolOutput::error(format!("not pushed: {}", reason.unwrap_or_default()))
                }
                None => ToolOutput::interrupted("The tag was not pushed.", ""),
            }
        })
    }
}

fn start(client: Arc<Recording>, ws: &std::path::Path, mode: ApprovalMode) -> AgentHandle {
    let client: Arc<dyn ModelClient> = client;
    let tools = ToolRegistry::builder()
        .standard()
        .with(Arc::new(Release))
        .build();
    Agent::builder(client.clone(), Workspace::new(ws).unwrap())
        .factory(Arc::new(FixedClient(client)))
        .config(AgentConfig {
            approval: mode,
            nag_every: 0,
            ..AgentConfig::default()
        })
        .tools(tools)
        .session(SessionSetup::Off)
        .spawn()
        .unwrap()
}

/// Two turns that each call `release` once.
fn twice() -> Arc<Recording> {
    scenario(json!([
        {"tool_calls": [{"name": "release", "input": {}}]},
        {"text": "first done"},
        {"tool_calls": [{"name": "release", "input": {}}]},
        {"text": "second done"}
    ]))
}

fn end_of(events: &[Event]) -> (ToolOutcome, String) {
    events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd {
                outcome, output, ..
            } => Some((outcome.clone(), output.clone())),
            _ => None,
        })
        .expect("the call ended")
}

#[tokio::test]
async fn a_tool_asks_the_user_and_always_is_remembered_for_its_question() {
    let ws = tempfile::tempdir().unwrap();
    let client = twice();
    let mut h = start(client.clone(), ws.path(), ApprovalMode::Ask);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let seen = until(&mut h.events, |e| {
        matches!(e, Event::ApprovalRequested { .. })
    })
    .await;
    // Its progress came first, one line of it, for its call.
    let Some(Event::ApprovalRequested {
        id, name, reason, ..
    }) = seen.last().cloned()
    else {
        unreachable!()
    };
    assert!(
        seen.iter().any(|e| matches!(e,
            Event::ToolCallProgress { id: p, message } if *p == id && message == "tagged v1.0")),
        "{seen:?}"
    );
    assert_eq!(name, "release");
    assert_eq!(
        reason,
        ApprovalReason::Tool {
            question: QUESTION.into()
        }
    );
    h.ops
        .send(Op::Approve {
            id,
            decision: Decision::Always,
        })
        .unwrap();
    let first = until(&mut h.events, turn_end).await;
    assert_eq!(end_of(&first), (ToolOutcome::Ok, "pushed".into()));

    // The same question again is answered by the "always".
    h.ops
        .send(Op::Submit {
            text: "again".into(),
        })
        .unwrap();
    let second = until(&mut h.events, turn_end).await;
    assert!(
        !second
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. })),
        "{second:?}"
    );
    assert_eq!(end_of(&second), (ToolOutcome::Ok, "pushed".into()));
    let requests = client.requests.lock().unwrap().clone();
    let results = tool_results(requests.last().unwrap());
    assert_eq!(results.last().unwrap().1, "pushed", "the model read it");
    stop(h).await;
}

#[tokio::test]
async fn the_mode_answers_for_the_user() {
    for (mode, want) in [
        (ApprovalMode::Yolo, "pushed"),
        (
            ApprovalMode::ReadOnly,
            "Error: not pushed: read-only mode: nothing is allowed",
        ),
    ] {
        let ws = tempfile::tempdir().unwrap();
        let mut h = start(twice(), ws.path(), mode);
        h.ops.send(Op::Submit { text: "go".into() }).unwrap();
        let events = until(&mut h.events, turn_end).await;
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::ApprovalRequested { .. })),
            "{mode:?}: {events:?}"
        );
        assert_eq!(end_of(&events).1, want, "{mode:?}");
        stop(h).await;
    }
}

#[tokio::test]
async fn an_interrupt_while_the_tool_asks_ends_the_call_as_interrupted() {
    let ws = tempfile::tempdir().unwrap();
    let mut h = start(twice(), ws.path(), ApprovalMode::Ask);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, |e| {
        matches!(e, Event::ApprovalRequested { .. })
    })
    .await;
    h.ops.send(Op::Interrupt).unwrap();
    let events = until(&mut h.events, turn_end).await;
    let (outcome, output) = end_of(&events);
    assert_eq!(outcome, ToolOutcome::Interrupted { partial: false });
    assert!(output.contains("The tag was not pushed."), "{output}");
    stop(h).await;
}
