//! The TUI state machine driven through its own functions: interrupts,
//! resume, queued messages, scroll position, and never losing typed text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;
use tui_support::*;
use waypoint::events::{AbortReason, CompactReason, Envelope, Event, Op, ToolStatus};
use waypoint::todo::TodoStatus;
use waypoint::tui::spill::SpillFiles;
use waypoint::tui::state::{Activity, App, EntryKind, Focus, NoticeKind, TraceStatus};
use waypoint::tui::update::{self, Effect};
use waypoint::tui::widgets::{checklist, help};

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
    assert_eq!(*a.status.turn.activity(), Activity::Streaming);
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
            error: None,
        },
        clock.at(0.5),
    );
    assert_eq!(*a.status.turn.activity(), Activity::Interrupted);
    assert!(!a.status.turn.running() && a.status.turn.can_resume());
    assert_eq!(a.input.text(), "half-typed");
    let last = a.root.conversation.entries.last().unwrap();
    assert!(last.text().contains("Interrupted") && last.text().contains("resume"));
    // The streamed text stays visible.
    assert!(
        a.root
            .conversation
            .entries
            .iter()
            .any(|e| e.text() == "Thinking about")
    );
}

#[test]
fn esc_during_a_tool_then_resume_with_enter_or_ctrl_r() {
    let clock = Clock::new();
    let mut a = interrupted(&clock);
    assert_eq!(
        a.root.trace.entries.last().unwrap().status,
        TraceStatus::Interrupted
    );
    assert_eq!(*a.status.turn.activity(), Activity::Interrupted);
    // The plan is intact after the interrupt.
    assert_eq!(a.root.plan.items.len(), 3);
    assert_eq!(a.root.plan.stopped_open, Some(1));
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
            error: None,
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
            error: None,
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
fn scroll_position_is_kept_while_output_grows() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.0));
    for i in 0..200 {
        update::on_event(&mut a, text(&format!("line {i}\n\n")), clock.at(0.1));
    }
    let before = screen_text(&mut a, 120, 40, clock.at(1.0));
    assert!(before.contains("line 199"));
    a.focus = Focus::Conversation;
    update::on_key(&mut a, key(KeyCode::PageUp), clock.at(1.0));
    let scrolled = screen_text(&mut a, 120, 40, clock.at(1.0));
    assert!(!scrolled.contains("line 199"));
    assert!(
        scrolled.contains("more lines (End)"),
        "an indicator says there is more below"
    );
    for i in 200..260 {
        update::on_event(&mut a, text(&format!("line {i}\n\n")), clock.at(1.5));
    }
    let grown = screen_text(&mut a, 120, 40, clock.at(2.0));
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
    assert!(screen_text(&mut a, 120, 40, clock.at(2.0)).contains("line 259"));
    // Following again: new output shows up.
    update::on_event(&mut a, text("line 260"), clock.at(2.5));
    assert!(screen_text(&mut a, 120, 40, clock.at(3.0)).contains("line 260"));
}

#[test]
fn ctrl_c_clears_then_quits_and_typing_in_a_pane_goes_to_the_input() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "oops", clock.at(0.0));
    assert!(update::on_key(&mut a, ctrl('c'), clock.at(0.1)).is_empty());
    assert_eq!(a.input.text(), "");
    assert!(update::on_key(&mut a, ctrl('c'), clock.at(0.2)).is_empty());
    assert!(screen_text(&mut a, 120, 40, clock.at(0.3)).contains("Ctrl+C again to quit"));
    assert!(a.status.ui.quit_armed(clock.at(0.3)));
    assert!(!a.status.ui.quit_armed(clock.at(5.0)), "the arm times out");
    assert_eq!(
        update::on_key(&mut a, ctrl('c'), clock.at(0.4)),
        vec![Effect::Quit]
    );

    let mut b = app(&clock);
    b.focus = Focus::Trace;
    type_text(&mut b, "hello", clock.at(0.0));
    assert_eq!(b.focus, Focus::Input);
    assert_eq!(b.input.text(), "hello");
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
                stop_reason: waypoint::events::StopReason::EndTurn,
                open_items: 0,
            },
            clock.at(0.0),
        );
    }
    type_text(&mut a, "dra", clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::Up), clock.at(1.0));
    assert_eq!(a.input.text(), "two");
    update::on_key(&mut a, key(KeyCode::Up), clock.at(1.0));
    assert_eq!(a.input.text(), "one");
    update::on_key(&mut a, key(KeyCode::Down), clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::Down), clock.at(1.0));
    assert_eq!(a.input.text(), "dra");
    let alt_enter = ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Enter,
        ratatui::crossterm::event::KeyModifiers::ALT,
    );
    update::on_key(&mut a, alt_enter, clock.at(1.0));
    type_text(&mut a, "ft", clock.at(1.0));
    assert_eq!(a.input.text(), "dra\nft");
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
    let texts: Vec<&str> = a
        .root
        .conversation
        .entries
        .iter()
        .map(|e| e.text())
        .collect();
    assert!(!texts.contains(&"Half a rep"), "{texts:?}");
    assert!(texts.contains(&"retried 1 time"), "{texts:?}");
    assert_eq!(*texts.last().unwrap(), "Whole reply");
}

#[test]
fn resizing_keeps_typed_text_and_the_plan_on_screen() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "keep me", clock.at(5.0));
    for (w, h) in [(200, 60), (40, 12), (20, 5), (120, 40)] {
        let s = screen_text(&mut a, w, h, clock.at(6.0));
        assert!(
            s.contains("2/3"),
            "{w}x{h}: the plan progress is visible\n{s}"
        );
    }
    assert_eq!(a.input.text(), "keep me");
}

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
fn idle_means_no_animation() {
    let clock = Clock::new();
    let mut a = app(&clock);
    assert!(!a.animating(clock.at(1.0)));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(1.0));
    assert!(a.animating(clock.at(1.5)));
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: waypoint::events::StopReason::EndTurn,
            open_items: 0,
        },
        clock.at(2.0),
    );
    assert!(!a.animating(clock.at(2.5)));
}

fn notices(a: &App) -> Vec<&str> {
    a.root
        .conversation
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Notice(_)))
        .map(|e| e.text())
        .collect()
}

#[test]
fn an_interrupted_tool_keeps_its_streamed_output() {
    let clock = Clock::new();
    let mut a = interrupted(&clock);
    let t = a.root.trace.entries.last().unwrap();
    let log = t.output.text();
    for line in [
        "Compiling demo v0.1.0",
        "running 12 tests",
        "test cli::parses ... ok",
    ] {
        assert!(log.contains(line), "the streamed {line:?} is kept: {log}");
    }
    assert!(
        log.ends_with(&format!("test cli::parses ... ok\n{INTERRUPTED_RESULT}")),
        "the reason follows the log on its own line: {log}"
    );
    assert_eq!(t.output.last_lines(1), vec![INTERRUPTED_RESULT.to_string()]);
    // The folded trace shows the last output lines and why it stopped, in
    // the user's words.
    let s = screen_text(&mut a, 120, 40, clock.at(42.0));
    assert!(s.contains("test cli::parses ... ok"), "{s}");
    assert!(s.contains("you interrupted it before it finished"), "{s}");

    // A failed command whose output spilled to disk keeps the file.
    let mut b = app(&clock);
    update::on_event(
        &mut b,
        begin("b1", "bash", "make", json!({"command": "make"}), None),
        clock.at(0.0),
    );
    let chunk = "y".repeat(1023) + "\n";
    // The app loop carries out the spill effects.
    let mut spills = SpillFiles::default();
    let mut run = |b: &mut App, event: Event, at: f64| {
        for effect in update::on_event(b, event, clock.at(at)) {
            if let Effect::SpillOutput { serial, text } = effect {
                spills.write(b, serial, &text);
            }
        }
    };
    for _ in 0..400 {
        run(
            &mut b,
            Event::ToolCallOutputDelta {
                id: "b1".into(),
                chunk: chunk.clone(),
            },
            0.5,
        );
    }
    let path = b.root.trace.entries[0]
        .output
        .spill_path()
        .expect("spilled")
        .clone();
    run(
        &mut b,
        end(
            "b1",
            "bash",
            ToolStatus::Error,
            900,
            "Error: the command timed out after 1 s; output so far:\nyyyy",
        ),
        1.0,
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        400 * 1024 + "Error: the command timed out after 1 s; output so far:".len() as u64,
        "the file holds all of it, the reason included"
    );
    let t = &b.root.trace.entries[0];
    assert_eq!(t.status, TraceStatus::Error);
    assert_eq!(t.output.spill_path(), Some(&path));
    assert!(path.exists());
    assert_eq!(
        t.output.last_lines(1),
        vec!["Error: the command timed out after 1 s; output so far:".to_string()]
    );
}

#[test]
fn ctrl_r_resumes_only_a_stopped_turn_and_only_once() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "task", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(
        &mut a,
        Event::TurnComplete {
            stop_reason: waypoint::events::StopReason::EndTurn,
            open_items: 0,
        },
        clock.at(1.0),
    );
    let before = a.root.conversation.entries.len();
    assert!(
        update::on_key(&mut a, ctrl('r'), clock.at(2.0)).is_empty(),
        "a finished turn is not continued"
    );
    assert_eq!(a.root.conversation.entries.len(), before);

    let mut b = interrupted(&clock);
    assert_eq!(
        update::on_key(&mut b, ctrl('r'), clock.at(14.0)),
        vec![Effect::Send(Op::Resume)]
    );
    assert!(
        update::on_key(&mut b, ctrl('r'), clock.at(14.1)).is_empty(),
        "a second Ctrl+R before the turn starts sends nothing"
    );
    let resuming = notices(&b)
        .iter()
        .filter(|n| n.starts_with("Resuming"))
        .count();
    assert_eq!(resuming, 1, "{:?}", notices(&b));
}

#[test]
fn page_keys_move_the_trace_selection() {
    let clock = Clock::new();
    let mut a = app(&clock);
    for i in 0..12 {
        let id = format!("r{i}");
        update::on_event(
            &mut a,
            begin(&id, "read_file", "f", json!({"path": "f"}), None),
            clock.at(0.0),
        );
        update::on_event(
            &mut a,
            end(&id, "read_file", ToolStatus::Ok, 1, "x"),
            clock.at(0.0),
        );
    }
    a.focus = Focus::Trace;
    update::on_key(&mut a, key(KeyCode::PageUp), clock.at(1.0));
    assert_eq!(a.root.trace.selected, Some(11 - update::TRACE_PAGE));
    update::on_key(&mut a, key(KeyCode::PageUp), clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::PageUp), clock.at(1.0));
    assert_eq!(a.root.trace.selected, Some(0));
    update::on_key(&mut a, key(KeyCode::PageDown), clock.at(1.0));
    assert_eq!(a.root.trace.selected, Some(update::TRACE_PAGE));
    update::on_key(&mut a, key(KeyCode::PageDown), clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::PageDown), clock.at(1.0));
    assert_eq!(a.root.trace.selected, None, "back at the newest entry");
}

