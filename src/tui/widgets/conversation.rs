//! The conversation pane: user prompts, the model's Markdown, notices.
//! Invariant: only visible lines are copied into the frame; an entry's
//! wrapped lines are computed once per width and reused.

use std::rc::Rc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane_block;
use crate::tui::markdown;
use crate::tui::state::{App, ConvEntry, EntryKind, Focus, NoticeKind};
use crate::tui::style::Palette;
use crate::tui::wrap::wrap;

fn entry_lines(entry: &ConvEntry, width: u16, palette: Palette) -> Rc<Vec<Line<'static>>> {
    if let Some((w, lines)) = entry.cache.borrow().as_ref()
        && *w == width
    {
        return lines.clone();
    }
    let lines = match entry.kind {
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
    };
    let lines = Rc::new(lines);
    entry.cache.replace(Some((width, lines.clone())));
    lines
}

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let more_below_title;
    let block = pane_block(app, " Conversation ", Focus::Conversation);
    let inner = block.inner(area);
    let width = inner.width.max(1);
    let height = usize::from(inner.height);
    // Entry heights, with one blank line between entries.
    let all: Vec<Rc<Vec<Line<'static>>>> = app
        .conversation
        .iter()
        .map(|e| entry_lines(e, width, app.palette))
        .collect();
    let total: usize = all.iter().map(|l| l.len()).sum::<usize>() + all.len().saturating_sub(1);
    let top = app.conv_scroll.resolve(total, height);
    let mut visible = Vec::with_capacity(height);
    let mut line_no = 0;
    'entries: for (i, lines) in all.iter().enumerate() {
        let block_len = lines.len() + usize::from(i + 1 < all.len());
        if line_no + block_len <= top {
            line_no += block_len;
            continue;
        }
        for line in lines.iter() {
            if line_no >= top {
                visible.push(line.clone());
            }
            line_no += 1;
            if visible.len() >= height {
                break 'entries;
            }
        }
        if i + 1 < all.len() {
            if line_no >= top {
                visible.push(Line::raw(""));
            }
            line_no += 1;
        }
        if visible.len() >= height {
            break;
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
