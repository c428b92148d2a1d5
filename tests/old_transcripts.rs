//! A transcript written by the released binary (0.1.0, commit f87bf7b:
//! `waypoint --demo -p …`, kept in tests/fixtures/sessions) still loads,
//! and replays to the conversation its records describe and to the
//! history a driver saw live, each event addressed to its turn.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use waypoint::chat::{ContentBlock, Role, Usage};
use waypoint::events::{Event, ThreadId, ToolOutcome};
use waypoint::session;

const FIXTURE: &str = "tests/fixtures/sessions/release-0.1.0.jsonl";

fn records() -> Vec<Value> {
    std::fs::read_to_string(FIXTURE)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_type<'a>(records: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    records.iter().filter(move |r| r["type"] == kind)
}

#[test]
fn a_released_transcript_loads_and_replays_what_its_records_say() {
    let loaded = session::load(Path::new(FIXTURE)).unwrap();
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
    let restored = session::replay(loaded).unwrap();
    assert!(restored.notes.is_empty(), "{:?}", restored.notes);
    assert!(
        restored.repairs.is_empty(),
        "a finished session needs no repair"
    );
    let records = records();

    // The conversation, block by block, as the records give it (read here
    // from the raw JSON, not through the replayer).
    let mut expected: Vec<(Role, Value)> = Vec::new();
    for r in &records {
        match r["type"].as_str() {
            Some("user") => expected.push((
                Role::User,
                serde_json::json!({"type": "text", "text": r["text"]}),
            )),
            Some("assistant") => {
                for block in r["content"].as_array().unwrap() {
                    expected.push((Role::Assistant, block.clone()));
                }
            }
            Some("tool_result") => {
                let mut block = serde_json::json!({
                    "type": "tool_result",
                    "tool_use_id": r["id"],
                    "content": r["content"],
                });
                if r["is_error"] == true {
                    block["is_error"] = Value::Bool(true);
                }
                expected.push((Role::User, block));
            }
            _ => {}
        }
    }
    let replayed: Vec<(Role, Value)> = restored
        .conversation
        .messages()
        .iter()
        .flat_map(|m| {
            m.content
                .iter()
                .map(|b: &ContentBlock| (m.role, serde_json::to_value(b).unwrap()))
        })
        .collect();
    // A tool result is answered first in its message; the texts that
    // follow it (a reminder) come after, as the records have them.
    assert_eq!(replayed.len(), expected.len());
    let sorted = |mut v: Vec<(Role, Value)>| {
        v.sort_by_key(|(r, b)| format!("{r:?}{b}"));
        v
    };
    assert_eq!(sorted(replayed), sorted(expected));
    assert!(restored.conversation.validate().is_ok());

    // The plan, the totals and the turn count.
    let last_plan = of_type(&records, "plan").last().unwrap();
    let items: Vec<&str> = restored
        .plan
        .items()
        .iter()
        .map(|i| i.content.as_str())
        .collect();
    let want: Vec<&str> = last_plan["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"].as_str().unwrap())
        .collect();
    assert_eq!(items, want);
    let mut totals = Usage::default();
    for u in of_type(&records, "usage") {
        totals.add(&serde_json::from_value(u["usage"].clone()).unwrap());
    }
    assert_eq!(restored.totals, totals);
    assert_eq!(restored.turns, 1);

    // The history: one begin and one end per call, in the one turn, of
    // the root thread; outcomes (absent from this format) from the status.
    let history = &restored.history;
    assert!(
        history
            .iter()
            .all(|e| e.turn == 1 && e.thread == ThreadId::ROOT)
    );
    let calls = of_type(&records, "tool_call").count();
    let begins = history
        .iter()
        .filter(|e| matches!(e.event, Event::ToolCallBegin { .. }))
        .count();
    let ends: Vec<&ToolOutcome> = history
        .iter()
        .filter_map(|e| match &e.event {
            Event::ToolCallEnd { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!((begins, ends.len()), (calls, calls));
    assert!(ends.iter().all(|o| **o == ToolOutcome::Ok), "{ends:?}");
    let prompts = of_type(&records, "user")
        .filter(|r| r["prompt"] == true)
        .count();
    let users = history
        .iter()
        .filter(|e| matches!(e.event, Event::UserMessage { .. }))
        .count();
    assert_eq!(users, prompts);
    assert!(matches!(
        history.last().map(|e| &e.event),
        Some(Event::TurnComplete { open_items: 0, .. })
    ));
}
