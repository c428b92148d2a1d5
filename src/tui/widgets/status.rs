//! The status line: what the agent is doing and for how long, the model,
//! tokens (with the cached share), cost, the context meter, and a hint of
//! the keys that matter now, and where the session works (folder and git
//! branch). Invariant: when narrow, parts drop in a fixed order (folder and
//! branch, turn tokens, the model's long name, the hint's long form (a
//! hint without a short form stays until the cost is gone), cached share,
//! model, cost, turn clock, approval mode, the short hint) so the activity,
//! tokens and the context meter stay longest, and the quit warning wins
//! over everything.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{clock, spinner};
use crate::pricing::format_cost;
use crate::tui::state::{Activity, Ctx, Status};
use crate::tui::wrap::{str_width, truncate};
use crate::units::tokens;

fn activity(app: &Status, ctx: &Ctx<'_>) -> (String, ratatui::style::Style) {
    let p = ctx.palette;
    let now = ctx.now;
    let for_ = clock(now.saturating_duration_since(app.turn.since()));
    match app.turn.activity() {
        Activity::Idle => ("○ idle".into(), p.dim()),
        Activity::Thinking => (
            format!(
                "{} thinking",
                spinner(now.saturating_duration_since(app.turn.since()))
            ),
            p.active(),
        ),
        Activity::Streaming => (
            format!(
                "{} writing",
                spinner(now.saturating_duration_since(app.turn.since()))
            ),
            p.active(),
        ),
        Activity::Tool { name } => (
            format!(
                "{} running {name} {for_}",
                spinner(now.saturating_duration_since(app.turn.since()))
            ),
            p.active(),
        ),
        Activity::Compacting => (
            format!(
                "{} compacting",
                spinner(now.saturating_duration_since(app.turn.since()))
            ),
            p.active(),
        ),
        Activity::Approval => (format!("⏸ waiting for approval {for_}"), p.warning()),
        Activity::McpWait => (
            format!(
                "{} waiting for MCP servers",
                spinner(now.saturating_duration_since(app.turn.since()))
            ),
            p.active(),
        ),
        Activity::Retrying { .. } => ("↻ retrying".into(), p.warning()),
        Activity::Interrupted => ("■ interrupted".into(), p.warning()),
        Activity::Failed => ("✘ stopped".into(), p.error()),
        Activity::NoProvider => ("✘ no provider".into(), p.error()),
    }
}

/// The keys that matter now, and a shorter form kept longer (while a task
/// runs: how to interrupt it).
fn hint(app: &Status, now: Instant) -> (&'static str, Option<&'static str>) {
    if app.ui.quit_armed(now) {
        ("Ctrl+C again to quit", None)
    } else if *app.turn.activity() == Activity::Approval {
        ("y run · a always · n refuse · Esc stop", None)
    } else if *app.turn.activity() == Activity::McpWait {
        ("Esc starts without them · ? help", Some("Esc skips"))
    } else if app.turn.running() {
        (
            "Esc interrupt · Enter queues · ? help",
            Some("Esc interrupt"),
        )
    } else if app.turn.can_resume() {
        ("Enter/F5 resume · ? help", None)
    } else if app.ui.mouse_off() {
        // The wheel does nothing now: say why, and how to have it back.
        ("mouse off: F2 · Enter send · ? help", None)
    } else {
        // Shift+Tab switches the mode shown on the left, as in Claude Code.
        (
            "Enter send · Tab focus · ⇧Tab mode · ? help",
            Some("Enter send · ⇧Tab mode"),
        )
    }
}

/// How many parts [`Parts::spans`] can leave out.
const ALL_DROPPED: usize = 8;
/// Parts left out before the hint takes its short form: folder, turn
/// tokens, the model's long name.
const BEFORE_SHORT_HINT: usize = 3;
/// Parts left out before a hint without a short form goes: those, the
/// cached share, the model and the cost.
const BEFORE_HINT: usize = 6;

