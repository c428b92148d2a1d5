//! Subagents' threads: a child's events go to a view of its own, also when
//! a history is resumed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use serde_json::json;
use tui_support::*;
use waypoint::events::{Envelope, Event};
use waypoint::todo::TodoStatus;
use waypoint::tui::state::Activity;
use waypoint::tui::update;

/// `event` of child thread 1, started by the root's tool call `t9`.
fn of_child(event: Event) -> Envelope {
    Envelope {
        thread: waypoint::events::ThreadId(1),
        parent_call: Some("t9".into()),
        turn: 1,
        event,
    }
}

#[test]
fn a_child_threads_events_go_to_a_view_of_its_own() {
    use waypoint::events::ThreadId;
    use waypoint::todo::PlanDiff;
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = plan_in_progress(&clock);
    let (entries, calls, items) = (
        a.root.conversation.entries.len(),
        a.root.trace.entries.len(),
        a.root.plan.items.clone(),
    );
    let activity = a.status.turn.activity().clone();
    assert!(a.threads.get(ThreadId(1)).is_none());
    for event in [
        Event::TurnStarted { resumed: false },
        text("child reply"),
        begin("c1", "bash", "ls", json!({"command": "ls"}), None),
        plan_event(
            vec![item("1", "Find the parser", TodoStatus::InProgress)],
            PlanDiff::default(),
        ),
        Event::TurnComplete {
            stop_reason: waypoint::events::StopReason::EndTurn,
            open_items: 1,
        },
    ] {
        assert!(update::on_envelope(&mut a, of_child(event), now).is_empty());
    }
    // The root's panes and the status line are as they were.
    assert_eq!(a.root.conversation.entries.len(), entries);
    assert_eq!(a.root.trace.entries.len(), calls);
    assert_eq!(a.root.plan.items, items);
    assert_eq!(*a.status.turn.activity(), activity);
    assert!(a.status.turn.running());
    // The child's view has them, made on first sight.
    let child = a.threads.get(ThreadId(1)).unwrap();
    assert_eq!(child.parent_call.as_deref(), Some("t9"));
    let texts: Vec<&str> = child
        .view
        .conversation
        .entries
        .iter()
        .map(|e| e.text())
        .collect();
    assert_eq!(texts, ["child reply", "bash ls"]);
    assert_eq!(child.view.trace.entries[0].id, "c1");
    assert_eq!(child.view.plan.items[0].content, "Find the parser");
    assert_eq!(child.view.plan.stopped_open, Some(1));
    // The root's own events, addressed, go where they always went.
    update::on_envelope(&mut a, Envelope::root(1, text(" and more")), now);
    assert_eq!(a.root.conversation.entries.len(), entries + 1);
    // A child's call waiting for approval is asked about all the same.
    let request = approval_request(
        "c2",
        "bash",
        json!({"command": "rm -r build"}),
        waypoint::events::ApprovalReason::Mode,
    );
    update::on_envelope(&mut a, of_child(request), now);
    assert!(a.overlays.approvals.is_open());
    assert_eq!(*a.status.turn.activity(), Activity::Approval);
    // A new session has no child threads.
    update::on_event(&mut a, Event::SessionReset, now);
    assert!(a.threads.is_empty());
}

#[test]
fn a_resumed_history_routes_each_past_event_to_its_thread() {
    use waypoint::events::ThreadId;
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_envelope(&mut a, of_child(text("stale")), now);
    let events = vec![
        Envelope::root(
            1,
            Event::UserMessage {
                text: "earlier prompt".into(),
            },
        ),
        of_child(text("the child's reply")),
        Envelope::root(1, text("the root's reply")),
    ];
    update::on_event(&mut a, Event::History { events }, now);
    let texts: Vec<&str> = a
        .root
        .conversation
        .entries
        .iter()
        .map(|e| e.text())
        .collect();
    assert_eq!(texts, ["earlier prompt", "the root's reply"]);
    let child = a.threads.get(ThreadId(1)).unwrap();
    let texts: Vec<&str> = child
        .view
        .conversation
        .entries
        .iter()
        .map(|e| e.text())
        .collect();
    assert_eq!(texts, ["the child's reply"], "the old session's child went");
}