#[test]
fn keys_that_close_the_help_or_are_chords_do_not_lose_or_invent_text() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    // `?` opens the help on an empty input and closes it again.
    update::on_key(&mut a, key(KeyCode::Char('?')), now);
    assert!(a.overlays.help);
    update::on_key(&mut a, key(KeyCode::Char('?')), now);
    assert!(!a.overlays.help);
    assert_eq!(a.input.text(), "");
    // A letter typed over the help only closes it (it is not typed).
    update::on_key(&mut a, key(KeyCode::F(1)), now);
    type_text(&mut a, "h", now);
    assert!(!a.overlays.help);
    assert_eq!(a.input.text(), "");
    type_text(&mut a, "hi", now);
    // With text in the input, `?` closes it too, and is not typed.
    update::on_key(&mut a, key(KeyCode::F(1)), now);
    type_text(&mut a, "?", now);
    assert!(!a.overlays.help);
    assert_eq!(a.input.text(), "hi");
    type_text(&mut a, "?", now);
    // Keys that are not text only close it.
    update::on_key(&mut a, key(KeyCode::F(1)), now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(!a.overlays.help);
    assert_eq!(a.input.text(), "hi?", "Enter closed the help, sent nothing");

    // In a pane, Ctrl/Alt+letter types nothing.
    a.focus = Focus::Trace;
    update::on_key(&mut a, ctrl('x'), now);
    update::on_key(
        &mut a,
        KeyEvent::new(KeyCode::Char('a'), KeyModifiers::ALT),
        now,
    );
    assert_eq!(a.input.text(), "hi?");
    assert_eq!(a.focus, Focus::Trace);
    // The pane's own letters stay commands; any other goes to the input.
    for c in ['j', 'k', 'g', 'G', ' '] {
        update::on_key(&mut a, key(KeyCode::Char(c)), now);
        assert_eq!(a.focus, Focus::Trace, "{c:?} is a trace command");
    }
    a.focus = Focus::Checklist;
    update::on_key(&mut a, key(KeyCode::Char('c')), now);
    assert!(a.root.plan.view.collapsed);
    assert_eq!(a.focus, Focus::Checklist);
    update::on_key(&mut a, key(KeyCode::Char('!')), now);
    assert_eq!(a.focus, Focus::Input);
    assert_eq!(a.input.text(), "hi?!");
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
fn the_help_on_a_tiny_terminal_starts_with_the_keys_that_matter() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_key(&mut a, key(KeyCode::F(1)), clock.at(0.0));
    let s = screen_text(&mut a, 40, 12, clock.at(0.0));
    for k in ["Esc", "Enter", "Ctrl+R", "Ctrl+C", "Tab", "Shift+Tab"] {
        assert!(s.contains(k), "{k} is shown:\n{s}");
    }
    // One row per key: the 10 inner rows show the first 10 keys (a long
    // label cut short with `…`).
    let rows = help::rows();
    let shown = s
        .lines()
        .filter(|l| {
            let cell = l.trim_start_matches('│').split("  ").next().unwrap_or("");
            let cell = cell.trim_end_matches('…');
            !cell.is_empty() && rows.iter().any(|(k, _)| k.starts_with(cell))
        })
        .count();
    assert_eq!(shown, 10, "\n{s}");
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
    // Ctrl+R tries again; once it works the app has an engine and says so.
    assert_eq!(
        update::on_key(&mut a, ctrl('r'), clock.at(2.0)),
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
    assert!(update::on_key(&mut a, ctrl('r'), clock.at(12.0)).is_empty());
}

#[test]
fn only_the_mouse_wheel_changes_the_screen() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let mouse = |kind| MouseEvent {
        kind,
        column: 3,
        row: 4,
        modifiers: KeyModifiers::NONE,
    };
    assert!(!update::on_mouse(&mut a, mouse(MouseEventKind::Moved)));
    assert!(!update::on_mouse(
        &mut a,
        mouse(MouseEventKind::Down(
            ratatui::crossterm::event::MouseButton::Left
        ))
    ));
    assert!(update::on_mouse(&mut a, mouse(MouseEventKind::ScrollUp)));
    assert!(update::on_mouse(&mut a, mouse(MouseEventKind::ScrollDown)));
}

#[test]
fn a_failed_edit_shows_no_diff() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let input = json!({"path": "src/cli.rs", "old_text": "pub struct Cli {}\n", "new_text": "pub struct Cli { verbose: bool }\n"});
    update::on_event(
        &mut a,
        begin("e1", "edit_file", "src/cli.rs", input.clone(), None),
        clock.at(0.0),
    );
    update::on_event(
        &mut a,
        end(
            "e1",
            "edit_file",
            ToolStatus::Error,
            2,
            "Error: old_text was not found in src/cli.rs",
        ),
        clock.at(0.1),
    );
    a.focus = Focus::Trace;
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(1.0));
    assert!(a.root.trace.expanded);
    let s = screen_text(&mut a, 120, 40, clock.at(1.0));
    assert!(s.contains("old_text was not found"), "{s}");
    assert!(!s.contains("+ pub struct Cli { verbose"), "{s}");
    assert!(!s.contains("- pub struct Cli {}"), "{s}");
    // The same edit succeeding shows its diff.
    update::on_event(
        &mut a,
        begin("e2", "edit_file", "src/cli.rs", input, None),
        clock.at(2.0),
    );
    update::on_event(
        &mut a,
        end("e2", "edit_file", ToolStatus::Ok, 2, "Edited src/cli.rs"),
        clock.at(2.1),
    );
    // Fold, select the newest, expand.
    for k in [KeyCode::Enter, KeyCode::End, KeyCode::Enter] {
        update::on_key(&mut a, key(k), clock.at(3.0));
    }
    assert!(a.root.trace.expanded);
    assert_eq!(a.root.trace.selected, Some(1));
    let s = screen_text(&mut a, 120, 40, clock.at(3.0));
    assert!(s.contains("+ pub struct Cli { verbose: bool }"), "{s}");
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
        update::on_key(&mut a, ctrl('r'), clock.at(2.0)),
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
        update::on_key(&mut a, ctrl('r'), clock.at(5.0)),
        vec![Effect::Send(Op::Resume)]
    );
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
fn slash_commands_run_here_and_never_reach_the_model() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    // An unknown command says so and sends nothing.
    type_text(&mut a, "/frobnicate now", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    assert!(
        notices(&a)
            .iter()
            .any(|n| n.contains("Unknown command /frobnicate"))
    );
    assert!(a.input.is_empty());
    // /help opens the help; nothing is sent.
    type_text(&mut a, "/help", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    assert!(a.overlays.help);
    update::on_key(&mut a, key(KeyCode::Esc), now);
    // /model NAME asks the engine to switch for the next turn.
    type_text(&mut a, "/model gpt-4o", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::SetModel {
            provider: None,
            model: "gpt-4o".into()
        })]
    );
    type_text(&mut a, "/model openai gpt-4.1", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::SetModel {
            provider: Some("openai".into()),
            model: "gpt-4.1".into()
        })]
    );
    // /model alone lists the known models with window and price.
    type_text(&mut a, "/model", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    let list = notices(&a).last().unwrap().to_string();
    assert!(
        list.contains("claude-sonnet-4-5") && list.contains("200k"),
        "{list}"
    );
    // `//` sends text that starts with a slash.
    type_text(&mut a, "//etc/hosts is odd", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::Submit {
            text: "//etc/hosts is odd".into()
        })]
    );
    // /quit quits.
    type_text(&mut a, "/quit", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Quit]
    );
}

#[test]
fn the_command_list_filters_completes_and_closes() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    type_text(&mut a, "/c", now);
    // Down moves to the next match ("cost", "context", "compact", then
    // "clear"), Tab completes it.
    update::on_key(&mut a, key(KeyCode::Down), now);
    update::on_key(&mut a, key(KeyCode::Down), now);
    update::on_key(&mut a, key(KeyCode::Down), now);
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(a.input.text(), "/clear ");
    assert_eq!(
        a.focus,
        Focus::Input,
        "Tab in the list does not move the focus"
    );
    // Esc closes the list and keeps the text; typing reopens it.
    a.input.clear();
    type_text(&mut a, "/mo", now);
    assert!(waypoint::tui::commands::popup_open(&a));
    update::on_key(&mut a, key(KeyCode::Esc), now);
    assert!(!waypoint::tui::commands::popup_open(&a));
    assert_eq!(a.input.text(), "/mo");
    type_text(&mut a, "d", now);
    assert!(waypoint::tui::commands::popup_open(&a));
    // Enter runs the chosen command.
    a.input.clear();
    type_text(&mut a, "/co", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(notices(&a).last().unwrap().starts_with("Tokens so far"));
    // `/` in the middle of a text is just typed.
    type_text(&mut a, "a/b", now);
    assert_eq!(a.input.text(), "a/b");
    assert!(!waypoint::tui::commands::popup_open(&a));
}

#[test]
fn new_while_a_turn_runs_asks_first() {
    let clock = Clock::new();
    let now = clock.at(5.0);
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "/new", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    assert!(a.overlays.confirm.is_some());
    // n keeps everything.
    assert_eq!(update::on_key(&mut a, key(KeyCode::Char('n')), now), vec![]);
    assert!(a.overlays.confirm.is_none());
    type_text(&mut a, "/new", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Char('y')), now),
        vec![Effect::Send(Op::Interrupt), Effect::Send(Op::NewSession)]
    );
}

#[test]
fn every_binding_is_reachable_where_it_applies() {
    use waypoint::tui::keymap::{BINDINGS, Context};
    use waypoint::tui::state::Confirm;
    let clock = Clock::new();
    let now = clock.at(5.0);
    // A state in which each context is open.
    let state = |context: Context| {
        let mut a = plan_in_progress(&clock);
        match context {
            Context::Global | Context::Input => {}
            Context::Pane => a.focus = Focus::Conversation,
            Context::Plan => a.focus = Focus::Checklist,
            Context::PlanPrompt => {
                a.focus = Focus::Checklist;
                update::on_key(&mut a, key(KeyCode::Char('a')), now);
            }
            Context::Tools => a.focus = Focus::Trace,
            Context::Commands => {
                type_text(&mut a, "/m", now);
            }
            Context::Files => {
                type_text(&mut a, "@", now);
            }
            Context::Confirm => a.overlays.confirm = Some(Confirm::NewSession),
            Context::Help => a.overlays.help = true,
            Context::Picker => a = with_picker(a, sessions()),
            Context::Approval | Context::Reason => {
                a = waiting_for(&clock, "t4", "bash", json!({"command": "ls"}));
                if context == Context::Reason {
                    update::on_key(&mut a, key(KeyCode::Char('n')), now);
                }
            }
        }
        a
    };
    for b in BINDINGS {
        let a = state(b.context);
        for (k, action) in b.keys {
            assert_eq!(
                update::resolve(&a, &k.event()),
                Some(*action),
                "{} in {:?} is shadowed",
                k.label(),
                b.context
            );
        }
    }
    // And a few through the whole update, by what they change.
    let mut a = plan_in_progress(&clock);
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(a.focus, Focus::Conversation);
    // Shift+Tab cycles the approval mode (yolo only by name), as in
    // Claude Code; the focus stays.
    use waypoint::events::ApprovalMode::{Ask, Auto, AutoEdit, ReadOnly, Yolo};
    for (now_mode, next) in [
        (Ask, AutoEdit),
        (AutoEdit, Auto),
        (Auto, ReadOnly),
        (ReadOnly, Ask),
        (Yolo, Ask),
    ] {
        a.status.engine.set_approval(now_mode, false);
        assert_eq!(
            update::on_key(&mut a, key(KeyCode::BackTab), now),
            vec![Effect::Send(Op::SetApproval { mode: next })],
            "from {now_mode}"
        );
    }
    assert_eq!(a.focus, Focus::Conversation);
    assert_eq!(update::on_key(&mut a, ctrl('l'), now), vec![Effect::Redraw]);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), now),
        vec![Effect::Send(Op::Interrupt)]
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
    assert_eq!(update::on_key(&mut a, ctrl('r'), now), resume);
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
    assert_eq!(update::on_key(&mut a, ctrl('r'), now), resume);
}

