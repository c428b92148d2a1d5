//! The approval prompt: a box over the middle of the screen showing exactly
//! what a tool call will do before it runs: a command in full (every line,
//! wrapped) and the folder it runs in, or a file change as a numbered
//! diff; then the keys, with what "always" covers. Invariant: every string
//! from the model is cleaned before it is drawn, and nothing of a command
//! is cut off (a body taller than the box scrolls).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::diff::{clean_for_lines, hard_wrap, numbered_lines};
use crate::events::{ApprovalReason, ToolDetail};
use crate::text::clean_line;
use crate::tui::state::{ApprovalRequest, Approvals, BodyCache, Ctx};
use crate::tui::style::Palette;
use crate::tui::wrap::wrap;

/// The widest the box gets.
const MAX_WIDTH: u16 = 110;

/// What the layout pass settled for the prompt.
#[derive(Debug, Default)]
pub struct ApprovalLayout {
    pub rect: Rect,
    pub title: String,
    /// The body lines in view.
    pub visible: Vec<Line<'static>>,
    /// Body lines in all.
    pub total: usize,
    pub footer: Vec<Line<'static>>,
    pub top: usize,
}

impl ApprovalLayout {
    fn body_height(&self) -> usize {
        usize::from(self.rect.height.saturating_sub(2)).saturating_sub(self.footer.len())
    }
}

/// Builds the prompt for the request on screen (its body once per request
/// and width) and settles its scroll.
pub fn layout(approvals: &mut Approvals, p: Palette, screen: Rect) -> Option<ApprovalLayout> {
    // The queue's field, not `current()`: the cache is written meanwhile.
    let request = approvals.queue.front()?;
    let width = screen.width.min(MAX_WIDTH).saturating_sub(2).max(1);
    let inner_w = width.saturating_sub(2).max(1);
    let fresh = approvals
        .cache
        .as_ref()
        .is_some_and(|c| c.id == request.id && c.width == inner_w);
    if !fresh {
        approvals.cache = Some(BodyCache {
            id: request.id.clone(),
            width: inner_w,
            lines: body(request, p, inner_w),
            always: request.always_covers(),
        });
    }
    let cache = approvals.cache.as_ref()?;
    let footer = footer(
        request,
        &cache.always,
        approvals.reason.as_deref(),
        p,
        inner_w,
    );
    let total = cache.lines.len();
    let wanted = total + footer.len() + 2;
    let height = screen
        .height
        .saturating_sub(2)
        .max(screen.height.min(3))
        .min(u16::try_from(wanted).unwrap_or(u16::MAX));
    let rect = Rect {
        x: screen.x + (screen.width - width.min(screen.width)) / 2,
        y: screen.y + (screen.height - height) / 2,
        width: width.min(screen.width),
        height,
    };
    let more = approvals.queue.len() - 1;
    let mut title = format!(" Approve {}? ", clean_line(&request.name));
    if more > 0 {
        title.push_str(&format!("· {more} more waiting "));
    }
    let mut out = ApprovalLayout {
        rect,
        title,
        visible: Vec::new(),
        total,
        footer,
        top: 0,
    };
    let height = out.body_height();
    out.top = approvals.scroll.resolve(total, height);
    out.visible = approvals
        .cache
        .as_ref()
        .map(|c| c.lines.iter().skip(out.top).take(height).cloned().collect())
        .unwrap_or_default();
    Some(out)
}

