//! A proposed plan in the app (issue 45): the plan pane shows it as
//! proposed, visibly apart from a live plan, at 80x24 and 120x40 with 12
//! items; `y` or Enter in the pane asks the mode it runs in (and whether
//! from a fresh context) before sending the approval, `/approve MODE
//! fresh` sends it at once, and neither does anything when no plan is
//! proposed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support::*;

use ratatui::crossterm::event::KeyCode;
use waypoint::events::{ApprovalMode, Event, Op, StopReason};
use waypoint::todo::{PlanDiff, TodoStatus};
use waypoint::tui::effect::Effect;
use waypoint::tui::state::{App, Confirm, Focus};
use waypoint::tui::update;

fn proposed(clock: &Clock) -> App {
    let mut a = app(clock);
    let t0 = clock.at(0.0);
    type_text(&mut a, "Split the parser into modules", t0);
    update::on_key(&mut a, key(KeyCode::Enter), t0);
    let items = (1..=12)
        .map(|i| {
            item(
                &i.to_string(),
                &format!("Move part {i} of the parser into its module"),
                TodoStatus::Pending,
            )
        })
        .collect();
    feed(
        &mut a,
        clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.5, plan_event(items, PlanDiff::default())),
            (0.6, Event::PlanProposed { revision: 1 }),
            (
                0.8,
                text("The parser has twelve parts; each moves on its own, tests after each."),
            ),
            (
                1.0,
                Event::TurnComplete {
                    open_items: 12,
                    stop_reason: StopReason::EndTurn,
                },
            ),
        ],
    );
    a
}

#[test]
fn a_proposed_plan_of_12_items_at_80x24_and_120x40() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = proposed(&clock);
    for (w, h) in [(80, 24), (120, 40)] {
        let text = screen_text(&mut a, w, h, now);
        assert!(text.contains("Proposed plan"), "{text}");
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("proposed_plan_{w}x{h}"), terminal.backend());
    }
}

#[test]
fn y_in_the_plan_pane_asks_the_mode_and_approve_sends_the_approval() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = proposed(&clock);
    // The session ran in auto-edit before plan mode: that is the default.
    for mode in [ApprovalMode::AutoEdit, ApprovalMode::Plan] {
        update::on_event(
            &mut a,
            Event::ApprovalMode {
                mode,
                sandboxed: true,
            },
            now,
        );
    }
    a.focus = Focus::Checklist;
    // `y` asks first: nothing is sent until the question is answered.
    let effects = update::on_key(&mut a, key(KeyCode::Char('y')), now);
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(
        a.overlays.confirm,
        Some(Confirm::ApprovePlan {
            mode: ApprovalMode::AutoEdit,
            fresh: false
        })
    );
    let text = screen_text(&mut a, 80, 24, now);
    assert!(
        text.contains("[auto-edit]") && text.contains("Approve the plan"),
        "{text}"
    );
    // Esc: not yet; the plan stays proposed.
    assert!(update::on_key(&mut a, key(KeyCode::Esc), now).is_empty());
    assert_eq!(a.overlays.confirm, None);
    // Enter in the pane asks too; Tab chooses the next mode, f a fresh
    // context, and Enter approves as shown.
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    update::on_key(&mut a, key(KeyCode::Tab), now);
    update::on_key(&mut a, key(KeyCode::Char('f')), now);
    let terminal = screen(&mut a, 80, 24, now);
    insta::assert_snapshot!("approve_plan_question_80x24", terminal.backend());
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(approves_auto_fresh(&effects), "{effects:?}");
    assert_eq!(a.overlays.confirm, None);
    a.focus = Focus::Input;
    let effects = type_text(&mut a, "/approve auto fresh", now);
    assert!(effects.is_empty());
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(approves_auto_fresh(&effects), "{effects:?}");
    // Once approved, the pane shows the live plan again and there is
    // nothing left to approve.
    update::on_event(
        &mut a,
        Event::PlanApproved {
            revision: 2,
            mode: ApprovalMode::Auto,
            fresh: true,
        },
        now,
    );
    assert!(!screen_text(&mut a, 120, 40, now).contains("Proposed plan"));
    a.focus = Focus::Checklist;
    let effects = update::on_key(&mut a, key(KeyCode::Char('y')), now);
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Send(Op::ApprovePlan { .. }))),
        "{effects:?}"
    );
    assert!(
        notices(&a)
            .iter()
            .any(|n| n.starts_with("No plan is proposed")),
        "{:?}",
        notices(&a)
    );
}

/// The effects send an approval to run in auto mode from a fresh context.
fn approves_auto_fresh(effects: &[Effect]) -> bool {
    effects.iter().any(|e| {
        matches!(
            e,
            Effect::Send(Op::ApprovePlan {
                mode: Some(ApprovalMode::Auto),
                fresh: true,
                items: None,
            })
        )
    })
}
