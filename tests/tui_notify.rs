//! Terminal notifications in the app: with the terminal unfocused, a
//! turn's end, a stop with open items and a subagent's approval request
//! each become one `Effect::Notify` whose bytes are a well-formed
//! `OSC 9`; focused and short, nothing is written; an interrupt by the
//! user is never notified.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod tui_support;

use tui_support::{Clock, app};
use waypoint::config::{NotifyMethod, NotifyMode, NotifySettings};
use waypoint::events::{
    AbortReason, ApprovalReason, Envelope, Event, StopReason, ThreadId, ToolDetail, ToolSummary,
};
use waypoint::tui::notify::Notifier;
use waypoint::tui::update::{self, Effect};

fn envelope(thread: ThreadId, event: Event) -> Envelope {
    Envelope {
        thread,
        parent_call: None,
        turn: 1,
        event,
    }
}

fn notices(effects: Vec<Effect>) -> Vec<String> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Notify(s) => Some(s),
            _ => None,
        })
        .collect()
}

#[test]
fn an_unfocused_terminal_hears_of_ends_stops_and_questions() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let settings = NotifySettings {
        mode: NotifyMode::Unfocused,
        method: NotifyMethod::Osc9,
        after_secs: 0,
    };
    a.notify = Notifier::new(&settings, &|_| None);
    let root = ThreadId::ROOT;
    let started = Event::TurnStarted { resumed: false };
    update::on_envelope(&mut a, envelope(root, started), clock.at(0.0));
    let done = Event::TurnComplete {
        stop_reason: StopReason::EndTurn,
        open_items: 0,
    };
    let focused = update::on_envelope(&mut a, envelope(root, done.clone()), clock.at(1.0));
    assert!(notices(focused).is_empty(), "focused: nothing");
    a.notify.set_focus(false);
    let away = update::on_envelope(&mut a, envelope(root, done), clock.at(2.0));
    assert_eq!(notices(away), ["\u{1b}]9;Waypoint: Done.\u{7}"]);
    let open = Event::TurnComplete {
        stop_reason: StopReason::EndTurn,
        open_items: 3,
    };
    let stopped = update::on_envelope(&mut a, envelope(root, open), clock.at(3.0));
    assert_eq!(
        notices(stopped),
        ["\u{1b}]9;Waypoint: Stopped with 3 plan items open.\u{7}"]
    );
    let question = Event::ApprovalRequested {
        id: "c1".into(),
        name: "bash".into(),
        summary: ToolSummary {
            line: "cargo publish".into(),
            detail: ToolDetail::Output,
        },
        command: Some("cargo publish".into()),
        cwd: "/w".into(),
        reason: ApprovalReason::Mode,
    };
    let child = update::on_envelope(&mut a, envelope(ThreadId(2), question), clock.at(4.0));
    assert_eq!(
        notices(child),
        ["\u{1b}]9;Waypoint: Waiting for your approval: bash\u{7}"]
    );
    let interrupted = Event::TurnAborted {
        reason: AbortReason::Interrupted,
        message: "interrupted".into(),
        error: None,
    };
    let by_user = update::on_envelope(&mut a, envelope(root, interrupted), clock.at(5.0));
    assert!(notices(by_user).is_empty(), "the user interrupted it");
}
