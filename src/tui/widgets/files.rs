//! The `@` file list that opens just above the input while a mention is
//! typed: the matching paths, best first, the chosen one highlighted.
//! Invariants: it never covers the input box, and every path is drawn
//! as one clean line (a file name is hostile text).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::text::clean_line;
use crate::tui::state::{Ctx, FilePicker};
use crate::tui::wrap::truncate;

/// Where the list goes: above `input`, inside `screen`.
pub fn area(screen: Rect, input: Rect, picker: &FilePicker) -> Rect {
    super::commands::area(screen, input, picker.matches.len())
}

pub fn render(frame: &mut Frame, picker: &FilePicker, ctx: &Ctx<'_>, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let p = ctx.palette;
    let title = if picker.truncated {
        format!(
            " Files (first {}) · Tab inserts · Esc closes ",
            crate::tui::outside::MAX_FILES
        )
    } else {
        " Files · Tab inserts · Esc closes ".to_string()
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.focus_border())
        .title(title);
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let rows = usize::from(inner.height);
    let lines: Vec<Line<'static>> = match picker.files.as_deref() {
        None => vec![Line::styled(truncate("Listing the files…", width), p.dim())],
        Some(_) if picker.matches.is_empty() => vec![Line::styled(
            truncate(
                &format!("No file matches @{}", clean_line(&picker.query)),
                width,
            ),
            p.warning(),
        )],
        Some(files) => {
            let selected = picker.selected.min(picker.matches.len() - 1);
            // Keep the chosen one in view.
            let first = (selected + 1).saturating_sub(rows);
            picker
                .matches
                .iter()
                .enumerate()
                .skip(first)
                .take(rows)
                .map(|(i, &f)| {
                    let path = files.get(f).map(String::as_str).unwrap_or_default();
                    let line = Line::raw(truncate(&clean_line(path), width));
                    super::chosen_row(line, i == selected, p)
                })
                .collect()
        }
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
