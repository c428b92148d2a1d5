//! The session picker's box: one row per stored session (short id, how
//! long ago it was active, plan progress, size, model, first prompt), the
//! chosen one highlighted, and a footer with the keys or, for a session of
//! another workspace, how to open it there. Everything read from disk is
//! cleaned to one line and cut to its column.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::resume::fit_tail;
use crate::session::{SessionInfo, ago, short_id, size, utc};
use crate::text::clean_line;
use crate::tui::state::{Ctx, Picker};
use crate::tui::wrap::{str_width, truncate};

/// Column widths for an inside `width` columns wide (0: not shown).
struct Columns {
    plan: usize,
    size: usize,
    model: usize,
    workspace: usize,
    prompt: usize,
}

const ID_W: usize = 8;
const AGO_W: usize = 10;

impl Columns {
    fn new(width: usize, all: bool) -> Self {
        let (plan, size) = if width >= 60 { (5, 6) } else { (0, 0) };
        let model = match width {
            100.. => 22,
            70.. => 14,
            _ => 0,
        };
        let workspace = match (all, width) {
            (true, 110..) => 24,
            (true, 90..) => 16,
            _ => 0,
        };
        // Marker, id, current mark, then each shown column after two spaces.
        let used = 2
            + ID_W
            + 1
            + [AGO_W, plan, size, model, workspace]
                .iter()
                .filter(|w| **w > 0)
                .map(|w| w + 2)
                .sum::<usize>();
        Self {
            plan,
            size,
            model,
            workspace,
            prompt: width.saturating_sub(used + 2),
        }
    }

    /// The cells after the id, each padded to its width.
    fn cells(&self, cells: [&str; 6]) -> String {
        let widths = [
            AGO_W,
            self.plan,
            self.size,
            self.model,
            self.workspace,
            self.prompt,
        ];
        let mut out = String::new();
        for (text, w) in cells.iter().zip(widths) {
            if w > 0 {
                out.push_str("  ");
                out.push_str(&pad(text, w));
            }
        }
        out
    }
}

/// `text` as one clean line cut or padded to exactly `width` columns
/// (wide characters count two).
fn pad(text: &str, width: usize) -> String {
    let cut = truncate(text, width);
    let fill = width.saturating_sub(str_width(&cut));
    format!("{cut}{}", " ".repeat(fill))
}

/// The picker's box in `screen`: wide, centred, as tall as its rows need.
pub fn area(screen: Rect, picker: &Picker) -> Rect {
    let w = if screen.width < 90 {
        screen.width
    } else {
        (screen.width - 4).min(124)
    };
    // Borders, column titles, rows, two footer lines.
    let rows = picker.shown().len().max(1);
    let wanted = u16::try_from(rows + 5).unwrap_or(u16::MAX).max(10);
    let room = if screen.height > 12 {
        screen.height - 2
    } else {
        screen.height
    };
    let h = wanted.min(room);
    Rect {
        x: screen.x + (screen.width - w) / 2,
        y: screen.y + (screen.height - h) / 2,
        width: w,
        height: h,
    }
}

