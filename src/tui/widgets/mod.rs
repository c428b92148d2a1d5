//! Pane widgets: each lays out from its own state (a `layout` pass that may
//! settle scroll positions and caches before the frame) and renders from
//! its own state plus a read-only [`Ctx`] into a `Rect`, touching no
//! channel or file. Shared helpers for borders and elapsed times live here.

pub mod approval;
pub mod checklist;
pub mod commands;
pub mod conversation;
pub mod diff;
pub mod files;
pub mod help;
pub mod history;
pub mod picker;
pub mod plan_detail;
mod plan_fold;
mod plan_goal;
pub mod status;
pub mod trace;

use std::time::Duration;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders};

use super::state::{Ctx, Focus};
use super::style::SPINNER;

/// A pane border, brighter when the pane has the focus.
pub fn pane_block<'a>(ctx: &Ctx<'_>, title: impl Into<Line<'a>>, focus: Focus) -> Block<'a> {
    let focused = ctx.focused(focus);
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused {
            ctx.palette.focus_border()
        } else {
            ctx.palette.border()
        })
        .title(title)
}

/// `line` shown as the chosen row of a list when `chosen`.
pub fn chosen_row(
    line: ratatui::text::Line<'static>,
    chosen: bool,
    p: crate::tui::style::Palette,
) -> ratatui::text::Line<'static> {
    if chosen {
        line.patch_style(p.selection())
    } else {
        line
    }
}

/// The inside of a bordered pane.
pub fn inner(area: Rect) -> Rect {
    Block::new().borders(Borders::ALL).inner(area)
}

pub use crate::tui::measure::{clock, short_duration};

/// The spinner frame for something running for `elapsed`.
pub fn spinner(elapsed: Duration) -> &'static str {
    let i = (elapsed.as_millis() / 100) as usize % SPINNER.len();
    SPINNER[i]
}
