//! Draws the whole screen from the state: a pure function of `&App` and
//! the time (spinners and timers), so it can be snapshot-tested.

use std::time::Instant;

use ratatui::Frame;
use ratatui::widgets::Block;

use super::layout;
use super::state::{App, Focus};
use super::widgets::{checklist, conversation, help, status, trace};

pub fn draw(frame: &mut Frame, app: &App, now: Instant) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let areas = layout::compute(area, app);
    if let Some(r) = areas.conversation {
        conversation::render(frame, app, r);
    }
    checklist::render(frame, app, areas.checklist, areas.checklist_collapsed, now);
    if let Some(r) = areas.trace {
        trace::render(frame, app, r, now);
    }
    draw_input(frame, app, areas.input);
    status::render(frame, app, areas.status, now);
    if app.show_help {
        help::render(frame, app, area);
    }
}

fn draw_input(frame: &mut Frame, app: &App, area: ratatui::layout::Rect) {
    if area.height == 0 {
        return;
    }
    let title = if app.running {
        " Message (queued until the turn ends) "
    } else {
        " Message "
    };
    let block: Block = super::widgets::pane_block(app, title, Focus::Input);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&app.input, inner);
    // The text area draws its own cursor.
}
