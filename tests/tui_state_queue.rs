//! Messages sent while a turn runs wait in a queue below it and are
//! delivered in order; a message sent without a working engine reads the
//! settings again and keeps its text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tui_support::*;
use waypoint::events::{AbortReason, Event, Op, ToolStatus};
use waypoint::tui::state::{Activity, App, EntryKind, TraceStatus};
use waypoint::tui::update::{self, Effect};

#[test]
fn a_message_sent_while_running_is_queued_then_delivered() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "also update the README", clock.at(5.0));
    let sent = update::on_key(&mut a, key(KeyCode::Enter), clock.at(5.0));
    assert_eq!(
        sent,
        vec![Effect::Send(Op::Submit {
            text: "also update the README".into()
        })]
    );
    assert_eq!(
        a.root.conversation.entries.last().unwrap().kind,
        EntryKind::Queued
    );
    assert_eq!(a.input.text(), "");
    update::on_event(
        &mut a,
        end("t3", "bash", ToolStatus::Ok, 900, "ok"),
        clock.at(6.0),
    );
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: waypoint::events::StopReason::EndTurn,
            open_items: 1,
        },
        clock.at(7.0),
    );
    assert_eq!(a.root.plan.stopped_open, Some(1));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(7.1));
    assert!(
        a.root
            .conversation
            .entries
            .iter()
            .all(|e| e.kind != EntryKind::Queued)
    );
    assert!(
        a.root
            .conversation
            .entries
            .iter()
            .any(|e| e.kind == EntryKind::User && e.text() == "also update the README")
    );
    let screen = screen_text(&mut a, 120, 40, clock.at(8.0));
    assert!(
        !screen.contains("stopped with"),
        "a new turn clears the note"
    );
}

#[test]
fn a_message_queued_while_streaming_does_not_split_the_reply() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "task", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(&mut a, Event::RoundStarted { round: 1 }, clock.at(0.1));
    update::on_event(&mut a, text("Hello "), clock.at(0.2));
    type_text(&mut a, "also this", clock.at(0.3));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.3));
    update::on_event(&mut a, text("world"), clock.at(0.4));
    let entries: Vec<(EntryKind, &str)> = a
        .root
        .conversation
        .entries
        .iter()
        .map(|e| (e.kind, e.text()))
        .collect();
    assert_eq!(
        entries,
        vec![
            (EntryKind::User, "task"),
            (EntryKind::Assistant, "Hello world"),
            (EntryKind::Queued, "also this"),
        ]
    );
    // A retry drops the whole partial reply, not just its second half.
    update::on_event(
        &mut a,
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "cut".into(),
        },
        clock.at(0.5),
    );
    update::on_event(&mut a, text("Again"), clock.at(1.0));
    let entries: Vec<(EntryKind, &str)> = a
        .root
        .conversation
        .entries
        .iter()
        .map(|e| (e.kind, e.text()))
        .collect();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert_eq!(entries[0], (EntryKind::User, "task"));
    assert_eq!(entries[1].1, "retried 1 time", "{entries:?}");
    assert_eq!(entries[2], (EntryKind::Assistant, "Again"));
    assert_eq!(entries[3], (EntryKind::Queued, "also this"));
}

#[test]
fn after_an_interrupt_the_waiting_messages_stay_last_until_a_new_message() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "task", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(&mut a, text("Looking."), clock.at(0.2));
    type_text(&mut a, "also this", clock.at(0.3));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.3));
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "interrupted".into(),
            error: None,
        },
        clock.at(1.0),
    );
    // The note on the interrupt goes above the message still waiting.
    let kinds = |a: &App| -> Vec<EntryKind> {
        a.root.conversation.entries.iter().map(|e| e.kind).collect()
    };
    assert_eq!(
        kinds(&a).last(),
        Some(&EntryKind::Queued),
        "{:?}",
        a.root.conversation.entries
    );
    // A new message goes below it: the engine sends the waiting one first.
    type_text(&mut a, "new guidance", clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(2.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(2.1));
    update::on_event(&mut a, text("On it."), clock.at(2.2));
    let tail: Vec<(EntryKind, String)> = a
        .root
        .conversation
        .entries
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(|e| (e.kind, e.text().to_string()))
        .collect();
    assert_eq!(
        tail,
        [
            (EntryKind::User, "also this".to_string()),
            (EntryKind::User, "new guidance".to_string()),
            (EntryKind::Assistant, "On it.".to_string()),
        ]
    );
}

