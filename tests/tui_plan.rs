//! The plan as a first-class object in the TUI: stepping through past
//! revisions, selecting an item (the trace shows its calls), the user's
//! edits from the plan pane and `/plan`, the honest "stopped with open
//! items" banner and a child thread's plan nested under the item it works
//! for; with snapshots of each at 80x24 and 120x40.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tui_support::*;
use waypoint::events::{ErrorKind, Event, Op, StopReason, ThreadId, ToolStatus};
use waypoint::todo::{Author, PlanDiff, PlanEdit, Reworded, TodoItem, TodoStatus};
use waypoint::tui::state::{App, EntryKind, Focus, REVISIONS_CAP};
use waypoint::tui::update::{self, Effect};

/// 12:00:00 UTC on the day of `NOW_MS`.
const NOON_MS: u64 = 1_796_299_200_000;

fn revision(n: u32, author: Author, secs: u64, items: Vec<TodoItem>, diff: PlanDiff) -> Event {
    Event::PlanUpdated {
        rendered: String::new(),
        items,
        diff,
        revision: n,
        author,
        at: NOON_MS + secs * 1000,
        note: None,
    }
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A tool call made while plan item `item_id` was in progress.
fn call_for(id: &str, name: &str, line: &str, item_id: &str, item: &str) -> Event {
    match begin(id, name, line, json!({"path": line}), Some(item)) {
        Event::ToolCallBegin {
            id,
            name,
            summary,
            input,
            plan_item,
            ..
        } => Event::ToolCallBegin {
            id,
            name,
            summary,
            input,
            plan_item_id: Some(item_id.into()),
            plan_item,
        },
        other => other,
    }
}

/// Five revisions: the model's plan, progress, the user's added item, a
/// re-plan (reworded, moved, one item dropped), progress again.
fn history(clock: &Clock) -> App {
    use TodoStatus::{Completed as Done, InProgress as Doing, Pending as Todo};
    let mut a = app(clock);
    let events = vec![
        (0.0, Event::TurnStarted { resumed: false }),
        (
            1.0,
            revision(
                1,
                Author::Model,
                5,
                vec![
                    item("1", "Read the CLI code", Doing),
                    item("2", "Add the flag", Todo),
                    item("3", "Write the tests", Todo),
                    item("4", "Run the tests", Todo),
                ],
                PlanDiff {
                    added: strings(&[
                        "Read the CLI code",
                        "Add the flag",
                        "Write the tests",
                        "Run the tests",
                    ]),
                    started: strings(&["Read the CLI code"]),
                    ..PlanDiff::default()
                },
            ),
        ),
        (
            2.0,
            revision(
                2,
                Author::Model,
                130,
                vec![
                    item("1", "Read the CLI code", Done),
                    item("2", "Add the flag", Doing),
                    item("3", "Write the tests", Todo),
                    item("4", "Run the tests", Todo),
                ],
                PlanDiff {
                    completed: strings(&["Read the CLI code"]),
                    started: strings(&["Add the flag"]),
                    ..PlanDiff::default()
                },
            ),
        ),
        (
            3.0,
            revision(
                3,
                Author::User,
                271,
                vec![
                    item("1", "Read the CLI code", Done),
                    item("2", "Add the flag", Doing),
                    item("5", "Update the README", Todo),
                    item("3", "Write the tests", Todo),
                    item("4", "Run the tests", Todo),
                ],
                PlanDiff {
                    added: strings(&["Update the README"]),
                    ..PlanDiff::default()
                },
            ),
        ),
        (
            4.0,
            revision(
                4,
                Author::Model,
                360,
                vec![
                    item("1", "Read the CLI code", Done),
                    item("2", "Add the --verbose flag", Doing),
                    item("4", "Run the tests", Todo),
                    item("5", "Update the README", Todo),
                ],
                PlanDiff {
                    removed: strings(&["Write the tests"]),
                    dropped: strings(&["Write the tests"]),
                    reworded: vec![Reworded {
                        from: "Add the flag".into(),
                        to: "Add the --verbose flag".into(),
                    }],
                    reordered: strings(&["Update the README"]),
                    ..PlanDiff::default()
                },
            ),
        ),
        (
            5.0,
            revision(
                5,
                Author::Model,
                400,
                vec![
                    item("1", "Read the CLI code", Done),
                    item("2", "Add the --verbose flag", Done),
                    item("4", "Run the tests", Doing),
                    item("5", "Update the README", Todo),
                ],
                PlanDiff {
                    completed: strings(&["Add the --verbose flag"]),
                    started: strings(&["Run the tests"]),
                    ..PlanDiff::default()
                },
            ),
        ),
    ];
    feed(&mut a, clock, events);
    a
}

/// A plan of three items with tool calls made for items 1 and 2.
fn with_calls(clock: &Clock) -> App {
    use TodoStatus::{Completed as Done, InProgress as Doing, Pending as Todo};
    let mut a = app(clock);
    let events = vec![
        (0.0, Event::TurnStarted { resumed: false }),
        (
            0.5,
            plan_event(
                vec![
                    item("1", "Read the CLI code", Doing),
                    item("2", "Add the flag", Todo),
                    item("3", "Run the tests", Todo),
                ],
                PlanDiff::default(),
            ),
        ),
        (
            1.0,
            call_for("t1", "read_file", "src/cli.rs", "1", "Read the CLI code"),
        ),
        (
            1.1,
            end("t1", "read_file", ToolStatus::Ok, 4, "use clap::Parser;"),
        ),
        (
            1.2,
            call_for("t2", "read_file", "src/main.rs", "1", "Read the CLI code"),
        ),
        (
            1.3,
            end("t2", "read_file", ToolStatus::Ok, 3, "fn main() {}"),
        ),
        (
            2.0,
            plan_event(
                vec![
                    item("1", "Read the CLI code", Done),
                    item("2", "Add the flag", Doing),
                    item("3", "Run the tests", Todo),
                ],
                PlanDiff::default(),
            ),
        ),
        (
            2.5,
            call_for("t3", "edit_file", "src/cli.rs", "2", "Add the flag"),
        ),
        (
            2.6,
            end("t3", "edit_file", ToolStatus::Ok, 2, "Edited src/cli.rs"),
        ),
        (
            3.0,
            Event::PlanStats {
                items: vec![
                    waypoint::todo::ItemStats {
                        id: "1".into(),
                        content: "Read the CLI code".into(),
                        status: Some(Done),
                        removed: false,
                        time_ms: 83_000,
                        tool_calls: 2,
                        input_tokens: 12_300,
                        output_tokens: 900,
                        cost_usd: Some(0.0512),
                    },
                    waypoint::todo::ItemStats {
                        id: "2".into(),
                        content: "Add the flag".into(),
                        status: Some(Doing),
                        removed: false,
                        time_ms: 1_000,
                        tool_calls: 1,
                        input_tokens: 4_000,
                        output_tokens: 200,
                        cost_usd: None,
                    },
                ],
                running: Some("2".into()),
            },
        ),
    ];
    feed(&mut a, clock, events);
    a
}

fn press(a: &mut App, code: KeyCode, now: std::time::Instant) -> Vec<Effect> {
    update::on_key(a, key(code), now)
}

fn edit(e: PlanEdit) -> Vec<Effect> {
    vec![Effect::Send(Op::EditPlan {
        thread: ThreadId::ROOT,
        edit: e,
    })]
}

#[test]
fn brackets_step_through_revisions_and_back_to_live() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = history(&clock);
    assert_eq!(a.root.plan.revisions.list.len(), 5);
    // Only in the plan pane: elsewhere `[` is typed.
    press(&mut a, KeyCode::Char('['), now);
    assert_eq!(a.root.plan.revisions.viewing, None);
    assert_eq!(a.input.text(), "[");
    a.input.clear();
    a.focus = Focus::Checklist;
    press(&mut a, KeyCode::Char('['), now);
    assert_eq!(a.root.plan.revisions.viewing, Some(4));
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("rev 5/5 · model · 12:06:40"), "{s}");
    press(&mut a, KeyCode::Char('['), now);
    press(&mut a, KeyCode::Char('['), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("rev 3/5 · user · 12:04:31"), "{s}");
    assert!(s.contains("+ [ ] Update the README"), "{s}");
    // Past the first it stays on the first.
    for _ in 0..5 {
        press(&mut a, KeyCode::Char('['), now);
    }
    assert_eq!(a.root.plan.revisions.viewing, Some(0));
    // `]` past the newest is the live plan again.
    for _ in 0..5 {
        press(&mut a, KeyCode::Char(']'), now);
    }
    assert_eq!(a.root.plan.revisions.viewing, None);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(!s.contains("rev "), "{s}");
    // Esc returns to live and keeps the focus on the plan.
    press(&mut a, KeyCode::Char('['), now);
    press(&mut a, KeyCode::Esc, now);
    assert_eq!(a.root.plan.revisions.viewing, None);
    assert_eq!(a.focus, Focus::Checklist);
    // A user's revision shows its diff: reworded, moved, dropped.
    press(&mut a, KeyCode::Char('['), now);
    press(&mut a, KeyCode::Char('['), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("~ [>] Add the flag → Add the --verbose flag"),
        "{s}"
    );
    assert!(s.contains("↕ [ ] Update the README"), "{s}");
    assert!(s.contains("− dropped: Write the tests"), "{s}");
}

