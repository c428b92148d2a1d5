//! The plan's checklist: it equals the plan store, keeps the active item in
//! view, says when a turn stopped, and flags dropped or reworded items.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::events::Event;
use waypoint::todo::TodoStatus;
use waypoint::tui::state::{App, Focus};
use waypoint::tui::update;
use waypoint::tui::widgets::checklist;

#[test]
fn the_checklist_equals_the_plan_store_and_collapses() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    let s = screen_text(&mut a, 120, 40, clock.at(42.0));
    assert!(s.contains("[x] Read the CLI code"));
    assert!(s.contains("[>] Run the tests"));
    assert!(
        s.contains("Running the tests · 0:39"),
        "the active item's activeForm and timer: {s}"
    );
    update::on_key(&mut a, ctrl('t'), clock.at(42.0));
    let s = screen_text(&mut a, 120, 40, clock.at(42.0));
    assert!(s.contains("▶ 2/3 ·"), "{s}");
    // Running animates; once the turn is over and the highlight has faded,
    // nothing does.
    assert!(a.animating(clock.at(42.0)));
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: waypoint::events::StopReason::EndTurn,
            open_items: 1,
        },
        clock.at(50.0),
    );
    assert!(!a.animating(clock.at(100.0)));
}

#[test]
fn after_a_stop_the_plan_says_so_and_its_timer_stands_still() {
    let clock = Clock::new();
    let mut a = interrupted(&clock);
    let line: String = checklist::summary_line(&a.root.plan, &a.ctx(clock.at(42.0)))
        .spans
        .iter()
        .map(|s| s.content.as_ref())
        .collect();
    assert_eq!(line, "■ 2/3 · stopped with 1 of 3 open");
    // The active item started at 3.0 and the turn stopped at 12.0.
    for at in [42.0, 100.0] {
        let s = screen_text(&mut a, 120, 40, clock.at(at));
        assert!(s.contains("Running the tests · 0:09"), "{s}");
    }
    // While running the clock goes on.
    let b = plan_in_progress(&clock);
    let line: String = checklist::summary_line(&b.root.plan, &b.ctx(clock.at(42.0)))
        .spans
        .iter()
        .map(|s| s.content.as_ref())
        .collect();
    assert_eq!(line, "▶ 2/3 · Running the tests · 0:39");
}

#[test]
fn a_long_plan_keeps_the_active_item_in_view_and_scrolls_from_there() {
    use waypoint::todo::{PlanDiff, TodoStatus};
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.0));
    let items = (1..=20)
        .map(|i| {
            let status = match i {
                1..=14 => TodoStatus::Completed,
                15 => TodoStatus::InProgress,
                _ => TodoStatus::Pending,
            };
            item(&i.to_string(), &format!("Step number {i}"), status)
        })
        .collect();
    update::on_event(
        &mut a,
        plan_event(items, PlanDiff::default()),
        clock.at(0.0),
    );
    let s = screen_text(&mut a, 120, 40, clock.at(1.0));
    assert!(s.contains("[>] Step number 15"), "{s}");
    a.focus = Focus::Checklist;
    update::on_key(&mut a, key(KeyCode::Char('k')), clock.at(1.0));
    let s2 = screen_text(&mut a, 120, 40, clock.at(1.0));
    assert!(
        s2.contains("[>] Step number 15"),
        "one line up stays near the active item, no jump: {s2}"
    );
    update::on_key(&mut a, key(KeyCode::Home), clock.at(1.0));
    assert!(screen_text(&mut a, 120, 40, clock.at(1.0)).contains("[x] Step number 1\u{20}"));
    update::on_key(&mut a, key(KeyCode::End), clock.at(1.0));
    assert!(screen_text(&mut a, 120, 40, clock.at(1.0)).contains("[>] Step number 15"));
}

#[test]
fn the_end_of_a_long_plan_is_reachable_at_60x20() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = long_plan(&clock, 3);
    let plan = |a: &mut App| {
        let t = screen_text(a, 60, 20, now);
        t.lines().take(14).collect::<Vec<_>>().join("\n")
    };
    let first_step = |s: &str| -> usize {
        let at = s.find("Step ").unwrap() + 5;
        s[at..].split(':').next().unwrap().parse().unwrap()
    };
    // Following, the done items are one line; the first j selects, and a
    // selection shows every item: the done ones unfold above the item in
    // progress, which keeps its row.
    let s = plan(&mut a);
    assert!(s.contains("✓ 2 done"), "{s}");
    let row = |s: &str| s.lines().position(|l| l.contains("[>] Step 3:"));
    let before = row(&s);
    update::on_key(&mut a, key(KeyCode::Char('j')), now);
    let s = plan(&mut a);
    assert!(!s.contains("✓ 2 done"), "{s}");
    assert_eq!(row(&s), before, "{s}");
    // j never wraps back to the top, however often it is pressed.
    let mut last = String::new();
    let mut top = 0;
    for _ in 0..40 {
        plan(&mut a);
        update::on_key(&mut a, key(KeyCode::Char('j')), now);
        let s = plan(&mut a);
        assert!(first_step(&s) >= top, "{s}");
        top = first_step(&s);
        last = s;
    }
    assert!(last.contains("Step 20:") && last.contains("↑"), "{last}");
    // PgDn from the top reaches the last items.
    update::on_key(&mut a, key(KeyCode::Home), now);
    let s = plan(&mut a);
    assert!(s.contains("Step 1:") && s.contains("↓"), "{s}");
    for _ in 0..5 {
        update::on_key(&mut a, key(KeyCode::PageDown), now);
        plan(&mut a);
    }
    assert!(plan(&mut a).contains("Step 20:"));
    // End follows the item in progress again, its spinner line included.
    update::on_key(&mut a, key(KeyCode::End), now);
    assert!(a.root.plan.view.scroll.follow);
    let mut a = long_plan(&clock, 20);
    let s = plan(&mut a);
    assert!(s.contains("Step 20: update module 20 · "), "{s}");
}

#[test]
fn dropped_and_reworded_plan_items_are_flagged() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let before = vec![
        item("1", "Read the CLI code", TodoStatus::InProgress),
        item("2", "Write the tests", TodoStatus::Pending),
        item("3", "Run the tests", TodoStatus::Pending),
    ];
    feed(
        &mut a,
        &clock,
        vec![(0.0, plan_event(before.clone(), Default::default()))],
    );
    // A re-plan: id 2 now means something else, id 3 is gone. The pane
    // shows what the engine's diff says: id 2 reworded, id 3 dropped.
    let after = vec![
        item("1", "Read the CLI code", TodoStatus::InProgress),
        item("2", "Add the flag", TodoStatus::Pending),
    ];
    let diff = waypoint::todo::PlanDiff::between(&before, &after);
    feed(&mut a, &clock, vec![(1.0, plan_event(after, diff))]);
    let now = clock.at(1.5);
    assert_eq!(
        a.root.plan.highlight.change_of("2", now),
        Some(waypoint::tui::state::Change::Reworded)
    );
    assert_eq!(a.root.plan.highlight.dropped(now), ["Run the tests"]);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(s.contains("Add the flag ~reworded"), "{s}");
    assert!(!s.contains("dropped: Write the tests"), "{s}");
    assert!(s.contains("− dropped: Run the tests"), "{s}");
    // A while later the list is gone.
    let later = clock.at(20.0);
    assert!(a.root.plan.highlight.dropped(later).is_empty());
    assert!(!screen_text(&mut a, 120, 40, later).contains("dropped"));
}
