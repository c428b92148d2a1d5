//! The slash-command list that opens over the conversation, just above the
//! input, while a `/word` is typed: matching commands, best first, the
//! chosen one highlighted. Invariant: it never covers the input box.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::popup::Entry;
use crate::tui::state::Ctx;
use crate::tui::wrap::truncate;

/// Rows of commands shown at most.
const MAX_ROWS: usize = 8;

/// Where the list goes: above `input`, inside `screen`.
pub fn area(screen: Rect, input: Rect, found: usize) -> Rect {
    let rows = u16::try_from(found.clamp(1, MAX_ROWS)).unwrap_or(1) + 2;
    let height = rows.min(input.y.saturating_sub(screen.y));
    let width = screen.width.min(72);
    Rect {
        x: input.x,
        y: input.y - height,
        width: width.min(screen.right().saturating_sub(input.x)),
        height,
    }
}

pub fn render(
    frame: &mut Frame,
    found: &[Entry<'_>],
    selected: usize,
    filter: &str,
    ctx: &Ctx<'_>,
    area: Rect,
) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let p = ctx.palette;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.focus_border())
        .title(" Commands · Tab completes · Enter runs · Esc closes ");
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let rows = usize::from(inner.height);
    let lines: Vec<Line<'static>> = if found.is_empty() {
        vec![Line::styled(
            truncate(&format!("No command matches /{filter}"), width),
            p.warning(),
        )]
    } else {
        let selected = selected.min(found.len() - 1);
        // Keep the chosen one in view.
        let first = (selected + 1).saturating_sub(rows);
        let name_w = found
            .iter()
            .map(|c| c.name.len() + c.args.len() + 2)
            .max()
            .unwrap_or(0);
        found
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, c)| {
                let name = format!("/{} {}", c.name, c.args);
                let help_w = width.saturating_sub(name_w + 2);
                let line = Line::from(vec![
                    Span::styled(truncate(&format!("{name:<name_w$}  "), width), p.bold()),
                    Span::styled(truncate(c.help, help_w), p.dim()),
                ]);
                super::chosen_row(line, i == selected, p)
            })
            .collect()
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