#[test]
fn revisions_are_capped_and_forgotten_with_the_session() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = history(&clock);
    for n in 6..=(REVISIONS_CAP as u32 + 10) {
        update::on_event(
            &mut a,
            revision(
                n,
                Author::Model,
                u64::from(n),
                vec![item("1", "Read the CLI code", TodoStatus::InProgress)],
                PlanDiff::default(),
            ),
            now,
        );
    }
    assert_eq!(a.root.plan.revisions.list.len(), REVISIONS_CAP);
    assert_eq!(a.root.plan.revisions.latest(), REVISIONS_CAP as u32 + 10);
    update::on_event(
        &mut a,
        Event::PlanStats {
            items: vec![waypoint::todo::ItemStats {
                id: "1".into(),
                content: "Read the CLI code".into(),
                tool_calls: 4,
                ..Default::default()
            }],
            running: Some("1".into()),
        },
        now,
    );
    assert!(a.root.plan.stats.of("1", now).is_some());
    update::on_event(&mut a, Event::SessionReset, now);
    assert!(a.root.plan.revisions.list.is_empty());
    // Item "1" of the next session is another item: no account carried over.
    assert!(a.root.plan.stats.of("1", now).is_none());
    assert!(a.root.plan.stats.running().is_none());
    // A resumed session's history fills them again.
    let past = vec![
        revision(
            1,
            Author::Model,
            1,
            vec![item("1", "Read the CLI code", TodoStatus::InProgress)],
            PlanDiff::default(),
        ),
        revision(
            2,
            Author::User,
            2,
            vec![item("1", "Read the CLI code", TodoStatus::Completed)],
            PlanDiff::default(),
        ),
    ];
    let events = past
        .into_iter()
        .map(|e| waypoint::events::Envelope::root(1, e))
        .collect();
    update::on_event(&mut a, Event::History { events }, now);
    assert_eq!(a.root.plan.revisions.list.len(), 2);
    assert_eq!(a.root.plan.revisions.list[1].author, Author::User);
}

