//! The conversation pane: user prompts, the model's Markdown, notices.
//! Invariant: only visible lines are copied into the frame; an entry is
//! wrapped once per width (in the layout pass, before rendering), and only
//! on-screen entries keep their lines and highlighted code (the others keep
//! just their height; the last few their code too), so memory follows the
//! viewport. A long code block is coloured over a few frames (a bounded
//! number of lines each), never in one long frame; a running tool cell's
//! time is drawn at each frame.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{clock, inner, pane_block, spinner};
use crate::tui::markdown;
use crate::tui::state::{
    ConvEntry, Conversation, Ctx, EntryKind, Focus, NoticeKind, TraceStatus, Wrapped,
};
use crate::tui::style::Palette;
use crate::tui::wrap::{str_width, truncate, wrap};

/// Entries at the end whose lines are kept while measuring heights.
const KEEP_TAIL: usize = 8;

/// What the layout pass settled for one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConvLayout {
    /// The first line shown.
    pub top: usize,
    /// All lines, blank separators included.
    pub total: usize,
    /// The first entry on screen.
    pub first: usize,
}

/// Lines of reasoning (or of a summary) shown while folded (the latest ones).
const FOLDED_REASONING: usize = 3;

/// Dimmed text after `mark`; unless `whole`, folded to its latest lines
/// under a line saying how many are hidden (`what` names it there).
fn folded(
    entry: &ConvEntry,
    width: u16,
    palette: Palette,
    whole: bool,
    mark: &str,
    what: &str,
) -> Vec<Line<'static>> {
    let lines = wrap(
        entry.text().trim(),
        width,
        palette.dim(),
        Span::styled(format!("{mark} "), palette.dim()),
        Span::raw("  "),
    );
    if whole || lines.len() <= FOLDED_REASONING + 1 {
        return lines;
    }
    // Folded: a line saying so, then the latest lines.
    let hidden = lines.len() - FOLDED_REASONING;
    let mut folded = vec![Line::styled(
        truncate(
            &format!("{mark} {what} · {hidden} earlier lines (Ctrl+O shows them)"),
            usize::from(width),
        ),
        palette.dim(),
    )];
    folded.extend(lines.into_iter().skip(hidden));
    folded
}

/// The entry's lines at `width`; a reply's code is highlighted only when
/// `highlight` (its lines are kept: measuring alone needs no colours).
fn wrap_entry(
    entry: &mut ConvEntry,
    width: u16,
    palette: Palette,
    show_reasoning: bool,
    highlight: bool,
) -> Vec<Line<'static>> {
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
        EntryKind::Assistant if highlight => {
            let (text, code) = entry.text_and_code();
            markdown::render_highlighted(text, width, palette, code)
        }
        EntryKind::Assistant => markdown::render(entry.text(), width, palette),
        EntryKind::Reasoning => folded(entry, width, palette, show_reasoning, "∴", "thinking"),
        EntryKind::Summary => folded(entry, width, palette, show_reasoning, "≡", "summary"),
        EntryKind::Divider => {
            // The text in the middle of a line across the pane.
            let text = format!(" {} ", entry.text());
            let width = usize::from(width);
            let rule = width.saturating_sub(str_width(&text));
            let left = rule / 2;
            vec![Line::styled(
                truncate(
                    &format!("{}{text}{}", "─".repeat(left), "─".repeat(rule - left)),
                    width,
                ),
                palette.dim(),
            )]
        }
        EntryKind::Tool(status) => {
            let mut lines = vec![tool_cell(entry, status, width, palette, None)];
            // The output's last lines, under the call, one screen line each.
            let room = usize::from(width).saturating_sub(TAIL_LEAD.len());
            for line in &entry.tail {
                lines.push(Line::from(vec![
                    Span::styled(TAIL_LEAD, palette.dim()),
                    Span::styled(
                        truncate(&crate::text::clean_line(line), room),
                        palette.dim(),
                    ),
                ]));
            }
            lines
        }
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

/// What a tool cell's output lines start with (under the status symbol).
const TAIL_LEAD: &str = "    │ ";

