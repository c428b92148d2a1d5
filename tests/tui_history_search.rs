//! Ctrl+R's search of earlier prompts: it opens with what is typed,
//! narrows as one types, Enter fills the input (nothing sent), Esc leaves
//! the input as typed; the stored sessions' prompts come from the store
//! (this workspace's first); the screen at 80x24 and at 20x5.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::sandbox::outside_hidden;
use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::session::{self, Record, SessionStore};
use waypoint::tui::state::{App, Prompt};
use waypoint::tui::update::{self, Effect};

fn prompt(text: &str, here: bool) -> Prompt {
    Prompt {
        text: text.into(),
        here,
    }
}

/// An app whose input history holds two prompts, with `typed` in the
/// input, the search opened and the stored prompts arrived.
fn searching(clock: &Clock, typed: &str) -> App {
    let mut a = app(clock);
    for sent in ["fix the parser", "add a test for the lexer"] {
        a.input.set_text(sent);
        a.input.take();
    }
    type_text(&mut a, typed, clock.at(1.0));
    let effects = update::on_key(&mut a, ctrl('r'), clock.at(1.0));
    assert_eq!(effects, vec![Effect::LoadPrompts]);
    update::prompts_loaded(
        &mut a,
        Ok(vec![
            prompt("refactor the parser module", true),
            prompt("fix the parser", true),
            prompt("explain the parser in another project", false),
            prompt("write the release notes", false),
        ]),
    );
    a
}

fn shown(a: &App) -> Vec<String> {
    let s = a.overlays.search.as_ref().unwrap();
    s.matches
        .iter()
        .map(|&i| s.prompts[i].text.clone())
        .collect()
}

#[test]
fn the_query_narrows_best_first_and_this_project_first() {
    let clock = Clock::new();
    let mut a = searching(&clock, "");
    assert_eq!(
        shown(&a),
        [
            "add a test for the lexer",
            "fix the parser",
            "refactor the parser module",
            "explain the parser in another project",
            "write the release notes",
        ]
    );
    type_text(&mut a, "parser", clock.at(2.0));
    let found = shown(&a);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[2], "explain the parser in another project");
    // Typing went into the search, not the input.
    assert_eq!(a.input.text(), "");
    type_text(&mut a, "mod", clock.at(2.0));
    assert_eq!(shown(&a), ["refactor the parser module"]);
}

#[test]
fn enter_fills_the_input_without_sending() {
    let clock = Clock::new();
    let mut a = searching(&clock, "lexer");
    assert_eq!(shown(&a), ["add a test for the lexer"]);
    update::on_key(&mut a, key(KeyCode::Backspace), clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Backspace), clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Backspace), clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Backspace), clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Backspace), clock.at(2.0));
    type_text(&mut a, "pars", clock.at(2.0));
    // Ctrl+R again and Down move on; Up back.
    update::on_key(&mut a, ctrl('r'), clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Down), clock.at(2.0));
    update::on_key(&mut a, key(KeyCode::Up), clock.at(2.0));
    let chosen = a
        .overlays
        .search
        .as_ref()
        .unwrap()
        .chosen()
        .unwrap()
        .to_string();
    assert_eq!(chosen, shown(&a)[1]);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), clock.at(2.0));
    assert!(effects.is_empty(), "nothing is sent: {effects:?}");
    assert!(a.overlays.search.is_none());
    assert_eq!(a.input.text(), chosen);
}

#[test]
fn esc_closes_and_the_input_stays_as_typed() {
    let clock = Clock::new();
    let mut a = searching(&clock, "half typed");
    assert_eq!(a.overlays.search.as_ref().unwrap().query, "half typed");
    type_text(&mut a, "x", clock.at(2.0));
    let effects = update::on_key(&mut a, key(KeyCode::Esc), clock.at(2.0));
    assert!(effects.is_empty());
    assert!(a.overlays.search.is_none());
    assert_eq!(a.input.text(), "half typed");
}

#[test]
fn ctrl_c_leaves_the_search_and_the_input_stays_as_typed() {
    let clock = Clock::new();
    let mut a = searching(&clock, "half typed");
    type_text(&mut a, "x", clock.at(2.0));
    let effects = update::on_key(&mut a, ctrl('c'), clock.at(2.0));
    assert!(effects.is_empty());
    assert!(a.overlays.search.is_none());
    assert_eq!(a.input.text(), "half typed");
    // It closed the search only: quitting is not armed.
    let effects = update::on_key(&mut a, ctrl('c'), clock.at(2.1));
    assert!(effects.is_empty());
    assert_eq!(a.input.text(), "");
}

#[test]
fn the_open_search_at_80x24_and_at_20x5() {
    let clock = Clock::new();
    let mut a = searching(&clock, "parser");
    let terminal = screen(&mut a, 80, 24, clock.at(3.0));
    insta::assert_snapshot!("screen_history_search_80x24", terminal.backend());
    // A tiny terminal draws without a panic.
    let mut a = searching(&clock, "");
    screen_text(&mut a, 20, 5, clock.at(3.0));
    screen_text(&mut a, 1, 1, clock.at(3.0));
}

#[test]
fn the_stored_sessions_prompts_are_read_this_project_first() {
    let home = outside_hidden("history-search");
    let store = SessionStore::new(home.path().join("sessions"));
    let now = session::now_ms();
    for (n, (id, workspace, prompts)) in [
        (
            "aaaa1111-0000-4000-8000-000000000000",
            "/work/project",
            vec!["old here", "shared"],
        ),
        (
            "bbbb2222-0000-4000-8000-000000000000",
            "/elsewhere",
            vec!["newest elsewhere", "shared"],
        ),
        (
            "cccc3333-0000-4000-8000-000000000000",
            "/work/project",
            vec!["recent here"],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let at = now - 10_000 + n as u64 * 1_000;
        let mut t = store.create(session::Header::new(id, workspace, "scripted", "m", at));
        for (k, text) in prompts.into_iter().enumerate() {
            let at = at + k as u64;
            assert!(
                t.record(&Record::User {
                    text: text.into(),
                    prompt: true,
                    at
                })
                .is_none()
            );
            // A note Waypoint adds is not a prompt.
            let note = Record::User {
                text: "[resumed]".into(),
                prompt: false,
                at,
            };
            assert!(t.record(&note).is_none());
        }
        assert!(t.sync().is_none());
    }
    let found = session::prompts::recent(&store, "/work/project", 100).unwrap();
    assert_eq!(
        found,
        [
            ("recent here".to_string(), true),
            ("shared".to_string(), true),
            ("old here".to_string(), true),
            ("newest elsewhere".to_string(), false),
        ]
    );
    assert_eq!(
        session::prompts::recent(&store, "/work/project", 2)
            .unwrap()
            .len(),
        2
    );
    // The app reads them through its effect's carrier.
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_key(&mut a, ctrl('r'), clock.at(1.0));
    waypoint::tui::sessions::load_prompts(&mut a, Some(&store));
    assert_eq!(shown(&a)[0], "recent here");
    assert_eq!(shown(&a).len(), 4);
}
