//! The conversation pane: user prompts, the model's Markdown, notices.
//! Invariant: only visible lines are copied into the frame; an entry is
//! wrapped once per width, and only on-screen entries keep their lines
//! (the others keep just their height), so memory follows the viewport.

use std::rc::Rc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane_block;
use crate::tui::markdown;
use crate::tui::state::{App, ConvEntry, EntryKind, Focus, NoticeKind, Wrapped};
use crate::tui::style::Palette;
use crate::tui::wrap::wrap;

/// Entries at the end whose lines are kept while measuring heights.
const KEEP_TAIL: usize = 8;

fn wrap_entry(entry: &ConvEntry, width: u16, palette: Palette) -> Vec<Line<'static>> {
    match entry.kind {
        EntryKind::User => wrap(
            entry.text(),
            width,
            palette.user(),
            Span::styled("› ", palette.user()),
            Span::raw("  "),
        ),
        EntryKind::Queued => wrap(
            entry.text(),
            width,
            palette.dim(),
            Span::styled("⏳ queued › ", palette.dim()),
            Span::raw("  "),
        ),
        EntryKind::Assistant => markdown::render(entry.text(), width, palette),
        EntryKind::Notice(kind) => {
            let (mark, style) = match kind {
                NoticeKind::Info => ("• ", palette.dim()),
                NoticeKind::Warning => ("! ", palette.warning()),
                NoticeKind::Error => ("✘ ", palette.error()),
            };
            wrap(
                entry.text(),
                width,
                style,
                Span::styled(mark, style),
                Span::raw("  "),
            )
        }
    }
}

/// The entry's height at `width`, wrapping it if needed. The lines are kept
/// only when `keep` (the last entries, on screen while following the output),
/// so wrapping a long history never holds all of it at once.
fn entry_height(entry: &ConvEntry, width: u16, palette: Palette, keep: bool) -> usize {
    if let Some(w) = entry.cache.borrow().as_ref()
        && w.width == width
    {
        return w.height;
    }
    let lines = wrap_entry(entry, width, palette);
    let height = lines.len();
    let lines = keep.then(|| Rc::new(lines));
    entry.cache.replace(Some(Wrapped {
        width,
        height,
        lines,
    }));
    height
}

/// The entry's lines at `width`, wrapping it again if they were let go.
fn entry_lines(entry: &ConvEntry, width: u16, palette: Palette) -> Rc<Vec<Line<'static>>> {
    if let Some(w) = entry.cache.borrow().as_ref()
        && w.width == width
        && let Some(lines) = &w.lines
    {
        return lines.clone();
    }
    let lines = Rc::new(wrap_entry(entry, width, palette));
    entry.cache.replace(Some(Wrapped {
        width,
        height: lines.len(),
        lines: Some(lines.clone()),
    }));
    lines
}

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let more_below_title;
    let block = pane_block(app, " Conversation ", Focus::Conversation);
    let inner = block.inner(area);
    let width = inner.width.max(1);
    let height = usize::from(inner.height);
    // Entry heights, with one blank line between entries.
    let count = app.conversation.len();
    let tail_from = count.saturating_sub(KEEP_TAIL);
    let heights: Vec<usize> = app
        .conversation
        .iter()
        .enumerate()
        .map(|(i, e)| entry_height(e, width, app.palette, i >= tail_from))
        .collect();
    let total: usize = heights.iter().sum::<usize>() + count.saturating_sub(1);
    let top = app.conv_scroll.resolve(total, height);
    let mut visible = Vec::with_capacity(height);
    let mut line_no = 0;
    for (i, (entry, &h)) in app.conversation.iter().zip(&heights).enumerate() {
        let gap = usize::from(i + 1 < count);
        let on_screen = line_no + h + gap > top && line_no < top + height;
        if !on_screen {
            // Off screen: keep the height, let the lines go.
            if let Some(w) = entry.cache.borrow_mut().as_mut() {
                w.lines = None;
            }
            line_no += h + gap;
            continue;
        }
        for line in entry_lines(entry, width, app.palette).iter() {
            if line_no >= top && visible.len() < height {
                visible.push(line.clone());
            }
            line_no += 1;
        }
        if gap == 1 {
            if line_no >= top && visible.len() < height {
                visible.push(Line::raw(""));
            }
            line_no += 1;
        }
    }
    let mut block = block;
    if top + height < total {
        more_below_title = format!(" ↓ {} more lines (End) ", total - top - height);
        block = block
            .title_bottom(Line::styled(more_below_title, app.palette.warning()).right_aligned());
    }
    if app.conversation.is_empty() {
        visible = wrap(
            &format!(
                "Waypoint · {} · {}\n\nType a task below and press Enter. The agent keeps a live plan on the right; press ? for keys.",
                app.model, app.workspace
            ),
            width,
            app.palette.dim(),
            Span::raw(""),
            Span::raw(""),
        );
    }
    frame.render_widget(Paragraph::new(visible).block(block), area);
}