/// The parts of the status line, least needed first within `drop`.
struct Parts {
    activity: Span<'static>,
    clock: Option<Span<'static>>,
    model: Span<'static>,
    /// The model's name shortened (no date suffix, at most a few columns).
    model_short: Span<'static>,
    tokens_in: Span<'static>,
    tokens_out: Span<'static>,
    cached: Option<Span<'static>>,
    turn: Option<Span<'static>>,
    cost: Option<Span<'static>>,
    meter: Option<Span<'static>>,
    /// `mcp 3/4` while an MCP server is not ready.
    mcp: Option<Span<'static>>,
    /// `jobs 2` while background jobs run.
    jobs: Option<Span<'static>>,
    /// `goal: active`, `goal met`, … while the session has a goal: kept.
    goal: Option<Span<'static>>,
    /// The approval mode: dropped last of all.
    mode: Option<Span<'static>>,
    /// The folder and git branch: dropped first.
    place: Option<Span<'static>>,
}

impl Parts {
    /// The line's spans once `dropped` parts are left out (in the order
    /// folder, turn tokens, the model's long name, cached share, model,
    /// cost, turn clock, approval mode).
    fn spans(&self, dropped: usize) -> Vec<Span<'static>> {
        let keep = |rank: usize| dropped < rank;
        let mut out = vec![self.activity.clone()];
        out.extend(self.goal.clone());
        if keep(8) {
            out.extend(self.mode.clone());
        }
        if keep(7) {
            out.extend(self.clock.clone());
        }
        if keep(3) {
            out.push(self.model.clone());
        } else if keep(5) {
            out.push(self.model_short.clone());
        }
        out.push(self.tokens_in.clone());
        if keep(4) {
            out.extend(self.cached.clone());
        }
        out.push(self.tokens_out.clone());
        if keep(2) {
            out.extend(self.turn.clone());
        }
        if keep(6) {
            out.extend(self.cost.clone());
        }
        out.extend(self.meter.clone());
        out.extend(self.mcp.clone());
        out.extend(self.jobs.clone());
        if keep(1) {
            out.extend(self.place.clone());
        }
        out
    }
}

/// The longest shortened model name.
const MODEL_SHORT: usize = 16;

/// `claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`, cut to a few columns.
fn short_model(model: &str) -> String {
    let name = match model.rsplit_once(['-', '@']) {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => model,
    };
    let name = name.rsplit('/').next().unwrap_or(name);
    truncate(name, MODEL_SHORT)
}