#[test]
fn clear_and_a_new_session_empty_the_panes_they_should() {
    let clock = Clock::new();
    let now = clock.at(20.0);
    // /clear waits for a running turn, then empties conversation and tools, not the plan.
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "/clear", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(
        !a.root.trace.entries.is_empty(),
        "not while the agent works"
    );
    let mut a = interrupted(&clock);
    a.input.clear();
    type_text(&mut a, "/clear", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Redraw]
    );
    assert!(a.root.conversation.entries.is_empty() && a.root.trace.entries.is_empty());
    assert_eq!(a.root.plan.items.len(), 3, "the plan stays");
    // A new session (the engine's answer to /new) empties the plan too;
    // the tokens spent stay counted.
    let mut b = interrupted(&clock);
    let tokens = b.status.accounts.totals();
    update::on_event(&mut b, plan_event(Vec::new(), Default::default()), now);
    update::on_event(&mut b, Event::SessionReset, now);
    assert!(b.root.plan.items.is_empty() && b.root.trace.entries.is_empty());
    assert_eq!(
        notices(&b),
        vec!["New session: empty conversation and plan."]
    );
    assert!(!b.status.turn.can_resume());
    assert_eq!(b.status.accounts.totals(), tokens);
}

#[test]
fn escape_sequences_from_the_model_tools_or_servers_never_reach_the_screen() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}]52;c;aGk=\u{1b}\\\u{9b}31m";
    let events = vec![
        Event::TurnStarted { resumed: false },
        Event::TextDelta {
            text: format!("reply {evil}"),
        },
        // A sequence split between two deltas goes whole too.
        Event::TextDelta {
            text: "tail \u{1b}]0;pw".into(),
        },
        Event::TextDelta {
            text: "ned\u{7} end".into(),
        },
        plan_event(
            vec![item("1", &format!("step {evil}"), TodoStatus::InProgress)],
            Default::default(),
        ),
        begin(
            "t1",
            &format!("bash{evil}"),
            &format!("ls {evil}"),
            json!({"command": "ls"}),
            Some(&format!("item {evil}")),
        ),
        Event::ToolCallOutputDelta {
            id: "t1".into(),
            chunk: format!("out\tput {evil}\nline\rover\n"),
        },
        end("t1", "bash", ToolStatus::Error, 5, "Error: failed"),
        Event::Error {
            kind: waypoint::events::ErrorKind::Api,
            message: format!("server said {evil}"),
        },
        Event::ModelChanged {
            provider: "anthropic".into(),
            model: format!("claude{evil}"),
        },
    ];
    for e in events {
        update::on_event(&mut a, e, now);
    }
    let check = |s: &str| {
        assert!(
            !s.contains("pwned") && !s.contains("pw") && !s.contains("[2J") && !s.contains("]52"),
            "{s}"
        );
        assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
    };
    check(&screen_text(&mut a, 120, 40, now));
    check(&screen_text(&mut a, 60, 20, now));
    // The expanded output too, its tab expanded and `\r` unable to overwrite.
    a.focus = Focus::Trace;
    update::on_key(&mut a, key(KeyCode::Enter), now);
    let s = screen_text(&mut a, 120, 40, now);
    check(&s);
    assert!(s.contains("out     put"), "to its tab stop: {s}");
    assert!(s.contains("over"), "{s}");
    // Pasted text is cleaned as well.
    update::on_paste(&mut a, &format!("pasted {evil}"));
    check(&a.input.text());
}

#[test]
fn reasoning_gets_its_own_dimmed_entry_before_the_reply_and_a_retry_drops_both() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "task", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(&mut a, Event::RoundStarted { round: 1 }, clock.at(0.1));
    let think = |t: &str| Event::ReasoningDelta { text: t.into() };
    update::on_event(&mut a, think("Let me "), clock.at(0.2));
    update::on_event(&mut a, think("think."), clock.at(0.3));
    update::on_event(&mut a, text("Answer"), clock.at(0.4));
    let entries = |a: &App| -> Vec<(EntryKind, String)> {
        a.root
            .conversation
            .entries
            .iter()
            .map(|e| (e.kind, e.text().to_string()))
            .collect()
    };
    assert_eq!(
        entries(&a),
        vec![
            (EntryKind::User, "task".into()),
            (EntryKind::Reasoning, "Let me think.".into()),
            (EntryKind::Assistant, "Answer".into()),
        ]
    );
    let s = screen_text(&mut a, 80, 24, clock.at(0.5));
    assert!(s.contains("∴ Let me think."), "{s}");
    update::on_event(
        &mut a,
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "cut".into(),
        },
        clock.at(0.6),
    );
    let kinds: Vec<EntryKind> = entries(&a).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds[..2],
        [EntryKind::User, EntryKind::Notice(NoticeKind::Warning)]
    );
    assert_eq!(kinds.len(), 2);
}

#[test]
fn long_reasoning_is_folded_to_its_latest_lines_until_ctrl_o() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, now);
    let thoughts: String = (1..=10).map(|i| format!("thought {i}\n")).collect();
    update::on_event(&mut a, Event::ReasoningDelta { text: thoughts }, now);
    update::on_event(&mut a, text("The answer."), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("∴ thinking · 7 earlier lines (Ctrl+O shows them)"),
        "{s}"
    );
    assert!(
        !s.contains("thought 7 ") && s.contains("thought 8") && s.contains("thought 10"),
        "{s}"
    );
    assert!(s.contains("The answer."), "{s}");
    update::on_key(&mut a, ctrl('o'), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("thought 1 ") && !s.contains("earlier lines"),
        "{s}"
    );
    update::on_key(&mut a, ctrl('o'), now);
    assert!(screen_text(&mut a, 120, 40, now).contains("earlier lines"));
}

#[test]
fn the_context_meter_follows_context_usage() {
    let clock = Clock::new();
    let mut a = app(&clock);
    assert_eq!(a.status.accounts.context_percent(), None);
    let status_line = |a: &mut App| {
        let text = screen_text(a, 120, 30, clock.at(5.0));
        text.lines().last().unwrap().to_string()
    };
    assert!(!status_line(&mut a).contains("ctx"));
    for (used, window, shown) in [(122_000, 200_000, 61), (180_000, 200_000, 90), (5, 0, 90)] {
        update::on_event(&mut a, Event::ContextUsage { used, window }, clock.at(1.0));
        // A window of 0 (unknown) keeps nothing but says nothing either.
        if window > 0 {
            assert_eq!(a.status.accounts.context_percent(), Some(shown));
            assert!(status_line(&mut a).contains(&format!("ctx {shown}%")));
        } else {
            assert_eq!(a.status.accounts.context_percent(), None);
            assert!(!status_line(&mut a).contains("ctx"));
        }
    }
    // On a narrow terminal the meter stays while other parts drop, and the
    // quit warning still wins.
    update::on_event(
        &mut a,
        Event::ContextUsage {
            used: 190_000,
            window: 200_000,
        },
        clock.at(1.0),
    );
    let text = screen_text(&mut a, 30, 12, clock.at(5.0));
    assert!(text.lines().last().unwrap().contains("ctx 95%"), "{text}");
    update::on_key(&mut a, ctrl('c'), clock.at(5.0));
    let text = screen_text(&mut a, 30, 12, clock.at(5.0));
    assert!(
        text.lines().last().unwrap().contains("Ctrl+C again"),
        "{text}"
    );
}

#[test]
fn the_cached_share_of_prompt_tokens_is_shown_and_costed_per_model() {
    let clock = Clock::new();
    let mut a = app(&clock);
    // 88k of 100k prompt tokens read from the cache.
    update::on_event(
        &mut a,
        usage(12_000, 88_000, 4_000, (12_000, 88_000, 4_000)),
        clock.at(1.0),
    );
    assert_eq!(a.status.accounts.prompt_tokens(), 100_000);
    assert_eq!(a.status.accounts.cached_percent(), Some(88));
    let text = screen_text(&mut a, 160, 30, clock.at(2.0));
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("↑100.0k (88% cached) ↓4.0k tok"),
        "{text}"
    );
    // The per-model usage keeps the cache tokens; /cost shows the share.
    let u = &a.status.accounts.by_model()[0];
    assert_eq!(
        (
            u.usage.input_tokens,
            u.usage.cache_read_tokens,
            u.usage.output_tokens
        ),
        (12_000, 88_000, 4_000)
    );
    type_text(&mut a, "/cost", clock.at(3.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(3.0));
    let cost = notices(&a).last().unwrap().to_string();
    assert!(cost.contains("↑100000 in (88% cached)"), "{cost}");
    assert!(
        cost.contains("claude-test: ↑100.0k (88% cached) ↓4.0k · "),
        "{cost}"
    );
    // No cache reads: no share.
    let mut b = app(&clock);
    update::on_event(&mut b, usage(1_000, 0, 10, (1_000, 0, 10)), clock.at(1.0));
    assert_eq!(b.status.accounts.cached_percent(), None);
}

#[test]
fn compact_sends_the_op_with_its_focus_and_needs_an_engine() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    type_text(&mut a, "/compact", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(effects.contains(&Effect::Send(Op::Compact { focus: None })));
    type_text(&mut a, "/compact the parser work", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(effects.contains(&Effect::Send(Op::Compact {
        focus: Some("the parser work".into())
    })));
    // Without an engine: a notice, no op.
    let mut b = app(&clock);
    update::no_engine(&mut b, "Set up a provider.".into(), now);
    type_text(&mut b, "/compact", now);
    let effects = update::on_key(&mut b, key(KeyCode::Enter), now);
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Send(Op::Compact { .. })))
    );
    assert!(notices(&b).last().unwrap().contains("Nothing to compact"));
}

