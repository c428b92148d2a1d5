//! The plan pane's keys and the user's plan edits: selecting an item
//! (which filters the trace and marks its inline cells), stepping through
//! past revisions, and edits sent as `Op::EditPlan`. Invariants: nothing
//! here changes the plan itself (the engine applies an edit and answers
//! with a revision, or an error); an edit names items by their 1-based
//! place in the live plan as the pane shows it.

use std::time::Instant;

use ratatui::crossterm::event::KeyEvent;

use super::Effect;
use crate::events::{Op, ThreadId};
use crate::todo::{Author, PlanDiff, PlanEdit, TodoStatus};
use crate::tui::keymap::{self, Action, ItemEdit, Typed};
use crate::tui::state::{App, NoticeKind, PlanPrompt, PromptKind};

/// Runs a plan pane action (revisions, edits, the prompt); `None` when
/// `action` is not one.
pub(super) fn key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    match action {
        Action::PlanRevision { older } => step_revision(app, older),
        Action::PlanEdit(edit) => return Some(edit_key(app, edit)),
        Action::ApprovePlan => {
            return Some(crate::tui::commands::plan_mode::approve(app, None, false));
        }
        Action::PromptSend => return Some(prompt_send(app)),
        Action::PromptCancel => app.root.plan.view.prompt = None,
        _ => return None,
    }
    Some(Vec::new())
}

/// ↑/↓ (j/k) in the plan pane: the item above or below the selection;
/// the first step starts from the item in progress.
pub fn select_step(app: &mut App, up: bool) {
    let plan = &mut app.root.plan;
    let Some(last) = plan.items.len().checked_sub(1) else {
        return;
    };
    let from = plan.selected_index().or_else(|| {
        plan.items
            .iter()
            .position(|i| i.status == TodoStatus::InProgress)
    });
    let next = match (from, up) {
        (Some(i), true) => i.saturating_sub(1),
        (Some(i), false) => (i + 1).min(last),
        (None, true) => last,
        (None, false) => 0,
    };
    plan.view.selected = plan.items.get(next).map(|i| i.id.clone());
    plan.view.reveal = true;
    // `u` means the selected item's undo again.
    plan.view.removed = None;
    app.root.sync_plan();
}

/// A plan change from elsewhere as one line in the conversation: the
/// model's is said by its call's cell and the user's own is the one they
/// just made, so only a skill's plan and the plan file's edits are told.
pub(super) fn echoed(app: &mut App, author: Author, diff: &PlanDiff) {
    let by = match author {
        Author::Skill => "a skill's plan",
        Author::PlanFile => "plan file",
        Author::Reply => "model's reply",
        _ => return,
    };
    if !diff.is_empty() {
        let echo = crate::text::clean_line(&diff.echo()).into_owned();
        app.notice(NoticeKind::Info, format!("Plan ({by}): {echo}"));
    }
}

/// `[` (older) or `]` (newer, then live again).
pub fn step_revision(app: &mut App, older: bool) {
    let revisions = &mut app.root.plan.revisions;
    let was = revisions.viewing;
    if older {
        revisions.older();
    } else {
        revisions.newer();
    }
    if revisions.viewing != was {
        // A revision reads from its top; live follows the item in progress.
        app.root.plan.view.scroll.follow = true;
    }
}

/// Esc in the plan pane: back to the live plan, else (when `selection`)
/// the selection goes; whether it did anything.
pub fn leave(app: &mut App, selection: bool) -> bool {
    if app.root.plan.revisions.viewing.take().is_some() {
        app.root.plan.view.scroll.follow = true;
        return true;
    }
    if selection && app.root.plan.view.selected.take().is_some() {
        app.root.sync_plan();
        return true;
    }
    false
}