/// A tool call's one line: status symbol, tool and summary; while it runs,
/// a spinner and its running time (drawn from `now`, so never cached).
fn tool_cell(
    entry: &ConvEntry,
    status: TraceStatus,
    width: u16,
    palette: Palette,
    now: Option<Instant>,
) -> Line<'static> {
    let elapsed = now
        .zip(entry.started)
        .map(|(now, started)| now.saturating_duration_since(started));
    let (mark, style) = match (status, elapsed) {
        (TraceStatus::Running, Some(d)) => (spinner(d), palette.active()),
        (TraceStatus::Running, None) => ("◌", palette.active()),
        (TraceStatus::Ok, _) => ("✔", palette.success()),
        (TraceStatus::Error, _) => ("✘", palette.error()),
        (TraceStatus::Interrupted, _) => ("■", palette.warning()),
    };
    let time = match (status, elapsed) {
        (TraceStatus::Running, Some(d)) => format!(" · {}", running_time(d)),
        _ => String::new(),
    };
    let room = usize::from(width).saturating_sub(4 + str_width(&time));
    let text = truncate(entry.text(), room);
    let mut spans = vec![
        Span::styled(format!("  {mark} "), style),
        Span::styled(text, palette.dim()),
    ];
    if !time.is_empty() && room > 0 {
        spans.push(Span::styled(time, style));
    }
    Line::from(spans)
}

/// Whole seconds (`0s`, `42s`), then `m:ss`: a running call's time.
fn running_time(d: Duration) -> String {
    if d.as_secs() < 60 {
        format!("{}s", d.as_secs())
    } else {
        clock(d)
    }
}

/// The entry's height at `width`, wrapping it if needed. The lines are kept
/// only when `keep` (the last entries, on screen while following the output),
/// so wrapping a long history never holds all of it at once.
fn measure(
    entry: &mut ConvEntry,
    width: u16,
    palette: Palette,
    keep: bool,
    show_reasoning: bool,
) -> usize {
    if let Some(w) = &entry.cache
        && w.width == width
    {
        return w.height;
    }
    let lines = wrap_entry(entry, width, palette, show_reasoning, keep);
    let height = lines.len();
    entry.cache = Some(Wrapped {
        width,
        height,
        lines: keep.then_some(lines),
    });
    height
}

/// Makes sure the entry holds its lines at `width`.
fn ensure_lines(entry: &mut ConvEntry, width: u16, palette: Palette, show_reasoning: bool) {
    if entry
        .cache
        .as_ref()
        .is_some_and(|w| w.width == width && w.lines.is_some())
    {
        return;
    }
    let lines = wrap_entry(entry, width, palette, show_reasoning, true);
    entry.cache = Some(Wrapped {
        width,
        height: lines.len(),
        lines: Some(lines),
    });
}

/// The blank line after entry `i`: none after the last, nor between two
/// tool cells (a run of calls stays compact).
fn gap(entries: &[ConvEntry], i: usize) -> usize {
    match (entries.get(i), entries.get(i + 1)) {
        (Some(a), Some(b)) => usize::from(!matches!(
            (a.kind, b.kind),
            (EntryKind::Tool(_), EntryKind::Tool(_))
        )),
        _ => 0,
    }
}

fn text_width(area: Rect) -> (u16, usize) {
    let inner = inner(area);
    (inner.width.max(1), usize::from(inner.height))
}

