//! The daily-driver input keys, driven through `update` like the other
//! state tests: the `@` file picker, long pastes as placeholders, the
//! external editor, copying the last reply and the mouse-capture switch;
//! with snapshots of the picker and of a placeholder at 80x24 and 120x40,
//! and of a long paste once sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_support::*;
use waypoint::events::Op;
use waypoint::tui::state::{App, EntryKind, NoticeKind};
use waypoint::tui::update::{self, Effect};

fn workspace_files() -> Vec<String> {
    [
        "Cargo.toml",
        "README.md",
        "src/",
        "src/main.rs",
        "src/tui/",
        "src/tui/app.rs",
        "src/tui/mod.rs",
        "tests/",
        "tests/tui_e2e.rs",
    ]
    .map(String::from)
    .to_vec()
}

/// `app` with `explain @` typed and the files listed.
fn picking(clock: &Clock, app: &mut App) {
    let now = clock.at(0.0);
    type_text(app, "explain ", now);
    let effects = update::on_key(app, key(KeyCode::Char('@')), now);
    assert_eq!(effects, vec![Effect::ListFiles]);
    assert!(app.overlays.files.is_some());
    update::files_listed(app, workspace_files(), false);
}

fn last_notice(app: &App) -> String {
    app.root
        .conversation
        .entries
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EntryKind::Notice(_)))
        .map(|e| e.text().to_string())
        .unwrap_or_default()
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("pasted line {i}\n")).collect()
}

#[test]
fn at_opens_the_picker_and_tab_inserts_the_chosen_path() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    picking(&clock, &mut a);
    type_text(&mut a, "tuiapp", now);
    let picker = a.overlays.files.as_ref().unwrap();
    assert_eq!(picker.query, "tuiapp");
    assert_eq!(picker.chosen(), Some("src/tui/app.rs"));
    update::on_key(&mut a, key(KeyCode::Tab), now);
    assert_eq!(a.input.text(), "explain @src/tui/app.rs ");
    assert!(a.overlays.files.is_none());
    // Typing goes on after the path; Enter sends it as typed.
    type_text(&mut a, "please", now);
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::Submit {
            text: "explain @src/tui/app.rs please".into()
        })]
    );
}

#[test]
fn the_picker_moves_with_arrows_and_enter_inserts_a_folder_and_stays_open() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    picking(&clock, &mut a);
    type_text(&mut a, "src", now);
    // `src/` (the shortest) first; Down chooses the next, not the history.
    assert_eq!(a.overlays.files.as_ref().unwrap().chosen(), Some("src/"));
    update::on_key(&mut a, key(KeyCode::Down), now);
    let second = a.overlays.files.as_ref().unwrap().chosen().unwrap();
    assert_ne!(second, "src/");
    update::on_key(&mut a, key(KeyCode::Up), now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(a.input.text(), "explain @src/");
    let picker = a.overlays.files.as_ref().expect("still open in the folder");
    assert_eq!(picker.query, "src/");
}

#[test]
fn esc_closes_the_picker_and_keeps_the_text() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    picking(&clock, &mut a);
    type_text(&mut a, "rea", now);
    // Esc closes the list; it does not interrupt or clear anything.
    assert!(update::on_key(&mut a, key(KeyCode::Esc), now).is_empty());
    assert!(a.overlays.files.is_none());
    assert_eq!(a.input.text(), "explain @rea");
}

#[test]
fn the_picker_closes_when_its_word_ends_or_its_at_is_deleted() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    picking(&clock, &mut a);
    type_text(&mut a, "x", now);
    type_text(&mut a, " ", now);
    assert!(a.overlays.files.is_none(), "white space ends the mention");
    let mut a = app(&clock);
    picking(&clock, &mut a);
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    assert!(a.overlays.files.is_none(), "the @ is gone");
    assert_eq!(a.input.text(), "explain ");
    // No match: the list says so; Enter then sends the text as typed.
    let mut a = app(&clock);
    picking(&clock, &mut a);
    type_text(&mut a, "zzz", now);
    assert!(a.overlays.files.as_ref().unwrap().matches.is_empty());
    // Tab with nothing to insert does nothing (the focus stays).
    assert!(update::on_key(&mut a, key(KeyCode::Tab), now).is_empty());
    assert_eq!(a.focus, waypoint::tui::state::Focus::Input);
    assert_eq!(a.input.text(), "explain @zzz");
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Enter), now),
        vec![Effect::Send(Op::Submit {
            text: "explain @zzz".into()
        })]
    );
}

#[test]
fn an_at_sign_inside_a_word_is_just_typed() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    let effects = type_text(&mut a, "me@example.com", now);
    assert!(effects.is_empty());
    assert!(a.overlays.files.is_none());
    assert_eq!(a.input.text(), "me@example.com");
}

#[test]
fn a_long_paste_shows_as_a_placeholder_and_is_sent_whole() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    type_text(&mut a, "fix this: ", now);
    update::on_paste(&mut a, &lines(60));
    assert_eq!(a.input.text(), "fix this: [pasted 60 lines]");
    // The pasted text is cleaned of escape sequences like any paste.
    update::on_paste(&mut a, &format!("\u{1b}]52;c;AAAA\u{7}{}", lines(11)));
    assert_eq!(
        a.input.text(),
        "fix this: [pasted 60 lines][pasted 11 lines]"
    );
    // Backspace takes the last placeholder whole.
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    assert_eq!(a.input.text(), "fix this: [pasted 60 lines]");
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Send(Op::Submit {
            text: format!("fix this: {}", lines(60))
        })]
    );
    // A short paste goes in as it is.
    update::on_paste(&mut a, "one\ntwo");
    assert_eq!(a.input.text(), "one\ntwo");
}

