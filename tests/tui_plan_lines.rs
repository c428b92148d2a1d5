//! The plan where the user reads: each plan change echoed as one line in
//! the conversation (the model's in its call's cell, a skill's or the
//! plan file's as a note), and a long plan with a running child kept
//! readable in a short pane (done items folded into one line, the child
//! in one line, the running item and the next pending ones in view).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use serde_json::json;
use tui_support::*;
use waypoint::events::{Envelope, Event, ThreadId, ToolStatus};
use waypoint::todo::{Author, PlanDiff, TodoItem, TodoStatus};
use waypoint::tui::state::{App, EntryKind};
use waypoint::tui::update;

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A `todo_write` call `id` that writes `items` (the change `diff`), as
/// the engine sends it: the call, its revision, its end.
fn plan_write(id: &str, items: Vec<TodoItem>, diff: PlanDiff) -> Vec<Event> {
    let todos: Vec<_> = items
        .iter()
        .map(|i| json!({"content": i.content, "activeForm": i.active_form, "status": i.status}))
        .collect();
    let line = format!("{} items", items.len());
    vec![
        begin(id, "todo_write", &line, json!({ "todos": todos }), None),
        plan_event(items, diff),
        end(id, "todo_write", ToolStatus::Ok, 0, "Plan updated."),
    ]
}

/// A compiler's plan, written twice by the model: first the whole plan,
/// then the parser done, the lexer started and tests added.
fn compiler_session(clock: &Clock) -> App {
    use TodoStatus::{Completed as Done, InProgress as Doing, Pending as Todo};
    let mut a = app(clock);
    let mut events = vec![
        Event::TurnStarted { resumed: false },
        Event::RoundStarted { round: 1 },
        text("I'll plan it."),
    ];
    events.extend(plan_write(
        "p1",
        vec![
            item("1", "Write the parser", Doing),
            item("2", "Write the lexer", Todo),
        ],
        PlanDiff {
            added: strings(&["Write the parser", "Write the lexer"]),
            started: strings(&["Write the parser"]),
            ..PlanDiff::default()
        },
    ));
    events.push(begin(
        "b1",
        "bash",
        "cargo build",
        json!({"command": "cargo build"}),
        Some("Write the parser"),
    ));
    events.push(end("b1", "bash", ToolStatus::Ok, 900, ""));
    events.extend(plan_write(
        "p2",
        vec![
            item("1", "Write the parser", Done),
            item("2", "Write the lexer", Doing),
            item("3", "Add tests", Todo),
        ],
        PlanDiff {
            added: strings(&["Add tests"]),
            started: strings(&["Write the lexer"]),
            completed: strings(&["Write the parser"]),
            ..PlanDiff::default()
        },
    ));
    let timed = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| (0.1 * i as f64, e))
        .collect();
    feed(&mut a, clock, timed);
    a
}

fn lines_of(a: &App, kind: fn(&EntryKind) -> bool) -> Vec<String> {
    a.root
        .conversation
        .entries
        .iter()
        .filter(|e| kind(&e.kind))
        .map(|e| e.text().to_string())
        .collect()
}

#[test]
fn each_plan_change_is_one_line_in_the_conversation() {
    let clock = Clock::new();
    let now = clock.at(10.0);
    let mut a = compiler_session(&clock);
    let cells = lines_of(&a, |k| matches!(k, EntryKind::Tool(_)));
    assert_eq!(
        cells,
        vec![
            "plan ▶ Write the parser · + Write the lexer",
            "bash cargo build · 900 ms",
            "plan ▶ Write the lexer · ✓ Write the parser · + Add tests",
        ]
    );
    let terminal = screen(&mut a, 80, 24, now);
    insta::assert_snapshot!("plan_lines_in_the_conversation_80x24", terminal.backend());
    let s = screen_text(&mut a, 80, 24, now);
    assert!(!s.contains("todo_write"), "{s}");
    // A skill's plan and the plan file's edits are said too, by whom.
    let skill = Event::PlanUpdated {
        items: vec![item("9", "Follow the skill", TodoStatus::Pending)],
        rendered: String::new(),
        diff: PlanDiff {
            added: strings(&["Follow the skill"]),
            removed: strings(&["Write the parser", "Write the lexer", "Add tests"]),
            dropped: strings(&["Write the lexer", "Add tests"]),
            ..PlanDiff::default()
        },
        revision: 3,
        author: Author::Skill,
        at: 0,
        note: None,
    };
    update::on_event(&mut a, skill, now);
    let notes = lines_of(&a, |k| matches!(k, EntryKind::Notice(_)));
    assert_eq!(
        notes.last().map(String::as_str),
        Some(
            "Plan (a skill's plan): + Follow the skill · ✗ Write the lexer · ✗ Add tests · − Write the parser"
        )
    );
    // The plan file's edit is said by whom; the user's own edit is not
    // said again (they just made it).
    let edit = |author, revision, text: &str| Event::PlanUpdated {
        items: vec![item("9", text, TodoStatus::InProgress)],
        rendered: String::new(),
        diff: PlanDiff {
            started: strings(&[text]),
            ..PlanDiff::default()
        },
        revision,
        author,
        at: 0,
        note: None,
    };
    update::on_event(&mut a, edit(Author::PlanFile, 4, "Follow the skill"), now);
    let notes = lines_of(&a, |k| matches!(k, EntryKind::Notice(_)));
    assert_eq!(
        notes.last().map(String::as_str),
        Some("Plan (plan file): ▶ Follow the skill")
    );
    update::on_event(&mut a, edit(Author::User, 5, "Follow it"), now);
    assert_eq!(lines_of(&a, |k| matches!(k, EntryKind::Notice(_))), notes);
}

