//! Goals in the app (issue 46): `/goal` sends the goal's ops (a bad
//! budget is a one-line error), the goal's state shows in the status line
//! and the plan pane's title, each item's evidence is marked (verified,
//! check failed, unverified), the selected item shows its check and last
//! result, the forecast line appears once an item is done, a budget
//! warning and the goal's end are notices, and a resumed session's history
//! brings the goal back. Snapshots at 80x24 and 120x40.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support::*;

use ratatui::crossterm::event::KeyCode;
use waypoint::events::{
    Budget, Envelope, Event, Evidence, Goal, GoalAction, GoalReport, GoalState, Op, Spent, ThreadId,
};
use waypoint::todo::{ItemStats, PlanDiff, TodoItem, TodoStatus};
use waypoint::tui::state::{App, Focus};
use waypoint::tui::update::{self, Effect};

fn checked(id: &str, content: &str, status: TodoStatus, check: Option<&str>) -> TodoItem {
    let mut i = item(id, content, status);
    i.scope.check = check.map(str::to_string);
    i
}

fn plan(len: usize) -> Vec<TodoItem> {
    let mut items = vec![
        checked(
            "1",
            "Split the lexer",
            TodoStatus::Completed,
            Some("cargo test -p lexer"),
        ),
        checked("2", "Rename the tokens", TodoStatus::Completed, None),
        checked(
            "3",
            "Parse expressions",
            TodoStatus::InProgress,
            Some("cargo test -p parser"),
        ),
    ];
    for n in 4..=len {
        items.push(checked(
            &n.to_string(),
            &format!("Step {n}: port module {n}"),
            TodoStatus::Pending,
            None,
        ));
    }
    items
}

fn goal() -> Goal {
    Goal {
        text: "Port the parser".into(),
        check: Some("cargo test".into()),
        budget: Budget::parse("2M $5").unwrap(),
        item_budget: Budget::default(),
    }
}

fn ran(id: &str, command: &str, passed: bool, tail: &str) -> Event {
    Event::ItemChecked {
        n: 1,
        evidence: Evidence {
            item: id.into(),
            content: String::new(),
            command: command.into(),
            exit_code: Some(if passed { 0 } else { 101 }),
            passed,
            duration_ms: 2300,
            tail: tail.into(),
        },
    }
}

fn stats(items: &[TodoItem]) -> Event {
    let secs = [60, 70, 20];
    Event::PlanStats {
        items: items
            .iter()
            .enumerate()
            .map(|(i, it)| ItemStats {
                id: it.id.clone(),
                content: it.content.clone(),
                status: Some(it.status),
                time_ms: secs.get(i).copied().unwrap_or(0) * 1000,
                cost_usd: secs.get(i).map(|s| *s as f64 * 0.004),
                ..ItemStats::default()
            })
            .collect(),
        running: None,
    }
}

fn with_goal(clock: &Clock, len: usize) -> App {
    let mut a = app(clock);
    let items = plan(len);
    feed(
        &mut a,
        clock,
        vec![
            (0.0, Event::GoalSet { goal: goal() }),
            (0.1, Event::TurnStarted { resumed: false }),
            (0.5, plan_event(items.clone(), PlanDiff::default())),
            (
                1.0,
                ran("1", "cargo test -p lexer", true, "test result: ok"),
            ),
            (
                2.0,
                ran(
                    "3",
                    "cargo test -p parser",
                    false,
                    "running 4 tests\ntest result: FAILED. 3 passed; 1 failed",
                ),
            ),
            (2.5, stats(&items)),
        ],
    );
    a.focus = Focus::Checklist;
    a.root.plan.view.selected = Some("3".into());
    a
}

#[test]
fn the_plan_pane_shows_the_goal_marks_and_the_forecast() {
    let clock = Clock::new();
    let now = clock.at(10.0);
    let mut a = with_goal(&clock, 6);
    for (w, h) in [(80, 24), (120, 40)] {
        let text = screen_text(&mut a, w, h, now);
        assert!(text.contains("Plan 2/6 · goal: active"), "{text}");
        // The done items are folded (one of them unverified) at 120x40,
        // scrolled above the one in progress at 80x24.
        if h == 40 {
            assert!(text.contains("✓ 2 done (1 unverified)"), "{text}");
        }
        assert!(text.contains("Parse expressions ✗ check failed"), "{text}");
        // Mean 65 s: 45 s left of item 3, 3 × 65 s pending; $0.26 each.
        assert!(text.contains("≈ 4 min, ≈ $0.96 left"), "{text}");
        // The selected item's own share: what is left of the mean.
        if w == 80 {
            assert!(text.contains("$0.0800 · ≈ 45 s left of 1 min"), "{text}");
        }
        assert!(text.contains("check: cargo test -p parser"), "{text}");
        assert!(
            text.contains("last: exit 101 · 2.3 s · test result: FAI"),
            "{text}"
        );
        assert!(text.contains("goal: active"), "{text}");
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("plan_goal_{w}x{h}"), terminal.backend());
    }
}

