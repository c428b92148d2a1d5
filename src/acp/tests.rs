//! The translation from the engine's events to ACP updates, without a
//! client: plans by id and folded, a call's diff and output, the mode.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    PlanUpdateContent, SessionUpdate, ToolCallContent, ToolCallStatus, ToolKind,
};
use serde_json::{Value, json};

use super::translate::Translator;
use crate::events::{
    ApprovalMode, Envelope, Event, ThreadId, ToolDetail, ToolOutcome, ToolStatus, ToolSummary,
};
use crate::todo::TodoItem;

fn items(list: &[(&str, &str, &str)]) -> Vec<TodoItem> {
    let items: Vec<Value> = list
        .iter()
        .map(|(id, content, status)| {
            json!({"id": id, "content": content, "status": status, "activeForm": content})
        })
        .collect();
    serde_json::from_value(Value::Array(items)).unwrap()
}

fn plan(thread: u32, parent: Option<&str>, list: &[(&str, &str, &str)], revision: u32) -> Envelope {
    Envelope {
        thread: ThreadId(thread),
        parent_call: parent.map(str::to_string),
        turn: 1,
        event: Event::PlanUpdated {
            items: items(list),
            rendered: String::new(),
            diff: Default::default(),
            revision,
            author: Default::default(),
            at: 0,
            note: None,
        },
    }
}

fn task_call(id: &str, item: &str) -> Envelope {
    Envelope::root(
        1,
        Event::ToolCallBegin {
            id: id.to_string(),
            name: "task".to_string(),
            summary: ToolSummary::default(),
            input: Value::Null,
            plan_item_id: Some(item.to_string()),
            plan_item: None,
        },
    )
}

fn as_json(update: &SessionUpdate) -> Value {
    serde_json::to_value(update).unwrap()
}

