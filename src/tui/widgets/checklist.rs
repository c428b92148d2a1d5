//! The checklist pane: the plan as the engine stores it, with markers,
//! a progress gauge, the active item's activeForm, spinner and timer, and a
//! brief highlight of what just changed. Invariant: it shows exactly the
//! items of the last `PlanUpdated`, in order; nothing is parsed from text.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{clock, pane_block, spinner};
use crate::todo::TodoStatus;
use crate::tui::state::{App, Change, Focus};
use crate::tui::style::{ACTIVE, DONE, PENDING};
use crate::tui::wrap::{truncate, wrap};

/// The one-line form: `▶ 2/5 · Running tests · 0:42`, or after a stop
/// `■ 2/5 · stopped with 3 open`.
pub fn summary_line(app: &App, now: Instant) -> Line<'static> {
    let c = &app.checklist;
    let p = app.palette;
    if c.items.is_empty() {
        return Line::styled("○ no plan yet", p.dim());
    }
    let (done, total) = (c.completed(), c.items.len());
    if let Some(open) = c.stopped_open.filter(|_| !app.running) {
        return Line::from(vec![
            Span::styled(format!("■ {done}/{total}"), p.bold()),
            Span::styled(format!(" · stopped with {open} open"), p.warning()),
        ]);
    }
    let mut spans = vec![Span::styled(format!("▶ {done}/{total}"), p.bold())];
    if let Some(item) = c.active() {
        spans.push(Span::raw(" · "));
        spans.push(Span::styled(item.active_form.clone(), p.active()));
        spans.push(Span::styled(
            format!(" · {}", clock(app.active_for(now))),
            p.dim(),
        ));
    } else if done == total {
        spans.push(Span::styled(" · all done ✔", p.success()));
    }
    Line::from(spans)
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, collapsed: bool, now: Instant) {
    let p = app.palette;
    let c = &app.checklist;
    if collapsed {
        let line = summary_line(app, now);
        let text = line
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>();
        let style = if app.focus == Focus::Checklist {
            p.selection()
        } else {
            p.text()
        };
        let line = if Line::raw(text.clone()).width() > usize::from(area.width) {
            Line::styled(truncate(&text, usize::from(area.width)), style)
        } else {
            line.patch_style(style)
        };
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let (done, total) = (c.completed(), c.items.len());
    let title = if total == 0 {
        " Plan ".to_string()
    } else {
        format!(" Plan {done}/{total} ")
    };
    let block = pane_block(app, title, Focus::Checklist);
    let inner = block.inner(area);
    let width = inner.width.max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut active_line = 0;
    if total == 0 {
        lines.extend(wrap(
            "No plan yet.",
            width,
            p.dim(),
            Span::raw(""),
            Span::raw(""),
        ));
    } else {
        lines.push(gauge(done, total, width, app));
        active_line = 0;
        for item in &c.items {
            let change = c.change_of(&item.id, now);
            let (marker, style) = match item.status {
                TodoStatus::Completed => (DONE, p.success()),
                TodoStatus::InProgress => (ACTIVE, p.active()),
                TodoStatus::Pending => (PENDING, p.dim()),
            };
            let tag = match change {
                Some(Change::Added) => " +new",
                Some(Change::Started) => " ▶started",
                Some(Change::Completed) => " ✔done",
                None => "",
            };
            let text_style = if item.status == TodoStatus::Completed {
                p.dim()
            } else {
                p.text()
            };
            let text_style = if change.is_some() {
                p.highlight()
            } else {
                text_style
            };
            if item.status == TodoStatus::InProgress {
                active_line = lines.len();
            }
            let mut wrapped = wrap(
                &format!("{}{tag}", item.content),
                width,
                text_style,
                Span::styled(format!("{marker} "), style),
                Span::raw("    "),
            );
            lines.append(&mut wrapped);
            if item.status == TodoStatus::InProgress {
                let since = app.active_for(now);
                let spin = if app.running { spinner(since) } else { "·" };
                lines.extend(wrap(
                    &format!("{} · {}", item.active_form, clock(since)),
                    width,
                    p.active(),
                    Span::styled(format!("    {spin} "), p.active()),
                    Span::raw("      "),
                ));
            }
        }
        if let Some(open) = c.stopped_open {
            lines.push(Line::styled(
                format!("■ stopped with {open} open"),
                p.warning(),
            ));
        }
    }
    let total_lines = lines.len();
    let height = usize::from(inner.height);
    // Unless the user scrolled this pane, the item in progress stays in view.
    let top = c.scroll.resolve_around(total_lines, height, active_line);
    let mut block = block;
    if top + height < total_lines {
        block = block.title_bottom(Line::styled(" ↓ more ", p.warning()).right_aligned());
    }
    let visible: Vec<Line<'static>> = lines.into_iter().skip(top).take(height).collect();
    frame.render_widget(
        Paragraph::new(visible)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

fn gauge(done: usize, total: usize, width: u16, app: &App) -> Line<'static> {
    let label = format!(" {done}/{total}");
    let bar_w = usize::from(width).saturating_sub(label.len()).min(30);
    let filled = (bar_w * done).checked_div(total).unwrap_or(0);
    Line::from(vec![
        Span::styled("━".repeat(filled), app.palette.success()),
        Span::styled("─".repeat(bar_w - filled), app.palette.dim()),
        Span::styled(label, app.palette.bold()),
    ])
}
