//! `/plan-mode`: into plan mode, where the model researches and proposes a
//! plan and Waypoint refuses every change (see [`crate::events::ApprovalMode::Plan`]).
//! Short for `/approval plan`.

use std::time::Instant;

use crate::events::ApprovalMode;
use crate::tui::effect::Effect;
use crate::tui::state::{App, NoticeKind};

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
    super::approval(app, ApprovalMode::Plan.as_str(), now)
}
