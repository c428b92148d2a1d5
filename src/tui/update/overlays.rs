//! The keys of what opens over the panes: the slash-command list, the
//! `?` help, a yes/no question and the session picker. Invariant: none of
//! them types into the input box; a key they decline goes on.

use std::time::Instant;

use super::Effect;
use crate::events::Op;
use crate::tui::commands;
use crate::tui::keymap::Action;
use crate::tui::state::{App, NoticeKind, PICKER_PAGE};

/// Enter in the command popup: the chosen command is put in the input;
/// `Some(true)` when it is to be sent now, `Some(false)` when it takes
/// arguments and was only completed (so they can be typed), `None`
/// without a popup.
pub(super) fn run_command(app: &mut App) -> Option<bool> {
    let chosen = crate::tui::popup::chosen(app)?;
    let (name, complete) = (chosen.name.to_string(), chosen.needs_args);
    if complete && commands::filter(app) != name {
        app.input.set_text(&format!("/{name} "));
        return Some(false);
    }
    app.input.set_text(&format!("/{name}"));
    Some(true)
}

/// Runs an overlay's action; `None` when it does not apply now.
pub(super) fn key(app: &mut App, action: Action, now: Instant) -> Option<Vec<Effect>> {
    match action {
        Action::CommandMove { up } => {
            let count = crate::tui::popup::entries(app).len();
            let sel = &mut app.overlays.popup.selected;
            *sel = if up {
                sel.checked_sub(1).unwrap_or(count.saturating_sub(1))
            } else if *sel + 1 < count {
                *sel + 1
            } else {
                0
            };
        }
        Action::CommandComplete => {
            let name = crate::tui::popup::chosen(app)?.name.to_string();
            app.input.set_text(&format!("/{name} "));
        }
        Action::CommandClose => app.overlays.popup.dismissed_for = Some(app.input.text()),
        Action::HelpScroll { up, page } => app.overlays.help_scroll.step(up, page),
        Action::Yes | Action::No => {
            let question = app.overlays.confirm.take()?;
            if action == Action::No {
                return Some(Vec::new());
            }
            return Some(commands::confirmed(app, question, now));
        }
        Action::ConfirmStep { back } => app.overlays.confirm.as_mut()?.step(back),
        Action::ConfirmFresh => app.overlays.confirm.as_mut()?.toggle(),
        Action::PickerMove { .. }
        | Action::PickerPage { .. }
        | Action::PickerEdge { .. }
        | Action::PickerOpen
        | Action::PickerAll
        | Action::PickerClose => return picker_key(app, action),
        _ => return None,
    }
    Some(Vec::new())
}

/// A key of the open session picker; `None` when it does not apply (j or
/// k once a filter is typed: they are typed into it).
fn picker_key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    let picker = app.overlays.picker.as_mut()?;
    let sign = |up: bool| if up { -1 } else { 1 };
    match action {
        Action::PickerMove { up, typed } => {
            if typed && !picker.filter.is_empty() {
                return None;
            }
            picker.step(sign(up));
        }
        Action::PickerPage { up } => picker.step(sign(up) * PICKER_PAGE as isize),
        Action::PickerEdge { up } => picker.edge(up),
        Action::PickerAll => picker.toggle_all(),
        Action::PickerClose => app.overlays.picker = None,
        Action::PickerOpen => return open_chosen(app),
        _ => return None,
    }
    Some(Vec::new())
}

/// Enter in the picker: a session of another workspace is only pointed at
/// (the footer says how to open it); this workspace's is opened. `None`
/// when nothing is chosen that can be.
fn open_chosen(app: &mut App) -> Option<Vec<Effect>> {
    let picker = app.overlays.picker.as_ref()?;
    let chosen = picker.chosen().filter(|s| picker.here(s))?;
    let id = chosen.card.id.clone();
    let current = picker.current.as_deref() == Some(id.as_str());
    app.overlays.picker = None;
    if current {
        app.notice(
            NoticeKind::Info,
            format!(
                "Session {} is the one open now.",
                crate::session::short_id(&id)
            ),
        );
        return Some(Vec::new());
    }
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "No session can be opened: no provider is set up (F5 reads the settings again).",
        );
        return Some(Vec::new());
    }
    Some(vec![Effect::Send(Op::OpenSession { id })])
}
