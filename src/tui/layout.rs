//! Where each pane goes for a given terminal size. Invariant: every rect
//! lies inside the frame and none overlap, down to a 1x1 terminal; the
//! checklist always gets at least one row when there is a row to give.

use ratatui::layout::Rect;

use super::state::{App, Focus};

/// Below this width the right column moves under the conversation.
pub const WIDE_FROM: u16 = 100;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    pub conversation: Option<Rect>,
    pub checklist: Rect,
    /// True when the checklist shows as one line.
    pub checklist_collapsed: bool,
    pub trace: Option<Rect>,
    /// The row under the conversation holding the "stopped with open
    /// items" banner, while it shows.
    pub banner: Option<Rect>,
    pub input: Rect,
    pub status: Rect,
}

fn take_bottom(area: &mut Rect, h: u16) -> Rect {
    let h = h.min(area.height);
    area.height -= h;
    Rect {
        y: area.y + area.height,
        height: h,
        ..*area
    }
}

fn take_top(area: &mut Rect, h: u16) -> Rect {
    let h = h.min(area.height);
    let top = Rect { height: h, ..*area };
    area.y += h;
    area.height -= h;
    top
}

/// Rows the expanded checklist wants: border, gauge, items (+1 for the
/// active one), notices (refused update, dropped items), child threads'
/// plans, footer.
fn checklist_rows(app: &App) -> u16 {
    let rows = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    if let Some(r) = app.root.plan.revisions.shown() {
        // Header, keys line, items, removed ones, border.
        return rows(r.items.len().max(1) + r.diff.removed.len()).saturating_add(4);
    }
    let items = rows(app.root.plan.items.len());
    let dropped = u16::try_from(app.root.plan.highlight.dropped_rows().min(4)).unwrap_or(4);
    let extra = u16::from(app.root.plan.active().is_some())
        + u16::from(app.root.plan.stopped_open.is_some())
        + u16::from(app.root.plan.refused.is_some())
        + u16::from(app.root.plan.view.selected.is_some())
        + u16::from(app.root.plan.view.prompt.is_some())
        + dropped;
    items
        .max(1)
        .saturating_add(extra)
        .saturating_add(nested_rows(app))
        .saturating_add(3)
}

/// The rows of the child threads' plans nested in the plan (a header and
/// one row an item).
fn nested_rows(app: &App) -> u16 {
    let rows: usize = app
        .root
        .nested_plans(&app.threads)
        .iter()
        .map(|n| n.plan.items.len() + 1)
        .sum();
    u16::try_from(rows).unwrap_or(u16::MAX)
}

pub fn compute(area: Rect, app: &App) -> Areas {
    let mut rest = area;
    let status = take_bottom(&mut rest, 1);
    let lines = u16::try_from(app.input.area.lines().len()).unwrap_or(u16::MAX);
    let input_h = lines
        .saturating_add(2)
        .clamp(3, 8)
        .min(rest.height.saturating_sub(2).max(rest.height.min(3)));
    let input = take_bottom(&mut rest, input_h);
    let mut areas = Areas {
        status,
        input,
        ..Areas::default()
    };
    if area.width >= WIDE_FROM {
        let left_w = u16::try_from(u32::from(area.width) * 3 / 5).unwrap_or(area.width);
        let left = Rect {
            width: left_w,
            ..rest
        };
        let mut right = Rect {
            x: rest.x + left_w,
            width: rest.width - left_w,
            ..rest
        };
        let collapsed = app.root.plan.view.collapsed || rest.height < 10;
        let want = if collapsed {
            1
        } else {
            checklist_rows(app).min(rest.height / 2).max(3)
        };
        areas.checklist = take_top(&mut right, want);
        areas.checklist_collapsed = collapsed;
        areas.trace = (right.height > 0).then_some(right);
        areas.conversation = Some(left);
    } else {
        let collapsed = app.root.plan.view.collapsed || rest.height < 14;
        let want = if collapsed {
            1
        } else {
            checklist_rows(app).min(rest.height / 2).max(3)
        };
        areas.checklist = take_top(&mut rest, want);
        areas.checklist_collapsed = collapsed;
        // The conversation and the trace share the rest as tabs.
        if app.focus == Focus::Trace {
            areas.trace = Some(rest);
        } else {
            areas.conversation = Some(rest);
        }
    }
    // The banner takes the conversation's last row (when it can spare it).
    if app.root.plan.banner(app.status.turn.running())
        && let Some(conv) = areas.conversation.as_mut()
        && conv.height >= 6
    {
        areas.banner = Some(take_bottom(conv, 1));
    }
    areas
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::style::Palette;

    fn inside(r: Rect, area: Rect) -> bool {
        r.x >= area.x && r.y >= area.y && r.right() <= area.right() && r.bottom() <= area.bottom()
    }

    #[test]
    fn every_size_fits() {
        let mut app = App::new("m", "w", Palette::monochrome(), std::time::Instant::now());
        // With the banner under the conversation.
        app.root.plan.finished_open = true;
        app.root.plan.items.push(crate::todo::TodoItem {
            id: "1".into(),
            content: "open".into(),
            status: crate::todo::TodoStatus::Pending,
            active_form: "open".into(),
            scope: Default::default(),
        });
        for w in 1..=220u16 {
            for h in 1..=70u16 {
                let area = Rect::new(0, 0, w, h);
                let a = compute(area, &app);
                let rects = [
                    Some(a.status),
                    Some(a.input),
                    Some(a.checklist),
                    a.conversation,
                    a.trace,
                    a.banner,
                ];
                let rects: Vec<Rect> = rects.into_iter().flatten().collect();
                for r in &rects {
                    assert!(inside(*r, area), "{w}x{h}: {r:?}");
                }
                for (i, r) in rects.iter().enumerate() {
                    for s in &rects[i + 1..] {
                        assert!(
                            r.intersection(*s).is_empty(),
                            "{w}x{h}: {r:?} overlaps {s:?}"
                        );
                    }
                }
                if h >= 5 {
                    assert!(
                        a.checklist.height >= 1,
                        "{w}x{h}: the plan is always on screen"
                    );
                }
            }
        }
    }
}
