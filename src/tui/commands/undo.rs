//! `/undo`, `/rewind` and `/diff`: the checkpoint ops as the user types
//! them. Invariant: nothing is restored without the user seeing the
//! preview (files, +/− lines, conflicts) and answering yes; an item is
//! named by its place in the live plan as the pane shows it.

use std::time::Instant;

use crate::checkpoint::Target;
use crate::events::{CheckpointOp, Op};
use crate::tui::effect::Effect;
use crate::tui::state::{App, NoticeKind, PendingUndo};

const USAGE: &str = "/undo (the last turn) | /undo item N | /undo #P (back to point P)";

/// `/undo`, `/undo item N`, `/undo #P`.
pub fn undo(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let target = match words.as_slice() {
        [] => Target::LastTurn,
        ["item", n] => match n.parse::<usize>().ok().and_then(|n| {
            n.checked_sub(1)
                .and_then(|i| app.root.plan.items.get(i))
                .map(|i| i.id.clone())
        }) {
            Some(id) => Target::Item { id },
            None => return refuse(app, &format!("there is no plan item {n}")),
        },
        [point] => match point.trim_start_matches('#').parse::<u32>() {
            Ok(id) => Target::Point { id },
            Err(_) => return refuse(app, USAGE),
        },
        _ => return refuse(app, USAGE),
    };
    ask(
        app,
        CheckpointOp::Undo {
            target,
            files: true,
            conversation: false,
            confirm: false,
        },
    )
}

/// `/rewind` (the points), `/rewind P [files|conversation|both]`.
pub fn rewind(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let (point, what) = match words.as_slice() {
        [] => return ask(app, CheckpointOp::List),
        [point] => (*point, "both"),
        [point, what] => (*point, *what),
        _ => return refuse(app, "/rewind [P [files|conversation|both]]"),
    };
    let Ok(id) = point.trim_start_matches('#').parse::<u32>() else {
        return refuse(
            app,
            "/rewind P: P is a point's number, as /rewind lists them",
        );
    };
    let (files, conversation) = match what {
        "files" => (true, false),
        "conversation" => (false, true),
        "both" => (true, true),
        _ => return refuse(app, "/rewind P files | conversation | both"),
    };
    ask(
        app,
        CheckpointOp::Undo {
            target: Target::Point { id },
            files,
            conversation,
            confirm: false,
        },
    )
}

/// `/diff [P]`: what the agent changed in this session (or since P).
pub fn diff(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    let since = match args.trim().trim_start_matches('#') {
        "" => None,
        n => match n.parse::<u32>() {
            Ok(id) => Some(id),
            Err(_) => return refuse(app, "/diff [P]: P is a point's number"),
        },
    };
    ask(app, CheckpointOp::Diff { since })
}

fn refuse(app: &mut App, why: &str) -> Vec<Effect> {
    app.notice(NoticeKind::Error, format!("Nothing was undone: {why}."));
    Vec::new()
}

fn ask(app: &mut App, op: CheckpointOp) -> Vec<Effect> {
    if app.status.turn.running() {
        app.notice(
            NoticeKind::Warning,
            "The agent is working: undo waits for the turn to end (Ctrl+C interrupts).",
        );
        return Vec::new();
    }
    if matches!(op, CheckpointOp::Undo { .. }) {
        app.overlays.undo = Some(PendingUndo {
            op: op.clone(),
            summary: None,
        });
    }
    vec![Effect::Send(Op::Checkpoint { action: op })]
}

/// The user said yes to the preview: the same op, confirmed.
pub fn confirmed(app: &mut App) -> Vec<Effect> {
    match app.overlays.undo.take().map(|u| u.op) {
        Some(CheckpointOp::Undo {
            target,
            files,
            conversation,
            ..
        }) => vec![Effect::Send(Op::Checkpoint {
            action: CheckpointOp::Undo {
                target,
                files,
                conversation,
                confirm: true,
            },
        })],
        _ => Vec::new(),
    }
}
