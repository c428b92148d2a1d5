//! The session's own facts: which session is recorded (and what loading
//! it had to say), its past replacing the screen, the model and the
//! approval mode in force. Invariant: a resumed session's history is
//! shown as it was seen live (each past event routed to its thread), and
//! nothing of it waits for an answer.

use std::time::Instant;

use super::{Effect, approval};
use crate::events::{Envelope, Event};
use crate::tui::state::{App, NoticeKind};

/// Runs one of the session's events (others are not taken here).
pub(super) fn on_event(app: &mut App, event: Event, now: Instant) -> Vec<Effect> {
    match event {
        Event::SessionStarted {
            id,
            path,
            resumed,
            notes,
        } => started(app, id, path, resumed, notes),
        Event::History { events } => return history(app, events, now),
        Event::ModelChanged { model, .. } => {
            if model != app.status.accounts.model() {
                app.notice(
                    NoticeKind::Info,
                    format!("Model: {model} from the next request on."),
                );
            }
            app.status.accounts.set_model(model);
        }
        Event::ApprovalMode { mode, sandboxed } => {
            // The first one is the mode the app started in; later ones answer /approval.
            if app
                .status
                .engine
                .approval()
                .is_some_and(|(m, s)| (m, s) != (mode, sandboxed))
            {
                let sandbox = if sandboxed {
                    ", commands in the sandbox"
                } else {
                    ""
                };
                app.notice(
                    NoticeKind::Info,
                    format!("Approval mode: {mode}{sandbox}, from the next tool call on."),
                );
            }
            app.status.engine.set_approval(mode, sandboxed);
        }
        _ => {}
    }
    Vec::new()
}

/// The session being recorded: a resumed one's notices wait for its
/// history; another session's plan revisions are forgotten.
fn started(app: &mut App, id: String, path: String, resumed: bool, notes: Vec<String>) {
    let mut notices = Vec::new();
    if resumed {
        notices.push((
            NoticeKind::Info,
            format!("Resumed session {}.", crate::session::short_id(&id)),
        ));
    }
    notices.extend(
        notes
            .into_iter()
            .map(|note| (NoticeKind::Warning, format!("Note: {note}"))),
    );
    if resumed {
        // The history comes next and replaces the screen: they follow it.
        app.status.place.hold_notices(notices);
    } else {
        for (kind, text) in notices {
            app.notice(kind, text);
        }
    }
    // Another session's revisions are not this one's.
    if app
        .status
        .place
        .session()
        .is_some_and(|(old, _)| *old != id)
    {
        app.root.forget_plan_history();
    }
    app.status.place.set_session(id, path);
}

/// A resumed session's past: the screen shows it as it was seen live.
fn history(app: &mut App, events: Vec<Envelope>, now: Instant) -> Vec<Effect> {
    app.root.clear_for_history(now);
    app.threads.clear();
    app.status.accounts.clear_usage();
    let mut effects = Vec::new();
    for past in events {
        effects.extend(super::on_envelope(app, past, now));
    }
    // Nothing of the past waits for an answer.
    approval::dropped(app);
    for (kind, text) in app.status.place.take_notices() {
        app.notice(kind, text);
    }
    // Nothing in it changed just now.
    app.root.plan.highlight.clear();
    app.root.sync_plan();
    app.root.conversation.scroll.follow = true;
    effects
}
