//! The goal's part of the plan pane (issue 46): its state in the title,
//! the forecast under the gauge, each item's evidence mark (verified,
//! check failed, accepted, unverified) and drift, and the selected item's
//! check with its last result. Invariant: a plan without a goal and
//! without checks looks as it did before goals.

use ratatui::text::{Line, Span};

use crate::todo::{Proof, TodoItem, TodoStatus};
use crate::tui::state::goal::mark_text;
use crate::tui::state::{Checklist, Ctx};
use crate::tui::wrap::{truncate, wrap};

/// `· goal: active ` for the pane's title; empty without a goal.
pub fn title(c: &Checklist) -> String {
    c.goal
        .label()
        .map(|label| format!("· {label} "))
        .unwrap_or_default()
}

/// ` ≈ 14 min, ≈ $0.60 left ` for the pane's bottom border (seen however
/// the pane is scrolled), while a goal is set and items are open (once
/// one is done).
pub fn forecast_line(c: &Checklist, ctx: &Ctx<'_>, width: u16) -> Option<Line<'static>> {
    if !c.goal.is_set() || c.open() == 0 {
        return None;
    }
    let forecast = c.stats.forecast()?;
    Some(Line::styled(
        truncate(&format!(" {} ", forecast.describe()), usize::from(width)),
        ctx.palette.dim(),
    ))
}

/// How many of the items at `indices` (folded ones) are marked
/// unverified or check failed.
pub fn unverified(c: &Checklist, indices: &[usize]) -> usize {
    indices
        .iter()
        .filter_map(|&i| c.items.get(i))
        .filter(|item| matches!(c.goal.mark(item), Some(Proof::Unverified | Proof::Failed)))
        .count()
}

/// What follows an item's text: its evidence mark, and `⚠ drifting`
/// for the item in progress past twice the mean time (with a goal).
pub fn marks(c: &Checklist, item: &TodoItem) -> String {
    let mut out = String::new();
    if let Some(proof) = c.goal.mark(item) {
        out.push_str(&format!(" {}", mark_text(proof)));
    }
    let drifting = c
        .stats
        .forecast()
        .and_then(|f| f.drifting.as_deref())
        .is_some_and(|id| id == item.id);
    if drifting && c.goal.is_set() && item.status == TodoStatus::InProgress {
        out.push_str(" ⚠ drifting");
    }
    out
}

/// The selected item's check: the command, then its last run (exit
/// code, duration, last output line) or that it has not run.
pub fn check_lines(
    c: &Checklist,
    item: &TodoItem,
    ctx: &Ctx<'_>,
    width: u16,
) -> Vec<Line<'static>> {
    evidence_lines(c, item, ctx, width)
}

/// With a goal and a forecast, an open item's share of it, for its
/// account line: what is left of a finished item's mean time, or that it
/// is past it.
pub fn left(c: &Checklist, item: &TodoItem, ctx: &Ctx<'_>) -> Option<String> {
    let forecast = c.stats.forecast().filter(|_| c.goal.is_set())?;
    if item.status == TodoStatus::Completed {
        return None;
    }
    let spent = c
        .stats
        .of(&item.id, ctx.clock_until)
        .map_or(0, |s| s.time_ms);
    let mean = crate::units::duration(forecast.mean_ms.div_ceil(1000));
    Some(match forecast.mean_ms.checked_sub(spent) {
        Some(left) => format!(
            "≈ {} left of {mean}",
            crate::units::duration(left.div_ceil(1000))
        ),
        None => format!("past the {mean} a finished item took"),
    })
}

/// The item's check and its last run, or why it has none.
fn evidence_lines(c: &Checklist, item: &TodoItem, ctx: &Ctx<'_>, width: u16) -> Vec<Line<'static>> {
    let p = ctx.palette;
    let Some(command) = item.scope.check.as_deref() else {
        return match c.goal.mark(item) {
            Some(Proof::Accepted) => vec![Line::styled("    accepted without evidence", p.dim())],
            Some(_) => vec![Line::styled(
                "    no check: /plan check N CMD sets one",
                p.dim(),
            )],
            None => Vec::new(),
        };
    };
    let mut lines = wrap(
        &crate::text::clean_line(command),
        width,
        p.text(),
        Span::styled("    check: ", p.dim()),
        Span::raw("      "),
    );
    let (text, style) = match c.goal.last(item) {
        None => ("not run yet".to_string(), p.dim()),
        Some(e) => {
            let code = e
                .exit_code
                .map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
            let last = e
                .tail
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| format!(" · {}", crate::text::clean_line(l.trim())))
                .unwrap_or_default();
            let style = if e.passed { p.success() } else { p.error() };
            let secs = e.duration_ms as f64 / 1000.0;
            (format!("{code} · {secs:.1} s{last}"), style)
        }
    };
    lines.push(Line::from(vec![
        Span::styled("    last: ", p.dim()),
        Span::styled(
            truncate(&text, usize::from(width).saturating_sub(10)),
            style,
        ),
    ]));
    lines
}