#[test]
fn a_long_paste_is_sent_whole_and_shown_short_in_the_conversation() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    type_text(&mut a, "fix this: ", now);
    update::on_paste(&mut a, &lines(60));
    type_text(&mut a, " thanks", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Send(Op::Submit {
            text: format!("fix this: {} thanks", lines(60))
        })]
    );
    let sent = a
        .root
        .conversation
        .entries
        .iter()
        .rev()
        .find(|e| e.kind == waypoint::tui::state::EntryKind::User)
        .expect("the message");
    assert_eq!(
        sent.text(),
        "fix this: pasted line 1\npasted line 2\npasted line 3\n… 57 more lines\n thanks"
    );
    let shown = screen_text(&mut a, 100, 40, now);
    assert!(shown.contains("… 57 more lines"), "{shown}");
    assert!(!shown.contains("pasted line 4"), "{shown}");
    let terminal = screen(&mut a, 80, 24, now);
    insta::assert_snapshot!("daily_long_paste_sent_80x24", terminal.backend());
}

#[test]
fn ctrl_g_edits_the_message_and_a_failing_editor_keeps_it() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    type_text(&mut a, "draft ", now);
    update::on_paste(&mut a, &lines(12));
    let effects = update::on_key(&mut a, ctrl('g'), now);
    assert_eq!(effects, vec![Effect::Edit(format!("draft {}", lines(12)))]);
    update::edited(&mut a, Err("`nope` cannot be run".into()));
    assert_eq!(a.input.text(), "draft [pasted 12 lines]");
    assert!(last_notice(&a).contains("The editor failed"));
    assert!(last_notice(&a).contains("unchanged"));
    update::edited(&mut a, Ok("edited\nmessage\n".into()));
    assert_eq!(a.input.text(), "edited\nmessage");
    assert!(a.input.pasted.is_empty());
}

#[test]
fn ctrl_y_copies_the_last_reply() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    assert!(update::on_key(&mut a, ctrl('y'), now).is_empty());
    assert!(last_notice(&a).contains("No reply"));
    type_text(&mut a, "hi", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    update::on_event(
        &mut a,
        waypoint::events::Event::TurnStarted { resumed: false },
        now,
    );
    update::on_event(&mut a, text("Line one\nline \u{1b}[31mtwo"), now);
    let effects = update::on_key(&mut a, ctrl('y'), now);
    assert_eq!(
        effects,
        vec![Effect::Copy("Line one\nline two".into())],
        "the reply, cleaned"
    );
    assert!(last_notice(&a).contains("Copied 2 lines"));
    // The typed text stays where it was.
    type_text(&mut a, "next", now);
    update::on_key(&mut a, ctrl('y'), now);
    assert_eq!(a.input.text(), "next");
}

#[test]
fn f2_switches_mouse_capture_and_says_so() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    let f2 = KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE);
    assert_eq!(
        update::on_key(&mut a, f2, now),
        vec![Effect::MouseCapture(false)]
    );
    assert!(a.status.ui.mouse_off());
    assert!(last_notice(&a).contains("Mouse capture off"));
    assert!(matches!(
        a.root.conversation.entries.last().map(|e| e.kind),
        Some(EntryKind::Notice(NoticeKind::Info))
    ));
    assert_eq!(
        update::on_key(&mut a, f2, now),
        vec![Effect::MouseCapture(true)]
    );
    assert!(!a.status.ui.mouse_off());
    // Off, the idle status line says so.
    update::on_key(&mut a, f2, now);
    let shown = screen_text(&mut a, 120, 40, now);
    assert!(shown.contains("mouse off: F2"), "{shown}");
}

#[test]
fn question_mark_opens_help_only_on_an_empty_input() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    type_text(&mut a, "why", now);
    type_text(&mut a, "?", now);
    assert!(!a.overlays.help);
    assert_eq!(a.input.text(), "why?");
    a.input.clear();
    type_text(&mut a, "?", now);
    assert!(a.overlays.help);
}

#[test]
fn snapshots_of_the_picker_and_a_paste_placeholder() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = plan_in_progress(&clock);
        picking(&clock, &mut a);
        type_text(&mut a, "rs", now);
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("daily_file_picker_{w}x{h}"), terminal.backend());

        let mut a = plan_in_progress(&clock);
        type_text(&mut a, "why does this fail? ", now);
        update::on_paste(&mut a, &lines(60));
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(
            format!("daily_paste_placeholder_{w}x{h}"),
            terminal.backend()
        );
    }
}

#[test]
fn hostile_file_names_are_drawn_clean() {
    let clock = Clock::new();
    let now = clock.at(0.0);
    let mut a = app(&clock);
    type_text(&mut a, "@", now);
    update::files_listed(
        &mut a,
        vec![
            "evil\u{1b}]0;pwned\u{7}name.rs".into(),
            "bell\u{7}.rs".into(),
        ],
        false,
    );
    type_text(&mut a, "rs", now);
    let shown = screen_text(&mut a, 80, 24, now);
    assert!(shown.contains("evilname.rs"), "{shown}");
    assert!(shown.contains("bell␇.rs"), "{shown}");
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'));
}