#[test]
fn a_compaction_folds_its_summary_and_ends_with_a_divider() {
    let clock = Clock::new();
    let mut a = compacted(&clock);
    let kinds: Vec<EntryKind> = a.root.conversation.entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds[kinds.len() - 3..],
        [
            EntryKind::Notice(NoticeKind::Info),
            EntryKind::Summary,
            EntryKind::Divider
        ]
    );
    assert!(
        notices(&a)
            .iter()
            .any(|n| n.starts_with("Compacting the conversation"))
    );
    let summary = &a.root.conversation.entries[kinds.len() - 2];
    assert_eq!(summary.text().lines().count(), 6);
    // Folded: the earliest points are hidden; Ctrl+O shows them, and again folds.
    let text = screen_text(&mut a, 100, 40, clock.at(5.0));
    assert!(
        text.contains("summary · 3 earlier lines (Ctrl+O shows them)"),
        "{text}"
    );
    assert!(!text.contains("Summary point 1:"));
    assert!(text.contains("Summary point 6:"));
    assert!(
        text.contains("── context compacted: 171k → 14k tokens ──"),
        "{text}"
    );
    update::on_key(&mut a, ctrl('o'), clock.at(5.0));
    let text = screen_text(&mut a, 100, 40, clock.at(5.0));
    assert!(text.contains("Summary point 1:"), "{text}");
    assert!(!text.contains("earlier lines"));
    update::on_key(&mut a, ctrl('o'), clock.at(5.0));
    let text = screen_text(&mut a, 100, 40, clock.at(5.0));
    assert!(!text.contains("Summary point 1:"));
    // The meter reads the context after compaction; activity is back.
    assert_eq!(a.status.accounts.context_percent(), Some(7));
    assert_eq!(*a.status.turn.activity(), Activity::Thinking);
}

#[test]
fn compacting_shows_in_the_status_and_a_fallback_says_outputs_were_dropped() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::CompactionBegin {
            reason: CompactReason::User,
        },
        clock.at(1.0),
    );
    assert_eq!(*a.status.turn.activity(), Activity::Compacting);
    assert!(
        a.animating(clock.at(1.5)),
        "the spinner turns while compacting"
    );
    let text = screen_text(&mut a, 100, 20, clock.at(2.0));
    assert!(
        text.lines().last().unwrap().contains("compacting"),
        "{text}"
    );
    update::on_event(
        &mut a,
        Event::CompactionEnd {
            before_tokens: 171_400,
            after_tokens: 950,
            fallback: true,
        },
        clock.at(3.0),
    );
    assert_eq!(*a.status.turn.activity(), Activity::Idle);
    let divider = a.root.conversation.entries.last().unwrap();
    assert_eq!(divider.kind, EntryKind::Divider);
    assert_eq!(
        divider.text(),
        "context compacted: 171k → 950 tokens (old tool outputs dropped)"
    );
    assert_eq!(
        waypoint::units::compaction(2_500_000, 14_499, false),
        "context compacted: 2.5M → 14k tokens"
    );
}

#[test]
fn the_context_meter_warns_from_80_and_alarms_from_95_percent() {
    use ratatui::style::Color;
    let clock = Clock::new();
    let mut a = app(&clock);
    a.palette = waypoint::tui::style::Palette::colored();
    for (used, colour) in [(79, Color::Reset), (80, Color::Yellow), (95, Color::Red)] {
        update::on_event(
            &mut a,
            Event::ContextUsage {
                used: used * 1_000,
                window: 100_000,
            },
            clock.at(1.0),
        );
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 1)).unwrap();
        t.draw(|f| {
            let area = f.area();
            waypoint::tui::view::draw_pane(
                f,
                &mut a,
                waypoint::tui::view::Pane::Status,
                area,
                clock.at(2.0),
            )
        })
        .unwrap();
        let buffer = t.backend().buffer();
        let row: String = (0..100).map(|x| buffer[(x, 0)].symbol()).collect();
        let at = row.find("ctx").map(|i| row[..i].chars().count()).unwrap();
        assert_eq!(buffer[(at as u16, 0)].fg, colour, "{used}%: {row}");
    }
}

#[test]
fn the_cost_counts_cache_reads_and_writes_at_their_prices() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    a.status.accounts.set_price(waypoint::pricing::price_of(
        "claude-sonnet-4-5",
        &Default::default(),
    ));
    a.status.accounts.set_model("claude-sonnet-4-5".into());
    let million = waypoint::chat::Usage {
        input_tokens: 1_000_000,
        output_tokens: 0,
        cache_read_tokens: 1_000_000,
        cache_write_tokens: 1_000_000,
    };
    update::on_event(
        &mut a,
        Event::Usage {
            model: "claude-sonnet-4-5".into(),
            request: million,
            totals: million,
        },
        now,
    );
    // $3 input + $0.30 cache reads + $3.75 cache writes per million.
    let cost = a.status.accounts.cost().unwrap();
    assert!((cost - 7.05).abs() < 1e-9, "{cost}");
}

#[test]
fn the_help_scrolls_on_a_small_terminal_and_any_other_key_closes_it() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_key(&mut a, key(KeyCode::F(1)), now);
    let s = screen_text(&mut a, 80, 24, now);
    assert!(s.contains("more (↓ PgDn)"), "{s}");
    assert!(!s.contains("/quit"), "{s}");
    // A few PgDn reach the slash commands at the bottom.
    let mut s = String::new();
    for _ in 0..4 {
        update::on_key(&mut a, key(KeyCode::PageDown), now);
        s = screen_text(&mut a, 80, 24, now);
        if s.contains("Typed text is never lost") {
            break;
        }
    }
    assert!(
        s.contains("/quit") && s.contains("Typed text is never lost"),
        "{s}"
    );
    assert!(a.overlays.help, "scrolling keeps it open");
    // Another key closes it, and is not typed.
    update::on_key(&mut a, key(KeyCode::Char('x')), now);
    assert!(!a.overlays.help);
    assert_eq!(a.input.text(), "");
    // Opened again, it starts at the top.
    a.input.clear();
    update::on_key(&mut a, key(KeyCode::F(1)), now);
    let s = screen_text(&mut a, 80, 24, now);
    assert!(s.contains("close a view or selection"), "{s}");
}

fn picker_ids(a: &App) -> Vec<String> {
    a.overlays
        .picker
        .as_ref()
        .map(|p| {
            p.shown()
                .iter()
                .map(|s| waypoint::session::short_id(&s.card.id).to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_picker_opens_the_chosen_session_and_esc_closes_it() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = with_picker(app(&clock), sessions());
    type_text(&mut a, "", now);
    // This workspace's sessions only, most recent first.
    assert_eq!(picker_ids(&a), ["3f9c2a1e", "a17b0c44", "d00d0001"]);
    assert!(update::on_key(&mut a, key(KeyCode::Down), now).is_empty());
    assert!(update::on_key(&mut a, key(KeyCode::Char('j')), now).is_empty());
    assert!(update::on_key(&mut a, key(KeyCode::Char('k')), now).is_empty());
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::OpenSession {
            id: "a17b0c44-1111-4111-8111-111111111111".into()
        })]
    );
    assert!(a.overlays.picker.is_none());
    assert!(a.input.is_empty(), "no key of the picker reached the input");

    // Esc closes without opening anything; the typed draft is kept.
    let mut a = app(&clock);
    type_text(&mut a, "draft", now);
    let mut a = with_picker(a, sessions());
    update::on_key(&mut a, key(KeyCode::End), now);
    assert!(update::on_key(&mut a, key(KeyCode::Esc), now).is_empty());
    assert!(a.overlays.picker.is_none());
    assert_eq!(a.input.text(), "draft");
    assert!(!a.status.turn.running());

    // The session open now is not opened again.
    let mut a = with_picker(app(&clock), sessions());
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    assert!(a.overlays.picker.is_none());
    assert_eq!(
        *notices(&a).last().unwrap(),
        "Session 3f9c2a1e is the one open now."
    );
}

#[test]
fn the_picker_filters_lists_all_workspaces_and_opens_only_this_ones() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = with_picker(app(&clock), sessions());
    // Tab: every workspace; the highlighted session stays highlighted.
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(picker_ids(&a).len(), 5);
    update::on_key(&mut a, key(KeyCode::Down), now);
    let p = a.overlays.picker.as_ref().unwrap();
    assert_eq!(
        p.chosen().unwrap().card.workspace,
        "/home/u/elsewhere/a-rather-long-folder-name/service"
    );
    // Another workspace's session is not opened here (the footer says how).
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    assert!(a.overlays.picker.is_some());
    let screen = screen_text(&mut a, 120, 40, now);
    assert!(
        screen.contains("quit and run `waypoint -r c0ffee12`"),
        "{screen}"
    );
    // PgDn / Home / End stay within the list.
    update::on_key(&mut a, key(KeyCode::PageDown), now);
    assert_eq!(a.overlays.picker.as_ref().unwrap().selected, 4);
    update::on_key(&mut a, key(KeyCode::Home), now);
    assert_eq!(a.overlays.picker.as_ref().unwrap().selected, 0);
    update::on_key(&mut a, key(KeyCode::PageUp), now);
    assert_eq!(a.overlays.picker.as_ref().unwrap().selected, 0);
    // Typing filters by id prefix or prompt words; j and k are typed once
    // a filter is.
    type_text(&mut a, "set", now);
    assert_eq!(picker_ids(&a), ["e5e5e5e5"]);
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    type_text(&mut a, "a17", now);
    assert_eq!(picker_ids(&a), ["a17b0c44"]);
    type_text(&mut a, "j", now);
    assert_eq!(a.overlays.picker.as_ref().unwrap().filter, "a17j");
    assert!(picker_ids(&a).is_empty());
    let screen = screen_text(&mut a, 80, 24, now);
    assert!(screen.contains("No session matches"), "{screen}");
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::OpenSession {
            id: "a17b0c44-1111-4111-8111-111111111111".into()
        })]
    );
    assert!(a.input.is_empty());
}

#[test]
fn resume_opens_the_picker_or_a_session_by_id() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    type_text(&mut a, "/resume", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::OpenPicker]
    );
    type_text(&mut a, "/resume a17b", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::OpenSession { id: "a17b".into() })]
    );
    // Without a store there is nothing to pick from: it says so.
    waypoint::tui::sessions::open_picker(&mut a, None, NOW_MS);
    assert!(a.overlays.picker.is_none());
    let last = a.root.conversation.entries.last().unwrap();
    assert!(
        last.text().contains("Sessions are not kept"),
        "{}",
        last.text()
    );
    // With one, the listing is read once, when the picker opens.
    let dir = tempfile::tempdir().unwrap();
    let store = waypoint::session::SessionStore::new(dir.path().join("sessions"));
    waypoint::tui::sessions::open_picker(&mut a, Some(&store), NOW_MS);
    let p = a.overlays.picker.as_ref().unwrap();
    assert!(p.sessions.is_empty() && p.error.is_none());
    let screen = screen_text(&mut a, 80, 24, now);
    assert!(
        screen.contains("No sessions of this workspace yet."),
        "{screen}"
    );
}

