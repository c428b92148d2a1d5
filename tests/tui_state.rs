//! The TUI state machine driven through its own functions: interrupts,
//! resume, queued messages, scroll position, and never losing typed text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::events::{AbortReason, Event, Op, ToolStatus};
use waypoint::tui::state::{Activity, EntryKind, Focus, TraceStatus};
use waypoint::tui::update::{self, Effect};

#[test]
fn esc_during_streaming_interrupts_and_keeps_typed_text() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "first task", clock.at(0.0));
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0)),
        vec![Effect::Send(Op::Submit {
            text: "first task".into()
        })]
    );
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(&mut a, text("Thinking about"), clock.at(0.2));
    assert_eq!(a.activity, Activity::Streaming);
    type_text(&mut a, "half-typed", clock.at(0.3));
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), clock.at(0.4)),
        vec![Effect::Send(Op::Interrupt)]
    );
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "x".into(),
        },
        clock.at(0.5),
    );
    assert_eq!(a.activity, Activity::Interrupted);
    assert!(!a.running && a.can_resume);
    assert_eq!(a.input_text(), "half-typed");
    let last = a.conversation.last().unwrap();
    assert!(last.text().contains("Interrupted") && last.text().contains("resume"));
    // The streamed text stays visible.
    assert!(a.conversation.iter().any(|e| e.text() == "Thinking about"));
}

#[test]
fn esc_during_a_tool_then_resume_with_enter_or_ctrl_r() {
    let clock = Clock::new();
    let mut a = interrupted(&clock);
    assert_eq!(a.trace.last().unwrap().status, TraceStatus::Interrupted);
    assert_eq!(a.activity, Activity::Interrupted);
    // The plan is intact after the interrupt.
    assert_eq!(a.checklist.items.len(), 3);
    assert_eq!(a.checklist.stopped_open, Some(1));
    // With text in the input, Enter sends new guidance instead of resuming.
    let sent = update::on_key(&mut a, key(KeyCode::Enter), clock.at(14.0));
    assert_eq!(
        sent,
        vec![Effect::Send(Op::Submit {
            text: "use --quiet instead".into()
        })]
    );
    // An empty Enter resumes once the turn has stopped again.
    update::on_event(
        &mut a,
        Event::TurnStarted { resumed: false },
        clock.at(14.1),
    );
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "x".into(),
        },
        clock.at(15.0),
    );
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), clock.at(16.0)),
        vec![Effect::Send(Op::Resume)]
    );
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, clock.at(16.1));
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "x".into(),
        },
        clock.at(17.0),
    );
    assert_eq!(
        update::on_key(&mut a, ctrl('r'), clock.at(18.0)),
        vec![Effect::Send(Op::Resume)]
    );
    // No resume while running.
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, clock.at(18.1));
    assert!(update::on_key(&mut a, ctrl('r'), clock.at(18.2)).is_empty());
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), clock.at(18.3)),
        vec![Effect::Send(Op::Interrupt)]
    );
}

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
    assert_eq!(a.conversation.last().unwrap().kind, EntryKind::Queued);
    assert_eq!(a.input_text(), "");
    update::on_event(
        &mut a,
        end("t3", "bash", ToolStatus::Ok, 900, "ok"),
        clock.at(6.0),
    );
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: "end_turn".into(),
            open_items: 1,
        },
        clock.at(7.0),
    );
    assert_eq!(a.checklist.stopped_open, Some(1));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(7.1));
    assert!(a.conversation.iter().all(|e| e.kind != EntryKind::Queued));
    assert!(
        a.conversation
            .iter()
            .any(|e| e.kind == EntryKind::User && e.text() == "also update the README")
    );
    let screen = screen_text(&a, 120, 40, clock.at(8.0));
    assert!(
        !screen.contains("stopped with"),
        "a new turn clears the note"
    );
}

#[test]
fn scroll_position_is_kept_while_output_grows() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.0));
    for i in 0..200 {
        update::on_event(&mut a, text(&format!("line {i}\n\n")), clock.at(0.1));
    }
    let before = screen_text(&a, 120, 40, clock.at(1.0));
    assert!(before.contains("line 199"));
    a.focus = Focus::Conversation;
    update::on_key(&mut a, key(KeyCode::PageUp), clock.at(1.0));
    let scrolled = screen_text(&a, 120, 40, clock.at(1.0));
    assert!(!scrolled.contains("line 199"));
    assert!(
        scrolled.contains("more lines (End)"),
        "an indicator says there is more below"
    );
    for i in 200..260 {
        update::on_event(&mut a, text(&format!("line {i}\n\n")), clock.at(1.5));
    }
    let grown = screen_text(&a, 120, 40, clock.at(2.0));
    let conv = |s: &str| {
        s.lines()
            .map(|l| l.chars().take(70).collect::<String>())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        conv(&scrolled)[1..30],
        conv(&grown)[1..30],
        "the view did not move"
    );
    update::on_key(&mut a, key(KeyCode::End), clock.at(2.0));
    assert!(screen_text(&a, 120, 40, clock.at(2.0)).contains("line 259"));
    // Following again: new output shows up.
    update::on_event(&mut a, text("line 260"), clock.at(2.5));
    assert!(screen_text(&a, 120, 40, clock.at(3.0)).contains("line 260"));
}

