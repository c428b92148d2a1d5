//! Ctrl+R's prompt search: opening it (the stored prompts are read once,
//! by an effect), its keys, what is typed into it, and the prompts
//! arriving. Nothing reaches the input box until Enter.

use ratatui::crossterm::event::KeyEvent;

use super::Effect;
use crate::tui::keymap::{self, Action, Typed};
use crate::tui::state::{App, Focus, HistorySearch, Prompt};

/// Ctrl+R in the input: the search opens with what is typed as its query.
pub fn open(app: &mut App) -> Option<Vec<Effect>> {
    if app.focus != Focus::Input {
        return None;
    }
    let search = HistorySearch::new(&app.input.history, &app.input.text());
    app.overlays.files = None;
    app.overlays.search = Some(search);
    Some(vec![Effect::LoadPrompts])
}

/// The search's keys; `None` when it is not open.
pub fn key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    let search = app.overlays.search.as_mut()?;
    match action {
        Action::SearchHistory => return None,
        Action::SearchMove { next } => search.step(next),
        Action::SearchAccept => {
            if let Some(text) = search.chosen().map(str::to_string) {
                app.input.clear();
                app.input.draft = None;
                app.input.set_text(&text);
            }
            app.overlays.search = None;
        }
        Action::SearchClose => app.overlays.search = None,
        _ => return None,
    }
    Some(Vec::new())
}

/// A key no binding took while the search is open: typed into its
/// query; whether it was open.
pub fn typed(app: &mut App, key: &KeyEvent) -> bool {
    let Some(search) = app.overlays.search.as_mut() else {
        return false;
    };
    match keymap::typed(key) {
        Some(Typed::Char(c)) => search.push(c),
        Some(Typed::Backspace) => search.pop(),
        None => {}
    }
    true
}

/// A paste while the search is open goes into its query, as one line.
pub fn paste(app: &mut App, text: &str) -> bool {
    let Some(search) = app.overlays.search.as_mut() else {
        return false;
    };
    crate::text::clean_line(text)
        .chars()
        .for_each(|c| search.push(c));
    true
}

/// The stored sessions' prompts were read (or could not be).
pub fn prompts_loaded(app: &mut App, prompts: Result<Vec<Prompt>, String>) {
    if let Some(search) = app.overlays.search.as_mut() {
        search.loaded(prompts);
    }
}
