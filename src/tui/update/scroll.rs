//! Scrolling: the focused pane moved by keys or the mouse wheel (the
//! trace moves its selection, the plan lets the selection go out of view,
//! the conversation sticks to the bottom when it is there).

use ratatui::crossterm::event::{MouseEvent, MouseEventKind};

use crate::tui::state::{App, Focus, Scroll};

const SCROLL_STEP: usize = 3;
/// Entries PgUp/PgDn move the selection in the tool trace.
pub const TRACE_PAGE: usize = 5;

#[derive(Clone, Copy)]
pub(super) enum Move {
    Up(usize),
    Down(usize),
    PageUp,
    PageDown,
    Home,
    End,
}

pub(super) fn scroll_focused(app: &mut App, mv: Move) {
    match app.focus {
        Focus::Trace if app.root.trace.expanded => {
            apply(&mut app.root.trace.detail_scroll, mv, false)
        }
        Focus::Trace => {
            // Moves among the entries the plan item's filter shows.
            let trace = &mut app.root.trace;
            let shown = trace.shown();
            let Some(last) = shown.len().checked_sub(1) else {
                return;
            };
            let cur = trace
                .selected
                .and_then(|s| shown.iter().position(|&i| i == s))
                .unwrap_or(last);
            let next = match mv {
                Move::Up(n) => cur.saturating_sub(n),
                Move::Down(n) => (cur + n).min(last),
                Move::PageUp => cur.saturating_sub(TRACE_PAGE),
                Move::PageDown => (cur + TRACE_PAGE).min(last),
                Move::Home => 0,
                Move::End => last,
            };
            // Selecting the last entry follows new calls again.
            trace.selected = if next == last {
                None
            } else {
                shown.get(next).copied()
            };
        }
        // End follows the item in progress again; scrolling down stays
        // where it is sent, even at the bottom (following would jump back).
        Focus::Checklist => {
            // Scrolling lets the selection go out of view.
            app.root.plan.view.reveal = false;
            match mv {
                Move::End => app.root.plan.view.scroll.follow = true,
                mv => apply(&mut app.root.plan.view.scroll, mv, false),
            }
        }
        Focus::Conversation | Focus::Input => apply(&mut app.root.conversation.scroll, mv, true),
    }
}

fn apply(scroll: &mut Scroll, mv: Move, sticky: bool) {
    match mv {
        Move::Up(n) => scroll.up(n),
        Move::Down(n) => scroll.down(n, sticky),
        Move::PageUp => scroll.up(scroll.page()),
        Move::PageDown => scroll.down(scroll.page(), sticky),
        Move::Home => scroll.home(),
        Move::End => scroll.end(sticky),
    }
}

/// The mouse wheel scrolls the focused pane; returns whether the event
/// changed anything (clicks and motion do not).
pub fn on_mouse(app: &mut App, mouse: MouseEvent) -> bool {
    if app.overlays.approvals.is_open() {
        // The wheel scrolls the prompt's command or diff.
        let scroll = &mut app.overlays.approvals.scroll;
        match mouse.kind {
            MouseEventKind::ScrollUp => scroll.up(SCROLL_STEP),
            MouseEventKind::ScrollDown => scroll.down(SCROLL_STEP, false),
            _ => return false,
        }
        return true;
    }
    if let Some(picker) = app.overlays.picker.as_mut() {
        // The wheel moves the picker's selection, not the panes under it.
        match mouse.kind {
            MouseEventKind::ScrollUp => picker.step(-1),
            MouseEventKind::ScrollDown => picker.step(1),
            _ => return false,
        }
        return true;
    }
    match mouse.kind {
        MouseEventKind::ScrollUp => scroll_focused(app, Move::Up(SCROLL_STEP)),
        MouseEventKind::ScrollDown => scroll_focused(app, Move::Down(SCROLL_STEP)),
        _ => return false,
    }
    true
}
