//! The goal in the conversation: set, paused, going on again, its end
//! with a short report, and the budget warning, as notices.

use crate::events::{Event, GoalState};
use crate::tui::state::goal::report_text;
use crate::tui::state::{App, NoticeKind};

/// Shows a goal event as a notice (once the plan pane took it).
pub(super) fn told(app: &mut App, event: &Event) {
    match event {
        Event::GoalSet { goal } => {
            let mut text = format!("Goal set: {}", crate::text::clean_line(&goal.text));
            if let Some(check) = &goal.check {
                text.push_str(&format!(
                    " (its check: `{}`)",
                    crate::text::clean_line(check)
                ));
            }
            if !goal.budget.is_empty() {
                text.push_str(&format!(" · budget {}", goal.budget.describe()));
            }
            text.push_str(". Waypoint keeps the agent going until the evidence says it is met; /goal pause or Esc stops it.");
            app.notice(NoticeKind::Info, text);
        }
        Event::GoalUpdated { report } if app.root.plan.goal.changed => {
            let why = report
                .reason
                .as_deref()
                .map(|r| format!(" ({})", crate::text::clean_line(r)))
                .unwrap_or_default();
            match report.state {
                GoalState::Active => app.notice(NoticeKind::Info, "Goal active again."),
                GoalState::Paused => app.notice(
                    NoticeKind::Info,
                    format!("Goal paused{why}: /goal resume goes on."),
                ),
                GoalState::Met => app.notice(NoticeKind::Info, report_text(report)),
                GoalState::Unmet | GoalState::BudgetLimited => {
                    app.notice(NoticeKind::Warning, report_text(report));
                }
            }
        }
        Event::GoalBudget { share, limit } => app.notice(
            NoticeKind::Warning,
            format!(
                "The goal has spent {share}% of its {} budget; at 100% it stops as budget-limited.",
                crate::text::clean_line(limit)
            ),
        ),
        _ => {}
    }
}
