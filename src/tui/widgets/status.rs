//! The status line: what the agent is doing and for how long, the model,
//! tokens, and a hint of the keys that matter now.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{clock, spinner};
use crate::pricing::format_cost;
use crate::tui::state::{Activity, Ctx, Status};
use crate::tui::wrap::{str_width, truncate};

fn activity(app: &Status, ctx: &Ctx<'_>) -> (String, ratatui::style::Style) {
    let p = ctx.palette;
    let now = ctx.now;
    let for_ = clock(now.saturating_duration_since(app.activity_since));
    match &app.activity {
        Activity::Idle => ("○ idle".into(), p.dim()),
        Activity::Thinking => (
            format!(
                "{} thinking",
                spinner(now.saturating_duration_since(app.activity_since))
            ),
            p.active(),
        ),
        Activity::Streaming => (
            format!(
                "{} writing",
                spinner(now.saturating_duration_since(app.activity_since))
            ),
            p.active(),
        ),
        Activity::Tool { name } => (
            format!(
                "{} running {name} {for_}",
                spinner(now.saturating_duration_since(app.activity_since))
            ),
            p.active(),
        ),
        Activity::Retrying { .. } => ("↻ retrying".into(), p.warning()),
        Activity::Interrupted => ("■ interrupted".into(), p.warning()),
        Activity::Failed => ("✘ stopped".into(), p.error()),
        Activity::NoProvider => ("✘ no provider".into(), p.error()),
    }
}

fn hint(app: &Status, now: Instant) -> &'static str {
    if app.quit_armed(now) {
        "Ctrl+C again to quit"
    } else if app.running {
        "Esc interrupt · Enter queues · ? help"
    } else if app.can_resume {
        "Enter/Ctrl+R resume · ? help"
    } else {
        "Enter send · Tab focus · ? help"
    }
}

pub fn render(frame: &mut Frame, app: &Status, ctx: &Ctx<'_>, area: Rect) {
    let p = ctx.palette;
    let now = ctx.now;
    let (what, style) = activity(app, ctx);
    let mut left = vec![Span::styled(what, style)];
    if let Some(t) = app.turn_started.filter(|_| app.running) {
        left.push(Span::styled(
            format!(" · turn {}", clock(now.saturating_duration_since(t))),
            p.dim(),
        ));
    }
    left.push(Span::styled(format!(" · {}", app.model), p.dim()));
    let mut tokens = format!(
        " · ↑{} ↓{} tok",
        compact(app.tokens.0),
        compact(app.tokens.1)
    );
    if app.running || app.turn_tokens != app.tokens {
        tokens.push_str(&format!(
            " (turn ↑{} ↓{})",
            compact(app.turn_tokens.0),
            compact(app.turn_tokens.1)
        ));
    }
    if let Some(usd) = app.cost().filter(|_| app.tokens != (0, 0)) {
        tokens.push_str(&format!(" · {}", format_cost(usd)));
    }
    left.push(Span::styled(tokens, p.dim()));
    let hint = hint(app, now);
    let width = usize::from(area.width);
    let left_w: usize = left.iter().map(|s| str_width(&s.content)).sum();
    let line = if left_w + 2 + str_width(hint) <= width {
        let pad = width - left_w - str_width(hint);
        left.push(Span::raw(" ".repeat(pad)));
        left.push(Span::styled(hint, p.bold()));
        Line::from(left)
    } else if app.quit_armed(now) {
        // Too narrow for both: the quit warning matters more.
        Line::styled(truncate(hint, width), p.bold())
    } else {
        let text: String = left.iter().map(|s| s.content.as_ref()).collect();
        Line::styled(truncate(&text, width), style)
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// `950`, `12.3k`, `4.5M`.
fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        // Below this, one decimal of thousands does not round up to 1000.0k.
        1_000..999_950 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn compact_counts_never_read_1000k() {
        assert_eq!(compact(999), "999");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(999_949), "999.9k");
        assert_eq!(compact(999_950), "1.0M");
        assert_eq!(compact(4_500_000), "4.5M");
    }
}