fn parts(app: &Status, ctx: &Ctx<'_>) -> Parts {
    let p = ctx.palette;
    let now = ctx.now;
    let (what, style) = activity(app, ctx);
    let clock = app.turn.started().map(|t| {
        Span::styled(
            format!(" · turn {}", clock(now.saturating_duration_since(t))),
            p.dim(),
        )
    });
    let prompt = app.accounts.prompt_tokens();
    let tokens_in = Span::styled(format!(" · ↑{}", tokens(prompt)), p.dim());
    let tokens_out = Span::styled(
        format!(" ↓{} tok", tokens(app.accounts.totals().output_tokens)),
        p.dim(),
    );
    let cached = app
        .accounts
        .cached_percent()
        .map(|pc| Span::styled(format!(" ({pc}% cached)"), p.dim()));
    let turn = (app.turn.running()
        || app.accounts.turn_tokens() != (prompt, app.accounts.totals().output_tokens))
        .then(|| {
            Span::styled(
                format!(
                    " (turn ↑{} ↓{})",
                    tokens(app.accounts.turn_tokens().0),
                    tokens(app.accounts.turn_tokens().1)
                ),
                p.dim(),
            )
        });
    let cost = app
        .accounts
        .cost()
        .filter(|_| prompt != 0 || app.accounts.totals().output_tokens != 0)
        .map(|usd| Span::styled(format!(" · {}", format_cost(usd)), p.dim()));
    let meter = app.accounts.context_percent().map(|pc| {
        let style = if pc >= 95 {
            p.error()
        } else if pc >= 80 {
            p.warning()
        } else {
            p.dim()
        };
        Span::styled(format!(" · ctx {pc}%"), style)
    });
    let mode = app.engine.approval().map(|(mode, sandboxed)| {
        let sandbox = if sandboxed { " (sandbox)" } else { "" };
        let style = match mode {
            crate::events::ApprovalMode::Yolo => p.warning(),
            // Plan mode is a phase of the work: seen at a glance.
            crate::events::ApprovalMode::Plan => p.active(),
            _ => p.dim(),
        };
        Span::styled(format!(" · {mode}{sandbox}"), style)
    });
    let mcp = app.mcp.pending().map(|(ready, all)| {
        let style = if app.mcp.any_failed() {
            p.warning()
        } else {
            p.dim()
        };
        Span::styled(format!(" · mcp {ready}/{all}"), style)
    });
    let running = app.jobs.iter().filter(|j| j.ended.is_none()).count();
    let jobs = (running > 0).then(|| Span::styled(format!(" · jobs {running}"), p.dim()));
    let place = (!app.place.folder().is_empty()).then(|| {
        let branch = app
            .place
            .branch()
            .map(|b| format!(" ({})", truncate(b, 24)))
            .unwrap_or_default();
        Span::styled(format!(" · {}{branch}", app.place.folder()), p.dim())
    });
    let goal = ctx.goal.and_then(|g| {
        let style = match g.state? {
            crate::events::GoalState::Active => p.active(),
            crate::events::GoalState::Met => p.success(),
            crate::events::GoalState::Paused => p.dim(),
            _ => p.warning(),
        };
        Some(Span::styled(format!(" · {}", g.label()?), style))
    });
    Parts {
        goal,
        place,
        model_short: Span::styled(format!(" · {}", short_model(app.accounts.model())), p.dim()),
        mode,
        activity: Span::styled(what, style),
        clock,
        model: Span::styled(format!(" · {}", app.accounts.model()), p.dim()),
        tokens_in,
        tokens_out,
        cached,
        turn,
        cost,
        meter,
        mcp,
        jobs,
    }
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// `spans` cut to `width` columns, each keeping its style.
fn cut(spans: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    let mut left = width;
    let mut out = Vec::new();
    for span in spans {
        if left == 0 {
            break;
        }
        let w = str_width(&span.content);
        if w <= left {
            left -= w;
            out.push(span);
        } else {
            out.push(Span::styled(truncate(&span.content, left), span.style));
            break;
        }
    }
    out
}

pub fn render(frame: &mut Frame, app: &Status, ctx: &Ctx<'_>, area: Rect) {
    let p = ctx.palette;
    let now = ctx.now;
    let parts = parts(app, ctx);
    let (hint, short) = hint(app, now);
    let width = usize::from(area.width);
    // Drop parts one by one until the line and the hint fit; then the hint
    // goes (unless it is the quit warning; while a task runs, its short form
    // stays longer), then more parts.
    let fit = |hint: &'static str, least: usize, most: usize| {
        (least..=most)
            .map(|dropped| parts.spans(dropped))
            .find(|spans| spans_width(spans) + 2 + str_width(hint) <= width)
            .map(|spans| (spans, hint))
    };
    // The hint takes its short form before the cached share and the cost
    // go; one without a short form stays until they are gone.
    let with_hint = fit(hint, 0, BEFORE_SHORT_HINT).or_else(|| match short {
        Some(short) => fit(short, BEFORE_SHORT_HINT, ALL_DROPPED),
        None => fit(hint, BEFORE_SHORT_HINT, BEFORE_HINT),
    });
    let line = match with_hint {
        Some((mut left, hint)) => {
            let pad = width - spans_width(&left) - str_width(hint);
            left.push(Span::raw(" ".repeat(pad)));
            left.push(Span::styled(hint, p.bold()));
            Line::from(left)
        }
        // Too narrow for both: the quit warning matters more.
        None if app.ui.quit_armed(now) => Line::styled(truncate(hint, width), p.bold()),
        None => {
            let alone = (0..=ALL_DROPPED)
                .map(|dropped| parts.spans(dropped))
                .find(|spans| spans_width(spans) <= width);
            Line::from(alone.unwrap_or_else(|| cut(parts.spans(ALL_DROPPED), width)))
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}
