//! What a short plan pane folds so that the work in progress shows: the
//! gauge (the title has the count), the oldest done items (into one
//! `✓ N done` line), then each child thread's plan (into its live line),
//! as little as makes the plan fit. Invariant: the selected item and a
//! done item whose work was undone never fold; nothing here writes state.

use ratatui::text::{Line, Span};

use crate::todo::TodoStatus;
use crate::tui::state::{Checklist, Ctx};

/// The line that stands for `count` folded done items: `✓ 4 done`.
pub(super) fn done_line(count: usize, unverified: usize, ctx: &Ctx<'_>) -> Line<'static> {
    let mut spans = vec![
        Span::styled("✓ ", ctx.palette.success()),
        Span::styled(format!("{count} done"), ctx.palette.dim()),
    ];
    // A goal's folded items without passing evidence are not hidden.
    if unverified > 0 {
        spans.push(Span::styled(
            format!(" ({unverified} unverified)"),
            ctx.palette.warning(),
        ));
    }
    Line::from(spans)
}

/// What a short pane folds, as little as makes the plan fit: the gauge
/// (the title has the count), then the oldest done items (into one
/// `✓ N done` line), then each child's plan (into its one live line). The
/// selected item (and a done item whose work was undone) is never folded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Fold {
    pub gauge: bool,
    /// The first this many done items that may fold.
    pub done: usize,
    /// The first this many children.
    pub children: usize,
}

impl Fold {
    pub const NONE: Fold = Fold {
        gauge: false,
        done: 0,
        children: 0,
    };

    /// Each fold a little more than the last (one done item alone saves
    /// no line, so it never folds).
    pub fn steps(c: &Checklist, children: usize) -> impl Iterator<Item = Fold> {
        let done = (0..c.items.len()).filter(|&i| may_fold(c, i)).count();
        let done = if done > 1 { done } else { 0 };
        let gauge = Fold {
            gauge: true,
            ..Fold::NONE
        };
        std::iter::once(gauge)
            .chain((2..=done).map(move |done| Fold { done, ..gauge }))
            .chain((1..=children).map(move |children| Fold {
                done,
                children,
                ..gauge
            }))
    }
}

/// Item `index` is done and may fold: neither selected nor undone.
pub(super) fn may_fold(c: &Checklist, index: usize) -> bool {
    c.items.get(index).is_some_and(|item| {
        item.status == TodoStatus::Completed
            && c.selected_index() != Some(index)
            && !c.is_undone(&item.id)
    })
}

/// Pending items after the one in progress kept in view with it.
pub(super) const NEXT_IN_VIEW: usize = 3;
