//! The plan pane's edits against the real engine: what the user types in
//! the TUI (`/plan add`, a refused `/plan remove`, Enter after a stop with
//! open items) becomes ops, and the engine's answers (a user revision, an
//! error, a resumed turn that tells the model) come back on screen.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::tui_support;

use common::*;
use ratatui::crossterm::event::KeyCode;
use tui_support::{Clock, app, key, screen_text, type_text};
use waypoint::events::{Event, Op};
use waypoint::todo::{Author, PlanEdit};
use waypoint::tui::state::{App, Focus};
use waypoint::tui::update::{self, Effect};

type Rig = engine_support::Rig<Anthropic>;

/// Sends the ops among `effects` to the engine; returns how many.
fn forward(r: &Rig, effects: Vec<Effect>) -> usize {
    let mut sent = 0;
    for effect in effects {
        if let Effect::Send(op) = effect {
            r.handle.ops.send(op).unwrap();
            sent += 1;
        }
    }
    sent
}

fn feed_all(a: &mut App, events: Vec<Event>, clock: &Clock) {
    for e in events {
        update::on_event(a, e, clock.at(1.0));
    }
}

fn typed(a: &mut App, text: &str, clock: &Clock) -> Vec<Effect> {
    type_text(a, text, clock.at(1.0));
    update::on_key(a, key(KeyCode::Enter), clock.at(1.0))
}

#[tokio::test]
async fn plan_edits_typed_in_the_tui_come_back_from_the_engine_as_user_revisions() {
    let mut r = Rig::default_with(vec![
        sse(Turn::tool(
            "todo_write",
            plan(&[
                ("Write code", "in_progress"),
                ("Write the tests", "pending"),
            ]),
        )),
        sse(Turn::text("I stop here.")),
        sse(Turn::text("Continuing with the plan.")),
    ])
    .await;
    let clock = Clock::new();
    let mut a = app(&clock);
    a.status.engine.arrived();
    assert_eq!(forward(&r, typed(&mut a, "write it", &clock)), 1);
    let events = r.turn_events().await;
    feed_all(&mut a, events, &clock);
    // The turn ended with both items open: the banner says so.
    let s = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(s.contains("■ stopped with 2 of 2 items open"), "{s}");
    // /plan add while stopped: a user revision, shown at once.
    let effects = typed(&mut a, "/plan add Update the README", &clock);
    assert_eq!(
        effects,
        vec![Effect::Send(Op::EditPlan {
            thread: waypoint::events::ThreadId::ROOT,
            edit: PlanEdit::Add {
                text: "Update the README".into(),
                after: None
            }
        })]
    );
    forward(&r, effects);
    let answer = r.until(|e| matches!(e, Event::PlanUpdated { .. })).await;
    feed_all(&mut a, answer, &clock);
    let last = a.root.plan.revisions.list.back().unwrap();
    assert_eq!(last.author, Author::User);
    assert_eq!(a.root.plan.items.len(), 3);
    assert_eq!(a.root.plan.revisions.list.len(), 2);
    a.focus = Focus::Checklist;
    update::on_key(&mut a, key(KeyCode::Char('[')), clock.at(2.0));
    let s = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(s.contains("rev 2/2 · user"), "{s}");
    assert!(s.contains("+ [ ] Update the README"), "{s}");
    update::on_key(&mut a, key(KeyCode::Esc), clock.at(2.0));
    // A refused edit changes nothing and says why.
    a.focus = Focus::Input;
    forward(&r, typed(&mut a, "/plan remove 9", &clock));
    let answer = r.until(|e| matches!(e, Event::Error { .. })).await;
    feed_all(&mut a, answer, &clock);
    let s = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(s.contains("The plan was not changed"), "{s}");
    assert_eq!(a.root.plan.items.len(), 3);
    // Enter on the empty input continues; the model hears of the edit.
    let effects = update::on_key(&mut a, key(KeyCode::Enter), clock.at(3.0));
    assert_eq!(effects, vec![Effect::Send(Op::Resume)]);
    forward(&r, effects);
    let events = r.turn_events().await;
    feed_all(&mut a, events, &clock);
    let requests = r.server.requests();
    let body = requests.last().unwrap().body.to_string();
    assert!(body.contains("The user changed the plan"), "{body}");
    assert!(body.contains("Update the README"), "{body}");
}
