//! The tool trace pane: one entry per tool call with a live status, its
//! duration, the plan item it served and its output folded to a few lines;
//! the selected entry expands to its whole (memory-capped) output, and a
//! file change shows a coloured diff. Invariant: only visible rows are
//! built, and what is shown depends on the call's typed summary, never on
//! the tool's name.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::diff::numbered_lines;
use super::{inner, pane_block, short_duration, spinner};
use crate::events::ToolDetail;
use crate::tui::state::trace::users_words;
use crate::tui::state::{Ctx, DiffCache, Focus, Trace, TraceEntry, TraceStatus};
use crate::tui::wrap::{str_width, truncate, wrap};

/// Output lines shown under a folded entry.
const FOLDED_LINES: usize = 3;

/// The expanded view of one entry, built before the frame.
#[derive(Debug, Default)]
pub struct DetailLayout {
    /// Header, plan item and diff lines.
    pub head: Vec<Line<'static>>,
    /// The output held in memory.
    pub text: String,
    /// Lines in all (head and output).
    pub total: usize,
    pub top: usize,
}

/// Settles the expanded view's scroll position (nothing to do when folded).
pub fn layout(trace: &mut Trace, ctx: &Ctx<'_>, area: Rect) -> Option<DetailLayout> {
    if !trace.expanded {
        return None;
    }
    let width = usize::from(inner(area).width);
    // A file change's diff is built once per entry and width.
    let (serial, status) = trace.focused().map(|t| (t.serial, t.status))?;
    let fresh = trace
        .diff_cache
        .as_ref()
        .is_some_and(|c| c.serial == serial && c.status == status && c.width == width);
    if !fresh {
        let lines = trace
            .focused()
            .map(|t| diff_of(t, ctx, width))
            .unwrap_or_default();
        trace.diff_cache = Some(DiffCache {
            serial,
            status,
            width,
            lines,
        });
    }
    let t = trace.focused()?;
    let diff = trace.diff_cache.as_ref().map_or(&[][..], |c| &c.lines[..]);
    let head = detail_head(t, ctx, width, diff);
    // Cleaned whole, before it is cut into lines (a sequence may span them).
    let mut raw = t.output.text();
    // A file change's output repeats the diff above it: its first line only.
    if shows_diff(t) {
        raw = raw.lines().next().unwrap_or_default().to_string();
    }
    // A refused plan update's reason is in the head, wrapped whole.
    if t.refusal.is_some() {
        raw = raw
            .split_once('\n')
            .map(|(_, r)| r.to_string())
            .unwrap_or_default();
    }
    let text = if crate::text::is_clean(&raw) {
        raw
    } else {
        crate::text::clean(&raw).into_owned()
    };
    let total = head.len() + text.lines().count();
    let top = trace
        .detail_scroll
        .resolve(total, usize::from(inner(area).height));
    Some(DetailLayout {
        head,
        text,
        total,
        top,
    })
}

