//! Item scope (issue 45, part 3): an approved item that declared its files
//! and commands runs them unasked in `ask` mode while it is in progress;
//! a write outside its files is asked even in `auto-edit`, naming the item.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::support;

use scripted_support::{scenario, start_with, stop};
use serde_json::{Value, json};
use waypoint::agent::{AgentConfig, AgentHandle, SessionSetup};
use waypoint::events::{ApprovalMode, ApprovalReason, Decision, Event};

/// A `todo_write` input: the script's item with its scope, then one more.
fn plan(first: &str) -> Value {
    plan_with(first, json!(["greet.sh", "scripts/**"]))
}

/// The same, item 1 declaring `files`.
fn plan_with(first: &str, files: Value) -> Value {
    json!({"todos": [
        {"content": "Write greet.sh", "activeForm": "Writing greet.sh", "status": first,
         "files": files, "commands": ["echo"]},
        {"content": "Test it", "activeForm": "Testing it", "status": "pending"}
    ]})
}

/// Research, then (after approval) start item 1 (declaring `files` anew)
/// and make its calls.
fn turns(files: Value, calls: Value) -> Value {
    json!([
        {"text": "Reading.", "tool_calls": [{"name": "todo_write", "input": plan("pending")}]},
        {"text": "Research done."},
        {"text": "Starting.", "tool_calls": [{"name": "todo_write", "input": plan_with("in_progress", files)}]},
        {"text": "Working.", "tool_calls": calls},
        {"text": "Done for now."}
    ])
}

/// Proposes, approves into `mode` and runs the approved turn, every
/// approval request answered yes: its events and the workspace.
async fn approved_turn(mode: ApprovalMode, calls: Value) -> (Vec<Event>, tempfile::TempDir) {
    rewritten_turn(mode, json!(["greet.sh", "scripts/**"]), calls).await
}

/// [`approved_turn`], the model declaring item 1's `files` anew when it
/// starts it.
async fn rewritten_turn(
    mode: ApprovalMode,
    files: Value,
    calls: Value,
) -> (Vec<Event>, tempfile::TempDir) {
    let ws = support::sandbox::outside_hidden("scope-ws-");
    let client = scenario(turns(files, calls));
    let config = AgentConfig {
        approval: ApprovalMode::Plan,
        nag_every: 0,
        ..AgentConfig::default()
    };
    let mut h: AgentHandle = start_with(client, ws.path(), config, SessionSetup::Off);
    let events = scripted_support::propose_then_approve(
        &mut h,
        "Add a greeting script",
        mode,
        Decision::Once,
    )
    .await;
    stop(h).await;
    (events, ws)
}

/// The calls asked about: the tool, and the question or the reason.
fn asked(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { name, reason, .. } => Some((
                name.clone(),
                match reason {
                    ApprovalReason::Tool { question } => question.clone(),
                    other => format!("{other:?}"),
                },
            )),
            _ => None,
        })
        .collect()
}

fn write(path: &str) -> Value {
    json!({"name": "write_file", "input": {"path": path, "content": "echo hello\n"}})
}

#[tokio::test]
async fn in_ask_mode_the_running_items_files_and_commands_run_unasked() {
    let calls = json!([
        write("greet.sh"),
        write("scripts/run.sh"),
        {"name": "edit_file", "input": {"file_path": "scripts/run.sh", "old_text": "hello", "new_text": "there"}},
        {"name": "bash", "input": {"command": "echo hi"}}
    ]);
    let (events, ws) = approved_turn(ApprovalMode::Ask, calls).await;
    assert_eq!(asked(&events), Vec::<(String, String)>::new());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("greet.sh")).unwrap(),
        "echo hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("scripts/run.sh")).unwrap(),
        "echo there\n"
    );
}

#[tokio::test]
async fn in_ask_mode_what_the_item_did_not_declare_is_asked_as_before() {
    let calls = json!([
        write("notes.txt"),
        {"name": "bash", "input": {"command": "pwd"}}
    ]);
    let (events, ws) = approved_turn(ApprovalMode::Ask, calls).await;
    let asked = asked(&events);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "write_file");
    assert!(
        asked[0].1.starts_with(
            "write_file notes.txt is outside item 1's scope (Write greet.sh: greet.sh, scripts/**)"
        ),
        "{asked:?}"
    );
    assert_eq!(asked[1].0, "bash");
    assert!(!asked[1].1.contains("outside item"), "{asked:?}");
    // Approved: it ran.
    assert!(ws.path().join("notes.txt").exists());
}

#[tokio::test]
async fn in_auto_edit_a_write_outside_the_running_item_is_asked() {
    let calls = json!([
        write("greet.sh"),
        write("src/other.rs"),
        {"name": "edit_file", "input": {"filePath": "src/other.rs", "old_text": "hello", "new_text": "there"}}
    ]);
    let (events, ws) = approved_turn(ApprovalMode::AutoEdit, calls).await;
    let asked = asked(&events);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "write_file");
    assert!(
        asked[0]
            .1
            .contains("src/other.rs is outside item 1's scope"),
        "{asked:?}"
    );
    assert_eq!(asked[1].0, "edit_file");
    assert!(
        asked[1]
            .1
            .starts_with("edit_file src/other.rs is outside item 1's scope"),
        "{asked:?}"
    );
    assert!(ws.path().join("greet.sh").exists());
    assert!(ws.path().join("src/other.rs").exists());
}

#[tokio::test]
async fn the_model_cannot_widen_the_scope_the_user_approved() {
    let calls = json!([write("notes.txt")]);
    let (events, ws) = rewritten_turn(ApprovalMode::Ask, json!(["**"]), calls).await;
    let asked = asked(&events);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].1.contains("notes.txt is outside item 1's scope"),
        "{asked:?}"
    );
    // The plan keeps the model's latest value all the same.
    let files = events.iter().rev().find_map(|e| match e {
        Event::PlanUpdated { items, .. } => Some(items[0].scope.files.clone()),
        _ => None,
    });
    assert_eq!(files.unwrap(), ["**"]);
    assert!(ws.path().join("notes.txt").exists());
}