/// The question, then the command or the change.
fn body(request: &ApprovalRequest, p: Palette, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let question = match (&request.reason, &request.summary.detail, &request.command) {
        (ApprovalReason::SandboxBlocked { what }, _, _) => format!(
            "The sandbox stopped this command: {}. Run it outside the sandbox?",
            clean_line(what)
        ),
        (ApprovalReason::Tool { question }, _, _) => format!(
            "{} asks: {}",
            clean_line(&request.name),
            clean_line(question)
        ),
        (ApprovalReason::Unfollowable { why }, _, _) => format!(
            "Deny rules are configured, and this command cannot be checked against them: {}. Run it?",
            clean_line(why)
        ),
        (ApprovalReason::Rule { rule }, _, _) => format!(
            "The rule {} asks before {} runs. Run it?",
            clean_line(rule),
            clean_line(&request.name)
        ),
        (_, _, Some(_)) => "Run this command?".to_string(),
        (_, ToolDetail::Diff { path, old, .. }, _) if old.is_empty() => {
            format!("Write {}?", clean_line(path))
        }
        (_, ToolDetail::Diff { path, first: 1, .. }, _) if request.name == "write_file" => {
            format!("Overwrite {}?", clean_line(path))
        }
        (_, ToolDetail::Diff { path, .. }, _) => format!("Change {}?", clean_line(path)),
        (_, ToolDetail::Call { server, tool, .. }, _) => format!(
            "Run the tool {} of the MCP server {} with these arguments?",
            clean_line(tool),
            clean_line(server)
        ),
        _ => format!(
            "Run {} {}?",
            clean_line(&request.name),
            clean_line(&request.summary.line)
        ),
    };
    if let Some(task) = &request.by {
        lines.extend(wrap(
            &format!("For the subagent {}:", clean_line(task)),
            width,
            p.dim(),
            Span::raw(""),
            Span::raw(""),
        ));
    }
    lines.extend(wrap(
        &question,
        width,
        p.bold(),
        Span::raw(""),
        Span::raw(""),
    ));
    lines.push(Line::raw(""));
    if let Some(command) = &request.command {
        let command = clean_for_lines(command);
        let mut first = true;
        for raw in command.split('\n') {
            for piece in hard_wrap(raw, usize::from(width.saturating_sub(2)).max(1)) {
                let lead = if std::mem::take(&mut first) {
                    "$ "
                } else {
                    "  "
                };
                lines.push(Line::from(vec![
                    Span::styled(lead, p.dim()),
                    Span::styled(piece, p.code()),
                ]));
            }
        }
        lines.push(Line::raw(""));
        lines.extend(wrap(
            &request.cwd,
            width,
            p.dim(),
            Span::styled("in ", p.dim()),
            Span::raw("   "),
        ));
    } else if let ToolDetail::Diff {
        old, new, first, ..
    } = &request.summary.detail
    {
        // Numbered from where the change is in the file (1 when unknown).
        lines.extend(numbered_lines(p, old, new, (*first).max(1), width));
    } else if let ToolDetail::Call { args, .. } = &request.summary.detail {
        for raw in clean_for_lines(args).split('\n') {
            for piece in hard_wrap(raw, usize::from(width).max(1)) {
                lines.push(Line::styled(piece, p.code()));
            }
        }
    }
    lines
}

/// The keys, or the reason being typed after `n`.
fn footer(
    request: &ApprovalRequest,
    always: &str,
    reason: Option<&str>,
    p: Palette,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("─".repeat(usize::from(width)), p.dim())];
    match reason {
        Some(reason) => {
            lines.extend(wrap(
                &format!("{}▏", clean_line(reason)),
                width,
                p.text(),
                Span::styled("Refusing. Reason (optional): ", p.bold()),
                Span::raw(""),
            ));
            lines.extend(wrap(
                "Enter sends the refusal · Esc sends it without a reason",
                width,
                p.dim(),
                Span::raw(""),
                Span::raw(""),
            ));
        }
        None => {
            let outside = match request.reason {
                ApprovalReason::SandboxBlocked { .. } => " outside the sandbox",
                ApprovalReason::Mode
                | ApprovalReason::Unfollowable { .. }
                | ApprovalReason::Tool { .. }
                | ApprovalReason::Rule { .. } => "",
            };
            let keys = if let ApprovalReason::Tool { .. } = request.reason {
                format!("y yes once · a always ({always}) · n no · Esc no and stop the turn")
            } else if let ApprovalReason::Rule { .. } = request.reason {
                // The rule asks every time: there is no "always".
                "y run once · n refuse · Esc refuse and stop the turn".to_string()
            } else {
                format!(
                    "y run once · a always{outside} ({always}) · n refuse · Esc refuse and stop the turn"
                )
            };
            lines.extend(wrap(&keys, width, p.bold(), Span::raw(""), Span::raw("")));
        }
    }
    lines
}

pub fn render(frame: &mut Frame, layout: &ApprovalLayout, ctx: &Ctx<'_>) {
    let p = ctx.palette;
    let rect = layout.rect.intersection(frame.area());
    if rect.width < 3 || rect.height < 3 {
        return;
    }
    let mut block = Block::new()
        .borders(Borders::ALL)
        .border_style(p.warning())
        .title(Line::styled(layout.title.clone(), p.bold()));
    let height = layout.body_height();
    if layout.top + height < layout.total {
        block = block.title_bottom(Line::styled(" ↓ more (PgDn) ", p.warning()).right_aligned());
    } else if layout.top > 0 {
        block = block.title_bottom(Line::styled(" ↑ more (PgUp) ", p.warning()).right_aligned());
    }
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let mut lines = layout.visible.clone();
    lines.resize(height, Line::raw(""));
    lines.extend(layout.footer.iter().cloned());
    // A box too low for the footer shows its end: the keys matter most.
    let skip = lines.len().saturating_sub(usize::from(inner.height));
    let lines: Vec<Line<'static>> = lines.into_iter().skip(skip).collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
