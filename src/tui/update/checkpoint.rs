//! The checkpoints' answers as the app shows them: the points, an undo's
//! preview (then the y/n question), its report, a diff. Invariant: the
//! question opens only over a preview of the undo the user asked for.

use crate::events::CheckpointAnswer;
use crate::todo::TodoStatus;
use crate::tui::state::{App, Confirm, NoticeKind};

/// The engine's answer: the points, a preview to confirm, a report, a diff.
pub(super) fn answered(app: &mut App, answer: CheckpointAnswer) {
    match answer {
        CheckpointAnswer::List { points, commands } => {
            let mut out = String::from(
                "Checkpoints (/rewind P goes back to one; /diff P shows what changed since):",
            );
            for p in &points {
                out.push_str(&format!("\n  {}", p.label));
            }
            if points.is_empty() {
                out.push_str("\n  none yet: one is taken at each message, plan item and turn end");
            }
            if !commands {
                out.push_str("\nOutside git only Waypoint's own edits are kept: what commands change cannot be undone.");
            }
            app.notice(NoticeKind::Info, out);
        }
        CheckpointAnswer::Preview {
            preview,
            conversation,
            ..
        } => {
            if preview.actions.is_empty() && !conversation {
                app.overlays.undo = None;
                app.notice(
                    NoticeKind::Info,
                    format!("Nothing to write back.\n{}", preview.report()),
                );
                return;
            }
            // The diffs first, the summary last: what stays in view
            // above the question is what will happen.
            let mut text = String::new();
            for action in preview.actions.iter().take(8) {
                text.push_str(&action.diff);
            }
            if preview.actions.len() > 8 {
                text.push_str("… (/diff shows every file)\n");
            }
            text.push_str(&preview.report());
            if conversation {
                text.push_str("The conversation and the plan go back to that point too.\n");
            }
            app.notice(NoticeKind::Info, text);
            if let Some(pending) = &mut app.overlays.undo {
                pending.summary = Some(format!("{}: {}", preview.target, preview.summary()));
            }
            app.overlays.confirm = Some(Confirm::Undo);
        }
        CheckpointAnswer::Done { report, item } => {
            let mut text = format!("Undone. {}", report.trim_end());
            let plan = &mut app.root.plan;
            if let Some(id) = item {
                plan.mark_undone(&id);
                // The plan still says done: how to open it again.
                if let Some((n, done)) = plan
                    .items
                    .iter()
                    .enumerate()
                    .find(|(_, i)| i.id == id && i.status == TodoStatus::Completed)
                {
                    text.push_str(&format!(
                        "\nItem {} \"{}\" is still marked done: d on it in the plan pane (or /plan undone {}) reopens it.",
                        n + 1,
                        crate::text::clean_line(&done.content),
                        n + 1
                    ));
                }
            }
            app.notice(NoticeKind::Info, text);
        }
        CheckpointAnswer::Diff { text } => app.notice(NoticeKind::Info, text),
    }
}