/// A store in `dir` holding one real transcript of workspace `ws`; its id.
fn stored_session(dir: &std::path::Path, ws: &str) -> (waypoint::session::SessionStore, String) {
    use waypoint::session::{Header, Record};
    let store = waypoint::session::SessionStore::new(dir.join("sessions"));
    let id = waypoint::session::new_id();
    let mut t = store.create(Header::new(&id, ws, "anthropic", "claude-test", NOW_MS));
    let user = Record::User {
        text: "Add a --verbose flag".into(),
        prompt: true,
        at: NOW_MS + 1,
    };
    assert_eq!(t.record(&user), None);
    assert_eq!(t.sync(), None);
    (store, id)
}

#[test]
fn export_writes_the_session_as_markdown_and_says_where() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let ws_s = ws.display().to_string();
    let (store, id) = stored_session(dir.path(), &ws_s);
    let mut a = App::new(
        "claude-test",
        ws_s,
        waypoint::tui::style::Palette::monochrome(),
        clock.base,
    );
    // No session recorded yet: a clear error, no effect.
    type_text(&mut a, "/export", now);
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    let last = a.root.conversation.entries.last().unwrap();
    assert_eq!(last.kind, EntryKind::Notice(NoticeKind::Error));
    assert!(last.text().contains("Nothing to export"), "{}", last.text());

    a.status.place.set_session(id.clone(), "unused".into());
    type_text(&mut a, "/export", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Export {
            id: id.clone(),
            path: None
        }]
    );
    // The app loop carries the effect out.
    waypoint::tui::sessions::export(&mut a, Some(&store), &id, None);
    // Not into the workspace: the data folder's exports, beside sessions.
    let name = format!("waypoint-session-{}.md", &id[..8]);
    assert!(!ws.join(&name).exists(), "written into the workspace");
    let default = store.dir().parent().unwrap().join("exports").join(&name);
    let md = std::fs::read_to_string(&default).unwrap();
    assert!(md.contains("Add a --verbose flag"), "{md}");
    let last = a.root.conversation.entries.last().unwrap();
    assert!(
        last.text().contains(&default.display().to_string()),
        "{}",
        last.text()
    );

    // A relative PATH is the workspace's; a write that fails says why.
    type_text(&mut a, "/export notes/s.md", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Export {
            id: id.clone(),
            path: Some("notes/s.md".into())
        }]
    );
    waypoint::tui::sessions::export(&mut a, Some(&store), &id, Some("notes/s.md"));
    let last = a.root.conversation.entries.last().unwrap();
    assert_eq!(last.kind, EntryKind::Notice(NoticeKind::Error));
    assert!(last.text().contains("cannot write"), "{}", last.text());
    std::fs::create_dir(ws.join("notes")).unwrap();
    waypoint::tui::sessions::export(&mut a, Some(&store), &id, Some("notes/s.md"));
    assert!(ws.join("notes/s.md").is_file());

    // A session with nothing on disk yet, and no store at all.
    waypoint::tui::sessions::export(&mut a, Some(&store), "ffffffff-none", None);
    let last = a.root.conversation.entries.last().unwrap();
    assert!(
        last.text().contains("no message recorded yet"),
        "{}",
        last.text()
    );
    waypoint::tui::sessions::export(&mut a, None, &id, None);
    let last = a.root.conversation.entries.last().unwrap();
    assert!(last.text().contains("not kept"), "{}", last.text());
}

#[test]
fn a_resumed_sessions_notices_follow_its_history() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    a.notice(NoticeKind::Info, "from before");
    update::on_event(
        &mut a,
        Event::SessionStarted {
            id: "a17b0c44-1111-4111-8111-111111111111".into(),
            path: "/tmp/a17b0c44.jsonl".into(),
            resumed: true,
            notes: vec!["the last line was torn and skipped".into()],
        },
        now,
    );
    update::on_event(
        &mut a,
        Event::History {
            events: vec![
                Envelope::root(
                    1,
                    Event::UserMessage {
                        text: "earlier prompt".into(),
                    },
                ),
                Envelope::root(1, text("earlier reply")),
            ],
        },
        now,
    );
    let texts: Vec<&str> = a
        .root
        .conversation
        .entries
        .iter()
        .map(|e| e.text())
        .collect();
    assert_eq!(
        texts,
        [
            "earlier prompt",
            "earlier reply",
            "Resumed session a17b0c44.",
            "Note: the last line was torn and skipped"
        ]
    );
    assert_eq!(
        a.status.place.session().map(|(id, _)| &id[..8]),
        Some("a17b0c44")
    );
}

#[test]
fn the_picker_keeps_its_columns_with_wide_and_hostile_text() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut list = sessions();
    list[0].card.model = "模型-四".into();
    list[0].card.first_prompt = Some("修复登录测试\u{1b}[2J and more".into());
    let mut a = with_picker(app(&clock), list);
    let screen = screen_text(&mut a, 120, 40, now);
    let row = screen.lines().find(|l| l.contains("3f9c2a1e")).unwrap();
    let next = screen.lines().find(|l| l.contains("a17b0c44")).unwrap();
    // The prompt column starts at the same cell on both rows (a wide
    // character takes two cells; the screen text shows the second as a blank).
    let col = |l: &str, s: &str| l[..l.find(s).unwrap()].chars().count();
    assert_eq!(col(row, "修"), col(next, "Explain"), "{screen}");
    assert!(!screen.contains('\u{1b}'));
    assert!(row.contains("修 复 登 录 测 试"), "{row}");
}

#[test]
fn with_the_picker_open_a_paste_filters_and_the_wheel_chooses() {
    let clock = Clock::new();
    let mut a = with_picker(app(&clock), sessions());
    let wheel = |kind| MouseEvent {
        kind,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    };
    assert!(update::on_mouse(&mut a, wheel(MouseEventKind::ScrollDown)));
    assert_eq!(a.overlays.picker.as_ref().unwrap().selected, 1);
    assert!(update::on_mouse(&mut a, wheel(MouseEventKind::ScrollUp)));
    assert_eq!(a.overlays.picker.as_ref().unwrap().selected, 0);
    update::on_paste(&mut a, "Explain\n\u{1b}[31m");
    assert_eq!(picker_ids(&a), ["a17b0c44"]);
    assert!(a.input.is_empty(), "the paste went to the filter");
}

fn approve(id: &str, decision: waypoint::events::Decision) -> Effect {
    Effect::Send(Op::Approve {
        id: id.into(),
        decision,
    })
}

#[test]
fn y_runs_the_call_once_and_a_allows_it_for_the_session() {
    use waypoint::events::Decision;
    let clock = Clock::new();
    let now = clock.at(7.0);
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "cargo test --all"}));
    assert_eq!(*a.status.turn.activity(), Activity::Approval);
    // Other keys do nothing behind the prompt.
    assert!(update::on_key(&mut a, key(KeyCode::Char('x')), now).is_empty());
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Char('y')), now),
        vec![approve("t4", Decision::Once)]
    );
    assert!(!a.overlays.approvals.is_open());
    assert_eq!(
        *a.status.turn.activity(),
        Activity::Tool {
            name: "bash".into()
        }
    );
    assert!(a.input.is_empty(), "nothing typed reached the input");

    let mut a = waiting_for(&clock, "t5", "bash", json!({"command": "cargo test --all"}));
    let current = a.overlays.approvals.current().unwrap();
    assert_eq!(current.always_covers(), "cargo test");
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Char('a')), now),
        vec![approve("t5", Decision::Always)]
    );
    let last = a.root.conversation.entries.last().unwrap().text();
    assert!(
        last.contains("Allowed for this session: cargo test"),
        "{last}"
    );
    let edit = waiting_for(&clock, "t6", "edit_file", an_edit());
    assert_eq!(
        edit.overlays.approvals.current().unwrap().always_covers(),
        "this file"
    );
}

#[test]
fn n_refuses_with_the_reason_typed_and_esc_refuses_and_interrupts() {
    use waypoint::events::Decision;
    let clock = Clock::new();
    let now = clock.at(7.0);
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "rm -rf target"}));
    assert!(update::on_key(&mut a, key(KeyCode::Char('n')), now).is_empty());
    assert_eq!(a.overlays.approvals.reason.as_deref(), Some(""));
    // y, a and n are typed into the reason now.
    type_text(&mut a, "not now, any", now);
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    update::on_paste(&mut a, "\x1b[31mway\nplease");
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![approve(
            "t4",
            Decision::Refuse {
                reason: Some("not now, anway please".into())
            }
        )]
    );
    assert!(!a.overlays.approvals.is_open());
    // The engine answers the call with the refusal: its cell says so, once.
    update::on_event(
        &mut a,
        Event::ToolCallEnd {
            id: "t4".into(),
            name: "bash".into(),
            status: ToolStatus::Error,
            outcome: waypoint::events::ToolOutcome::Refused {
                by: waypoint::events::Refuser::User,
                reason: "Refused by the user: not now, anway please".into(),
            },
            duration_ms: 0,
            output: "Refused by the user: not now, anway please".into(),
            exit_code: None,
        },
        now,
    );
    let s = screen_text(&mut a, 120, 40, now);
    // In the conversation (the left column; the Tools pane shows it too).
    let conversation: String = s
        .lines()
        .map(|l| l.chars().take(72).collect::<String>() + "\n")
        .collect();
    assert_eq!(
        conversation.matches("Refused by the user").count(),
        1,
        "{conversation}"
    );
    assert!(conversation.contains("bash rm -rf target"), "{s}");

    // n then Esc: refused without a reason.
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "ls"}));
    update::on_key(&mut a, key(KeyCode::Char('n')), now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), now),
        vec![approve("t4", Decision::Refuse { reason: None })]
    );

    // Esc alone: refused, then the turn is interrupted.
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "ls"}));
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), now),
        vec![
            approve("t4", Decision::Refuse { reason: None }),
            Effect::Send(Op::Interrupt)
        ]
    );
    assert!(!a.overlays.approvals.is_open());
    // Ctrl+C does the same while the turn runs (and types nothing).
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "ls"}));
    assert!(a.status.turn.running());
    assert_eq!(
        update::on_key(&mut a, ctrl('c'), now),
        vec![
            approve("t4", Decision::Refuse { reason: None }),
            Effect::Send(Op::Interrupt)
        ]
    );
    assert!(!a.overlays.approvals.is_open());
    assert_eq!(a.input.text(), "");
}

#[test]
fn a_second_request_queues_and_typed_text_is_kept() {
    use waypoint::events::{ApprovalReason, Decision};
    let clock = Clock::new();
    let now = clock.at(7.0);
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "half-typed idea", now);
    a.focus = Focus::Input;
    feed(
        &mut a,
        &clock,
        vec![
            (
                6.0,
                approval_request("t4", "bash", json!({"command": "ls"}), ApprovalReason::Mode),
            ),
            (
                6.1,
                approval_request("t5", "edit_file", an_edit(), ApprovalReason::Mode),
            ),
        ],
    );
    assert_eq!(a.overlays.approvals.queue.len(), 2);
    assert_eq!(a.overlays.approvals.current().unwrap().id, "t4");
    // The status line and the plan say so.
    let screen = screen_text(&mut a, 120, 40, now);
    assert!(screen.contains("waiting for approval"), "{screen}");
    assert!(screen.contains("1 more waiting"), "{screen}");
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Char('y')), now),
        vec![approve("t4", Decision::Once)]
    );
    assert_eq!(*a.status.turn.activity(), Activity::Approval);
    assert_eq!(a.overlays.approvals.current().unwrap().id, "t5");
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Char('y')), now),
        vec![approve("t5", Decision::Once)]
    );
    assert!(!a.overlays.approvals.is_open());
    assert_eq!(a.input.text(), "half-typed idea");
    // Once it is answered, typing goes to the input again.
    type_text(&mut a, "!", now);
    assert_eq!(a.input.text(), "half-typed idea!");

    // A turn that ends drops what it was waiting for.
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "ls"}));
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "x".into(),
            error: None,
        },
        now,
    );
    assert!(!a.overlays.approvals.is_open());
}

