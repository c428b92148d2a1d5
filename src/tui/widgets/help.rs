//! The `?` help overlay: every key binding, from the one keymap, then the
//! slash commands, in one box over the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::commands::COMMANDS;
use crate::tui::keymap;
use crate::tui::state::Ctx;
use crate::tui::wrap::truncate;

/// The help's rows: (keys, what they do); most important first, so a small
/// terminal shows the top of the list.
pub fn rows() -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = keymap::help_rows()
        .into_iter()
        .map(|(k, what)| (k, what.to_string()))
        .collect();
    for c in COMMANDS {
        let name = if c.args.is_empty() {
            format!("/{}", c.name)
        } else {
            format!("/{} {}", c.name, c.args)
        };
        rows.push((name, c.help.to_string()));
    }
    rows
}

/// Lines below the key rows: a blank and the note on typed text.
const FOOTER: usize = 2;

/// The widest the keys column gets.
const KEY_COLUMN: usize = 24;

/// The help's box in `area`, and how many lines it holds in all: as wide
/// as its longest row needs (a wide terminal cuts nothing), at most the
/// terminal.
pub fn area(area: Rect) -> (Rect, usize) {
    let rows = rows();
    let total = rows.len() + FOOTER;
    let key_w = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        .min(KEY_COLUMN);
    let what_w = rows
        .iter()
        .map(|(_, w)| w.chars().count())
        .max()
        .unwrap_or(0);
    let needed = u16::try_from(key_w + 2 + what_w + 2).unwrap_or(u16::MAX);
    let w = area.width.min(needed.max(76));
    let h = area
        .height
        .min(u16::try_from(total).unwrap_or(u16::MAX).saturating_add(2));
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    (rect, total)
}

/// Draws the help over `area`, from line `top` (the layout pass settled it).
pub fn render(frame: &mut Frame, ctx: &Ctx<'_>, area: Rect, top: usize) {
    let p = ctx.palette;
    let rows = rows();
    let (rect, total) = self::area(area);
    let w = rect.width;
    let key_w = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        .min(KEY_COLUMN)
        .min(usize::from(w) / 2);
    // One line per key, cut to the box (never wrapped, so a small
    // terminal still shows as many keys as it has rows).
    let inner_w = usize::from(w.saturating_sub(2));
    let what_w = inner_w.saturating_sub(key_w + 2);
    let mut lines: Vec<Line<'static>> = rows
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
    let mut block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.focus_border())
        .title(" Keys ");
    let height = usize::from(rect.height.saturating_sub(2));
    if top + height < total {
        block = block.title_bottom(
            Line::styled(
                format!(" ↓ {} more (↓ PgDn) ", total - top - height),
                p.warning(),
            )
            .right_aligned(),
        );
    }
    let lines: Vec<Line<'static>> = lines.into_iter().skip(top).take(height).collect();
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
