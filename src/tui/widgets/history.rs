//! Ctrl+R's prompt search, over the conversation just above the input:
//! the query, then the matching prompts best first (each on one line,
//! another project's marked), the chosen one highlighted. Invariant: it
//! never covers the input box.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::text::clean_line;
use crate::tui::state::{Ctx, HistorySearch};
use crate::tui::wrap::truncate;

/// Rows of prompts shown at most.
const MAX_ROWS: usize = 10;

/// Where the search goes: above `input`, inside `screen`.
pub fn area(screen: Rect, input: Rect, search: &HistorySearch) -> Rect {
    let rows = u16::try_from(search.matches.len().clamp(1, MAX_ROWS)).unwrap_or(1) + 3;
    let height = rows.min(input.y.saturating_sub(screen.y));
    Rect {
        x: input.x,
        y: input.y - height,
        width: screen
            .width
            .min(100)
            .min(screen.right().saturating_sub(input.x)),
        height,
    }
}

pub fn render(frame: &mut Frame, search: &HistorySearch, ctx: &Ctx<'_>, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let p = ctx.palette;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.focus_border())
        .title(" Earlier prompts · Ctrl+R/↓ next · Enter puts it in · Esc closes ");
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let rows = usize::from(inner.height).saturating_sub(1);
    let mut lines = vec![Line::from(vec![
        Span::styled("search: ", p.dim()),
        Span::styled(truncate(&search.query, width.saturating_sub(8)), p.bold()),
    ])];
    if let Some(e) = &search.error {
        lines.push(Line::styled(truncate(e, width), p.warning()));
    } else if search.matches.is_empty() {
        let text = match search.loaded {
            true => "No earlier prompt matches",
            false => "Reading earlier prompts…",
        };
        lines.push(Line::styled(truncate(text, width), p.dim()));
    }
    let selected = search.selected.min(search.matches.len().saturating_sub(1));
    // Keep the chosen one in view.
    let first = (selected + 1).saturating_sub(rows.max(1));
    for (i, &at) in search.matches.iter().enumerate().skip(first).take(rows) {
        let Some(prompt) = search.prompts.get(at) else {
            continue;
        };
        let mark = if prompt.here { "  " } else { "· " };
        let line = Line::from(vec![
            Span::styled(mark, p.dim()),
            Span::styled(
                truncate(&clean_line(&prompt.text), width.saturating_sub(2)),
                p.text(),
            ),
        ]);
        lines.push(super::chosen_row(line, i == selected, p));
    }
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
