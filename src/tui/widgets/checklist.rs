//! The checklist pane: the plan as the engine stores it, with markers,
//! a progress gauge, the active item's activeForm, spinner and timer, and a
//! brief highlight of what just changed, and the selected item with its
//! account. Invariant: it shows exactly the items of the last
//! `PlanUpdated`, in order (or, while one is viewed with `[`, exactly those
//! of that past revision); nothing is parsed from text. A child thread's
//! plan is drawn nested under the item in progress it works for.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::plan_detail::{
    SCOPE_MARK, child_line, detail_line, prompt_line, revision_header, revision_lines, scope_lines,
    shown_scope, time_in_progress,
};
use super::plan_fold::{Fold, NEXT_IN_VIEW, done_line, may_fold};
use super::{clock, pane_block, plan_goal, spinner};
use crate::todo::{TodoItem, TodoStatus};
use crate::tui::state::{Change, Checklist, Ctx, Focus, NestedPlan, PlanPrompt, PromptKind};
use crate::tui::style::{ACTIVE, DONE, PENDING};
use crate::tui::wrap::{truncate, wrap};

/// Dropped items listed at most (the rest are counted).
const MAX_DROPPED: usize = 3;

/// The one-line form: `▶ 2/5 · Running tests · 0:42`, or after a stop
/// `■ 2/5 · stopped with 3 open`.
pub fn summary_line(c: &Checklist, ctx: &Ctx<'_>) -> Line<'static> {
    let p = ctx.palette;
    if c.items.is_empty() {
        return Line::styled("○ no plan yet", p.dim());
    }
    let (done, total) = (c.completed(), c.items.len());
    if c.proposed.is_some() {
        return Line::from(vec![
            Span::styled(format!("◇ {total} items"), p.bold()),
            Span::styled(" · proposed: y approves", p.warning()),
        ]);
    }
    if let Some(open) = c.stopped_open.filter(|_| !ctx.running) {
        return Line::from(vec![
            Span::styled(format!("■ {done}/{total}"), p.bold()),
            Span::styled(
                format!(" · stopped with {open} of {total} open"),
                p.warning(),
            ),
        ]);
    }
    let mut spans = vec![Span::styled(format!("▶ {done}/{total}"), p.bold())];
    if c.refused.is_some() {
        spans.push(Span::styled(" · update refused", p.error()));
    }
    if ctx.waiting {
        spans.push(Span::styled(" · waiting for approval", p.warning()));
    }
    if let Some(item) = c.active() {
        spans.push(Span::raw(" · "));
        spans.push(Span::styled(
            crate::text::clean_line(&item.active_form).into_owned(),
            p.active(),
        ));
        spans.push(Span::styled(
            format!(" · {}", clock(c.active_for(ctx.clock_until))),
            p.dim(),
        ));
    } else if done == total {
        spans.push(Span::styled(" · all done ✔", p.success()));
    }
    Line::from(spans)
}

/// What the layout pass settled: the lines of the expanded pane (or the
/// one-line form) and the first one shown.
#[derive(Debug, Default)]
pub struct PlanLayout {
    pub collapsed: bool,
    pub lines: Vec<Line<'static>>,
    pub top: usize,
    /// The first line of each item.
    pub starts: Vec<usize>,
}

impl PlanLayout {
    /// Items above and below the `height` rows shown (one cut at the top
    /// counts as above).
    pub fn hidden(&self, height: usize) -> (usize, usize) {
        let above = self.starts.iter().filter(|&&s| s < self.top).count();
        let below = self
            .starts
            .iter()
            .filter(|&&s| s >= self.top + height)
            .count();
        (above, below)
    }
}

/// Builds the pane's lines for `area` (with `nested`, the child threads'
/// plans) and settles its scroll position: unless the user scrolled it,
/// the item in progress stays in view.
pub fn layout(
    c: &mut Checklist,
    ctx: &Ctx<'_>,
    area: Rect,
    collapsed: bool,
    nested: &[NestedPlan<'_>],
) -> PlanLayout {
    if collapsed {
        // An edit's prompt or a past revision's header take the one line.
        let line = match (&c.view.prompt, revision_header(&c.revisions)) {
            (Some(prompt), _) => prompt_line(prompt, ctx, area.width.max(1)),
            (None, Some(header)) => Line::styled(format!("{header} · [ ] Esc"), ctx.palette.bold()),
            (None, None) => summary_line(c, ctx),
        };
        return PlanLayout {
            collapsed,
            lines: vec![line],
            top: 0,
            starts: Vec::new(),
        };
    }
    let inner = super::inner(area);
    let height = usize::from(inner.height);
    if let Some(lines) = revision_lines(c, ctx, inner.width.max(1)) {
        // A past revision reads from its top.
        let top = c.view.scroll.resolve_around(lines.len(), height, 0..1);
        return PlanLayout {
            collapsed,
            lines,
            top,
            starts: Vec::new(),
        };
    }
    let width = inner.width.max(1);
    let mut shown = plan_lines(c, ctx, width, nested, Fold::NONE);
    // A short pane that follows the work folds as little as makes the
    // plan fit (the gauge, the oldest done items, then the children), and
    // keeps the running item and the next ones in view; one the user
    // scrolls or selects in (or types in) shows every item.
    let revealing = c.view.reveal && (c.view.selected.is_some() || c.view.prompt.is_some());
    let following = c.view.scroll.follow && !revealing;
    let mut folded = false;
    if following && shown.lines.len() > height {
        // Each step folds more than the one before, so the first that
        // fits is found by halving (a few layouts per frame, not one per
        // done item); none fits: the last.
        let steps: Vec<Fold> = Fold::steps(c, nested.len()).collect();
        let fits = |fold: Fold| plan_lines(c, ctx, width, nested, fold).lines.len() <= height;
        let first = steps.partition_point(|&fold| !fits(fold));
        if let Some(&fold) = steps.get(first.min(steps.len().saturating_sub(1))) {
            shown = plan_lines(c, ctx, width, nested, fold);
            folded = true;
        }
    }
    let PlanLines {
        lines,
        active,
        starts,
        selected,
    } = shown;
    // Unfolding keeps the item in progress on its row: what unfolds goes
    // above it, out of view (a selection moves from there).
    if let (false, Some(row)) = (folded, c.view.folded_row.take())
        && !active.is_empty()
    {
        c.view.scroll.shown = active.start.saturating_sub(row);
    }
    if c.view.reveal {
        reveal(&mut c.view.scroll, selected, height);
    }
    let top = c
        .view
        .scroll
        .resolve_around(lines.len(), height, active.clone());
    if folded && !active.is_empty() {
        c.view.folded_row = Some(active.start.saturating_sub(top));
    }
    PlanLayout {
        collapsed,
        lines,
        top,
        starts,
    }
}

/// Scrolls (no longer following) so that `lines` are in view, moving as
/// little as it can from what was shown.
fn reveal(scroll: &mut crate::tui::state::Scroll, lines: Range<usize>, height: usize) {
    if lines.is_empty() {
        return;
    }
    let mut top = scroll.shown;
    if lines.end > top + height {
        top = lines.end.saturating_sub(height);
    }
    top = top.min(lines.start);
    scroll.top = top;
    scroll.follow = false;
}

/// The expanded pane's lines, and where things are in them.
#[derive(Debug, Default)]
struct PlanLines {
    lines: Vec<Line<'static>>,
    /// The item in progress (with its spinner line).
    active: Range<usize>,
    /// The first line of each item.
    starts: Vec<usize>,
    /// The selected item (with its account and the edit prompt).
    selected: Range<usize>,
}

/// Draws the live plan's lines at one width.
struct Painter<'a> {
    c: &'a Checklist,
    ctx: &'a Ctx<'a>,
    width: u16,
    nested: &'a [NestedPlan<'a>],
    fold: Fold,
}

