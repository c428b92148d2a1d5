//! The plan pane's extras: a past revision with its diff marked per item
//! (`[` / `]`), the selected item's account (time, tool calls, tokens,
//! cost), the one-line prompt of a user edit and a child thread's live
//! line. Invariant: every text
//! drawn here (item contents, typed text) is cleaned to one line or
//! wrapped by [`wrap`], which cleans it; nothing here writes any state.

use std::time::Duration;

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::clock;
use crate::todo::{Author, ItemScope, ItemStats, TodoItem, TodoStatus};
use crate::tui::state::{Checklist, Ctx, NestedPlan, PlanPrompt, PromptKind, Revisions};
use crate::tui::style::{ACTIVE, DONE, PENDING};
use crate::tui::wrap::{str_width, truncate, wrap};

/// `12:04:31` (UTC, as the session listings), from Unix milliseconds.
pub fn time_of_day(ms: u64) -> String {
    let secs = ms / 1000 % 86_400;
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3_600,
        secs % 3_600 / 60,
        secs % 60
    )
}

/// `rev 3/7 · user · 12:04:31` for the revision shown.
pub fn revision_header(revisions: &Revisions) -> Option<String> {
    let index = revisions.viewing?;
    let r = revisions.list.get(index)?;
    let mut out = format!(
        "rev {}/{} · {}",
        revisions.number(index),
        revisions.latest(),
        r.author.as_str()
    );
    if r.at > 0 {
        out.push_str(&format!(" · {}", time_of_day(r.at)));
    }
    Some(out)
}

/// The revision shown by `[` / `]`: its header, its items with what the
/// revision did to each (+ added, ~ reworded, ✓ completed, ▶ started,
/// ↕ moved) and the items it removed (− dropped ones struck out).
pub fn revision_lines(c: &Checklist, ctx: &Ctx<'_>, width: u16) -> Option<Vec<Line<'static>>> {
    let p = ctx.palette;
    let r = c.revisions.shown()?;
    let w = usize::from(width);
    let mut lines = vec![Line::styled(
        truncate(&revision_header(&c.revisions)?, w),
        p.bold(),
    )];
    lines.push(Line::styled(
        truncate("[ older · ] newer · Esc live", w),
        p.dim(),
    ));
    if r.items.is_empty() {
        lines.push(Line::styled("(empty plan)", p.dim()));
    }
    let d = &r.diff;
    for item in &r.items {
        let has = |list: &[String]| list.contains(&item.content);
        let reworded = d.reworded.iter().find(|rw| rw.to == item.content);
        let (mark, style) = if has(&d.added) {
            ("+", p.success())
        } else if reworded.is_some() {
            ("~", p.warning())
        } else if has(&d.completed) {
            ("✓", p.success())
        } else if has(&d.started) {
            ("▶", p.active())
        } else if has(&d.reordered) {
            ("↕", p.warning())
        } else {
            (" ", p.dim())
        };
        let text = match reworded {
            Some(rw) => format!("{} → {}", rw.from, rw.to),
            None => item.content.clone(),
        };
        let text_style = if mark == " " { p.dim() } else { p.text() };
        lines.extend(wrap(
            &text,
            width,
            text_style,
            Span::styled(format!("{mark} {} ", status_marker(item)), style),
            Span::raw("      "),
        ));
    }
    let struck = p.dim().add_modifier(Modifier::CROSSED_OUT);
    for content in &d.removed {
        let dropped = d.dropped.contains(content);
        let label = if dropped {
            "− dropped: "
        } else {
            "− removed: "
        };
        let style = if dropped { p.error() } else { p.dim() };
        lines.push(Line::from(vec![
            Span::styled(label, style),
            Span::styled(
                truncate(
                    &crate::text::clean_line(content),
                    w.saturating_sub(str_width(label)),
                ),
                struck,
            ),
        ]));
    }
    Some(lines)
}

fn status_marker(item: &TodoItem) -> &'static str {
    match item.status {
        TodoStatus::Completed => DONE,
        TodoStatus::InProgress => ACTIVE,
        TodoStatus::Pending => PENDING,
    }
}

/// What marks an item that declares files or commands (its scope).
pub const SCOPE_MARK: &str = " ⊂";

/// The scope shown for `item`: while a plan is proposed or none was
/// approved, the one it declares; after an approval, the one approved
/// (the one enforced: items added since have none). `None` when empty.
pub fn shown_scope<'a>(c: &'a Checklist, item: &'a TodoItem) -> Option<&'a ItemScope> {
    let approved = c
        .revisions
        .list
        .iter()
        .rev()
        .find(|r| r.author == Author::Approved);
    let scope = match approved {
        Some(r) if c.proposed.is_none() => &r.items.iter().find(|i| i.id == item.id)?.scope,
        _ => &item.scope,
    };
    (!scope.is_empty()).then_some(scope)
}