#[test]
fn a_queued_message_stays_below_the_running_turns_output() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "task", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(&mut a, Event::RoundStarted { round: 1 }, clock.at(0.1));
    update::on_event(&mut a, text("Looking."), clock.at(0.2));
    type_text(&mut a, "and then the docs", clock.at(0.3));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.3));
    // The turn goes on: a call, a second round and its final reply.
    update::on_event(
        &mut a,
        begin(
            "t1",
            "bash",
            "cargo test",
            json!({"command": "cargo test"}),
            None,
        ),
        clock.at(0.4),
    );
    update::on_event(
        &mut a,
        end("t1", "bash", ToolStatus::Ok, 100, "ok"),
        clock.at(0.5),
    );
    update::on_event(&mut a, Event::RoundStarted { round: 2 }, clock.at(0.6));
    update::on_event(&mut a, text("The tests pass."), clock.at(0.7));
    let kinds = |a: &App| -> Vec<(EntryKind, String)> {
        a.root
            .conversation
            .entries
            .iter()
            .map(|e| (e.kind, e.text().to_string()))
            .collect()
    };
    let entries = kinds(&a);
    assert_eq!(
        entries.last(),
        Some(&(EntryKind::Queued, "and then the docs".to_string())),
        "{entries:?}"
    );
    assert_eq!(
        entries[entries.len() - 2],
        (EntryKind::Assistant, "The tests pass.".to_string())
    );
    let shown = screen_text(&mut a, 80, 30, clock.at(0.8));
    let (reply, queued) = (
        shown.find("The tests pass.").expect("the reply"),
        shown.find("and then the docs").expect("the queued message"),
    );
    assert!(
        reply < queued,
        "the reply is drawn above the queued message:\n{shown}"
    );
    let terminal = screen(&mut a, 80, 24, clock.at(0.8));
    insta::assert_snapshot!("queued_below_the_running_turn_80x24", terminal.backend());
    // Ended: the next turn answers the queued message, below the reply.
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: waypoint::events::StopReason::EndTurn,
            open_items: 0,
        },
        clock.at(0.9),
    );
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(1.0));
    update::on_event(&mut a, Event::RoundStarted { round: 1 }, clock.at(1.0));
    update::on_event(&mut a, text("Updating the docs."), clock.at(1.1));
    let tail: Vec<(EntryKind, String)> = kinds(&a).into_iter().rev().take(3).rev().collect();
    assert_eq!(
        tail,
        [
            (EntryKind::Assistant, "The tests pass.".to_string()),
            (EntryKind::User, "and then the docs".to_string()),
            (EntryKind::Assistant, "Updating the docs.".to_string()),
        ]
    );
}

#[test]
fn without_an_engine_a_message_reads_the_settings_again_and_keeps_its_text() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let help =
        "No model provider is set up. Run `waypoint setup`, set OPENAI_API_KEY, or start Ollama.";
    update::no_engine(&mut a, help.to_string(), clock.at(0.0));
    assert_eq!(*a.status.turn.activity(), Activity::NoProvider);
    // Sending tries the settings again, then sends the message.
    type_text(&mut a, "hi", clock.at(1.0));
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), clock.at(1.0)),
        vec![
            Effect::StartEngine,
            Effect::Send(Op::Submit { text: "hi".into() })
        ]
    );
    let last = a.root.conversation.entries.last().unwrap();
    assert_eq!((last.kind, last.text()), (EntryKind::User, "hi"));
    // Still no provider: the help again, with what is missing now.
    update::no_engine(&mut a, "still no key".to_string(), clock.at(1.5));
    assert_eq!(
        a.root.conversation.entries.last().unwrap().text(),
        "still no key"
    );
    // F5 tries again; once it works the app has an engine and says so.
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::F(5)), clock.at(2.0)),
        vec![Effect::StartEngine]
    );
    update::engine_started(&mut a, "claude-fixed".into(), clock.at(2.0));
    assert!(a.status.engine.present() && a.status.engine.setup_help().is_none());
    assert_eq!(a.status.accounts.model(), "claude-fixed");
    assert_eq!(*a.status.turn.activity(), Activity::Idle);
}