/// The expanded pane's lines: the gauge, a refused update, each item (the
/// one in progress with its spinner line, the selected one with its
/// account), the prompt, dropped items and how the last turn stopped;
/// what `fold` says folded.
fn plan_lines(
    c: &Checklist,
    ctx: &Ctx<'_>,
    width: u16,
    nested: &[NestedPlan<'_>],
    fold: Fold,
) -> PlanLines {
    let painter = Painter {
        c,
        ctx,
        width,
        nested,
        fold,
    };
    let mut out = PlanLines::default();
    let refused = painter.refused();
    if c.items.is_empty() {
        out.lines.extend(refused);
        out.lines.extend(wrap(
            "No plan yet.",
            width,
            ctx.palette.dim(),
            Span::raw(""),
            Span::raw(""),
        ));
        if let Some(prompt) = &c.view.prompt {
            out.lines.push(prompt_line(prompt, ctx, width));
        }
        return out;
    }
    // Folded, the title's count is the gauge.
    if !fold.gauge {
        out.lines
            .push(gauge(c.completed(), c.items.len(), width, ctx));
    }
    out.lines.extend(refused);
    let chosen = c.selected_index();
    let folding: Vec<usize> = (0..c.items.len())
        .filter(|&i| may_fold(c, i))
        .take(fold.done)
        .collect();
    let folded = folding.len();
    let (mut counted, mut running, mut next) = (None, false, 0);
    for (index, item) in c.items.iter().enumerate() {
        if folding.contains(&index) {
            // The folded items' first line is the one that counts them.
            let at = *counted.get_or_insert_with(|| {
                out.lines
                    .push(done_line(folded, plan_goal::unverified(c, &folding), ctx));
                out.lines.len() - 1
            });
            out.starts.push(at);
            continue;
        }
        painter.item(&mut out, index, item, chosen == Some(index));
        // The next pending items stay in view with the one in progress.
        match item.status {
            TodoStatus::InProgress => running = true,
            TodoStatus::Pending if running && next < NEXT_IN_VIEW => {
                next += 1;
                out.active.end = out.lines.len();
            }
            _ => {}
        }
    }
    if let Some(prompt) = c
        .view
        .prompt
        .as_ref()
        .filter(|pr| prompt_after(pr).is_none())
    {
        out.lines.push(prompt_line(prompt, ctx, width));
        out.selected = out.lines.len() - 1..out.lines.len();
    }
    painter.dropped(&mut out.lines);
    if c.proposed.is_some() {
        out.lines.push(Line::styled(
            "◇ proposed: y approves it",
            ctx.palette.warning(),
        ));
    } else if let Some(open) = c.stopped_open {
        // The subagents' open items are work left too.
        let children: usize = nested
            .iter()
            .map(|n| n.plan.items.len() - n.plan.completed())
            .sum();
        let theirs = match children {
            0 => String::new(),
            n => format!(" (+{n} in subagents)"),
        };
        out.lines.push(Line::styled(
            format!("■ stopped with {open} of {} open{theirs}", c.items.len()),
            ctx.palette.warning(),
        ));
    }
    out
}

impl Painter<'_> {
    /// One line: the model's last update was refused (the plan is unchanged).
    fn refused(&self) -> Option<Line<'static>> {
        self.c.refused.as_ref().map(|clause| {
            Line::styled(
                truncate(
                    &format!("plan update refused: {}", crate::text::clean_line(clause)),
                    usize::from(self.width),
                ),
                self.ctx.palette.error(),
            )
        })
    }

    /// Item `index`: its marker and text (tagged while it is highlighted),
    /// then under it what it has: the spinner line in progress, the
    /// account when `chosen`, the prompt that edits it or adds after it.
    fn item(&self, out: &mut PlanLines, index: usize, item: &TodoItem, chosen: bool) {
        let (p, width) = (self.ctx.palette, self.width);
        let change = self.c.highlight.change_of(&item.id, self.ctx.now);
        let (marker, style) = match item.status {
            TodoStatus::Completed => (DONE, p.success()),
            TodoStatus::InProgress => (ACTIVE, p.active()),
            TodoStatus::Pending => (PENDING, p.dim()),
        };
        let tag = match change {
            Some(Change::Added) => " +new",
            Some(Change::Reworded) => " ~reworded",
            Some(Change::Started) => " ▶started",
            Some(Change::Completed) => " ✔done",
            None => "",
        };
        // `/undo item N` took its work back; done, it can be reopened.
        let undone = match (self.c.is_undone(&item.id), item.status, chosen) {
            (false, _, _) => "",
            (true, TodoStatus::Completed, true) => " ↶ undone · d reopens",
            (true, _, _) => " ↶ undone",
        };
        let text_style = if change.is_some() {
            p.highlight()
        } else if item.status == TodoStatus::Completed {
            p.dim()
        } else {
            p.text()
        };
        let first = out.lines.len();
        out.starts.push(first);
        let scope = shown_scope(self.c, item);
        let mark = if scope.is_some() { SCOPE_MARK } else { "" };
        let mut item_lines = wrap(
            &format!(
                "{}{mark}{}{tag}{undone}",
                item.content,
                plan_goal::marks(self.c, item)
            ),
            width,
            text_style,
            Span::styled(format!("{marker} "), style),
            Span::raw("    "),
        );
        if chosen {
            item_lines = item_lines
                .into_iter()
                .map(|l| l.patch_style(p.selection()))
                .collect();
        }
        out.lines.append(&mut item_lines);
        if item.status == TodoStatus::InProgress {
            self.in_progress(&mut out.lines, item);
            out.active = first..out.lines.len();
        }
        for (k, child) in self.nested.iter().enumerate() {
            if child.under == index {
                let folded = k < self.fold.children && !chosen;
                self.child_plan(&mut out.lines, child, folded);
            }
        }
        if chosen {
            let left = plan_goal::left(self.c, item, self.ctx);
            let stats = self.c.stats.of(&item.id, self.ctx.clock_until);
            out.lines
                .push(detail_line(stats.as_ref(), left, self.ctx, width));
            out.lines
                .extend(scope.map_or_else(Vec::new, |s| scope_lines(s, self.ctx, width)));
            out.lines
                .extend(plan_goal::check_lines(self.c, item, self.ctx, width));
        }
        if let Some(prompt) = self
            .c
            .view
            .prompt
            .as_ref()
            .filter(|pr| prompt_after(pr) == Some(index))
        {
            out.lines.push(prompt_line(prompt, self.ctx, width));
        }
        if chosen {
            out.selected = first..out.lines.len();
        }
    }

    /// The line under the item in progress: waiting for approval, or its
    /// activeForm with a spinner and how long it has been in progress.
    fn in_progress(&self, lines: &mut Vec<Line<'static>>, item: &TodoItem) {
        let (p, ctx) = (self.ctx.palette, self.ctx);
        if ctx.waiting {
            lines.push(Line::styled("    ⏸ waiting for approval", p.warning()));
            return;
        }
        // The engine's account (time across interrupts) when it sent one.
        let since = time_in_progress(self.c, &item.id, ctx.clock_until)
            .unwrap_or_else(|| self.c.active_for(ctx.clock_until));
        let spin = if ctx.running { spinner(since) } else { "·" };
        lines.extend(wrap(
            &format!("{} · {}", item.active_form, clock(since)),
            self.width,
            p.active(),
            Span::styled(format!("    {spin} "), p.active()),
            Span::raw("      "),
        ));
    }

    /// A child thread's plan under the item it works for: one live line
    /// (what it works on, how far it is, what it runs, its time, tokens
    /// and cost), then (unless `folded`) its items, indented (each wraps
    /// under its own text; at a narrow width the indent goes first).
    fn child_plan(&self, lines: &mut Vec<Line<'static>>, child: &NestedPlan<'_>, folded: bool) {
        let p = self.ctx.palette;
        // One row, cut to fit: it changes as the child works.
        let room = usize::from(self.width).saturating_sub(6);
        lines.push(Line::from(vec![
            Span::styled("    ↳ ", p.dim()),
            Span::styled(child_line(child, self.ctx.clock_until, room), p.dim()),
        ]));
        if folded {
            return;
        }
        for item in &child.plan.items {
            let (marker, style, text) = match item.status {
                TodoStatus::Completed => (DONE, p.success(), p.dim()),
                TodoStatus::InProgress => (ACTIVE, p.active(), p.active()),
                TodoStatus::Pending => (PENDING, p.dim(), p.text()),
            };
            lines.extend(wrap(
                &item.content,
                self.width,
                text,
                Span::styled(format!("      {marker} "), style),
                Span::raw("          "),
            ));
        }
    }

    /// Dropped by the last update: listed for a while, struck out.
    fn dropped(&self, lines: &mut Vec<Line<'static>>) {
        let p = self.ctx.palette;
        let dropped = self.c.highlight.dropped(self.ctx.now);
        let struck = p.dim().add_modifier(Modifier::CROSSED_OUT);
        for content in dropped.iter().take(MAX_DROPPED) {
            lines.push(Line::from(vec![
                Span::styled("− dropped: ", p.dim()),
                Span::styled(
                    truncate(
                        &crate::text::clean_line(content),
                        usize::from(self.width).saturating_sub(11),
                    ),
                    struck,
                ),
            ]));
        }
        if dropped.len() > MAX_DROPPED {
            lines.push(Line::styled(
                format!("− and {} more dropped", dropped.len() - MAX_DROPPED),
                p.dim(),
            ));
        }
    }
}

