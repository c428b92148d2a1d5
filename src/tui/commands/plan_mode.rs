//! `/plan-mode`: into plan mode, where the model researches and proposes a
//! plan and Waypoint refuses every change (see [`crate::events::ApprovalMode::Plan`]).
//! Short for `/approval plan`. And `/approve [MODE] [fresh]` (or `y` in
//! the plan pane): the proposed plan becomes the live one and runs.

use std::time::Instant;

use crate::events::{ApprovalMode, Op};
use crate::tui::effect::Effect;
use crate::tui::state::{App, Confirm, NoticeKind};

pub fn run(app: &mut App, _args: &str, now: Instant) -> Vec<Effect> {
    if app
        .status
        .engine
        .approval()
        .is_some_and(|(mode, _)| mode == ApprovalMode::Plan)
    {
        app.notice(
            NoticeKind::Info,
            "Already in plan mode. Shift+Tab or /approval MODE leaves it.",
        );
        return Vec::new();
    }
    super::approval::run(app, ApprovalMode::Plan.as_str(), now)
}

/// `/approve [MODE] [fresh]`: approve the proposed plan, to run in `MODE`
/// (default: the mode before plan mode), from a fresh conversation with
/// `fresh`.
pub fn approve_command(app: &mut App, args: &str, _now: Instant) -> Vec<Effect> {
    let mut mode = None;
    let mut fresh = false;
    for word in args.split_whitespace() {
        match (word, ApprovalMode::parse(word)) {
            ("fresh" | "--fresh", _) => fresh = true,
            (_, Some(m)) if m != ApprovalMode::Plan => mode = Some(m),
            _ => {
                app.notice(
                    NoticeKind::Error,
                    format!("Usage: /approve [MODE] [fresh] — MODE is read-only, ask, auto-edit, auto or yolo; not `{word}`."),
                );
                return Vec::new();
            }
        }
    }
    approve(app, mode, fresh)
}

/// Approves the proposed plan, when there is one (the engine says so
/// too): in `mode`, or, without one, after asking which mode it runs in
/// (the mode before plan mode first) and whether from a fresh context.
pub fn approve(app: &mut App, mode: Option<ApprovalMode>, fresh: bool) -> Vec<Effect> {
    if app.root.plan.proposed.is_none() {
        app.notice(
            NoticeKind::Info,
            "No plan is proposed: in plan mode (Shift+Tab, /plan-mode) the model proposes one for you to approve.",
        );
        return Vec::new();
    }
    match mode {
        Some(mode) => vec![Effect::Send(Op::ApprovePlan {
            mode: Some(mode),
            fresh,
            items: None,
        })],
        None => {
            let mode = app.status.engine.before_plan();
            app.overlays.confirm = Some(Confirm::ApprovePlan { mode, fresh });
            Vec::new()
        }
    }
}
