//! The user's plan leads when the model has no todo tool (issue 45, part
//! 5): with `plan_tool = false` the model is not offered `todo_write` or
//! `todo_read`, the plan the user keeps is in the newest user message of
//! every turn's request, and a reply's `Done: N` line completes item N (a
//! revision by the model's reply) and starts the next; a model that never
//! says `Done:` leaves the plan as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::support;

use std::process::{Command, Stdio};

use scripted_support::{scenario, start_with, stop, turn_end, until};
use serde_json::{Value, json};
use waypoint::agent::{AgentConfig, AgentHandle, PlanSettings, SessionSetup};
use waypoint::events::{Event, Op, ThreadId};
use waypoint::llm::{ContentBlock, Message, Role};
use waypoint::todo::{Author, PlanEdit, TodoStatus};

const HEADER: &str = "[The plan the user keeps; you cannot edit it.";

fn no_tool() -> AgentConfig {
    AgentConfig {
        plan: PlanSettings {
            tool: false,
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    }
}

/// The user adds `items` to the plan before the task.
async fn add_items(h: &mut AgentHandle, items: &[&str]) {
    for text in items {
        h.ops
            .send(Op::EditPlan {
                thread: ThreadId::ROOT,
                edit: PlanEdit::Add {
                    text: text.to_string(),
                    after: None,
                },
            })
            .unwrap();
        until(&mut h.events, |e| {
            matches!(
                e,
                Event::PlanUpdated {
                    author: Author::User,
                    ..
                }
            )
        })
        .await;
    }
}

/// The texts of the newest user message of a request.
fn newest_user_texts(messages: &[Message]) -> Vec<String> {
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .unwrap();
    last.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

async fn submit(h: &mut AgentHandle, text: &str) -> Vec<Event> {
    h.ops.send(Op::Submit { text: text.into() }).unwrap();
    until(&mut h.events, turn_end).await
}

#[tokio::test]
async fn done_lines_advance_the_users_plan_without_the_todo_tool() {
    let ws = support::sandbox::outside_hidden("notool-ws-");
    let client = scenario(json!([
        {"text": "I wrote the parser.\nDone: 1"},
        {"text": "Tests pass.\nDone: 2"}
    ]));
    let mut h = start_with(client.clone(), ws.path(), no_tool(), SessionSetup::Off);
    add_items(&mut h, &["Write the parser", "Test it", "Document it"]).await;
    let first = submit(&mut h, "Build the parser").await;
    let second = submit(&mut h, "Go on").await;
    stop(h).await;

    // No todo tool offered, and the prompt asks for the line once.
    let offered = client.offered.lock().unwrap().clone();
    assert_eq!(offered.len(), 2);
    for (system, tools) in &offered {
        assert!(tools.contains(&"bash".to_string()), "{tools:?}");
        assert!(
            !tools.iter().any(|t| t == "todo_write" || t == "todo_read"),
            "{tools:?}"
        );
        assert_eq!(system.matches("\"Done: N\"").count(), 1, "{system}");
        assert!(!system.contains("todo_write"), "{system}");
    }

    // Each request's newest user message ends with the plan, as it is then.
    let requests = client.requests.lock().unwrap().clone();
    let block = |messages: &[Message]| newest_user_texts(messages).last().cloned().unwrap();
    let one = block(&requests[0]);
    assert!(one.starts_with(HEADER), "{one}");
    assert!(one.contains("1. [ ] Write the parser\n2. [ ] Test it\n3. [ ] Document it"));
    let two = block(&requests[1]);
    assert!(two.starts_with(HEADER), "{two}");
    assert!(two.contains("1. [x] Write the parser\n2. [>] Test it\n3. [ ] Document it"));
    // The earlier turn's bytes are as they were sent (the cache's prefix).
    assert_eq!(requests[1][0], requests[0][0]);
    // No reminder about a tool the model does not have.
    for messages in &requests {
        for text in newest_user_texts(messages) {
            assert!(!text.contains("todo_write"), "{text}");
        }
    }

    // `Done: 1` completed item 1 and started item 2, by the model's reply.
    let by_reply = |events: &[Event]| -> Vec<Vec<TodoStatus>> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::PlanUpdated {
                    author: Author::Reply,
                    items,
                    ..
                } => Some(items.iter().map(|i| i.status).collect()),
                _ => None,
            })
            .collect()
    };
    use TodoStatus::*;
    assert_eq!(
        by_reply(&first),
        vec![
            vec![Completed, Pending, Pending],
            vec![Completed, InProgress, Pending]
        ]
    );
    assert_eq!(
        by_reply(&second),
        vec![
            vec![Completed, Completed, Pending],
            vec![Completed, Completed, InProgress]
        ]
    );
    assert!(
        second
            .iter()
            .any(|e| matches!(e, Event::TurnComplete { open_items: 1, .. }))
    );
}