#[test]
fn ctrl_c_clears_then_quits_and_typing_in_a_pane_goes_to_the_input() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "oops", clock.at(0.0));
    assert!(update::on_key(&mut a, ctrl('c'), clock.at(0.1)).is_empty());
    assert_eq!(a.input_text(), "");
    assert!(update::on_key(&mut a, ctrl('c'), clock.at(0.2)).is_empty());
    assert!(screen_text(&a, 120, 40, clock.at(0.3)).contains("Ctrl+C again to quit"));
    assert_eq!(
        update::on_key(&mut a, ctrl('c'), clock.at(0.4)),
        vec![Effect::Quit]
    );

    let mut b = app(&clock);
    b.focus = Focus::Trace;
    type_text(&mut b, "hello", clock.at(0.0));
    assert_eq!(b.focus, Focus::Input);
    assert_eq!(b.input_text(), "hello");
}

#[test]
fn history_recall_keeps_the_draft_and_newlines_are_added_with_alt_enter() {
    let clock = Clock::new();
    let mut a = app(&clock);
    for msg in ["one", "two"] {
        type_text(&mut a, msg, clock.at(0.0));
        update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
        update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.0));
        update::on_event(
            &mut a,
            Event::TurnComplete {
                stop_reason: "end_turn".into(),
                open_items: 0,
            },
            clock.at(0.0),
        );
    }
    type_text(&mut a, "dra", clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::Up), clock.at(1.0));
    assert_eq!(a.input_text(), "two");
    update::on_key(&mut a, key(KeyCode::Up), clock.at(1.0));
    assert_eq!(a.input_text(), "one");
    update::on_key(&mut a, key(KeyCode::Down), clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::Down), clock.at(1.0));
    assert_eq!(a.input_text(), "dra");
    let alt_enter = ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Enter,
        ratatui::crossterm::event::KeyModifiers::ALT,
    );
    update::on_key(&mut a, alt_enter, clock.at(1.0));
    type_text(&mut a, "ft", clock.at(1.0));
    assert_eq!(a.input_text(), "dra\nft");
}

#[test]
fn a_retry_replaces_the_partial_reply() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.0));
    update::on_event(&mut a, Event::RoundStarted { round: 1 }, clock.at(0.0));
    update::on_event(&mut a, text("Half a rep"), clock.at(0.1));
    update::on_event(
        &mut a,
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "cut".into(),
        },
        clock.at(0.2),
    );
    update::on_event(&mut a, text("Whole reply"), clock.at(1.0));
    let texts: Vec<&str> = a.conversation.iter().map(|e| e.text()).collect();
    assert!(!texts.contains(&"Half a rep"), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("Retry 1")));
    assert_eq!(*texts.last().unwrap(), "Whole reply");
}

#[test]
fn resizing_keeps_typed_text_and_the_plan_on_screen() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "keep me", clock.at(5.0));
    for (w, h) in [(200, 60), (40, 12), (20, 5), (120, 40)] {
        let s = screen_text(&a, w, h, clock.at(6.0));
        assert!(
            s.contains("2/3"),
            "{w}x{h}: the plan progress is visible\n{s}"
        );
    }
    assert_eq!(a.input_text(), "keep me");
}

#[test]
fn the_checklist_equals_the_plan_store_and_collapses() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    let s = screen_text(&a, 120, 40, clock.at(42.0));
    assert!(s.contains("[x] Read the CLI code"));
    assert!(s.contains("[>] Run the tests"));
    assert!(
        s.contains("Running the tests · 0:39"),
        "the active item's activeForm and timer: {s}"
    );
    update::on_key(&mut a, ctrl('t'), clock.at(42.0));
    let s = screen_text(&a, 120, 40, clock.at(42.0));
    assert!(s.contains("▶ 2/3 ·"), "{s}");
    assert!(!a.animating(clock.at(100.0)) || a.running);
}

#[test]
fn idle_means_no_animation() {
    let clock = Clock::new();
    let mut a = app(&clock);
    assert!(!a.animating(clock.at(1.0)));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(1.0));
    assert!(a.animating(clock.at(1.5)));
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: "end_turn".into(),
            open_items: 0,
        },
        clock.at(2.0),
    );
    assert!(!a.animating(clock.at(2.5)));
}
