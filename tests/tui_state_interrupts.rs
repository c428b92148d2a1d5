//! Interrupts, resumes and retries: Esc and F5, what an interrupted
//! or cut-off turn keeps, and the notice a retry rewrites.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tui_support::*;
use waypoint::events::{AbortReason, Event, Op, ToolStatus};
use waypoint::tui::spill::SpillFiles;
use waypoint::tui::state::{Activity, App, EntryKind, NoticeKind, TraceStatus};
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
fn esc_during_a_tool_then_resume_with_enter_or_f5() {
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
        update::on_key(&mut a, key(KeyCode::F(5)), clock.at(18.0)),
        vec![Effect::Send(Op::Resume)]
    );
    // No resume while running.
    update::on_event(&mut a, Event::TurnStarted { resumed: true }, clock.at(18.1));
    assert!(update::on_key(&mut a, key(KeyCode::F(5)), clock.at(18.2)).is_empty());
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), clock.at(18.3)),
        vec![Effect::Send(Op::Interrupt)]
    );
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
fn f5_resumes_only_a_stopped_turn_and_only_once() {
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
        update::on_key(&mut a, key(KeyCode::F(5)), clock.at(2.0)).is_empty(),
        "a finished turn is not continued"
    );
    assert_eq!(a.root.conversation.entries.len(), before);

    let mut b = interrupted(&clock);
    assert_eq!(
        update::on_key(&mut b, key(KeyCode::F(5)), clock.at(14.0)),
        vec![Effect::Send(Op::Resume)]
    );
    assert!(
        update::on_key(&mut b, key(KeyCode::F(5)), clock.at(14.1)).is_empty(),
        "a second F5 before the turn starts sends nothing"
    );
    let resuming = notices(&b)
        .iter()
        .filter(|n| n.starts_with("Resuming"))
        .count();
    assert_eq!(resuming, 1, "{:?}", notices(&b));
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