/// Wraps what is needed, resolves the scroll position, and lets off-screen
/// entries drop their lines. Only the entries changed since the last frame
/// are measured again (their starts kept in [`LayoutIndex`]), and only the
/// entries on screen now or at the last frame are visited.
///
/// [`LayoutIndex`]: crate::tui::state::LayoutIndex
pub fn layout(conv: &mut Conversation, palette: Palette, area: Rect) -> ConvLayout {
    let (width, height) = text_width(area);
    let show_reasoning = conv.show_reasoning;
    let count = conv.entries.len();
    let tail_from = count.saturating_sub(KEEP_TAIL);
    let index = &mut conv.index;
    if index.width != width {
        index.width = width;
        index.dirty_from = 0;
    }
    let from = index
        .dirty_from
        .min(count)
        .min(index.starts.len().saturating_sub(1));
    index.starts.truncate(from + 1);
    if index.starts.is_empty() {
        index.starts.push(0);
    }
    for i in from..count {
        let h = measure(
            &mut conv.entries[i],
            width,
            palette,
            i >= tail_from,
            show_reasoning,
        );
        let start = index.starts[i] + h + gap(&conv.entries, i);
        index.starts.push(start);
    }
    index.dirty_from = count;
    let total = index.starts[count];
    let top = conv.scroll.resolve(total, height);
    // On screen: the entries that end after `top` and start before its end.
    let first = index.starts[1..].partition_point(|&s| s <= top);
    let mut end = first;
    while end < count && index.starts[end] < top + height {
        end += 1;
    }
    let shown = first..end;
    // What may hold lines or code and is off screen now: what was shown,
    // the last entries (measured with their lines), and those that just
    // stopped being the last.
    let before = std::mem::replace(&mut index.shown, shown.clone());
    let was_tail = std::mem::replace(&mut index.tail_from, tail_from);
    let release = before
        .chain(from.max(tail_from)..count)
        .chain(was_tail.min(tail_from)..tail_from);
    for i in release.filter(|i| !shown.contains(i)) {
        let Some(entry) = conv.entries.get_mut(i) else {
            continue;
        };
        if let Some(w) = entry.cache.as_mut() {
            w.lines = None;
        }
        // The last entries keep their code (a reply streaming below the
        // screen is measured with its code, which then only grows).
        if i >= tail_from {
            entry.code.settle();
        } else {
            entry.code.clear();
        }
    }
    conv.highlighting = false;
    for entry in &mut conv.entries[shown] {
        // Code left plain last frame (out of budget): its lines are made
        // again (the height stays: colours never change it).
        if entry.code.pending()
            && let Some(w) = entry.cache.as_mut()
        {
            w.lines = None;
        }
        ensure_lines(entry, width, palette, show_reasoning);
        conv.highlighting |= entry.code.pending();
    }
    ConvLayout { top, total, first }
}

/// A line of `entry`, marked when it is a tool cell of the plan item
/// selected in the plan pane (the cached lines stay as wrapped).
fn marked(
    line: &Line<'static>,
    entry: &ConvEntry,
    conv: &Conversation,
    ctx: &Ctx<'_>,
) -> Line<'static> {
    match entry.tool {
        Some(serial) if conv.marked_tools.contains(&serial) => {
            line.clone().patch_style(ctx.palette.selection())
        }
        _ => line.clone(),
    }
}

pub fn render(
    frame: &mut Frame,
    conv: &Conversation,
    layout: ConvLayout,
    ctx: &Ctx<'_>,
    area: Rect,
) {
    let block = pane_block(ctx, " Conversation ", Focus::Conversation);
    let (width, height) = text_width(area);
    let ConvLayout { top, total, first } = layout;
    let mut visible = Vec::with_capacity(height);
    let mut line_no = conv.index.starts.get(first).copied().unwrap_or(0);
    for (i, entry) in conv.entries.iter().enumerate().skip(first) {
        if visible.len() >= height {
            break;
        }
        let gap = gap(&conv.entries, i);
        let h = entry.cache.as_ref().map_or(0, |w| w.height);
        if line_no + h + gap <= top {
            line_no += h + gap;
            continue;
        }
        // The layout pass wrapped every entry on screen at this width.
        let lines = entry
            .cache
            .as_ref()
            .filter(|w| w.width == width)
            .and_then(|w| w.lines.as_deref())
            .unwrap_or_default();
        for (k, line) in lines.iter().enumerate() {
            if line_no >= top && visible.len() < height {
                let line = match entry.kind {
                    // A running call's time moves: its first line is drawn
                    // now, not cached.
                    EntryKind::Tool(status @ TraceStatus::Running) if k == 0 => {
                        tool_cell(entry, status, width, ctx.palette, Some(ctx.now))
                    }
                    _ => line.clone(),
                };
                visible.push(marked(&line, entry, conv, ctx));
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
        block = block.title_bottom(
            Line::styled(
                format!(" ↓ {} more lines (End) ", total - top - height),
                ctx.palette.warning(),
            )
            .right_aligned(),
        );
    }
    if conv.entries.is_empty() {
        // The instructions files the model reads, named in one line.
        let instructions = if ctx.instructions.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = ctx
                .instructions
                .iter()
                .map(|(path, _)| crate::tui::commands::instructions_path(path, ctx.workspace))
                .collect();
            format!(
                "\nProject instructions: {} (/context for more)",
                names.join(", ")
            )
        };
        visible = wrap(
            &format!(
                "Waypoint · {} · {}{instructions}\n\nType a task below and press Enter. The agent keeps a live plan on the right; press ? for keys.",
                ctx.model, ctx.workspace
            ),
            width,
            ctx.palette.dim(),
            Span::raw(""),
            Span::raw(""),
        );
    }
    frame.render_widget(Paragraph::new(visible).block(block), area);
}