#[tokio::test]
async fn a_model_that_never_says_done_leaves_the_plan_as_it_was() {
    let ws = support::sandbox::outside_hidden("notool-silent-ws-");
    let client = scenario(json!([
        {"text": "I looked around; item 1 looks done (Done: 1 is what I would say)."},
        {"text": "done: 2\nDone: two"}
    ]));
    let mut h = start_with(client.clone(), ws.path(), no_tool(), SessionSetup::Off);
    add_items(&mut h, &["Write the parser", "Test it"]).await;
    let first = submit(&mut h, "Build the parser").await;
    let second = submit(&mut h, "Go on").await;
    stop(h).await;
    for events in [&first, &second] {
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::PlanUpdated { .. })),
            "{events:?}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::TurnComplete { open_items: 2, .. }))
        );
    }
    let requests = client.requests.lock().unwrap().clone();
    let last = newest_user_texts(requests.last().unwrap());
    assert!(
        last.last()
            .unwrap()
            .contains("1. [ ] Write the parser\n2. [ ] Test it"),
        "{last:?}"
    );
}

#[tokio::test]
async fn with_the_todo_tool_the_plan_is_not_resent() {
    let ws = support::sandbox::outside_hidden("notool-default-ws-");
    let client = scenario(json!([{"text": "Done: 1"}]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    add_items(&mut h, &["Write the parser"]).await;
    let events = submit(&mut h, "Build the parser").await;
    stop(h).await;
    let offered = client.offered.lock().unwrap().clone();
    assert!(offered[0].1.contains(&"todo_write".to_string()));
    let requests = client.requests.lock().unwrap().clone();
    assert!(
        !newest_user_texts(&requests[0])
            .iter()
            .any(|t| t.starts_with(HEADER))
    );
    // A Done line is only text here: the model keeps the plan itself.
    assert!(!events.iter().any(|e| matches!(
        e,
        Event::PlanUpdated {
            author: Author::Reply,
            ..
        }
    )));
}

fn events_of(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

#[test]
fn headless_a_skills_plan_finished_through_reply_lines() {
    let home = support::sandbox::outside_hidden("notool-home-");
    let ws = support::sandbox::outside_hidden("notool-bin-ws-");
    support::release_skill(ws.path());
    let script = home.path().join("turns.json");
    std::fs::write(
        &script,
        json!({"turns": [{"text": "Bumped and tagged.\nDone: 1, 2"}]}).to_string(),
    )
    .unwrap();
    let args = [
        "-p",
        "/release",
        "--plan-tool",
        "false",
        "--output-format",
        "jsonl",
    ];
    let mut args = args.to_vec();
    args.extend(["--scenario", script.to_str().unwrap()]);
    let out = support::run_waypoint(home.path(), ws.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let seen = events_of(&out.stdout);
    let last_plan = seen
        .iter()
        .rev()
        .find(|e| e["type"] == "plan_updated")
        .unwrap();
    assert_eq!(last_plan["author"], "reply", "{seen:?}");
    let statuses: Vec<&str> = last_plan["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "completed"], "{seen:?}");
}

/// `waypoint config`'s `plan_tool` line with `args` and `env`.
fn plan_tool_line(args: &[&str], env: &[(&str, &str)], file: &str) -> String {
    let home = support::sandbox::outside_hidden("notool-config-");
    let cfg = home.path().join("config.toml");
    std::fs::write(&cfg, file).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .arg("config")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("WAYPOINT_HOME", home.path().join(".waypoint"))
        .env("WAYPOINT_CONFIG", &cfg)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("plan_tool ="))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn plan_tool_comes_from_the_flag_the_environment_or_the_file() {
    assert_eq!(plan_tool_line(&[], &[], ""), "plan_tool = true # default");
    let file = "plan_tool = false\n";
    assert!(plan_tool_line(&[], &[], file).starts_with("plan_tool = false # file"));
    assert_eq!(
        plan_tool_line(&[], &[("WAYPOINT_PLAN_TOOL", "false")], ""),
        "plan_tool = false # env WAYPOINT_PLAN_TOOL"
    );
    assert_eq!(
        plan_tool_line(&["--plan-tool", "true"], &[], file),
        "plan_tool = true # flag --plan-tool"
    );
}