#[test]
fn selecting_an_item_filters_the_trace_and_marks_its_cells() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_calls(&clock);
    assert_eq!(a.root.trace.shown().len(), 3);
    a.focus = Focus::Checklist;
    // The first step starts from the item in progress (2): up is item 1.
    press(&mut a, KeyCode::Up, now);
    assert_eq!(a.root.plan.view.selected.as_deref(), Some("1"));
    assert_eq!(a.root.trace.filter, Some(("1".to_string(), 1)));
    assert_eq!(a.root.trace.shown(), vec![0, 1]);
    let serials: Vec<u64> = a.root.trace.entries[..2].iter().map(|t| t.serial).collect();
    assert_eq!(a.root.conversation.marked_tools, serials);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("Tools · item 1 (2 calls)"), "{s}");
    assert!(
        s.contains("⏱ 1:23 · 2 calls · ↑12.3k ↓900 · $0.0512"),
        "{s}"
    );
    // The trace's keys move among the item's calls only.
    a.focus = Focus::Trace;
    press(&mut a, KeyCode::Up, now);
    assert_eq!(a.root.trace.selected, Some(0));
    press(&mut a, KeyCode::Enter, now);
    assert_eq!(a.root.trace.focused().map(|t| t.id.as_str()), Some("t1"));
    // j: item 2, its one call; its clock runs on.
    a.focus = Focus::Checklist;
    press(&mut a, KeyCode::Char('j'), now);
    assert_eq!(a.root.trace.filter, Some(("2".to_string(), 2)));
    assert!(!a.root.trace.expanded, "another item's calls start folded");
    let s = screen_text(&mut a, 120, 40, clock.at(63.0));
    assert!(s.contains("Tools · item 2 (1 call)"), "{s}");
    assert!(s.contains("⏱ 1:01 · 1 call"), "{s}");
    // A call made for it now joins the filter and the marks.
    update::on_event(
        &mut a,
        call_for("t4", "bash", "cargo build", "2", "Add the flag"),
        now,
    );
    assert_eq!(a.root.trace.shown().len(), 2);
    assert_eq!(a.root.conversation.marked_tools.len(), 2);
    // Esc (nothing running) lets the selection go: every call again.
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: StopReason::EndTurn,
            open_items: 2,
        },
        now,
    );
    press(&mut a, KeyCode::Esc, now);
    assert_eq!(a.root.plan.view.selected, None);
    assert_eq!(a.root.trace.filter, None);
    assert!(a.root.conversation.marked_tools.is_empty());
    assert_eq!(a.root.trace.shown().len(), 4);
    // An item that leaves the plan takes the selection with it.
    press(&mut a, KeyCode::Down, now);
    assert_eq!(a.root.plan.view.selected.as_deref(), Some("3"));
    update::on_event(
        &mut a,
        plan_event(
            vec![item("1", "Read the CLI code", TodoStatus::Completed)],
            PlanDiff::default(),
        ),
        now,
    );
    assert_eq!(a.root.plan.view.selected, None);
    assert_eq!(a.root.trace.filter, None);
}