/// `a` `e` `d` `x` `J` `K` in the plan pane, on the selected item (or the
/// one in progress); `a` adds after the selection (at the end without one).
pub fn edit_key(app: &mut App, edit: ItemEdit) -> Vec<Effect> {
    // Edits apply to the live plan: show it.
    leave(app, false);
    let plan = &mut app.root.plan;
    let selected = plan.selected_index();
    let target = selected.or_else(|| {
        plan.items
            .iter()
            .position(|i| i.status == TodoStatus::InProgress)
    });
    let len = plan.items.len();
    // `u` right after `x`: the removed item goes back where it was.
    let removed = plan.view.removed.take();
    if edit == ItemEdit::Undo
        && let Some((n, item)) = removed
    {
        return send_edit(app, PlanEdit::PutBack { n, item });
    }
    let item = target.and_then(|i| plan.items.get(i).map(|item| (i + 1, item)));
    let edit = match (edit, item) {
        (ItemEdit::Add, _) => {
            plan.view.prompt = Some(PlanPrompt {
                kind: PromptKind::Add {
                    after: selected.map(|i| i + 1),
                },
                text: String::new(),
            });
            plan.view.reveal = true;
            return Vec::new();
        }
        (ItemEdit::Reword, Some((n, item))) => {
            plan.view.prompt = Some(PlanPrompt {
                kind: PromptKind::Reword { n },
                text: crate::text::clean_line(&item.content).into_owned(),
            });
            plan.view.reveal = true;
            return Vec::new();
        }
        (ItemEdit::Check, Some((n, item))) => {
            plan.view.prompt = Some(PlanPrompt {
                kind: PromptKind::Check { n },
                text: item.scope.check.clone().unwrap_or_default(),
            });
            plan.view.reveal = true;
            return Vec::new();
        }
        (ItemEdit::ToggleDone, Some((n, item)))
            if item.status != TodoStatus::Completed
                && gate_kept(&app.root.trace, &item.content) =>
        {
            app.overlays.confirm = Some(crate::tui::state::Confirm::ForceDone { n });
            return Vec::new();
        }
        (ItemEdit::ToggleDone, Some((n, item))) => PlanEdit::Status {
            n,
            status: if item.status == TodoStatus::Completed {
                TodoStatus::Pending
            } else {
                TodoStatus::Completed
            },
        },
        (ItemEdit::Remove, Some((n, item))) => {
            plan.view.removed = Some((n, item.clone()));
            let text = crate::text::clean_line(&item.content).into_owned();
            let effects = send_edit(app, PlanEdit::Remove { n });
            if !effects.is_empty() {
                app.notice(
                    NoticeKind::Info,
                    format!("Removed \"{text}\" · u puts it back"),
                );
            }
            return effects;
        }
        (ItemEdit::MoveDown, Some((n, _))) if n < len => PlanEdit::Move { from: n, to: n + 1 },
        (ItemEdit::MoveUp, Some((n, _))) if n > 1 => PlanEdit::Move { from: n, to: n - 1 },
        // Already at the bottom (top).
        (ItemEdit::MoveDown | ItemEdit::MoveUp, Some(_)) => return Vec::new(),
        (ItemEdit::Undo, Some((n, _))) => {
            return crate::tui::commands::undo::undo(app, &format!("item {n}"), Instant::now());
        }
        _ => {
            app.notice(
                NoticeKind::Info,
                "Select a plan item first (↑/↓ in the plan pane).",
            );
            return Vec::new();
        }
    };
    send_edit(app, edit)
}

/// Enter in the prompt: the typed text as a new item or the item's new text.
pub fn prompt_send(app: &mut App) -> Vec<Effect> {
    let Some(prompt) = app.root.plan.view.prompt.take() else {
        return Vec::new();
    };
    let text = prompt.text.trim().to_string();
    if text.is_empty() {
        return Vec::new();
    }
    let edit = match prompt.kind {
        PromptKind::Add { after } => PlanEdit::Add { text, after },
        PromptKind::Reword { n } => PlanEdit::Reword { n, text },
        PromptKind::Check { n } => PlanEdit::Check {
            n,
            command: Some(text),
        },
    };
    send_edit(app, edit)
}

/// A key the prompt's bindings did not take: typed into it (Backspace
/// deletes); chords and other keys do nothing.
pub fn prompt_key(app: &mut App, key: &KeyEvent) {
    let Some(prompt) = app.root.plan.view.prompt.as_mut() else {
        return;
    };
    match keymap::typed(key) {
        Some(Typed::Char(c)) => prompt.text.push(c),
        Some(Typed::Backspace) => {
            prompt.text.pop();
        }
        None => {}
    }
}

/// Pasted text goes into the open prompt, as one clean line.
pub fn prompt_paste(app: &mut App, text: &str) -> bool {
    let Some(prompt) = app.root.plan.view.prompt.as_mut() else {
        return false;
    };
    prompt.text.push_str(&crate::text::clean_line(text));
    true
}

/// Sends `edit` to the engine (it answers with a user revision, or says
/// why not); from the pane's keys and `/plan`.
/// Whether the last `ItemCompleting` hook run for the item `content`
/// kept it open (blocked or failed).
fn gate_kept(trace: &crate::tui::state::trace::Trace, content: &str) -> bool {
    let head = format!("ItemCompleting · {} · ", crate::text::clean_line(content));
    trace
        .entries
        .iter()
        .rev()
        .find(|t| t.name == "hook" && t.summary.line.starts_with(&head))
        .is_some_and(|t| t.status == crate::tui::state::TraceStatus::Error)
}

pub fn send_edit(app: &mut App, edit: PlanEdit) -> Vec<Effect> {
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "The plan cannot be changed: no provider is set up.",
        );
        return Vec::new();
    }
    vec![Effect::Send(Op::EditPlan {
        thread: ThreadId::ROOT,
        edit,
    })]
}