/// Twelve items, four done, the fifth running with a child thread (a
/// `task` call made for it) that has a plan of its own.
fn twelve_with_a_child(clock: &Clock) -> App {
    let mut a = app(clock);
    let items: Vec<TodoItem> = (1..=12)
        .map(|i| {
            let status = match i {
                1..=4 => TodoStatus::Completed,
                5 => TodoStatus::InProgress,
                _ => TodoStatus::Pending,
            };
            item(
                &i.to_string(),
                &format!("Step {i}: port module {i}"),
                status,
            )
        })
        .collect();
    let mut call = begin(
        "t1",
        "task",
        "port module 5",
        json!({"prompt": "port module 5"}),
        Some("Step 5: port module 5"),
    );
    if let Event::ToolCallBegin { plan_item_id, .. } = &mut call {
        *plan_item_id = Some("5".into());
    }
    feed(
        &mut a,
        clock,
        vec![
            (0.0, Event::TurnStarted { resumed: false }),
            (0.5, plan_event(items, PlanDiff::default())),
            (1.0, call),
        ],
    );
    let child = |event| Envelope {
        thread: ThreadId(1),
        parent_call: Some("t1".into()),
        turn: 1,
        event,
    };
    let child_items = vec![
        item("c1", "Read module 5", TodoStatus::Completed),
        item("c2", "Port its functions", TodoStatus::InProgress),
        item("c3", "Port its tests", TodoStatus::Pending),
        item("c4", "Run its tests", TodoStatus::Pending),
    ];
    for event in [
        Event::TurnStarted { resumed: false },
        plan_event(child_items, PlanDiff::default()),
    ] {
        update::on_envelope(&mut a, child(event), clock.at(2.0));
    }
    a
}

#[test]
fn a_long_plan_with_a_running_child_keeps_the_running_item_and_the_next_ones_in_view() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = twelve_with_a_child(&clock);
    let terminal = screen(&mut a, 80, 24, now);
    insta::assert_snapshot!("twelve_items_and_a_child_80x24", terminal.backend());
    let s = screen_text(&mut a, 80, 24, now);
    let pane: Vec<&str> = s
        .lines()
        .take_while(|l| !l.contains("Conversation"))
        .collect();
    let pane = pane.join("\n");
    // The done items in one line, the running one, its child in one line,
    // and the next three pending ones.
    assert!(pane.contains("✓ 4 done"), "{pane}");
    assert!(!pane.contains("Step 1: port module 1"), "{pane}");
    assert!(pane.contains("[>] Step 5: port module 5"), "{pane}");
    assert!(pane.contains("↳ port module 5 · 1/4"), "{pane}");
    assert!(
        !pane.contains("Port its functions"),
        "the child in one line: {pane}"
    );
    for next in 6..=8 {
        assert!(
            pane.contains(&format!("[ ] Step {next}: port module {next}")),
            "{pane}"
        );
    }
    // The count is in the title: no gauge row.
    assert!(pane.contains("Plan 4/12"), "{pane}");
    assert!(!pane.contains("━━━━━━━━━━"), "{pane}");
    // With room (a taller terminal), the child's items and the done ones show.
    let tall = screen_text(&mut a, 80, 60, now);
    assert!(tall.contains("[>] Port its functions"), "{tall}");
    assert!(tall.contains("[x] Step 1: port module 1"), "{tall}");
}