#[test]
fn the_plan_keys_send_the_users_edits() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_calls(&clock);
    a.status.engine.arrived();
    a.focus = Focus::Checklist;
    // Without a selection the keys act on the item in progress (2).
    assert_eq!(
        press(&mut a, KeyCode::Char('d'), now),
        edit(PlanEdit::Status {
            n: 2,
            status: TodoStatus::Completed
        })
    );
    press(&mut a, KeyCode::Up, now);
    // a: a prompt; typed text (not the input box's) added after item 1.
    a.input.set_text("kept");
    assert!(press(&mut a, KeyCode::Char('a'), now).is_empty());
    type_text(&mut a, "Update the READMEx", now);
    press(&mut a, KeyCode::Backspace, now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("+ after 1 › Update the README▏"), "{s}");
    assert_eq!(
        press(&mut a, KeyCode::Enter, now),
        edit(PlanEdit::Add {
            text: "Update the README".into(),
            after: Some(1)
        })
    );
    assert_eq!(a.root.plan.view.prompt, None);
    assert_eq!(a.input.text(), "kept");
    // e: the prompt holds the item's text; Esc cancels (nothing sent).
    press(&mut a, KeyCode::Char('e'), now);
    assert_eq!(
        a.root.plan.view.prompt.as_ref().map(|p| p.text.as_str()),
        Some("Read the CLI code")
    );
    assert!(press(&mut a, KeyCode::Esc, now).is_empty());
    assert_eq!(a.root.plan.view.prompt, None);
    assert_eq!(
        a.root.plan.view.selected.as_deref(),
        Some("1"),
        "Esc closed the prompt only"
    );
    press(&mut a, KeyCode::Char('e'), now);
    type_text(&mut a, " again", now);
    assert_eq!(
        press(&mut a, KeyCode::Enter, now),
        edit(PlanEdit::Reword {
            n: 1,
            text: "Read the CLI code again".into()
        })
    );
    // d on a done item opens it again; x removes; J/K move.
    assert_eq!(
        press(&mut a, KeyCode::Char('d'), now),
        edit(PlanEdit::Status {
            n: 1,
            status: TodoStatus::Pending
        })
    );
    assert_eq!(
        press(&mut a, KeyCode::Char('x'), now),
        edit(PlanEdit::Remove { n: 1 })
    );
    let shift = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT);
    assert_eq!(
        update::on_key(&mut a, shift('J'), now),
        edit(PlanEdit::Move { from: 1, to: 2 })
    );
    assert!(
        update::on_key(&mut a, shift('K'), now).is_empty(),
        "the top"
    );
    assert!(a.status.turn.running(), "all of it while the agent runs");
    // A refused edit is said.
    update::on_event(
        &mut a,
        Event::Error {
            kind: ErrorKind::PlanEdit,
            message: "The plan was not changed: there is no item 9 (the plan has 3).".into(),
        },
        now,
    );
    assert!(notices(&a).iter().any(|n| n.contains("there is no item 9")));
}

