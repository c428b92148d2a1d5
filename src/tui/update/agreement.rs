//! Plan mode's agreement in the conversation: the approval, and each
//! change to the approved plan (asked, made, refused), as notices.

use crate::events::Event;
use crate::tui::state::{App, NoticeKind};

/// Shows a plan-mode event as a notice.
pub(super) fn told(app: &mut App, event: Event) {
    match event {
        Event::PlanChangeRequested { lines } => app.notice(
            NoticeKind::Warning,
            format!(
                "The model asks to change the approved plan: {}",
                lines.join("; ")
            ),
        ),
        Event::PlanChangeAccepted { lines, asked } => app.notice(
            NoticeKind::Warning,
            format!(
                "Change to the approved plan ({}): {}",
                if asked {
                    "you accepted it"
                } else {
                    "plan_changes = tell"
                },
                lines.join("; ")
            ),
        ),
        Event::PlanChangeRefused { lines } => app.notice(
            NoticeKind::Info,
            format!(
                "Change to the approved plan refused; the plan stays as agreed: {}",
                lines.join("; ")
            ),
        ),
        Event::PlanApproved {
            revision,
            mode,
            fresh,
        } => app.notice(
            NoticeKind::Info,
            format!(
                "Plan approved (revision {revision}): it runs in {} mode{}.",
                mode.as_str(),
                if fresh {
                    ", from a fresh conversation"
                } else {
                    ""
                }
            ),
        ),
        _ => {}
    }
}
