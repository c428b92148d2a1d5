//! The plan stays honest: an item dropped without being completed is named
//! in the tool result the model reads next.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scripted_support;

use scripted_support::{plan, scenario, start_with, stop, tool_results, turn_end, until};
use serde_json::json;
use waypoint::agent::{AgentConfig, SessionSetup};
use waypoint::events::Op;

#[tokio::test]
async fn an_item_dropped_without_completion_is_named_to_the_model() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Write the tests", "pending")])}]},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed")])}]},
        {"text": "Done."}
    ]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    let results = tool_results(requests.last().unwrap());
    assert!(
        !results[0].1.contains("removed without completion"),
        "{}",
        results[0].1
    );
    assert!(
        results[1]
            .1
            .ends_with("Note: removed without completion: \"Write the tests\". If it is no longer needed, say why."),
        "{}",
        results[1].1
    );
}
