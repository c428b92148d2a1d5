//! Draws the whole screen in two steps: `prepare` (the layout pass: pane
//! areas, scroll positions, wrap caches; it may write the state) and
//! `render`, a pure function of the state, that layout and the time
//! (spinners and timers), so it can be snapshot-tested.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::commands;
use super::layout::{self, Areas};
use super::state::{App, Ctx, Focus};
use super::widgets::{self, checklist, conversation, help, status, trace};

/// Everything settled before a frame is drawn.
#[derive(Debug, Default)]
pub struct FrameLayout {
    pub areas: Areas,
    pub conversation: conversation::ConvLayout,
    pub plan: checklist::PlanLayout,
    pub detail: Option<trace::DetailLayout>,
    /// The slash-command list, when open.
    pub popup: Option<Rect>,
    /// The session picker, when open.
    pub picker: Option<Rect>,
    /// The `@` file list, when open.
    pub files: Option<Rect>,
    /// Ctrl+R's prompt search, when open.
    pub search: Option<Rect>,
    /// The approval prompt, while a tool call waits for the user.
    pub approval: Option<widgets::approval::ApprovalLayout>,
}

/// The layout pass for a frame of size `area`.
pub fn prepare(app: &mut App, area: Rect, now: Instant) -> FrameLayout {
    // Dropped plan items listed long enough make no more room for themselves.
    app.root.plan.highlight.forget_expired(now);
    let areas = layout::compute(area, app);
    let mut out = FrameLayout {
        areas,
        ..FrameLayout::default()
    };
    if let Some(r) = areas.conversation {
        out.conversation = conversation::layout(&mut app.root.conversation, app.palette, r);
    }
    // A pane's layout reads the frame's context (focus, clocks) while it
    // writes its own state: take the pane out for that moment.
    let nested = app.root.nested_plans(&app.threads);
    let mut plan = std::mem::take(&mut app.root.plan);
    out.plan = checklist::layout(
        &mut plan,
        &app.ctx(now),
        areas.checklist,
        areas.checklist_collapsed,
        &nested,
    );
    app.root.plan = plan;
    if let Some(r) = areas.trace {
        let mut trace = std::mem::take(&mut app.root.trace);
        out.detail = trace::layout(&mut trace, &app.ctx(now), r);
        app.root.trace = trace;
    }
    if app.overlays.help {
        let (rect, total) = help::area(area);
        let height = usize::from(rect.height.saturating_sub(2));
        app.overlays.help_scroll.resolve(total, height);
    }
    if let Some(picker) = &app.overlays.picker {
        out.picker = Some(widgets::picker::area(area, picker));
    }
    out.approval = widgets::approval::layout(&mut app.overlays.approvals, app.palette, area);
    if let Some(files) = &app.overlays.files
        && app.focus == Focus::Input
    {
        out.files = Some(widgets::files::area(area, areas.input, files));
    }
    if let Some(search) = &app.overlays.search {
        out.search = Some(widgets::history::area(area, areas.input, search));
    }
    if commands::popup_open(app) {
        let found = super::popup::entries(app).len();
        out.popup = Some(widgets::commands::area(area, areas.input, found));
    }
    out
}

pub fn render(frame: &mut Frame, app: &App, layout: &FrameLayout, now: Instant) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let ctx = app.ctx(now);
    let areas = &layout.areas;
    if let Some(r) = areas.conversation {
        conversation::render(frame, &app.root.conversation, layout.conversation, &ctx, r);
    }
    checklist::render(frame, &app.root.plan, &layout.plan, &ctx, areas.checklist);
    if let Some(r) = areas.trace {
        trace::render(frame, &app.root.trace, layout.detail.as_ref(), &ctx, r);
    }
    if let Some(r) = areas.banner {
        draw_banner(frame, app, &ctx, r);
    }
    draw_input(frame, app, &ctx, areas.input);
    status::render(frame, &app.status, &ctx, areas.status);
    if let Some(r) = layout.popup {
        let found = super::popup::entries(app);
        let filter = commands::filter(app);
        widgets::commands::render(frame, &found, app.overlays.popup.selected, &filter, &ctx, r);
    }
    if let (Some(r), Some(files)) = (layout.files, &app.overlays.files) {
        widgets::files::render(frame, files, &ctx, r);
    }
    if let (Some(r), Some(search)) = (layout.search, &app.overlays.search) {
        widgets::history::render(frame, search, &ctx, r);
    }
    if let (Some(r), Some(picker)) = (layout.picker, &app.overlays.picker) {
        widgets::picker::render(frame, picker, &ctx, r);
    }
    if let Some(question) = app.overlays.confirm {
        // An undo's question says what it does (the preview is above).
        let undo = match (question, &app.overlays.undo) {
            (crate::tui::state::Confirm::Undo, Some(pending)) => pending
                .summary
                .as_ref()
                .map(|s| format!("Undo {s}? Files are written back; conflicts stay as they are.")),
            _ => None,
        };
        let keys = match question {
            crate::tui::state::Confirm::ApprovePlan { .. } => {
                " y approve · Tab mode · f fresh · n not yet "
            }
            _ => " y yes · n no ",
        };
        let text = undo.map_or_else(|| question.question(), std::borrow::Cow::Owned);
        draw_confirm(frame, &text, keys, &ctx, area);
    }
    // Over any question: its keys are the ones taken while it shows.
    if let Some(approval) = &layout.approval {
        widgets::approval::render(frame, approval, &ctx);
    }
    if app.overlays.help {
        help::render(frame, &ctx, area, app.overlays.help_scroll.shown);
    }
}

