//! Slash commands run in the TUI and never reach the model: the command
//! list, `/new`, `/clear`, `/approval`, `/context` and Tab completion.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::events::{Event, Op};
use waypoint::tui::state::{EntryKind, Focus, NoticeKind};
use waypoint::tui::update::{self, Effect};

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