#[test]
fn when_the_engine_dies_spinners_stop_and_messages_say_so() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    assert_eq!(
        a.root.trace.entries.last().unwrap().status,
        TraceStatus::Running
    );
    update::engine_stopped(&mut a, clock.at(10.0));
    assert!(!a.status.turn.running() && !a.status.engine.present() && !a.status.turn.can_resume());
    assert_eq!(*a.status.turn.activity(), Activity::Failed);
    assert!(
        a.root
            .trace
            .entries
            .iter()
            .all(|t| t.status != TraceStatus::Running)
    );
    assert!(!a.animating(clock.at(20.0)));
    assert_eq!(
        a.root.conversation.entries.last().unwrap().text(),
        update::ENGINE_STOPPED
    );
    assert!(update::ENGINE_STOPPED.contains("Restart Waypoint"));
    type_text(&mut a, "hello?", clock.at(11.0));
    assert!(update::on_key(&mut a, key(KeyCode::Enter), clock.at(11.0)).is_empty());
    assert_eq!(
        a.root.conversation.entries.last().unwrap().text(),
        update::ENGINE_STOPPED
    );
    assert!(update::on_key(&mut a, key(KeyCode::F(5)), clock.at(12.0)).is_empty());
}

#[test]
fn resuming_after_a_failure_reloads_the_settings_first() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.0));
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Failed,
            message: "the API refused the request (HTTP 404)".into(),
            error: Some(waypoint::events::ErrorKind::Http),
        },
        clock.at(1.0),
    );
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::F(5)), clock.at(2.0)),
        vec![Effect::Send(Op::ReloadSettings), Effect::Send(Op::Resume)]
    );
    // After an interrupt nothing is wrong with the settings: a plain resume.
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, clock.at(3.0));
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "x".into(),
            error: None,
        },
        clock.at(4.0),
    );
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::F(5)), clock.at(5.0)),
        vec![Effect::Send(Op::Resume)]
    );
}

#[test]
fn a_resume_held_back_by_broken_settings_can_be_asked_again() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    type_text(&mut a, "task", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, now);
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Failed,
            message: "the API refused the request (HTTP 404): model: claude-typo".into(),
            error: Some(waypoint::events::ErrorKind::Http),
        },
        now,
    );
    let resume = vec![Effect::Send(Op::ReloadSettings), Effect::Send(Op::Resume)];
    assert_eq!(update::on_key(&mut a, key(KeyCode::F(5)), now), resume);
    assert!(!a.status.turn.can_resume(), "one resume at a time");
    // The engine held the resume back: the settings still fail.
    update::on_event(
        &mut a,
        Event::Error {
            kind: waypoint::events::ErrorKind::Config,
            message: "Not resumed: the settings still do not work (bad URL).".into(),
        },
        now,
    );
    assert!(notices(&a).last().unwrap().starts_with("Not resumed"));
    assert_eq!(update::on_key(&mut a, key(KeyCode::F(5)), now), resume);
}

#[test]
fn queued_messages_lose_their_marker_when_delivered_also_after_an_interrupt() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let now = clock.at(0.0);
    type_text(&mut a, "task", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, now);
    for msg in ["also this", "and this"] {
        type_text(&mut a, msg, now);
        update::on_key(&mut a, key(KeyCode::Enter), now);
    }
    let queued = |a: &App| {
        a.root
            .conversation
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Queued)
            .count()
    };
    assert_eq!(queued(&a), 2);
    // Esc: the engine folds both into the conversation after its note...
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "interrupted".into(),
            error: None,
        },
        clock.at(1.0),
    );
    assert_eq!(queued(&a), 2, "not sent yet");
    // ...and F5's resumed turn sends them.
    update::on_key(&mut a, key(KeyCode::F(5)), clock.at(2.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, clock.at(2.0));
    assert_eq!(queued(&a), 0);
    // Without an interrupt, each queued message starts its own turn.
    for msg in ["third", "fourth"] {
        type_text(&mut a, msg, now);
        update::on_key(&mut a, key(KeyCode::Enter), now);
    }
    update::on_event(
        &mut a,
        Event::TurnComplete {
            open_items: 0,
            stop_reason: waypoint::events::StopReason::EndTurn,
        },
        clock.at(3.0),
    );
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(3.0));
    assert_eq!(queued(&a), 1);
    // A resumed turn alone delivers nothing new.
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, clock.at(4.0));
    assert_eq!(queued(&a), 1);
}
