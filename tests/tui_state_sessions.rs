//! Sessions: the picker, resuming one, and exporting it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use tui_support::*;
use waypoint::events::{Envelope, Event, Op};
use waypoint::tui::state::{App, EntryKind, NoticeKind};
use waypoint::tui::update::{self, Effect};

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