#[test]
fn slash_approval_shows_the_modes_and_switches() {
    use waypoint::events::ApprovalMode;
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::ApprovalMode {
            mode: ApprovalMode::Ask,
            sandboxed: false,
        },
        now,
    );
    let status = screen_text(&mut a, 120, 40, now);
    assert!(
        status
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap()
            .contains("· ask"),
        "{status}"
    );
    type_text(&mut a, "/approval", now);
    // The list's Enter runs it (no argument needed).
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    let shown = a.root.conversation.entries.last().unwrap().text();
    assert!(
        shown.contains("Approval mode: ask") && shown.contains("yolo"),
        "{shown}"
    );
    type_text(&mut a, "/approval auto", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::SetApproval {
            mode: ApprovalMode::Auto
        })]
    );
    type_text(&mut a, "/approval sometimes", now);
    assert!(update::on_key(&mut a, key(KeyCode::Enter), now).is_empty());
    assert_eq!(
        a.root.conversation.entries.last().unwrap().kind,
        EntryKind::Notice(NoticeKind::Error)
    );
    update::on_event(
        &mut a,
        Event::ApprovalMode {
            mode: ApprovalMode::Auto,
            sandboxed: true,
        },
        now,
    );
    let status = screen_text(&mut a, 120, 40, now);
    assert!(status.contains("· auto (sandbox)"), "{status}");
    // Narrow: the mode stays after the model and tokens' extras are gone.
    let narrow = screen_text(&mut a, 40, 12, now);
    let last = narrow.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(last.contains("auto (sandbox)"), "{narrow}");
}

#[test]
fn a_long_command_scrolls_in_the_prompt_and_nothing_is_cut() {
    let clock = Clock::new();
    let now = clock.at(7.0);
    let lines: Vec<String> = (1..=40).map(|i| format!("echo line-{i:02}")).collect();
    let command = lines.join("\n") + "\n\x1b[2Jecho hidden\x07 tail";
    let mut a = waiting_for(&clock, "t4", "bash", json!({ "command": command }));
    let first = screen_text(&mut a, 80, 24, now);
    assert!(
        first.contains("$ echo line-01") && first.contains("↓ more (PgDn)"),
        "{first}"
    );
    assert!(!first.contains("line-40"), "{first}");
    // The wheel and PgDn scroll the prompt, not the panes behind it.
    update::on_mouse(
        &mut a,
        MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: 10,
            row: 10,
            modifiers: KeyModifiers::NONE,
        },
    );
    for _ in 0..4 {
        update::on_key(&mut a, key(KeyCode::PageDown), now);
        screen_text(&mut a, 80, 24, now);
    }
    let last = screen_text(&mut a, 80, 24, now);
    assert!(
        last.contains("echo line-40") && last.contains("↑ more (PgUp)"),
        "{last}"
    );
    // The escape sequence is dropped, the bell shown as a symbol; the text around them stays.
    assert!(last.contains("echo hidden␇ tail"), "{last}");
    assert!(!last.contains('\x1b') && !last.contains('\x07'));
    assert!(last.contains("in /work/project"), "{last}");
}

#[test]
fn a_non_zero_exit_fails_the_call_and_a_refused_plan_is_noticed() {
    let clock = Clock::new();
    let mut a = failed_tool(&clock);
    let bash = a.root.trace.entries.iter().find(|t| t.id == "t3").unwrap();
    assert_eq!(bash.status, TraceStatus::Error);
    assert_eq!(bash.exit_code, Some(3));
    let plan = a.root.trace.entries.iter().find(|t| t.id == "t4").unwrap();
    let reason = plan.refusal.as_deref().unwrap();
    assert!(reason.ends_with("send the whole list again."), "{reason}");
    assert_eq!(
        a.root.plan.refused.as_deref(),
        Some("items 2 (\"Add the flag\") and 3 (\"Run the tests\") are both in_progress")
    );
    // The one-line plan says so too.
    let line = waypoint::tui::widgets::checklist::summary_line(&a.root.plan, &a.ctx(clock.at(8.0)));
    let line: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(line.contains("update refused"), "{line}");
    // Exit code 0 is a success.
    update::on_event(
        &mut a,
        begin("t5", "bash", "ls", json!({"command": "ls"}), None),
        clock.at(8.0),
    );
    update::on_event(
        &mut a,
        Event::ToolCallEnd {
            id: "t5".into(),
            name: "bash".into(),
            status: ToolStatus::Ok,
            outcome: waypoint::events::ToolOutcome::Ok,
            duration_ms: 5,
            output: "a\n".into(),
            exit_code: Some(0),
        },
        clock.at(8.1),
    );
    assert_eq!(a.root.trace.entries.last().unwrap().status, TraceStatus::Ok);
    // The next accepted update clears the notice.
    update::on_event(
        &mut a,
        plan_event(
            vec![item("1", "Read the CLI code", TodoStatus::InProgress)],
            Default::default(),
        ),
        clock.at(9.0),
    );
    assert_eq!(a.root.plan.refused, None);
}

#[test]
fn retries_rewrite_one_notice_that_settles_when_the_reply_starts() {
    let clock = Clock::new();
    let mut a = retrying(&clock);
    let notices: Vec<&str> = a
        .root
        .conversation
        .entries
        .iter()
        .filter(|e| e.text().contains("retr"))
        .map(|e| e.text())
        .collect();
    assert_eq!(notices, vec!["retrying (3/6) in 8 s: overloaded"]);
    // The void replies are gone.
    assert!(
        !a.root
            .conversation
            .entries
            .iter()
            .any(|e| e.text() == "Let me")
    );
    update::on_event(&mut a, text("Here it is"), clock.at(30.0));
    let retried: Vec<_> = a
        .root
        .conversation
        .entries
        .iter()
        .filter(|e| e.text().contains("retr"))
        .map(|e| (e.kind, e.text()))
        .collect();
    assert_eq!(
        retried,
        vec![(EntryKind::Notice(NoticeKind::Info), "retried 3 times")]
    );
    // The next round's retries get a new notice; the turn's end settles it.
    update::on_event(&mut a, Event::RoundStarted { round: 4 }, clock.at(31.0));
    update::on_event(
        &mut a,
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "\x1b[31mreset\x1b[0m".into(),
        },
        clock.at(31.5),
    );
    assert_eq!(
        a.root.conversation.entries.last().unwrap().text(),
        "retrying (1/6) in 0.5 s: reset"
    );
    update::on_event(
        &mut a,
        Event::TurnComplete {
            open_items: 0,
            stop_reason: waypoint::events::StopReason::EndTurn,
        },
        clock.at(32.0),
    );
    assert_eq!(
        a.root.conversation.entries.last().unwrap().text(),
        "retried 1 time"
    );
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
    // ...and Ctrl+R's resumed turn sends them.
    update::on_key(&mut a, ctrl('r'), clock.at(2.0));
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

#[test]
fn esc_interrupt_stays_on_a_narrow_status_line_while_a_task_runs() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = plan_in_progress(&clock);
    a.status
        .accounts
        .set_model("claude-sonnet-4-5-20250929".into());
    a.status.place.set_workspace("/home/me/src/proj");
    a.status
        .place
        .set_place(Some("/home/me"), Some(Some("main".into())));
    for w in [60u16, 80, 90, 100] {
        let s = screen_text(&mut a, w, 24, now);
        let status = s.lines().last().unwrap();
        assert!(status.contains("Esc interrupt"), "{w}: {status}");
    }
    // With room, the folder and the branch are shown; they go first.
    let status = |a: &mut App, w| {
        screen_text(a, w, 24, now)
            .lines()
            .last()
            .unwrap()
            .to_string()
    };
    let wide = status(&mut a, 200);
    assert!(wide.contains("~/src/proj (main)"), "{wide}");
    assert!(wide.contains("claude-sonnet-4-5-20250929"), "{wide}");
    let narrow = status(&mut a, 100);
    assert!(!narrow.contains("~/src/proj"), "{narrow}");
}

#[test]
fn the_folder_is_shortened() {
    use waypoint::tui::state::status::short_folder;
    assert_eq!(
        short_folder("/home/me/src/proj", Some("/home/me")),
        "~/src/proj"
    );
    assert_eq!(short_folder("/home/me", Some("/home/me/")), "~");
    assert_eq!(short_folder("/home/mex/a", Some("/home/me")), "/home/mex/a");
    assert_eq!(
        short_folder("/srv/builds/2026/clients/acme/website", None),
        "…/acme/website"
    );
    assert!(
        short_folder(&format!("/a/{}", "x".repeat(40)), None)
            .chars()
            .count()
            <= 24
    );
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

#[test]
fn slash_context_lists_the_instructions_files_and_the_window_and_the_first_screen_names_them() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(!s.contains("Project instructions"), "{s}");
    type_text(&mut a, "/context", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    let text = a
        .root
        .conversation
        .entries
        .last()
        .unwrap()
        .text()
        .to_string();
    assert!(text.contains("not measured yet"), "{text}");
    assert!(text.contains("No project instructions file"), "{text}");

    let mut a = app(&clock);
    a.status.place.set_instructions(vec![
        ("/work/project/AGENTS.md".into(), 2150),
        ("/home/me/.config/waypoint/AGENTS\x1b[2J.md".into(), 300),
    ]);
    a.status.accounts.set_context(45_900, 200_000);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("Project instructions: AGENTS.md, /home/me/.config/waypoint/AGENTS"),
        "{s}"
    );
    assert!(!s.contains('\x1b'));
    type_text(&mut a, "/context", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(effects.is_empty(), "nothing is sent: {effects:?}");
    let text = a
        .root
        .conversation
        .entries
        .last()
        .unwrap()
        .text()
        .to_string();
    assert!(
        text.contains("Context window: 45.9k of 200k tokens used (22%)."),
        "{text}"
    );
    assert!(text.contains("  AGENTS.md · 2.1 KB"), "{text}");
    assert!(
        text.contains("waypoint/AGENTS") && text.contains("· 300 B"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "{text}");
}

#[test]
fn a_running_command_shows_its_last_lines_under_its_cell() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    update::on_event(
        &mut a,
        begin("t9", "bash", "make", json!({"command": "make"}), None),
        clock.at(7.0),
    );
    for chunk in ["one\ntwo\n", "three\nfour \x1b[31mred\x1b[0m\n\n"] {
        update::on_event(
            &mut a,
            Event::ToolCallOutputDelta {
                id: "t9".into(),
                chunk: chunk.into(),
            },
            clock.at(8.0),
        );
    }
    let s = screen_text(&mut a, 80, 24, clock.at(9.0));
    assert!(!s.contains('\x1b'), "{s}");
    let lines: Vec<&str> = s.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("⠋ bash make"))
        .unwrap_or_else(|| panic!("{s}"));
    let tail: Vec<&str> = lines[at + 1..at + 4]
        .iter()
        .map(|l| l.trim_start_matches('│').trim_end_matches('│').trim())
        .collect();
    assert_eq!(tail, ["│ two", "│ three", "│ four red"], "{s}");
    assert!(!s.contains("│ one"), "only the last three: {s}");
    // It ends well: the command keeps its last lines; a read shows none.
    update::on_event(
        &mut a,
        end("t9", "bash", ToolStatus::Ok, 1200, ""),
        clock.at(10.0),
    );
    update::on_event(
        &mut a,
        begin("t10", "read_file", "a.rs", json!({"path": "a.rs"}), None),
        clock.at(10.0),
    );
    update::on_event(
        &mut a,
        end("t10", "read_file", ToolStatus::Ok, 3, "1\tfn main() {}\n"),
        clock.at(10.1),
    );
    let s = screen_text(&mut a, 80, 24, clock.at(11.0));
    assert!(s.contains("│ four red"), "{s}");
    assert!(!s.contains("fn main"), "{s}");
}