/// Lays out and draws one frame.
pub fn draw(frame: &mut Frame, app: &mut App, now: Instant) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let layout = prepare(app, area, now);
    render(frame, app, &layout, now);
}

fn draw_input(frame: &mut Frame, app: &App, ctx: &Ctx<'_>, area: Rect) {
    if area.height == 0 {
        return;
    }
    let title = if app.status.turn.running() {
        " Message (queued until the turn ends) "
    } else {
        " Message "
    };
    let block: Block = widgets::pane_block(ctx, title, Focus::Input);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&app.input.area, inner);
    // The text area draws its own cursor.
}

/// `■ stopped with 2 of 7 items open — Enter continue · /plan clear archive`,
/// or how to approve a proposed plan.
fn draw_banner(frame: &mut Frame, app: &App, ctx: &Ctx<'_>, area: Rect) {
    let p = ctx.palette;
    let (open, total) = (app.root.plan.open(), app.root.plan.items.len());
    // A proposal is open by nature: what the user does next is approve it.
    let (head, tail) = if app.root.plan.proposed.is_some() {
        (
            format!("◇ plan proposed: {total} items"),
            " — y (plan pane) or /approve runs it · or say what to change",
        )
    } else {
        (
            format!("■ stopped with {open} of {total} items open"),
            " — Enter continue · /plan clear archive",
        )
    };
    let line = Line::from(vec![
        ratatui::text::Span::styled(head, p.warning()),
        ratatui::text::Span::styled(tail, p.dim()),
    ]);
    let line = if line.width() > usize::from(area.width) {
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        Line::styled(
            crate::tui::wrap::truncate(&text, usize::from(area.width)),
            p.warning(),
        )
    } else {
        line
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_confirm(frame: &mut Frame, question: &str, keys: &str, ctx: &Ctx<'_>, area: Rect) {
    let w = area.width.min(60);
    // Room for the wrapped question (a word-wrap's slack line included).
    let lines = question.chars().count() / usize::from(w.saturating_sub(2).max(1)) + 2;
    let h = area
        .height
        .min(u16::try_from(lines + 2).unwrap_or(u16::MAX).max(6));
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(ctx.palette.warning())
        .title(keys.to_string());
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(vec![Line::raw(question.to_string())])
            .block(block)
            .wrap(Wrap { trim: true }),
        rect,
    );
}

/// One pane on its own (for tests and benchmarks of a single widget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Conversation,
    Plan { collapsed: bool },
    Trace,
    Status,
}

/// Lays out and draws `pane` alone into `area`.
pub fn draw_pane(frame: &mut Frame, app: &mut App, pane: Pane, area: Rect, now: Instant) {
    match pane {
        Pane::Conversation => {
            let layout = conversation::layout(&mut app.root.conversation, app.palette, area);
            conversation::render(frame, &app.root.conversation, layout, &app.ctx(now), area);
        }
        Pane::Plan { collapsed } => {
            let nested = app.root.nested_plans(&app.threads);
            let mut plan = std::mem::take(&mut app.root.plan);
            let layout = checklist::layout(&mut plan, &app.ctx(now), area, collapsed, &nested);
            app.root.plan = plan;
            checklist::render(frame, &app.root.plan, &layout, &app.ctx(now), area);
        }
        Pane::Trace => {
            let mut trace = std::mem::take(&mut app.root.trace);
            let detail = trace::layout(&mut trace, &app.ctx(now), area);
            app.root.trace = trace;
            trace::render(frame, &app.root.trace, detail.as_ref(), &app.ctx(now), area);
        }
        Pane::Status => status::render(frame, &app.status, &app.ctx(now), area),
    }
}