#[test]
fn without_plan_ids_a_childs_plan_folds_under_the_item_that_started_it() {
    let mut t = Translator::new(Path::new("/ws"), false, ApprovalMode::Ask);
    t.updates(&plan(
        0,
        None,
        &[
            ("1", "Survey", "completed"),
            ("2", "Port", "in_progress"),
            ("3", "Test", "pending"),
        ],
        1,
    ));
    t.updates(&task_call("call_9", "2"));
    let out = t.updates(&plan(
        1,
        Some("call_9"),
        &[("1", "Port a", "completed"), ("2", "Port b", "in_progress")],
        1,
    ));
    assert_eq!(out.len(), 1);
    let got = as_json(&out[0]);
    assert_eq!(got["sessionUpdate"], "plan");
    let entries: Vec<(String, String)> = got["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("Survey", "completed"),
        ("Port", "in_progress"),
        ("  ↳ Port a", "completed"),
        ("  ↳ Port b", "in_progress"),
        ("Test", "pending"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(entries, want);
}

#[test]
fn with_plan_ids_each_thread_has_its_own_plan() {
    let mut t = Translator::new(Path::new("/ws"), true, ApprovalMode::Ask);
    let root = t.updates(&plan(0, None, &[("1", "Port", "in_progress")], 3));
    t.updates(&task_call("call_9", "1"));
    let child = t.updates(&plan(2, Some("call_9"), &[("1", "Port a", "pending")], 1));
    for (out, id, first, revision) in [
        (root, "thread-0", "Port", 3),
        (child, "thread-2", "Port a", 1),
    ] {
        let SessionUpdate::PlanUpdate(update) = &out[0] else {
            panic!("{out:?}")
        };
        let PlanUpdateContent::Items(plan) = &update.plan else {
            panic!("{update:?}")
        };
        assert_eq!(&*plan.plan_id.0, id);
        assert_eq!(plan.entries[0].content, first);
        let meta = update.meta.as_ref().unwrap();
        assert_eq!(meta["waypoint"]["revision"], revision);
    }
}

#[test]
fn a_proposed_plan_says_so_until_it_is_approved() {
    let mut t = Translator::new(Path::new("/ws"), false, ApprovalMode::Plan);
    t.updates(&plan(0, None, &[("1", "Port", "pending")], 1));
    let proposed = t.updates(&Envelope::root(1, Event::PlanProposed { revision: 1 }));
    assert_eq!(as_json(&proposed[0])["_meta"]["waypoint"]["proposed"], true);
    assert!(
        as_json(&proposed[1])["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Plan proposed (revision 1)")
    );
    assert!(t.plans.is_proposed());
    let approved = t.updates(&Envelope::root(
        1,
        Event::PlanApproved {
            revision: 1,
            mode: ApprovalMode::Auto,
            fresh: false,
        },
    ));
    assert!(
        as_json(&approved[0])["_meta"]["waypoint"]
            .get("proposed")
            .is_none()
    );
    assert!(!t.plans.is_proposed());
}

#[test]
fn a_file_change_shows_its_diff_and_a_command_its_output_and_exit() {
    let mut t = Translator::new(Path::new("/ws"), false, ApprovalMode::Ask);
    let begin = t.updates(&Envelope::root(
        1,
        Event::ToolCallBegin {
            id: "c1".to_string(),
            name: "edit_file".to_string(),
            summary: ToolSummary {
                line: "src/a.rs".to_string(),
                detail: ToolDetail::Diff {
                    path: "src/a.rs".to_string(),
                    old: "a\n".to_string(),
                    new: "b\n".to_string(),
                    first: 3,
                },
            },
            input: json!({"path": "src/a.rs"}),
            plan_item_id: None,
            plan_item: None,
        },
    ));
    let SessionUpdate::ToolCall(call) = &begin[0] else {
        panic!("{begin:?}")
    };
    assert_eq!(call.kind, ToolKind::Edit);
    let ToolCallContent::Diff(diff) = &call.content[0] else {
        panic!("{call:?}")
    };
    assert_eq!(diff.path, Path::new("/ws/src/a.rs"));
    assert_eq!(diff.old_text.as_deref(), Some("a\n"));
    assert_eq!(diff.new_text, "b\n");
    t.updates(&Envelope::root(
        1,
        Event::ToolCallBegin {
            id: "c2".to_string(),
            name: "bash".to_string(),
            summary: ToolSummary {
                line: "make".to_string(),
                detail: ToolDetail::Output,
            },
            input: json!({"command": "make"}),
            plan_item_id: None,
            plan_item: None,
        },
    ));
    let live = t.updates(&Envelope::root(
        1,
        Event::ToolCallOutputDelta {
            id: "c2".to_string(),
            chunk: "building\n".to_string(),
        },
    ));
    assert!(as_json(&live[0]).to_string().contains("building"));
    let end = t.updates(&Envelope::root(
        1,
        Event::ToolCallEnd {
            id: "c2".to_string(),
            name: "bash".to_string(),
            status: ToolStatus::Ok,
            outcome: ToolOutcome::Ok,
            duration_ms: 5,
            output: "building\nerror\n".to_string(),
            exit_code: Some(2),
        },
    ));
    let SessionUpdate::ToolCallUpdate(update) = &end[0] else {
        panic!("{end:?}")
    };
    // `exit 2` is a failed call, whatever the tool's own status.
    assert_eq!(update.fields.status, Some(ToolCallStatus::Failed));
    assert_eq!(update.fields.raw_output, Some(json!({"exit_code": 2})));
}

#[test]
fn the_mode_is_told_only_when_it_changes_and_history_replays_the_users_words() {
    let mut t = Translator::new(Path::new("/ws"), false, ApprovalMode::Ask);
    let same = t.updates(&Envelope::root(
        0,
        Event::ApprovalMode {
            mode: ApprovalMode::Ask,
            sandboxed: true,
        },
    ));
    assert!(same.is_empty());
    let changed = t.updates(&Envelope::root(
        0,
        Event::ApprovalMode {
            mode: ApprovalMode::Auto,
            sandboxed: true,
        },
    ));
    assert_eq!(as_json(&changed[0])["currentModeId"], "auto");
    let live = t.updates(&Envelope::root(
        1,
        Event::UserMessage {
            text: "hi".to_string(),
        },
    ));
    assert!(live.is_empty(), "the client has its own prompt already");
    let history = t.updates(&Envelope::root(
        0,
        Event::History {
            events: vec![
                Envelope::root(
                    1,
                    Event::UserMessage {
                        text: "hi".to_string(),
                    },
                ),
                Envelope::root(
                    1,
                    Event::TextDelta {
                        text: "hello".to_string(),
                    },
                ),
            ],
        },
    ));
    let kinds: Vec<Value> = history
        .iter()
        .map(|u| as_json(u)["sessionUpdate"].clone())
        .collect();
    assert_eq!(
        kinds,
        vec![json!("user_message_chunk"), json!("agent_message_chunk")]
    );
}

#[test]
fn a_command_in_the_editors_terminal_shows_it_not_its_text() {
    let mut t = Translator::new(Path::new("/ws"), false, ApprovalMode::Yolo);
    let begin = |id: &str| {
        Envelope::root(
            1,
            Event::ToolCallBegin {
                id: id.to_string(),
                name: "bash".to_string(),
                summary: ToolSummary::default(),
                input: json!({"command": "make"}),
                plan_item_id: None,
                plan_item: None,
            },
        )
    };
    let end = |id: &str, status: ToolStatus| {
        Envelope::root(
            1,
            Event::ToolCallEnd {
                id: id.to_string(),
                name: "bash".to_string(),
                status,
                outcome: ToolOutcome::Ok,
                duration_ms: 5,
                output: "built\n".to_string(),
                exit_code: Some(0),
            },
        )
    };
    let terminals = t.terminals.clone();
    for (id, status) in [("c1", ToolStatus::Ok), ("c2", ToolStatus::Error)] {
        t.updates(&begin(id));
        // The editor's terminal was created for it (`acp::terminal`).
        terminals
            .lock()
            .unwrap()
            .insert(id.to_string(), format!("term-{id}"));
        let live = t.updates(&Envelope::root(
            1,
            Event::ToolCallOutputDelta {
                id: id.to_string(),
                chunk: "building\n".to_string(),
            },
        ));
        assert!(live.is_empty(), "the terminal shows it: {live:?}");
        let ended = t.updates(&end(id, status));
        let json = as_json(&ended[0]);
        let content = json["content"].as_array().unwrap();
        assert_eq!(
            content[0],
            json!({"type": "terminal", "terminalId": format!("term-{id}")})
        );
        // Beside the terminal, the text only says why a call failed.
        assert_eq!(content.len(), if id == "c1" { 1 } else { 2 }, "{json}");
    }
    assert!(terminals.lock().unwrap().is_empty(), "forgotten at the end");
}

#[test]
fn skills_and_commands_are_the_clients_slash_commands() {
    let mut t = Translator::new(Path::new("/ws"), false, ApprovalMode::Ask);
    let entries: Vec<crate::events::CatalogEntry> = serde_json::from_value(json!([
        {"name": "review", "description": "Review the diff", "hint": "[base]", "skill": false},
        {"name": "greet", "description": "Say hello", "skill": true}
    ]))
    .unwrap();
    let out = t.updates(&Envelope::root(0, Event::Catalog { entries }));
    let got = as_json(&out[0]);
    assert_eq!(got["sessionUpdate"], "available_commands_update");
    assert_eq!(
        got["availableCommands"],
        json!([
            {"name": "review", "description": "Review the diff", "input": {"hint": "[base]"}},
            {"name": "greet", "description": "Say hello"}
        ])
    );
}
