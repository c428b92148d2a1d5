//! The `?` help overlay: every key, in one box over the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::state::App;
use crate::tui::wrap::truncate;

/// Most important first: a small terminal shows the top of the list.
pub const KEYS: &[(&str, &str)] = &[
    ("Esc", "interrupt now: cancel reply, kill tool"),
    ("Enter", "send; empty after a stop: resume"),
    ("Ctrl+R", "resume where it stopped, plan intact"),
    ("Ctrl+C", "clear the input; twice quits"),
    ("Tab / Shift+Tab", "focus input, conversation, plan, tools"),
    ("Alt/Shift+Enter", "new line (also Ctrl+J)"),
    ("PgUp/PgDn j k", "scroll the focused pane (also wheel)"),
    ("Up / Down", "input history"),
    ("Home / End", "top / bottom (End follows new output)"),
    ("Enter (tools)", "expand or fold the selected output"),
    ("Ctrl+T", "collapse the plan to one line"),
    ("Ctrl+L", "redraw the screen"),
    ("? / F1", "this help; any key closes it"),
];

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let p = app.palette;
    let w = area.width.min(64);
    let h = area
        .height
        .min(u16::try_from(KEYS.len()).unwrap_or(u16::MAX) + 4);
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let key_w = KEYS
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        .min(usize::from(w) / 2);
    // One line per key, cut to the box (never wrapped, so a small
    // terminal still shows as many keys as it has rows).
    let inner_w = usize::from(w.saturating_sub(2));
    let what_w = inner_w.saturating_sub(key_w + 2);
    let mut lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(
                    truncate(&format!("{:<key_w$}  ", truncate(k, key_w)), inner_w),
                    p.bold(),
                ),
                Span::raw(truncate(what, what_w)),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        truncate(
            "Typed text is never lost: interrupts and resizes keep it.",
            inner_w,
        ),
        p.dim(),
    ));
    frame.render_widget(Clear, rect);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.focus_border())
        .title(" Keys ");
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