#[test]
fn enter_in_the_conversation_opens_the_last_call_whole_in_the_trace() {
    let clock = Clock::new();
    let now = clock.at(9.0);
    let mut a = failed_tool(&clock);
    a.focus = Focus::Conversation;
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(a.focus, Focus::Trace);
    assert!(a.root.trace.expanded);
    let selected = a
        .root
        .trace
        .selected
        .map(|i| a.root.trace.entries[i].name.clone());
    assert_eq!(selected.as_deref(), Some("todo_write"), "the latest call");
    // At 80x24 the trace is a tab of its own: it is the one on screen now.
    let s = screen_text(&mut a, 80, 24, now);
    assert!(s.contains("todo_write 3 items · Enter folds"), "{s}");
    assert!(!s.contains("Conversation"), "{s}");
    // Enter again folds it.
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(!a.root.trace.expanded);
}

#[test]
fn each_tool_call_has_a_one_line_cell_in_the_conversation() {
    let clock = Clock::new();
    let mut a = failed_tool(&clock);
    let cells: Vec<(EntryKind, &str)> = a
        .root
        .conversation
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Tool(_)))
        .map(|e| (e.kind, e.text()))
        .collect();
    assert_eq!(
        cells,
        vec![
            (
                EntryKind::Tool(TraceStatus::Ok),
                "read_file src/cli.rs · 4 ms"
            ),
            (
                EntryKind::Tool(TraceStatus::Ok),
                "edit_file src/cli.rs +3 −1 · 2 ms"
            ),
            (
                EntryKind::Tool(TraceStatus::Error),
                "bash cargo test · 2.0 s · exit 3"
            ),
            (
                EntryKind::Tool(TraceStatus::Error),
                "todo_write 3 items · 1 ms · refused"
            ),
        ]
    );
    // At 80x24 the conversation alone shows the work, one line per call,
    // with no blank line between calls; a hostile name is cleaned.
    update::on_event(
        &mut a,
        begin(
            "t5",
            "bash",
            "echo \x1b[2Jhi\nthere",
            json!({"command": "echo"}),
            None,
        ),
        clock.at(8.0),
    );
    let s = screen_text(&mut a, 80, 24, clock.at(9.0));
    assert!(!s.contains('\x1b'));
    let lines: Vec<&str> = s.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("✘ bash cargo test · 2.0 s · exit 3"))
        .unwrap_or_else(|| panic!("{s}"));
    // The failed command's last three lines of output follow its cell; the
    // refused plan update says why under its own cell.
    for k in 1..=3 {
        assert!(lines[at + k].starts_with("│    │ "), "{s}");
    }
    assert!(lines[at + 3].contains("test cli::parses ... ok"), "{s}");
    assert!(lines[at + 4].contains("✘ todo_write 3 items"), "{s}");
    assert!(
        lines[at + 5].starts_with("│    │ ") && lines[at + 5].contains("both in_"),
        "{s}"
    );
    // A running call: a spinner and its running time, which moves with
    // each redraw (the lines are cached; this one is drawn live).
    assert!(lines[at + 6].contains("⠋ bash echo"), "{s}");
    assert!(lines[at + 6].contains(" · 1s"), "{s}");
    let later = screen_text(&mut a, 80, 24, clock.at(11.45));
    let line = later
        .lines()
        .find(|l| l.contains("bash echo"))
        .unwrap_or_else(|| panic!("{later}"));
    assert!(
        line.contains("⠼ bash echo") && line.contains(" · 3s"),
        "{line}"
    );
    let much_later = screen_text(&mut a, 80, 24, clock.at(8.0 + 75.0));
    assert!(much_later.contains(" · 1:15"), "{much_later}");
}

#[test]
fn a_long_code_block_is_coloured_over_a_few_frames_then_the_app_rests() {
    use ratatui::style::Color;
    waypoint::tui::markdown::warm_up();
    let clock = Clock::new();
    let mut a = App::new(
        "claude-test",
        "/work/project",
        waypoint::tui::style::Palette::colored(),
        clock.base,
    );
    let mut reply = String::from("```rust\n");
    for i in 0..100 {
        reply.push_str(&format!("let v{i} = {i};\n"));
    }
    reply.push_str("```\n");
    feed(
        &mut a,
        &clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.1, Event::RoundStarted { round: 1 }),
            (0.5, text(&reply)),
            (
                1.0,
                Event::TurnComplete {
                    stop_reason: waypoint::events::StopReason::EndTurn,
                    open_items: 0,
                },
            ),
        ],
    );
    // The last line on screen (a `let`) at each frame: plain code first,
    // coloured once the budget reached it; the app redraws until then.
    let mut colours = Vec::new();
    for frame in 0..4 {
        let now = clock.at(2.0 + f64::from(frame) * 0.1);
        let t = screen(&mut a, 120, 40, now);
        let buf = t.backend().buffer();
        let at = |x: u16, y: u16| -> String {
            (x..x + 5)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        };
        let (x, row) = (0..buf.area.height)
            .rev()
            .flat_map(|y| (0..60).map(move |x| (x, y)))
            .find(|&(x, y)| at(x, y) == "let v")
            .unwrap_or_else(|| panic!("no code on screen"));
        colours.push((buf[(x, row)].fg, a.animating(now)));
    }
    assert_eq!(colours[0], (Color::Cyan, true), "{colours:?}");
    assert_eq!(
        colours.last(),
        Some(&(Color::Magenta, false)),
        "{colours:?}"
    );
}

#[test]
fn a_reply_cut_by_a_stream_that_never_recovers_is_marked_and_nothing_is_asked_of_the_user() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "go", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(
        &mut a,
        text("Recovered fine: the first half"),
        clock.at(0.2),
    );
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Failed,
            message: "gave up after 6 attempts: the server cut the stream mid-reply (error decoding response body)".into(),
            error: Some(waypoint::events::ErrorKind::RetriesExhausted),
        },
        clock.at(0.3),
    );
    let s = screen_text(&mut a, 120, 40, clock.at(0.4));
    assert!(s.contains("Recovered fine: the first half"), "{s}");
    assert!(s.contains("[cut off: the reply stopped here]"), "{s}");
    assert!(s.contains("Nothing on your side to fix"), "{s}");
    assert!(!s.contains("Fix it"), "{s}");
}

#[test]
fn a_cell_shows_the_command_s_own_lines_and_a_refused_connection_says_what_to_do() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "go", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    for (id, output) in [
        ("t1", "built ok\nall fine\n[exit code: 0]"),
        ("t2", "(no output)\n[exit code: 0]"),
    ] {
        update::on_event(
            &mut a,
            begin(id, "bash", "make", json!({"command": "make"}), None),
            clock.at(0.2),
        );
        update::on_event(
            &mut a,
            Event::ToolCallEnd {
                id: id.into(),
                name: "bash".into(),
                status: ToolStatus::Ok,
                outcome: waypoint::events::ToolOutcome::Ok,
                duration_ms: 5,
                output: output.into(),
                exit_code: Some(0),
            },
            clock.at(0.3),
        );
    }
    let s = screen_text(&mut a, 120, 40, clock.at(0.4));
    assert!(s.contains("all fine"), "{s}");
    assert!(!s.contains("[exit code: 0]"), "{s}");
    assert!(!s.contains("(no output)"), "{s}");
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Failed,
            message: "gave up after 2 attempts: nothing is listening at http://127.0.0.1:9; is the server running?".into(),
            error: Some(waypoint::events::ErrorKind::Unreachable),
        },
        clock.at(0.5),
    );
    let s = screen_text(&mut a, 120, 40, clock.at(0.6));
    assert!(s.contains("is the server running? Start it"), "{s}");
    assert!(!s.contains("?."), "{s}");
}

#[test]
fn a_call_waiting_for_approval_is_not_shown_running() {
    let clock = Clock::new();
    let mut a = waiting_for(&clock, "t4", "bash", json!({"command": "cargo build"}));
    let entry = a.root.trace.entries.iter().find(|t| t.id == "t4").unwrap();
    assert!(entry.clock.waiting());
    // The Tools pane alone (the prompt covers it on the whole screen).
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 30)).unwrap();
    t.draw(|f| {
        waypoint::tui::view::draw_pane(
            f,
            &mut a,
            waypoint::tui::view::Pane::Trace,
            f.area(),
            clock.at(20.0),
        )
    })
    .unwrap();
    let s: String = t
        .backend()
        .buffer()
        .content()
        .chunks(60)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>() + "\n")
        .collect();
    let row = s
        .lines()
        .find(|l| l.contains("bash cargo build"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.contains("waiting for approval"), "{row}");
    assert!(!row.contains("running"), "{row}");
    // Once answered it runs, and its clock starts then.
    update::on_key(&mut a, key(KeyCode::Char('y')), clock.at(30.0));
    let entry = a.root.trace.entries.iter().find(|t| t.id == "t4").unwrap();
    assert!(!entry.clock.waiting());
    assert_eq!(entry.clock.started(), clock.at(30.0));
}

#[test]
fn tab_completes_the_approval_mode_and_the_model_name() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    type_text(&mut a, "/approval au", now);
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(a.input.text(), "/approval auto-edit");
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(
        a.input.text(),
        "/approval auto",
        "a complete one goes on to the next"
    );
    assert_eq!(a.focus, Focus::Input);
    a.input.clear();
    type_text(&mut a, "/model gpt", now);
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert!(
        a.input.text().starts_with("/model gpt-"),
        "{}",
        a.input.text()
    );
    // Nothing to complete: Tab moves the focus as ever.
    a.input.clear();
    type_text(&mut a, "hello", now);
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(a.focus, Focus::Conversation);
}

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

