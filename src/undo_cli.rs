//! `waypoint checkpoints ID` and `waypoint undo ID`: a stored session's
//! points, and an undo of it from the shell, by the same rules as in the
//! app (preview, conflicts left alone, journaled atomic writes, the
//! transcript told, the model told at the next resume). Invariant: a
//! session open in another Waypoint is refused (its transcript's lock),
//! never restored under it.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::checkpoint::live::{Ask, Checkpoints, Setup};
use crate::checkpoint::{PointKind, Target, lock, undo_note};
use crate::session::{Record, SessionStore, Transcript, load, now_ms, replay};

/// What `waypoint undo` takes back.
#[derive(Clone, Debug)]
pub enum UndoWhat {
    LastTurn,
    /// Back to point P.
    To(u32),
    /// Plan item N (1-based, in the session's plan).
    Item(usize),
}

/// A stored session opened for checkpoint work: its replayed state, its
/// transcript (locked), its checkpoints.
struct Opened {
    restored: crate::session::Restored,
    transcript: Arc<Mutex<Transcript>>,
    checkpoints: Checkpoints,
}

fn open(store: &SessionStore, id: &str) -> Result<Opened, String> {
    let info = store.find(id).map_err(|e| e.to_string())?;
    let restored =
        replay(load(&info.path).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let file = &restored.file;
    let transcript = file.reopen().map_err(|e| e.to_string())?;
    let transcript = Arc::new(Mutex::new(transcript));
    {
        let mut t = lock(&transcript);
        for record in &restored.repairs {
            t.record(record);
        }
    }
    let log = transcript.clone();
    let sink = Arc::new(move |mark: &crate::checkpoint::Mark| {
        if let Some(warning) = lock(&log).record(&Record::Checkpoint { mark: mark.clone() }) {
            eprintln!("waypoint: {warning}");
        }
    });
    let checkpoints = Checkpoints::default();
    checkpoints.open(Setup {
        blobs: file.path.with_extension("blobs"),
        shadows: store.dir().join("shadow"),
        work_tree: std::path::PathBuf::from(&file.header.workspace),
        session: file.header.id.clone(),
        history: file.checkpoints.clone(),
        sink,
        notify: Arc::new(|note| eprintln!("waypoint: {note}")),
    });
    Ok(Opened {
        restored,
        transcript,
        checkpoints,
    })
}

/// `waypoint checkpoints ID`: the session's points, oldest first.
pub fn list(store: &SessionStore, id: &str, out: &mut dyn Write) -> Result<i32, String> {
    let info = store.find(id).map_err(|e| e.to_string())?;
    let restored =
        replay(load(&info.path).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let history = &restored.file.checkpoints;
    let write = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| format!("cannot write: {e}"))
    };
    if history.points.is_empty() {
        write(out, "No checkpoints in this session.".into())?;
        return Ok(0);
    }
    let mut points: Vec<_> = history.points.iter().collect();
    points.sort_by_key(|p| p.id);
    for p in points {
        let at = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(p.at),
        );
        let snap = if p.tree.is_some() {
            ""
        } else {
            "  (own edits only)"
        };
        write(out, format!("{}  {at}{snap}", p.label()))?;
    }
    for r in &history.restores {
        write(
            out,
            format!(
                "undo of {}: {} file(s), back to #{}",
                r.target,
                r.files.len(),
                r.before
            ),
        )?;
    }
    Ok(0)
}

/// `waypoint undo ID [--to P | --item N] [--dry-run]`: prints the
/// preview, then (unless `dry_run`) restores. Exit code 0, or 1 when a
/// file was left alone (a conflict).
pub async fn undo(
    store: &SessionStore,
    id: &str,
    what: UndoWhat,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<i32, String> {
    let opened = open(store, id)?;
    let target = match what {
        UndoWhat::LastTurn => Target::LastTurn,
        UndoWhat::To(id) => Target::Point { id },
        UndoWhat::Item(n) => {
            let items = opened.restored.plan.items();
            let item = n
                .checked_sub(1)
                .and_then(|i| items.get(i))
                .ok_or_else(|| format!("the session's plan has no item {n}"))?;
            Target::Item {
                id: item.id.clone(),
            }
        }
    };
    let checkpoints = &opened.checkpoints;
    // A restore a crash cut off is finished before anything else.
    checkpoints.settled().await;
    let preview = checkpoints.preview(&target).await?;
    // The diffs hold the files' text as written (by the model, a
    // command, anyone): no escape sequence of theirs reaches the terminal.
    let put = |out: &mut dyn Write, text: &str| {
        out.write_all(crate::text::clean(text).as_bytes())
            .map_err(|e| format!("cannot write: {e}"))
    };
    put(out, &preview.report())?;
    for action in &preview.actions {
        put(out, &action.diff)?;
    }
    if dry_run {
        put(out, "Nothing was written (--dry-run).\n")?;
        return Ok(0);
    }
    let restored = &opened.restored;
    let plan = restored.plan.items().to_vec();
    let before = Ask {
        kind: PointKind::BeforeRestore,
        turn: restored.turns,
        messages: restored.conversation.messages().len(),
        tail: crate::checkpoint::tail_of(
            restored.conversation.messages(),
            restored.conversation.messages().len(),
        ),
        plan: plan.clone(),
    };
    let text = preview.target.clone();
    let (applied, done) = checkpoints.apply(preview, target, None, before).await?;
    checkpoints.point(Ask {
        kind: PointKind::Restored {
            target: text.clone(),
        },
        turn: restored.turns,
        messages: restored.conversation.messages().len(),
        tail: crate::checkpoint::tail_of(
            restored.conversation.messages(),
            restored.conversation.messages().len(),
        ),
        plan,
    });
    checkpoints.settled().await;
    let note = undo_note(&text, &done, &applied.conflicts);
    let mut t = lock(&opened.transcript);
    t.record(&Record::User {
        text: std::borrow::Cow::Borrowed(&note),
        prompt: false,
        at: now_ms(),
    });
    if let Some(warning) = t.sync() {
        return Err(warning);
    }
    put(
        out,
        &format!(
            "Written: {} file(s); left alone: {}.\n",
            applied.files.len(),
            applied.conflicts.len()
        ),
    )?;
    Ok(i32::from(!applied.conflicts.is_empty()))
}

/// Runs `checkpoints` or `undo` when `command` is one of them.
pub async fn command(
    command: Option<&crate::cli::Command>,
    store: &SessionStore,
) -> Option<Result<i32, String>> {
    let out = &mut std::io::stdout();
    match command? {
        crate::cli::Command::Checkpoints { id } => Some(list(store, id, out)),
        crate::cli::Command::Undo {
            id,
            to,
            item,
            dry_run,
        } => {
            let what = match (to, item) {
                (Some(p), _) => UndoWhat::To(*p),
                (None, Some(n)) => UndoWhat::Item(*n),
                (None, None) => UndoWhat::LastTurn,
            };
            Some(undo(store, id, what, *dry_run, out).await)
        }
        _ => None,
    }
}