#[test]
fn with_nothing_selected_each_done_items_mark_shows() {
    let clock = Clock::new();
    let now = clock.at(10.0);
    let mut a = with_goal(&clock, 6);
    a.root.plan.view.selected = None;
    let text = screen_text(&mut a, 120, 40, now);
    assert!(text.contains("Split the lexer ✓ verified"), "{text}");
    assert!(text.contains("Rename the tokens unverified"), "{text}");
    assert!(text.contains("Parse expressions ✗ check failed"), "{text}");
    let terminal = screen(&mut a, 120, 40, now);
    insta::assert_snapshot!("plan_goal_marks_120x40", terminal.backend());
}

#[test]
fn a_twelve_item_plan_with_a_goal_stays_readable_at_80x24() {
    let clock = Clock::new();
    let now = clock.at(10.0);
    let mut a = with_goal(&clock, 12);
    let text = screen_text(&mut a, 80, 24, now);
    assert!(text.contains("Plan 2/12 · goal: active"), "{text}");
    assert!(text.contains("Parse expressions ✗ check failed"), "{text}");
    assert!(text.contains("left"), "the forecast: {text}");
    let terminal = screen(&mut a, 80, 24, now);
    insta::assert_snapshot!("plan_goal_12_items_80x24", terminal.backend());
}

#[test]
fn a_plain_plan_has_no_goal_marks() {
    let clock = Clock::new();
    let now = clock.at(10.0);
    let mut a = app(&clock);
    let items: Vec<TodoItem> = plan(4)
        .into_iter()
        .map(|mut i| {
            i.scope.check = None;
            i
        })
        .collect();
    feed(
        &mut a,
        &clock,
        vec![
            (0.5, plan_event(items.clone(), PlanDiff::default())),
            (1.0, stats(&items)),
        ],
    );
    let text = screen_text(&mut a, 120, 40, now);
    assert!(!text.contains("unverified"), "{text}");
    assert!(!text.contains("goal"), "{text}");
    assert!(
        !text.contains(" left"),
        "no forecast without a goal: {text}"
    );
}

#[test]
fn goal_commands_send_the_goals_ops() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    let run = |a: &mut App, typed: &str| {
        type_text(a, typed, now);
        update::on_key(a, key(KeyCode::Enter), now)
    };
    assert_eq!(
        run(
            &mut a,
            "/goal Port the parser --check cargo test --budget 2M $5"
        ),
        vec![Effect::Send(Op::Goal {
            action: GoalAction::Set { goal: goal() }
        })]
    );
    for (typed, action) in [
        ("/goal pause", GoalAction::Pause),
        ("/goal resume", GoalAction::Resume),
        ("/goal clear", GoalAction::Clear),
        ("/goal accept 2", GoalAction::Accept { n: 2 }),
    ] {
        assert_eq!(
            run(&mut a, typed),
            vec![Effect::Send(Op::Goal { action })],
            "{typed}"
        );
    }
    // A bad budget: one line, nothing sent.
    assert_eq!(run(&mut a, "/goal Port it --budget lots"), vec![]);
    let last = *notices(&a).last().unwrap();
    assert!(last.starts_with("/goal: `lots` is not a budget"), "{last}");
    assert!(!last.contains('\n'), "{last}");
    // Alone, without a goal: says so.
    assert_eq!(run(&mut a, "/goal"), vec![]);
    assert!(notices(&a).last().unwrap().starts_with("No goal is set."));
    // /plan check N CMD sets an item's check; without CMD clears it.
    assert_eq!(
        run(&mut a, "/plan check 2 cargo test -p lexer"),
        vec![Effect::Send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: waypoint::todo::PlanEdit::Check {
                n: 2,
                command: Some("cargo test -p lexer".into())
            }
        })]
    );
}

fn report(state: GoalState, reason: Option<&str>) -> GoalReport {
    GoalReport {
        goal: goal(),
        state,
        reason: reason.map(str::to_string),
        spent: Spent {
            tokens: 2_000_000,
            cost_usd: 1.5,
            seconds: 600,
            turns: 12,
        },
        items: vec![
            waypoint::events::goal::ReportItem {
                id: "1".into(),
                content: "Split the lexer".into(),
                status: TodoStatus::Completed,
                evidence: "verified".into(),
                check: match ran("1", "cargo test -p lexer", true, "ok") {
                    Event::ItemChecked { evidence, .. } => Some(evidence),
                    _ => None,
                },
            },
            waypoint::events::goal::ReportItem {
                id: "3".into(),
                content: "Parse expressions".into(),
                status: TodoStatus::InProgress,
                evidence: "unverified".into(),
                check: None,
            },
        ],
        check: None,
    }
}

