//! Approvals: y, a, n and Esc answer a waiting call, a second request
//! queues, a long command scrolls in the prompt.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;
use tui_support::*;
use waypoint::events::{AbortReason, Event, Op, ToolStatus};
use waypoint::tui::state::{Activity, Focus};
use waypoint::tui::update::{self, Effect};

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
