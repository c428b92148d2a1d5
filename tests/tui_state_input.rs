//! Keys, the mouse and the help: typed text is never lost, scrolling keeps
//! its place, every binding is reachable where it applies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;
use tui_support::*;
use waypoint::events::{Event, Op, ToolStatus};
use waypoint::tui::state::Focus;
use waypoint::tui::update::{self, Effect};
use waypoint::tui::widgets::help;

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
            Context::Search => {
                update::on_key(&mut a, ctrl('r'), now);
            }
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
    use waypoint::events::ApprovalMode::{Ask, Auto, AutoEdit, Plan, ReadOnly, Yolo};
    for (now_mode, next) in [
        (Ask, AutoEdit),
        (AutoEdit, Auto),
        (Auto, Plan),
        (Plan, ReadOnly),
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