#[test]
fn esc_pauses_and_the_end_is_reported() {
    let clock = Clock::new();
    let mut a = with_goal(&clock, 4);
    a.focus = Focus::Input;
    // Esc interrupts the turn; the engine pauses the goal.
    let effects = update::on_key(&mut a, key(KeyCode::Esc), clock.at(3.0));
    assert!(
        effects.contains(&Effect::Send(Op::Interrupt)),
        "{effects:?}"
    );
    feed(
        &mut a,
        &clock,
        vec![(
            3.1,
            Event::GoalUpdated {
                report: report(GoalState::Paused, Some("interrupted by the user")),
            },
        )],
    );
    let text = screen_text(&mut a, 120, 40, clock.at(4.0));
    assert!(text.contains("goal: paused"), "{text}");
    assert!(
        notices(&a)
            .iter()
            .any(|n| n.starts_with("Goal paused (interrupted by the user)")),
        "{:?}",
        notices(&a)
    );
    // The budget warning, then the end with its report.
    feed(
        &mut a,
        &clock,
        vec![
            (
                5.0,
                Event::GoalBudget {
                    share: 80,
                    limit: "tokens".into(),
                },
            ),
            (
                6.0,
                Event::GoalUpdated {
                    report: report(GoalState::BudgetLimited, Some("the token budget ran out")),
                },
            ),
        ],
    );
    let all = notices(&a).join("\n");
    assert!(all.contains("spent 80% of its tokens budget"), "{all}");
    let end = *notices(&a).last().unwrap();
    assert!(
        end.starts_with("Goal budget-limited: Port the parser (the token budget ran out)"),
        "{end}"
    );
    assert!(
        end.contains("✓ 1. Split the lexer — verified · `cargo test -p lexer` exit 0"),
        "{end}"
    );
    assert!(
        end.contains("Spent: 2.0M tokens, $1.50, 10 min, 12 turns of"),
        "{end}"
    );
    assert!(end.contains("Left: Parse expressions."), "{end}");
    let text = screen_text(&mut a, 120, 40, clock.at(7.0));
    assert!(text.contains("goal budget-limited"), "{text}");
}

#[test]
fn a_resumed_session_brings_its_goal_back() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let items = plan(4);
    let past: Vec<Envelope> = [
        Event::GoalSet { goal: goal() },
        plan_event(items, PlanDiff::default()),
        ran("1", "cargo test -p lexer", true, "ok"),
    ]
    .into_iter()
    .map(|event| Envelope::root(1, event))
    .collect();
    feed(&mut a, &clock, vec![(1.0, Event::History { events: past })]);
    let text = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(text.contains("Plan 2/4 · goal: active"), "{text}");
    assert!(text.contains("Rename the tokens unverified"), "{text}");
    let first = a.root.plan.items[0].clone();
    assert_eq!(
        a.root.plan.goal.mark(&first),
        Some(waypoint::todo::Proof::Verified)
    );
    // Selected, it shows its check and the last run.
    a.root.plan.view.selected = Some("1".into());
    let text = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(text.contains("last: exit 0 · 2.3 s · ok"), "{text}");
}

#[test]
fn an_item_past_twice_the_mean_is_marked_drifting() {
    let clock = Clock::new();
    let mut a = with_goal(&clock, 4);
    let Event::PlanStats { mut items, running } = stats(&plan(4)) else {
        unreachable!()
    };
    items[2].time_ms = 200_000; // the mean is 65 s
    feed(
        &mut a,
        &clock,
        vec![(3.0, Event::PlanStats { items, running })],
    );
    let text = screen_text(&mut a, 120, 40, clock.at(4.0));
    // It wraps at this width: the mark follows the item's text.
    assert!(
        text.contains("Parse expressions ✗ check failed ⚠"),
        "{text}"
    );
    assert!(text.contains("    drifting"), "{text}");
}

#[test]
fn v_in_the_plan_pane_sets_the_selected_items_check() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = with_goal(&clock, 4);
    a.root.plan.view.selected = Some("4".into());
    // `v` opens the prompt with the item's check (none yet) …
    assert!(update::on_key(&mut a, key(KeyCode::Char('v')), now).is_empty());
    let text = screen_text(&mut a, 120, 40, now);
    assert!(text.contains("check of item 4 ›"), "{text}");
    type_text(&mut a, "test -f dist/app", now);
    // … and Enter sends it as the user's check.
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: waypoint::todo::PlanEdit::Check {
                n: 4,
                command: Some("test -f dist/app".into())
            }
        })]
    );
    // On an item with a check, the prompt starts from it.
    a.root.plan.view.selected = Some("3".into());
    update::on_key(&mut a, key(KeyCode::Char('v')), now);
    let prompt = a.root.plan.view.prompt.as_ref().unwrap();
    assert_eq!(prompt.text, "cargo test -p parser");
}