/// The item (0-based) the prompt's line goes under; `None`: the end.
fn prompt_after(prompt: &PlanPrompt) -> Option<usize> {
    match prompt.kind {
        PromptKind::Add { after: Some(n) } | PromptKind::Reword { n } | PromptKind::Check { n } => {
            n.checked_sub(1)
        }
        PromptKind::Add { after: None } => None,
    }
}

pub fn render(frame: &mut Frame, c: &Checklist, layout: &PlanLayout, ctx: &Ctx<'_>, area: Rect) {
    let p = ctx.palette;
    if layout.collapsed {
        let line = layout.lines.first().cloned().unwrap_or_default();
        let text = line
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>();
        let style = if ctx.focused(Focus::Checklist) {
            p.selection()
        } else {
            p.text()
        };
        let line = if Line::raw(text.clone()).width() > usize::from(area.width) {
            Line::styled(truncate(&text, usize::from(area.width)), style)
        } else {
            line.patch_style(style)
        };
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let (done, total) = (c.completed(), c.items.len());
    let mut title = if c.revisions.shown().is_some() {
        " Plan history ".to_string()
    } else if total == 0 {
        " Plan ".to_string()
    } else if c.proposed.is_some() {
        format!(" Proposed plan · {total} items · y approves ")
    } else {
        format!(" Plan {done}/{total} {}", plan_goal::title(c))
    };
    if ctx.waiting {
        title.push_str("· waiting for approval ");
    }
    let title_w = crate::tui::wrap::str_width(&title);
    let mut block = pane_block(ctx, title, Focus::Checklist);
    let height = usize::from(block.inner(area).height);
    let (above, below) = layout.hidden(height);
    if let Some(forecast) = plan_goal::forecast_line(c, ctx, area.width.saturating_sub(16)) {
        block = block.title_bottom(forecast);
    }
    // Only where it does not cover the title.
    if above > 0
        && title_w + format!(" ↑ {above} more ").chars().count() + 3 <= usize::from(area.width)
    {
        block =
            block.title_top(Line::styled(format!(" ↑ {above} more "), p.warning()).right_aligned());
    }
    if below > 0 {
        block = block
            .title_bottom(Line::styled(format!(" ↓ {below} more "), p.warning()).right_aligned());
    } else if layout.top + height < layout.lines.len() {
        block = block.title_bottom(Line::styled(" ↓ more ", p.warning()).right_aligned());
    }
    let visible: Vec<Line<'static>> = layout
        .lines
        .iter()
        .skip(layout.top)
        .take(height)
        .cloned()
        .collect();
    frame.render_widget(
        Paragraph::new(visible)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

fn gauge(done: usize, total: usize, width: u16, ctx: &Ctx<'_>) -> Line<'static> {
    let label = format!(" {done}/{total}");
    let bar_w = usize::from(width).saturating_sub(label.len()).min(30);
    let filled = (bar_w * done).checked_div(total).unwrap_or(0);
    Line::from(vec![
        Span::styled("━".repeat(filled), ctx.palette.success()),
        Span::styled("─".repeat(bar_w - filled), ctx.palette.dim()),
        Span::styled(label, ctx.palette.bold()),
    ])
}