pub fn render(frame: &mut Frame, picker: &Picker, ctx: &Ctx<'_>, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let p = ctx.palette;
    let shown = picker.shown();
    let title = if picker.all {
        format!(" Sessions of all workspaces ({}) ", shown.len())
    } else {
        format!(" Sessions of this workspace ({}) ", shown.len())
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.focus_border())
        .title(truncate(&title, usize::from(area.width.saturating_sub(2))));
    let inner = block.inner(area);
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    // Small boxes keep the rows first, then the keys, then the titles.
    let footer = match height {
        0 | 1 => 0,
        2 | 3 => 1,
        _ => 2,
    };
    let header = usize::from(height >= 3);
    let rows = height - footer - header;
    let cols = Columns::new(width, picker.all);
    let mut lines: Vec<Line<'static>> = Vec::with_capacity(height);
    if header == 1 {
        let titles = format!(
            "  {:<ID_W$} {}",
            "ID",
            cols.cells([
                "ACTIVE",
                "PLAN",
                "SIZE",
                "MODEL",
                "WORKSPACE",
                "FIRST PROMPT"
            ])
        );
        lines.push(Line::styled(truncate(&titles, width), p.dim()));
    }
    let selected = picker.selected.min(shown.len().saturating_sub(1));
    if shown.is_empty() {
        lines.push(Line::styled(
            truncate(&empty_text(picker), width),
            p.warning(),
        ));
    } else {
        // Keep the chosen one in view.
        let first = (selected + 1).saturating_sub(rows);
        for (i, s) in shown.iter().enumerate().skip(first).take(rows) {
            let line = row(picker, s, &cols, i == selected, width);
            lines.push(if i == selected {
                line.patch_style(p.selection())
            } else if !picker.here(s) {
                line.patch_style(p.dim())
            } else {
                line
            });
        }
    }
    // The footer sits at the bottom of the box.
    let body = header + rows;
    lines.truncate(body);
    lines.resize(body, Line::raw(""));
    let chosen = shown.get(selected).copied();
    let (note, keys) = footer_lines(picker, chosen, width);
    match (footer, note) {
        (0, _) => {}
        (1, Some((text, true))) => lines.push(Line::styled(text, p.warning())),
        (1, _) => lines.push(Line::from(Span::styled(keys, p.dim()))),
        (_, note) => {
            lines.push(note.map_or_else(
                || Line::raw(""),
                |(text, foreign)| Line::styled(text, if foreign { p.warning() } else { p.dim() }),
            ));
            lines.push(Line::from(Span::styled(keys, p.dim())));
        }
    }
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// One session's row.
fn row(
    picker: &Picker,
    s: &SessionInfo,
    cols: &Columns,
    selected: bool,
    width: usize,
) -> Line<'static> {
    let c = &s.card;
    let plan = if c.plan_total == 0 {
        "–".to_string()
    } else {
        format!("{}/{}", c.plan_done, c.plan_total)
    };
    let workspace = fit_tail(&clean_line(&c.workspace), cols.workspace);
    let prompt = c.first_prompt.as_deref().unwrap_or("(no prompt)");
    let current = if picker.current.as_deref() == Some(c.id.as_str()) {
        "●"
    } else {
        " "
    };
    let text = format!(
        "{}{}{current}{}",
        if selected { "▶ " } else { "  " },
        pad(short_id(&c.id), ID_W),
        cols.cells([
            &ago(c.updated_ms, picker.now_ms),
            &plan,
            &size(s.size),
            &c.model,
            &workspace,
            prompt,
        ])
    );
    Line::raw(truncate(&text, width))
}

/// What an empty list says.
fn empty_text(picker: &Picker) -> String {
    if let Some(error) = &picker.error {
        return error.clone();
    }
    if !picker.filter.trim().is_empty() {
        return format!(
            "No session matches “{}” (Backspace erases).",
            clean_line(&picker.filter)
        );
    }
    if picker.all || picker.sessions.is_empty() {
        return if picker.all {
            "No sessions yet.".into()
        } else {
            "No sessions of this workspace yet.".into()
        };
    }
    format!(
        "No sessions of this workspace yet. Tab shows all workspaces ({}).",
        picker.sessions.len()
    )
}

/// The footer: a note on the chosen session (`true`: it cannot be opened
/// here) and the keys.
fn footer_lines(
    picker: &Picker,
    chosen: Option<&SessionInfo>,
    width: usize,
) -> (Option<(String, bool)>, String) {
    let note = chosen.map(|s| {
        let c = &s.card;
        if picker.here(s) {
            let text = format!("Started {} · {}", utc(c.started_ms), clean_line(&c.model));
            (truncate(&text, width), false)
        } else {
            let text = format!(
                "Other workspace: quit and run `waypoint -r {}` in ",
                short_id(&c.id)
            );
            let room = width.saturating_sub(text.chars().count() + 1).max(10);
            let text = format!("{text}{}.", fit_tail(&clean_line(&c.workspace), room));
            (truncate(&text, width), true)
        }
    });
    let scope = if picker.all {
        "Tab this workspace"
    } else {
        "Tab all workspaces"
    };
    let filter = if picker.filter.is_empty() {
        "type to filter".to_string()
    } else {
        format!("filter: {}▏", clean_line(&picker.filter))
    };
    let keys = format!("↑↓ choose · Enter open · {scope} · Esc close · {filter}");
    (note, truncate(&keys, width))
}