fn header(t: &TraceEntry, ctx: &Ctx<'_>, width: usize, selected: bool) -> Line<'static> {
    let p = ctx.palette;
    let now = ctx.now;
    let (icon, style) = match t.status {
        TraceStatus::Running if t.clock.waiting() => ("⏸", p.warning()),
        TraceStatus::Running => (
            spinner(now.saturating_duration_since(t.clock.started())),
            p.active(),
        ),
        TraceStatus::Ok => ("✔", p.success()),
        TraceStatus::Error => ("✘", p.error()),
        TraceStatus::Interrupted => ("■", p.warning()),
    };
    let time = short_duration(t.clock.elapsed(now));
    let status = match (t.status, t.exit_code) {
        (TraceStatus::Error, Some(code)) => format!("exit {code}"),
        (TraceStatus::Running, _) if t.clock.waiting() => "waiting for approval".into(),
        (TraceStatus::Running, _) => "running".into(),
        (TraceStatus::Ok, _) => "ok".into(),
        (TraceStatus::Error, None) if t.refusal.is_some() => "refused".into(),
        (TraceStatus::Error, None) => "error".into(),
        (TraceStatus::Interrupted, _) => "interrupted".into(),
    };
    let right = format!(" {status} {time}");
    let right_w = right.chars().count();
    let name = t.display_name();
    let name_w = name.chars().count() + 2;
    let summary = truncate(&t.summary.line, width.saturating_sub(right_w + name_w + 1));
    let summary = if summary.is_empty() {
        String::new()
    } else {
        format!(" {summary}")
    };
    let used = name_w + str_width(&summary) + right_w;
    let mut spans = vec![
        Span::styled(format!("{icon} "), style),
        Span::styled(name.into_owned(), p.bold()),
        Span::raw(summary),
        Span::raw(" ".repeat(width.saturating_sub(used))),
        Span::styled(right, style),
    ];
    if selected {
        spans = spans
            .into_iter()
            .map(|s| s.patch_style(p.selection()))
            .collect();
    }
    Line::from(spans)
}

fn entry_rows(t: &TraceEntry, ctx: &Ctx<'_>, width: usize, selected: bool) -> Vec<Line<'static>> {
    let p = ctx.palette;
    let mut rows = vec![header(t, ctx, width, selected)];
    if let Some(item) = &t.plan_item.content {
        rows.push(Line::styled(
            truncate(&format!("  ↳ {item}"), width),
            p.dim(),
        ));
    }
    if let Some(reason) = &t.refusal {
        // The reason, wrapped (not cut) to a few lines.
        let mut lines = refusal_lines(reason, ctx, width);
        lines.truncate(FOLDED_LINES);
        rows.extend(lines);
        return rows;
    }
    // The plan tools' output is the plan itself, already on screen; a file
    // change's says what it did in its first line (the rest is its diff).
    let folded = if t.summary.detail == ToolDetail::Plan {
        Vec::new()
    } else if shows_diff(t) {
        t.output
            .text()
            .lines()
            .take(1)
            .map(str::to_string)
            .collect()
    } else {
        t.output
            .command_tail(FOLDED_LINES)
            .into_iter()
            .map(|line| users_words(&line).map_or(line, str::to_string))
            .collect()
    };
    for line in folded {
        // Tabs are expanded, as in the expanded view (not dropped).
        rows.push(Line::styled(
            truncate(
                &format!("  │ {}", crate::text::expand_tabs(&line, 8)),
                width,
            ),
            p.dim(),
        ));
    }
    rows
}

pub fn render(
    frame: &mut Frame,
    trace: &Trace,
    detail: Option<&DetailLayout>,
    ctx: &Ctx<'_>,
    area: Rect,
) {
    let p = ctx.palette;
    if let (Some(detail), Some(t)) = (detail, trace.focused()) {
        return render_detail(frame, t, detail, ctx, area);
    }
    let shown = trace.shown();
    let title = match &trace.filter {
        Some((_, n)) => {
            let calls = if shown.len() == 1 { "call" } else { "calls" };
            format!(" Tools · item {n} ({} {calls}) ", shown.len())
        }
        None => format!(" Tools {} ", trace.entries.len()),
    };
    let block = pane_block(ctx, title, Focus::Trace);
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    let Some(last) = shown.len().checked_sub(1) else {
        let text = match &trace.filter {
            Some((_, n)) => format!("No tool calls for item {n}."),
            None => "No tool calls yet.".to_string(),
        };
        frame.render_widget(
            Paragraph::new(Line::styled(text, p.dim())).block(block),
            area,
        );
        return;
    };
    // Walk back from the selected (or last) entry until the pane is full:
    // only the entries on screen are laid out. Positions are in `shown`.
    let anchor = trace
        .selected
        .and_then(|s| shown.iter().position(|&i| i == s))
        .unwrap_or(last);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut i = anchor + 1;
    while i > 0 && rows.len() < height {
        i -= 1;
        let selected = ctx.focused(Focus::Trace) && i == anchor;
        let mut entry = entry_rows(&trace.entries[shown[i]], ctx, width, selected);
        entry.append(&mut rows);
        rows = entry;
    }
    if rows.len() > height {
        rows.drain(..rows.len() - height);
    }
    // Fill with the entries after the anchor when there is room.
    let mut j = anchor + 1;
    while rows.len() < height && j <= last {
        rows.extend(entry_rows(&trace.entries[shown[j]], ctx, width, false));
        j += 1;
    }
    rows.truncate(height);
    let mut block = block;
    if anchor < last {
        block = block.title_bottom(
            Line::styled(format!(" ↓ {} newer (End) ", last - anchor), p.warning()).right_aligned(),
        );
    }
    frame.render_widget(Paragraph::new(rows).block(block), area);
}

/// Whether the entry is a file change that happened (a failed edit
/// changed nothing: no diff).
fn shows_diff(t: &TraceEntry) -> bool {
    matches!(t.summary.detail, ToolDetail::Diff { .. }) && t.status == TraceStatus::Ok
}

/// The file change's numbered diff, numbered from where the engine found
/// it in the file, else from where the edit's output says it is
/// (`@@ line N @@`, when it changed one place).
fn diff_of(t: &TraceEntry, ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    let ToolDetail::Diff {
        old, new, first, ..
    } = &t.summary.detail
    else {
        return Vec::new();
    };
    let width = u16::try_from(width).unwrap_or(u16::MAX);
    if *first > 0 {
        return numbered_lines(ctx.palette, old, new, *first, width);
    }
    let output = t.output.text();
    let mut places = output.lines().filter_map(|l| {
        l.strip_prefix("@@ line ")?
            .strip_suffix(" @@")?
            .parse()
            .ok()
    });
    let first = match (places.next(), places.next()) {
        (Some(line), None) => line,
        _ => 1,
    };
    numbered_lines(ctx.palette, old, new, first, width)
}

/// The expanded view's lines above the output: header, plan item, diff.
fn detail_head(
    t: &TraceEntry,
    ctx: &Ctx<'_>,
    width: usize,
    diff: &[Line<'static>],
) -> Vec<Line<'static>> {
    let mut lines = vec![header(t, ctx, width, false)];
    if let Some(item) = &t.plan_item.content {
        lines.push(Line::styled(
            format!("plan item: {item}"),
            ctx.palette.dim(),
        ));
    }
    lines.extend(child_calls(t, ctx, width));
    if let Some(reason) = &t.refusal {
        lines.extend(refusal_lines(reason, ctx, width));
        lines.push(Line::raw(""));
    }
    if shows_diff(t) {
        lines.extend_from_slice(diff);
        lines.push(Line::raw(""));
    }
    lines
}

/// A task's subagent calls, one line each (status, tool, what it acted
/// on, time), above the task's result; none for another call.
fn child_calls(t: &TraceEntry, ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    let Some((thread, child)) = ctx
        .threads
        .iter()
        .find(|(_, c)| c.parent_call.as_deref() == Some(t.id.as_str()))
    else {
        return Vec::new();
    };
    let p = ctx.palette;
    let calls = &child.view.trace.entries;
    let mut lines = vec![Line::styled(
        format!(
            "subagent ({thread}): {}",
            crate::units::plural(calls.len(), "call")
        ),
        p.dim(),
    )];
    for call in calls {
        let (mark, style) = match call.status {
            TraceStatus::Running => ("⠿", p.active()),
            TraceStatus::Ok => ("✔", p.success()),
            TraceStatus::Error => ("✘", p.error()),
            TraceStatus::Interrupted => ("■", p.warning()),
        };
        let time = short_duration(call.clock.elapsed(ctx.now));
        let text = format!("{} {} · {time}", call.display_name(), call.summary.line);
        lines.push(Line::from(vec![
            Span::styled(format!("  {mark} "), style),
            Span::styled(
                truncate(&crate::text::clean_line(&text), width.saturating_sub(4)),
                p.text(),
            ),
        ]));
    }
    lines.push(Line::raw(""));
    lines
}

/// A refused plan update's reason, wrapped whole in the error colour.
fn refusal_lines(reason: &str, ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    wrap(
        &format!("plan refused: {reason}"),
        u16::try_from(width).unwrap_or(u16::MAX),
        ctx.palette.error(),
        Span::styled("  │ ", ctx.palette.dim()),
        Span::styled("  │ ", ctx.palette.dim()),
    )
}

fn render_detail(
    frame: &mut Frame,
    t: &TraceEntry,
    detail: &DetailLayout,
    ctx: &Ctx<'_>,
    area: Rect,
) {
    let block = pane_block(
        ctx,
        format!(
            " {} {} · Enter folds ",
            t.display_name(),
            truncate(&t.summary.line, 40)
        ),
        Focus::Trace,
    );
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    let top = detail.top;
    let head_rows = detail.head.len();
    let mut visible: Vec<Line<'static>> =
        detail.head.iter().skip(top).take(height).cloned().collect();
    // Only the visible slice of the output is turned into lines.
    let mut text_lines = detail.text.lines().skip(top.saturating_sub(head_rows));
    while visible.len() < height {
        match text_lines.next() {
            Some(line) => visible.push(Line::raw(truncate(
                &crate::text::expand_tabs(line, 8),
                width,
            ))),
            None => break,
        }
    }
    let mut block = block;
    if top + height < detail.total {
        block = block
            .title_bottom(Line::styled(" ↓ more (PgDn) ", ctx.palette.warning()).right_aligned());
    }
    frame.render_widget(Paragraph::new(visible).block(block), area);
}