#[test]
fn slash_plan_sends_edits_and_explains_mistakes() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_calls(&clock);
    a.status.engine.arrived();
    let run = |a: &mut App, text: &str| {
        type_text(a, text, now);
        press(a, KeyCode::Enter, now)
    };
    assert_eq!(
        run(&mut a, "/plan add Update the README"),
        edit(PlanEdit::Add {
            text: "Update the README".into(),
            after: None
        })
    );
    assert_eq!(
        run(&mut a, "/plan done 2"),
        edit(PlanEdit::Status {
            n: 2,
            status: TodoStatus::Completed
        })
    );
    assert_eq!(
        run(&mut a, "/plan remove 3"),
        edit(PlanEdit::Remove { n: 3 })
    );
    assert_eq!(
        run(&mut a, "/plan move 3 1"),
        edit(PlanEdit::Move { from: 3, to: 1 })
    );
    assert_eq!(
        run(&mut a, "/plan edit 1 Read all of it"),
        edit(PlanEdit::Reword {
            n: 1,
            text: "Read all of it".into()
        })
    );
    assert_eq!(run(&mut a, "/plan clear"), edit(PlanEdit::Clear));
    assert!(run(&mut a, "/plan done x").is_empty());
    assert!(run(&mut a, "/plan frobnicate").is_empty());
    let said = notices(&a);
    assert!(
        said.iter()
            .any(|n| n.starts_with("/plan: \"x\" is not an item number")),
        "{said:?}"
    );
    assert!(
        said.iter().any(|n| n.contains("unknown /plan command")),
        "{said:?}"
    );
    // Nothing of it reached the model as a message.
    assert!(
        !a.root
            .conversation
            .entries
            .iter()
            .any(|e| e.kind == EntryKind::User)
    );
}

