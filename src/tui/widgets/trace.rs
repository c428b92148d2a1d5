//! The tool trace pane: one entry per tool call with a live status, its
//! duration, the plan item it served and its output folded to a few lines;
//! the selected entry expands to its whole (memory-capped) output, and an
//! edit shows a coloured diff. Invariant: only visible rows are built.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use similar::{ChangeTag, TextDiff};

use super::{pane_block, short_duration, spinner};
use crate::events::ToolDetail;
use crate::tui::state::{App, Focus, TraceEntry, TraceStatus};
use crate::tui::wrap::{str_width, truncate};

/// Output lines shown under a folded entry.
const FOLDED_LINES: usize = 3;

fn header(app: &App, t: &TraceEntry, width: usize, now: Instant, selected: bool) -> Line<'static> {
    let p = app.palette;
    let (icon, style) = match t.status {
        TraceStatus::Running => (
            spinner(now.saturating_duration_since(t.started)),
            p.active(),
        ),
        TraceStatus::Ok => ("✔", p.success()),
        TraceStatus::Error => ("✘", p.error()),
        TraceStatus::Interrupted => ("■", p.warning()),
    };
    let time = match t.duration {
        Some(d) => short_duration(d),
        None => short_duration(now.saturating_duration_since(t.started)),
    };
    let status = match t.status {
        TraceStatus::Running => "running",
        TraceStatus::Ok => "ok",
        TraceStatus::Error => "error",
        TraceStatus::Interrupted => "interrupted",
    };
    let right = format!(" {status} {time}");
    let right_w = right.chars().count();
    let name_w = t.name.chars().count() + 2;
    let summary = truncate(&t.summary.line, width.saturating_sub(right_w + name_w + 1));
    let summary = if summary.is_empty() {
        String::new()
    } else {
        format!(" {summary}")
    };
    let used = name_w + str_width(&summary) + right_w;
    let mut spans = vec![
        Span::styled(format!("{icon} "), style),
        Span::styled(t.name.clone(), p.bold()),
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

fn entry_rows(
    app: &App,
    t: &TraceEntry,
    width: usize,
    now: Instant,
    selected: bool,
) -> Vec<Line<'static>> {
    let p = app.palette;
    let mut rows = vec![header(app, t, width, now, selected)];
    if let Some(item) = &t.plan_item {
        rows.push(Line::styled(
            truncate(&format!("  ↳ {item}"), width),
            p.dim(),
        ));
    }
    // The plan tools' output is the plan itself, already on screen.
    let folded = if t.summary.detail == ToolDetail::Plan {
        Vec::new()
    } else {
        t.output.last_lines(FOLDED_LINES)
    };
    for line in folded {
        rows.push(Line::styled(
            truncate(&format!("  │ {line}"), width),
            p.dim(),
        ));
    }
    rows
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, now: Instant) {
    let p = app.palette;
    if app.trace_expanded
        && let Some(t) = app
            .trace_selected
            .and_then(|i| app.trace.get(i))
            .or_else(|| app.trace.last())
    {
        return render_detail(frame, app, t, area, now);
    }
    let title = format!(" Tools {} ", app.trace.len());
    let block = pane_block(app, title, Focus::Trace);
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    if app.trace.is_empty() {
        let text = Line::styled("No tool calls yet.", p.dim());
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    }
    // Walk back from the selected (or last) entry until the pane is full:
    // only the entries on screen are laid out.
    let last = app.trace.len() - 1;
    let anchor = app.trace_selected.unwrap_or(last).min(last);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut i = anchor + 1;
    while i > 0 && rows.len() < height {
        i -= 1;
        let selected = app.focus == Focus::Trace && i == anchor;
        let mut entry = entry_rows(app, &app.trace[i], width, now, selected);
        entry.append(&mut rows);
        rows = entry;
    }
    if rows.len() > height {
        rows.drain(..rows.len() - height);
    }
    // Fill with the entries after the anchor when there is room.
    let mut j = anchor + 1;
    while rows.len() < height && j <= last {
        rows.extend(entry_rows(app, &app.trace[j], width, now, false));
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

fn render_detail(frame: &mut Frame, app: &App, t: &TraceEntry, area: Rect, now: Instant) {
    let p = app.palette;
    let block = pane_block(
        app,
        format!(
            " {} {} · Enter folds ",
            t.name,
            truncate(&t.summary.line, 40)
        ),
        Focus::Trace,
    );
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    let mut lines = vec![header(app, t, width, now, false)];
    if let Some(item) = &t.plan_item {
        lines.push(Line::styled(format!("plan item: {item}"), p.dim()));
    }
    // A failed edit changed nothing: no diff.
    if let ToolDetail::Diff { old, new, .. } = &t.summary.detail
        && t.status == TraceStatus::Ok
    {
        lines.extend(diff_lines(app, old, new));
        lines.push(Line::raw(""));
    }
    let text = t.output.text();
    let total_text_lines = text.lines().count();
    let top = app
        .detail_scroll
        .resolve(lines.len() + total_text_lines, height);
    // Only the visible slice of the output is turned into lines.
    let header_rows = lines.len();
    let mut visible: Vec<Line<'static>> = lines.into_iter().skip(top).collect();
    let skip_text = top.saturating_sub(header_rows);
    for line in text
        .lines()
        .skip(skip_text)
        .take(height.saturating_sub(visible.len()))
    {
        visible.push(Line::raw(truncate(&line.replace('\t', "    "), width)));
    }
    visible.truncate(height);
    let mut block = block;
    if top + height < header_rows + total_text_lines {
        block = block.title_bottom(Line::styled(" ↓ more (PgDn) ", p.warning()).right_aligned());
    }
    frame.render_widget(Paragraph::new(visible).block(block), area);
}

/// `-`/`+` lines for a call that changed a file (a written file shows as
/// all added lines).
pub fn diff_lines(app: &App, old: &str, new: &str) -> Vec<Line<'static>> {
    let p = app.palette;
    let diff = TextDiff::from_lines(old, new);
    diff.iter_all_changes()
        .take(400)
        .map(|change| {
            let text = change.value().trim_end_matches('\n').to_string();
            match change.tag() {
                ChangeTag::Delete => Line::styled(format!("- {text}"), p.diff_removed()),
                ChangeTag::Insert => Line::styled(format!("+ {text}"), p.diff_added()),
                ChangeTag::Equal => Line::styled(format!("  {text}"), p.dim()),
            }
        })
        .collect()
}