/// The conversation pane measured incrementally (only what changed since
/// the last frame) draws exactly what measuring everything afresh draws,
/// through replies, reasoning, tool cells with output, retries, scrolling
/// and resizing.
#[test]
fn the_incremental_layout_draws_what_a_fresh_layout_draws() {
    let clock = Clock::new();
    let (mut a, mut b) = (app(&clock), app(&clock));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let sizes = [(120, 40), (80, 24), (41, 12), (120, 40)];
    let mut t = 0.0;
    let mut call = 0;
    let mut running: Option<String> = None;
    for step in 0..400 {
        t += 0.05;
        let now = clock.at(t);
        let events: Vec<Event> = match next(9) {
            0 => vec![Event::TurnStarted { resumed: false }],
            1 | 2 => vec![
                Event::RoundStarted { round: 1 },
                text(&format!(
                    "Reply {step}: some **words** and `code`.\n\n```rust\nfn f{step}() {{}}\n```\n"
                )),
            ],
            3 => vec![Event::ReasoningDelta {
                text: format!("thinking {step} ").repeat(1 + next(30) as usize),
            }],
            4 => {
                call += 1;
                let id = format!("c{call}");
                running = Some(id.clone());
                vec![begin(
                    &id,
                    "bash",
                    &format!("cargo test {call}"),
                    json!({"command": "cargo test"}),
                    None,
                )]
            }
            5 => match &running {
                Some(id) => vec![Event::ToolCallOutputDelta {
                    id: id.clone(),
                    chunk: format!("line {step}\n").repeat(1 + next(4) as usize),
                }],
                None => vec![text("more text\n")],
            },
            6 => match running.take() {
                Some(id) => vec![end(&id, "bash", ToolStatus::Ok, 12, "done\n")],
                None => vec![Event::Retrying {
                    attempt: 1 + next(3) as u32,
                    delay_ms: 100,
                    reason: "overloaded".into(),
                }],
            },
            7 => vec![text(
                &"a longer paragraph of the reply ".repeat(1 + next(20) as usize),
            )],
            _ => Vec::new(),
        };
        for e in events {
            update::on_event(&mut a, e.clone(), now);
            update::on_event(&mut b, e, now);
        }
        if next(6) == 0 {
            let k = [
                KeyCode::PageUp,
                KeyCode::PageDown,
                KeyCode::End,
                KeyCode::Up,
            ][next(4) as usize];
            update::on_key(&mut a, key(k), now);
            update::on_key(&mut b, key(k), now);
        }
        if next(10) == 0 {
            update::on_key(&mut a, ctrl('o'), now);
            update::on_key(&mut b, ctrl('o'), now);
        }
        let (w, h) = sizes[(step / 100) % sizes.len()];
        let ours = screen_text(&mut a, w, h, now);
        b.root.conversation.index = Default::default();
        for e in &mut b.root.conversation.entries {
            e.cache = None;
        }
        let fresh = screen_text(&mut b, w, h, now);
        assert_eq!(ours, fresh, "step {step} at {w}x{h}");
    }
    assert!(a.root.conversation.entries.len() > 100);
}

/// MCP servers as the TUI shows them: `mcp 1/2` on the status line while
/// one is not ready, a notice when one is ready or fails (with its
/// stderr), and `/mcp` listing each with its tools and their token cost.
#[test]
fn mcp_servers_show_on_the_status_line_in_notices_and_in_slash_mcp() {
    use waypoint::events::McpStatus;
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    let server = |name: &str, status: McpStatus| Event::McpServer {
        name: name.into(),
        status,
    };
    update::on_event(&mut a, server("everything", McpStatus::Starting), now);
    update::on_event(&mut a, server("github", McpStatus::Starting), now);
    assert!(screen_text(&mut a, 120, 20, now).contains("mcp 0/2"));
    update::on_event(
        &mut a,
        server(
            "everything",
            McpStatus::Ready {
                tools: 13,
                schema_tokens: 2_400,
            },
        ),
        now,
    );
    update::on_event(
        &mut a,
        server(
            "github",
            McpStatus::Failed {
                error: "did not initialize".into(),
                stderr: "GITHUB_TOKEN is not set".into(),
            },
        ),
        now,
    );
    // A ready server that lists its tools again (a `list_changed`) is not
    // said ready a second time; a changed list is said as such.
    let relisted = |tools: usize| {
        server(
            "everything",
            McpStatus::Ready {
                tools,
                schema_tokens: 2_400,
            },
        )
    };
    update::on_event(&mut a, relisted(13), now);
    let shown = screen_text(&mut a, 120, 20, now);
    assert!(shown.contains("mcp 1/2"), "{shown}");
    let told: Vec<String> = notices(&a).into_iter().map(String::from).collect();
    let readies = told
        .iter()
        .filter(|n| n.contains("MCP server everything ready"))
        .count();
    assert_eq!(readies, 1, "{told:#?}");
    assert!(
        told.iter()
            .any(|n| n.contains("MCP server everything ready: 13 tools"))
    );
    update::on_event(&mut a, relisted(14), now);
    let changed = notices(&a);
    assert!(
        changed.contains(&"MCP server everything now offers 14 tools."),
        "{changed:#?}"
    );
    update::on_event(&mut a, relisted(13), now);
    assert!(told.iter().any(|n| {
        n.contains("github failed: did not initialize (stderr: GITHUB_TOKEN is not set)")
    }));
    type_text(&mut a, "/mcp", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    let listed = notices(&a).last().cloned().unwrap_or_default();
    assert!(
        listed.contains("everything · ready · 13 tools · ~2.4k tokens per request"),
        "{listed}"
    );
    assert!(
        listed.contains("github · failed: did not initialize"),
        "{listed}"
    );
    // Once every server is ready the status line says nothing of them.
    update::on_event(
        &mut a,
        server(
            "github",
            McpStatus::Ready {
                tools: 2,
                schema_tokens: 300,
            },
        ),
        now,
    );
    assert!(!screen_text(&mut a, 120, 20, now).contains("mcp "));
}

/// `/mcp ACTION` sends the action to the engine; a project server waiting
/// for approval is a warning that says how to approve it, and `/mcp` says
/// what it would run and which mode the tools are sent in.
#[test]
fn slash_mcp_actions_go_to_the_engine_and_a_waiting_project_server_says_how_to_approve() {
    use waypoint::events::{McpAction, McpStatus};
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::McpServer {
            name: "db".into(),
            status: McpStatus::NeedsApproval {
                command: "npx -y my-db-server".into(),
            },
        },
        now,
    );
    assert!(notices(&a).iter().any(|n| n.contains(
        "This project's .mcp.json declares the MCP server db (npx -y my-db-server). It was not started: type /mcp approve"
    )));
    assert!(screen_text(&mut a, 120, 20, now).contains("mcp 0/1"));
    update::on_event(
        &mut a,
        Event::McpTools {
            offered: 3,
            deferred: 410,
            tokens: 90_000,
            budget: 20_000,
        },
        now,
    );
    type_text(&mut a, "/mcp", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    let listed = notices(&a).last().cloned().unwrap_or_default();
    assert!(
        listed.contains(
            "db · not started: this project's .mcp.json runs `npx -y my-db-server` (/mcp approve)"
        ),
        "{listed}"
    );
    assert!(listed.contains("Search mode: the MCP tools' definitions (~90.0k tokens) are over the budget (~20.0k tokens"), "{listed}");
    for (typed, action) in [
        ("/mcp approve", McpAction::Approve),
        (
            "/mcp reconnect db",
            McpAction::Reconnect { name: "db".into() },
        ),
        ("/mcp enable db", McpAction::Enable { name: "db".into() }),
        ("/mcp disable db", McpAction::Disable { name: "db".into() }),
    ] {
        type_text(&mut a, typed, now);
        assert_eq!(
            update::on_key(&mut a, key(KeyCode::Enter), now),
            vec![Effect::Send(Op::Mcp { action })],
            "{typed}"
        );
    }
    type_text(&mut a, "/mcp reconnect", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    assert!(
        notices(&a)
            .last()
            .is_some_and(|n| n.starts_with("Usage: /mcp"))
    );
}

/// An MCP call's cell and trace entry name it by its server and tool, not
/// by the `mcp__` name the model used, and show its arguments.
#[test]
fn an_mcp_call_is_named_by_its_server_and_tool() {
    use waypoint::events::{ToolDetail, ToolSummary};
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::ToolCallBegin {
            id: "t1".into(),
            name: "mcp__everything__get-sum".into(),
            summary: ToolSummary {
                line: r#"{"a":19,"b":23}"#.into(),
                detail: ToolDetail::Call {
                    server: "everything".into(),
                    tool: "get-sum".into(),
                    args: String::new(),
                },
            },
            input: serde_json::json!({"a": 19, "b": 23}),
            plan_item_id: None,
            plan_item: None,
        },
        now,
    );
    let shown = screen_text(&mut a, 120, 30, now);
    assert!(
        shown.contains(r#"everything · get-sum {"a":19,"b":23}"#),
        "{shown}"
    );
    assert!(!shown.contains("mcp__everything__get-sum"), "{shown}");
}

#[test]
fn interrupted_cells_say_it_in_the_users_words_and_the_trace_keeps_the_models() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    update::on_event(
        &mut a,
        begin(
            "s1",
            "bash",
            "sleep 30",
            json!({"command": "sleep 30"}),
            None,
        ),
        clock.at(5.0),
    );
    update::on_event(
        &mut a,
        begin(
            "s2",
            "read_file",
            "notes.txt",
            json!({"path": "notes.txt"}),
            None,
        ),
        clock.at(5.0),
    );
    update::on_event(
        &mut a,
        end(
            "s1",
            "bash",
            ToolStatus::Interrupted,
            900,
            waypoint::events::INTERRUPTED,
        ),
        clock.at(6.0),
    );
    update::on_event(
        &mut a,
        Event::ToolCallEnd {
            id: "s2".into(),
            name: "read_file".into(),
            status: ToolStatus::Interrupted,
            outcome: waypoint::events::ToolOutcome::NotRun,
            duration_ms: 0,
            output: waypoint::events::NOT_RUN.into(),
            exit_code: None,
        },
        clock.at(6.0),
    );
    let tails: Vec<String> = a
        .root
        .conversation
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Tool(_)))
        .rev()
        .take(2)
        .flat_map(|e| e.tail.clone())
        .collect();
    assert_eq!(
        tails,
        [
            "not run: you interrupted the turn before it started",
            "you interrupted it before it finished"
        ]
    );
    let shown = screen_text(&mut a, 120, 40, clock.at(7.0));
    assert!(!shown.contains("Error: interrupted by the user"), "{shown}");
    assert!(!shown.contains("Error: not run"), "{shown}");
    // The call's record (the expanded view) keeps what the model was told.
    let trace = a
        .root
        .trace
        .entries
        .iter()
        .find(|t| t.name == "bash" && t.summary.line == "sleep 30")
        .expect("the call");
    assert!(trace.output.text().contains(waypoint::events::INTERRUPTED));
}