#[test]
fn a_turn_that_ends_with_open_items_says_so_and_enter_continues() {
    let clock = Clock::new();
    let now = clock.at(10.0);
    let mut a = with_calls(&clock);
    a.status.engine.arrived();
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: StopReason::EndTurn,
            open_items: 2,
        },
        now,
    );
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("■ stopped with 2 of 3 items open — Enter continue · /plan clear archive"),
        "{s}"
    );
    assert!(
        s.contains("■ stopped with 2 of 3 open"),
        "the plan pane: {s}"
    );
    assert_eq!(
        press(&mut a, KeyCode::Enter, now),
        vec![Effect::Send(Op::Resume)]
    );
    // A new turn takes the banner away.
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, now);
    assert!(!screen_text(&mut a, 120, 40, now).contains("items open"));
    // So does a plan with nothing open.
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: StopReason::EndTurn,
            open_items: 1,
        },
        now,
    );
    assert!(a.root.plan.banner(a.status.turn.running()));
    update::on_event(
        &mut a,
        plan_event(
            vec![item("1", "Read the CLI code", TodoStatus::Completed)],
            PlanDiff::default(),
        ),
        now,
    );
    assert!(!screen_text(&mut a, 120, 40, now).contains("items open"));
    // A turn that ends with everything done shows none.
    let mut b = with_calls(&clock);
    update::on_event(
        &mut b,
        Event::TurnComplete {
            stop_reason: StopReason::EndTurn,
            open_items: 0,
        },
        now,
    );
    assert!(!b.root.plan.banner(false));
}

#[test]
fn snapshots_of_the_revision_view_the_filtered_trace_and_the_banner() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut revisions = history(&clock);
    revisions.focus = Focus::Checklist;
    press(&mut revisions, KeyCode::Char('['), now);
    press(&mut revisions, KeyCode::Char('['), now);
    let mut filtered = with_calls(&clock);
    filtered.focus = Focus::Checklist;
    press(&mut filtered, KeyCode::Up, now);
    press(&mut filtered, KeyCode::Tab, now);
    let mut banner = with_calls(&clock);
    update::on_event(
        &mut banner,
        Event::TurnComplete {
            stop_reason: StopReason::EndTurn,
            open_items: 2,
        },
        clock.at(4.0),
    );
    for (name, mut a) in [
        ("revision_view", revisions),
        ("filtered_trace", filtered),
        ("stopped_banner", banner),
    ] {
        for (w, h) in [(80, 24), (120, 40)] {
            let terminal = screen(&mut a, w, h, now);
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), terminal.backend());
        }
        // Tiny and odd sizes draw without panicking.
        for w in [1u16, 2, 5, 20, 39, 60, 99] {
            for h in [1u16, 2, 3, 5, 8, 12] {
                let text = screen_text(&mut a, w, h, now);
                assert_eq!(text.lines().count(), usize::from(h));
            }
        }
    }
}

#[test]
fn a_collapsed_plan_shows_the_prompt_and_the_revision_in_its_line() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = history(&clock);
    a.focus = Focus::Checklist;
    press(&mut a, KeyCode::Char('c'), now);
    assert!(a.root.plan.view.collapsed);
    press(&mut a, KeyCode::Char('['), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("rev 5/5 · model · 12:06:40 · [ ] Esc"), "{s}");
    press(&mut a, KeyCode::Char('a'), now);
    assert_eq!(
        a.root.plan.revisions.viewing, None,
        "an edit shows the live plan"
    );
    type_text(&mut a, "Tidy \u{1b}[31mup", now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("+ at the end › Tidy [31mup▏"), "{s}");
    assert!(!s.contains('\u{1b}'));
}

#[test]
fn the_live_plan_flags_rewordings_and_only_dropped_work() {
    use TodoStatus::{Completed as Done, InProgress as Doing, Pending as Todo};
    let clock = Clock::new();
    let mut a = app(&clock);
    feed(
        &mut a,
        &clock,
        vec![(
            0.0,
            plan_event(
                vec![
                    item("1", "Read the CLI code", Done),
                    item("2", "Add the flag", Doing),
                    item("3", "Write the tests", Todo),
                ],
                PlanDiff::default(),
            ),
        )],
    );
    // The engine's diff: 2 reworded (same id), 1 finished and pruned, 3 dropped.
    feed(
        &mut a,
        &clock,
        vec![(
            1.0,
            plan_event(
                vec![item("2", "Add the --verbose flag", Doing)],
                PlanDiff {
                    removed: strings(&["Read the CLI code", "Write the tests"]),
                    dropped: strings(&["Write the tests"]),
                    reworded: vec![Reworded {
                        from: "Add the flag".into(),
                        to: "Add the --verbose flag".into(),
                    }],
                    ..PlanDiff::default()
                },
            ),
        )],
    );
    let now = clock.at(1.5);
    assert_eq!(
        a.root.plan.highlight.change_of("2", now),
        Some(waypoint::tui::state::Change::Reworded)
    );
    assert_eq!(a.root.plan.highlight.dropped(now), ["Write the tests"]);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("Add the --verbose flag ~reworded"), "{s}");
    assert!(s.contains("− dropped: Write the tests"), "{s}");
    assert!(!s.contains("dropped: Read the CLI code"), "{s}");
    assert!(!s.contains("dropped: Add the flag"), "{s}");
}