/// The selected item's scope under its account: `files: …` and
/// `commands: …`, wrapped.
pub fn scope_lines(scope: &ItemScope, ctx: &Ctx<'_>, width: u16) -> Vec<Line<'static>> {
    let p = ctx.palette;
    let mut lines = Vec::new();
    for (label, entries) in [("files", &scope.files), ("commands", &scope.commands)] {
        if entries.is_empty() {
            continue;
        }
        lines.extend(wrap(
            &entries.join(", "),
            width,
            p.text(),
            Span::styled(format!("    {label}: "), p.dim()),
            Span::raw("      "),
        ));
    }
    lines
}

/// The time an item has been in progress by the engine's account, when it
/// sent one (live for the running item, up to `until`).
pub fn time_in_progress(c: &Checklist, id: &str, until: std::time::Instant) -> Option<Duration> {
    c.stats
        .of(id, until)
        .map(|s| Duration::from_millis(s.time_ms))
}

/// The selected item's account in one line:
/// `⏱ 1:23 · 4 calls · ↑12.3k ↓900 · $0.0123`, then what is `left` of
/// it when a goal's forecast says (`≈ 45 s left of 1 min`).
pub fn detail_line(
    stats: Option<&ItemStats>,
    left: Option<String>,
    ctx: &Ctx<'_>,
    width: u16,
) -> Line<'static> {
    let mut text = match stats {
        None => "no time or tool calls recorded yet".to_string(),
        Some(s) => {
            let calls = if s.tool_calls == 1 { "call" } else { "calls" };
            let mut out = format!(
                "⏱ {} · {} {calls} · ↑{} ↓{}",
                clock(Duration::from_millis(s.time_ms)),
                s.tool_calls,
                crate::units::tokens(s.input_tokens),
                crate::units::tokens(s.output_tokens)
            );
            if let Some(usd) = s.cost_usd {
                out.push_str(&format!(" · {}", crate::pricing::format_cost(usd)));
            }
            out
        }
    };
    if let Some(left) = left {
        text.push_str(&format!(" · {left}"));
    }
    Line::styled(
        truncate(&format!("    {text}"), usize::from(width)),
        ctx.palette.dim(),
    )
}

/// The prompt of an edit: `+ after 3 › text▏`; the end of a long text
/// stays in view.
pub fn prompt_line(prompt: &PlanPrompt, ctx: &Ctx<'_>, width: u16) -> Line<'static> {
    let p = ctx.palette;
    let label = match prompt.kind {
        PromptKind::Add { after: Some(0) } => "+ at the top › ".to_string(),
        PromptKind::Add { after: Some(n) } => format!("+ after {n} › "),
        PromptKind::Add { after: None } => "+ at the end › ".to_string(),
        PromptKind::Reword { n } => format!("~ item {n} › "),
        PromptKind::Check { n } => format!("check of item {n} › "),
    };
    let room = usize::from(width).saturating_sub(str_width(&label) + 1);
    let text = crate::text::clean_line(&prompt.text);
    let mut shown: Vec<char> = Vec::new();
    let mut used = 0;
    for ch in text.chars().rev() {
        let cw = str_width(ch.encode_utf8(&mut [0; 4]));
        if used + cw > room {
            break;
        }
        used += cw;
        shown.push(ch);
    }
    let shown: String = shown.into_iter().rev().collect();
    Line::from(vec![
        Span::styled(truncate(&label, usize::from(width)), p.warning()),
        Span::styled(shown, p.text()),
        Span::styled("▏", p.active()),
    ])
}

/// A child's live line in `room` columns: what it works on, how far its
/// plan is, what it runs now (or how it ended), its time, tokens and
/// cost; the parts that do not fit are left out from the end, whole.
pub(super) fn child_line(child: &NestedPlan<'_>, now: std::time::Instant, room: usize) -> String {
    use crate::tui::state::ChildEnd;
    let mut parts = vec![crate::text::clean_line(&child.label).into_owned()];
    let total = child.plan.items.len();
    if total > 0 {
        parts.push(format!("{}/{total}", child.plan.completed()));
    }
    let state = match (child.live.ended, &child.running) {
        (Some((_, ChildEnd::Answered)), _) => "done".to_string(),
        (Some((_, ChildEnd::Stopped)), _) => "stopped".to_string(),
        (Some((_, ChildEnd::Interrupted)), _) => "interrupted".to_string(),
        (None, Some(running)) => crate::text::clean_line(running).into_owned(),
        (None, None) => "thinking".to_string(),
    };
    parts.push(state);
    parts.push(clock(child.live.elapsed(now)));
    if child.live.tokens > 0 {
        parts.push(format!(
            "{} tok",
            crate::units::whole_tokens(child.live.tokens)
        ));
    }
    if let Some(usd) = child.live.cost() {
        parts.push(format!("${usd:.2}"));
    }
    let mut line = truncate(&parts[0], room);
    for part in &parts[1..] {
        let longer = format!("{line} · {part}");
        if longer.chars().count() > room {
            break;
        }
        line = longer;
    }
    line
}
