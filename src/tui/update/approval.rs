//! The approval prompt's part of the update: a request joins the queue,
//! and each answer (run once, always, refuse with an optional reason, or
//! refuse and interrupt) becomes an `Op::Approve` for exactly that call.
//! Invariant: the input box is never touched here; a request is answered
//! once, or dropped when its turn ends (the engine stopped waiting).

use std::time::Instant;

use ratatui::crossterm::event::KeyEvent;

use super::Effect;
use crate::events::{Decision, Op};
use crate::text::clean_line;
use crate::tui::keymap::{self, Action, Typed};
use crate::tui::state::{Activity, App, NoticeKind};

/// Longest refusal reason kept (the model reads it).
const REASON_CAP: usize = 500;

/// The turn ended (or the session changed): the engine waits no more.
pub fn dropped(app: &mut App) {
    app.overlays.approvals.clear();
}

/// Runs an approval prompt key; `None` when `action` is not one.
pub fn key(app: &mut App, action: Action, now: Instant) -> Option<Vec<Effect>> {
    let approvals = &mut app.overlays.approvals;
    approvals.current()?;
    let effects = match action {
        Action::ApproveOnce => answer(app, Decision::Once, now),
        Action::ApproveAlways => answer(app, Decision::Always, now),
        Action::Refuse => {
            approvals.reason = Some(String::new());
            Vec::new()
        }
        Action::ReasonSend | Action::ReasonSkip => {
            let typed = approvals.reason.take().unwrap_or_default();
            let reason = (action == Action::ReasonSend)
                .then(|| clean_line(typed.trim()).into_owned())
                .filter(|r| !r.is_empty());
            answer(app, Decision::Refuse { reason }, now)
        }
        Action::RefuseStop => {
            // Every waiting call is refused, then the turn stops.
            let mut effects = Vec::new();
            while let Some(r) = app.overlays.approvals.pop() {
                effects.push(Effect::Send(Op::Approve {
                    id: r.id,
                    decision: Decision::Refuse { reason: None },
                }));
            }
            effects.push(Effect::Send(Op::Interrupt));
            app.notice(
                NoticeKind::Warning,
                "Refused by the user; interrupting the turn.",
            );
            effects
        }
        Action::ApprovalScroll { up, page } => {
            approvals.scroll.step(up, page);
            Vec::new()
        }
        _ => return None,
    };
    Some(effects)
}

/// A key no binding took while the prompt is open: typed into the reason
/// when one is asked for; otherwise it does nothing.
pub fn unbound(app: &mut App, key: &KeyEvent) {
    let Some(reason) = app.overlays.approvals.reason.as_mut() else {
        return;
    };
    match keymap::typed(key) {
        Some(Typed::Char(c)) if reason.len() < REASON_CAP => reason.push(c),
        Some(Typed::Backspace) => {
            reason.pop();
        }
        _ => {}
    }
}

/// Pasted text while the prompt is open: into the reason, as one clean
/// line (elsewhere it is dropped: nothing reaches the input behind it).
pub fn paste(app: &mut App, text: &str) {
    if let Some(reason) = app.overlays.approvals.reason.as_mut() {
        let room = REASON_CAP.saturating_sub(reason.len());
        reason.extend(clean_line(text).chars().take(room));
    }
}

/// Answers the request on screen with `decision`.
fn answer(app: &mut App, decision: Decision, now: Instant) -> Vec<Effect> {
    let Some(request) = app.overlays.approvals.pop() else {
        return Vec::new();
    };
    let name = clean_line(&request.name).into_owned();
    let what = match &request.command {
        Some(command) => format!("{name} `{}`", clean_line(command)),
        None => format!("{name} {}", clean_line(&request.summary.line)),
    };
    let note = match &decision {
        Decision::Once => None,
        Decision::Always => Some(format!(
            "Allowed for this session: {} (approved {what}).",
            request.always_covers()
        )),
        // A refusal is said once: by the call's own cell, which shows the
        // result the model gets ("Refused by the user: …").
        Decision::Refuse { .. } => None,
    };
    if let Some(note) = note {
        app.notice(NoticeKind::Info, note);
    }
    let next = if app.overlays.approvals.is_open() {
        Activity::Approval
    } else {
        Activity::Tool { name }
    };
    app.status.turn.set_activity(next, now);
    // The call runs from now (if it runs): the wait is not its time.
    if let Some(t) = app.root.trace.by_id(&request.id) {
        t.clock.answered(now);
    }
    vec![Effect::Send(Op::Approve {
        id: request.id,
        decision,
    })]
}