#[test]
fn esc_while_the_agent_runs_closes_the_innermost_view_first_and_never_interrupts_for_it() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_calls(&clock);
    assert!(a.status.turn.running());
    // The plan: a past revision, then the selection (the trace's filter).
    a.focus = Focus::Checklist;
    press(&mut a, KeyCode::Up, now);
    press(&mut a, KeyCode::Char('['), now);
    assert!(
        press(&mut a, KeyCode::Esc, now).is_empty(),
        "leaving history"
    );
    assert_eq!(a.root.plan.revisions.viewing, None, "back to the live plan");
    assert_eq!(a.root.plan.view.selected.as_deref(), Some("1"));
    assert!(a.root.trace.filter.is_some());
    assert!(
        press(&mut a, KeyCode::Esc, now).is_empty(),
        "clearing the filter"
    );
    assert_eq!(a.root.plan.view.selected, None);
    assert_eq!(a.root.trace.filter, None);
    assert_eq!(a.focus, Focus::Checklist);
    // The tools: an expanded output, then the selected call.
    a.focus = Focus::Trace;
    press(&mut a, KeyCode::Up, now);
    press(&mut a, KeyCode::Enter, now);
    assert!(a.root.trace.expanded);
    assert!(
        press(&mut a, KeyCode::Esc, now).is_empty(),
        "folding the output"
    );
    assert!(!a.root.trace.expanded);
    assert!(a.root.trace.selected.is_some());
    assert!(
        press(&mut a, KeyCode::Esc, now).is_empty(),
        "leaving the selection"
    );
    assert_eq!(a.root.trace.selected, None);
    // Nothing left to close: now Esc interrupts.
    assert_eq!(
        press(&mut a, KeyCode::Esc, now),
        vec![Effect::Send(Op::Interrupt)]
    );
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_keeps_what_was_typed() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_calls(&clock);
    assert!(a.status.turn.running());
    for c in "next idea".chars() {
        press(&mut a, KeyCode::Char(c), now);
    }
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(
        update::on_key(&mut a, ctrl_c, now),
        vec![Effect::Send(Op::Interrupt)]
    );
    assert_eq!(a.input.text(), "next idea");
    assert!(
        !a.status.ui.quit_armed(now),
        "interrupting does not arm quitting"
    );
}

#[test]
fn the_selected_items_inline_cells_are_drawn_marked() {
    use ratatui::style::Modifier;
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_calls(&clock);
    a.focus = Focus::Checklist;
    press(&mut a, KeyCode::Up, now);
    let t = screen(&mut a, 120, 40, now);
    let buf = t.backend().buffer();
    // The row of each inline cell in the conversation, and whether its
    // text is drawn reversed.
    let reversed = |needle: &str| -> bool {
        for y in 0..buf.area.height {
            let row: String = (0..70).map(|x| buf[(x, y)].symbol()).collect();
            if let Some(at) = row.find(needle) {
                let x = u16::try_from(row[..at].chars().count()).unwrap();
                return buf[(x, y)].modifier.contains(Modifier::REVERSED);
            }
        }
        panic!("{needle} is not on screen");
    };
    assert!(reversed("read_file src/cli.rs"));
    assert!(reversed("read_file src/main.rs"));
    assert!(!reversed("edit_file src/cli.rs"));
}

/// `event` of child thread `n`, started by the root's call `call`.
fn of_child(n: u32, call: &str, event: Event) -> waypoint::events::Envelope {
    waypoint::events::Envelope {
        thread: waypoint::events::ThreadId(n),
        parent_call: Some(call.into()),
        turn: 1,
        event,
    }
}

