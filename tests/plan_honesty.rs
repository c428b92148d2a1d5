//! The plan stays honest: an item dropped without being completed is named
//! in the tool result the model reads next.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

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

#[tokio::test]
async fn auto_continue_nudges_while_the_plan_moves_and_stops_when_it_does_not() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Write the tests", "pending")])}]},
        {"text": "I stop here."},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed"), ("Write the tests", "in_progress")])}]},
        {"text": "Stopping again."},
        {"text": "Nothing more from me."},
        {"text": "never reached"}
    ]));
    let config = AgentConfig {
        auto_continue: 5,
        ..AgentConfig::default()
    };
    let mut h = start_with(client.clone(), ws.path(), config, SessionSetup::Off);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let mut ends = 0;
    let mut events = Vec::new();
    // Three turns: the task, a nudge that moves the plan, a nudge that does not.
    while ends < 3 {
        events.extend(until(&mut h.events, turn_end).await);
        ends += 1;
    }
    // No fourth turn starts.
    let more = tokio::time::timeout(std::time::Duration::from_millis(300), async {
        until(&mut h.events, |e| {
            matches!(e, waypoint::events::Event::TurnStarted { .. })
        })
        .await
    })
    .await;
    assert!(more.is_err(), "a fourth turn started");
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 5);
    let last_user = |i: usize| {
        let m = requests[i].last().unwrap();
        m.content
            .iter()
            .filter_map(|b| match b {
                waypoint::llm::ContentBlock::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let nudge = last_user(2);
    assert!(
        nudge.contains("Open plan items")
            && nudge.contains("- Write code (in progress)")
            && nudge.contains("--auto-continue"),
        "{nudge}"
    );
    assert!(
        last_user(4).contains("- Write the tests (in progress)"),
        "{}",
        last_user(4)
    );
}