/// `with_calls`, and a subagent (thread 1) the call `t4` started for the
/// item in progress ("Add the flag"), with a plan of its own.
fn with_child_plan(clock: &Clock) -> App {
    use TodoStatus::{Completed as Done, InProgress as Doing, Pending as Todo};
    let mut a = with_calls(clock);
    feed(
        &mut a,
        clock,
        vec![(
            3.5,
            call_for(
                "t4",
                "task",
                "add --verbose and test it",
                "2",
                "Add the flag",
            ),
        )],
    );
    let child = [
        Event::TurnStarted { resumed: false },
        plan_event(
            vec![
                item("c1", "Find where the flags are parsed", Done),
                item("c2", "Add the verbose field and its flag", Doing),
                item("c3", "Test that --verbose is accepted", Todo),
            ],
            PlanDiff::default(),
        ),
    ];
    for event in child {
        update::on_envelope(&mut a, of_child(1, "t4", event), clock.at(4.0));
    }
    a
}

#[test]
fn a_child_threads_plan_is_drawn_under_the_item_it_works_for() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = with_child_plan(&clock);
    let screen = screen_text(&mut a, 120, 40, now);
    let rows: Vec<&str> = screen.lines().collect();
    let at = |text: &str| {
        rows.iter()
            .position(|r| r.contains(text))
            .unwrap_or_else(|| panic!("{text} is not on screen:\n{screen}"))
    };
    // Under the item in progress and its spinner line, before the next item.
    assert!(at("Add the flag") < at("↳ add --verbose and test it · 1/3"));
    assert!(at("↳ add --verbose") < at("[>] Add the verbose field"));
    assert!(at("[>] Add the verbose field") < at("[ ] Run the tests"));
    assert!(rows[at("[x] Find where")].contains("      [x] Find where"));
    // A call made for another item does not nest its child there.
    let mut b = with_child_plan(&clock);
    update::on_envelope(
        &mut b,
        of_child(
            2,
            "t1",
            plan_event(
                vec![item("d1", "Elsewhere", TodoStatus::InProgress)],
                PlanDiff::default(),
            ),
        ),
        now,
    );
    assert!(!screen_text(&mut b, 120, 40, now).contains("Elsewhere"));
    // Without a plan in progress, nothing is nested.
    let mut c = with_child_plan(&clock);
    update::on_event(
        &mut c,
        plan_event(
            vec![item("1", "Read the CLI code", TodoStatus::Completed)],
            PlanDiff::default(),
        ),
        now,
    );
    assert!(!screen_text(&mut c, 120, 40, now).contains("↳ add --verbose"));
}

#[test]
fn an_interrupt_counts_the_subagents_open_items_in_the_stop_line() {
    let clock = Clock::new();
    let mut a = with_child_plan(&clock);
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: waypoint::events::AbortReason::Interrupted,
            message: "interrupted".into(),
            error: None,
        },
        clock.at(5.0),
    );
    let text = screen_text(&mut a, 120, 40, clock.at(6.0));
    assert!(
        text.contains("■ stopped with 2 of 3 open (+2 in subagents)"),
        "{text}"
    );
}

#[test]
fn snapshots_of_a_nested_child_plan() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = with_child_plan(&clock);
    for (w, h) in [(80, 24), (120, 40)] {
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("nested_child_plan_{w}x{h}"), terminal.backend());
    }
    // Tiny and odd sizes draw without panicking.
    for w in [1u16, 2, 5, 20, 39, 60, 99] {
        for h in [1u16, 2, 3, 5, 8, 12] {
            let text = screen_text(&mut a, w, h, now);
            assert_eq!(text.lines().count(), usize::from(h));
        }
    }
    // The plan pane alone, at 20x5, stays readable: its rows, no panic.
    let text = screen_text(&mut a, 20, 5, now);
    assert_eq!(text.lines().count(), 5);
}
