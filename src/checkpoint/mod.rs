//! Checkpoints and undo. Two layers, neither touching the user's
//! repository: the pre-images of every file Waypoint's own write and edit
//! tools change ([`BlobStore`], beside the transcript), and in a git work
//! tree a shadow repository ([`Shadow`]) snapshotting the whole tree at
//! each point (a prompt, a plan item's start, a turn's end, a restore), so
//! commands' changes are caught too. The session's transcript records
//! every point, change and restore ([`Mark`]); a [`History`] read back
//! from those records is what `/undo`, `/rewind`, "undo item N", `/diff`
//! and `waypoint undo` plan from ([`restore`]). Invariant: a point's
//! snapshot is taken before any later writing call runs, so a span
//! between two points holds exactly what was done in it.

pub mod apply;
mod blobs;
mod error;
pub mod live;
mod merge;
pub mod restore;
mod shadow;

use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

pub use crate::events::checkpoint::Target;
use crate::todo::{TodoItem, TodoStatus};

pub use apply::undo_note;
pub use blobs::{BlobStore, OWN, dir_bytes, sha256};
pub use error::{RestoreError, StoreError};
pub use shadow::{DEFAULT_CAP, Delta, Entry, GIT, Shadow, Snapshot};

/// Unix time in milliseconds.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Locks `m`, whatever a panicking holder left (the data is plain).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why a point was taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PointKind {
    /// Before the user's message `text` (its first line) was worked on.
    Prompt { text: String },
    /// A plan item became the one in progress.
    Item { item_id: String, content: String },
    /// A turn ended.
    TurnEnd,
    /// Just before a restore (so the restore can be undone).
    BeforeRestore,
    /// Just after a restore of `target`.
    Restored { target: String },
}

/// A moment files (and the conversation) can go back to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub id: u32,
    #[serde(flatten)]
    pub kind: PointKind,
    /// The turn it belongs to (1 is the session's first).
    pub turn: u32,
    /// The root plan's item in progress from this point on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// The shadow repository's tree, in a git work tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The root conversation's length (messages) then.
    pub messages: usize,
    /// A fingerprint (SHA-256) of its last message then: a rewind of the
    /// conversation checks it, so one compacted since is never cut wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<String>,
    /// The root plan then.
    #[serde(default)]
    pub plan: Vec<TodoItem>,
    /// Untracked files over the size cap, not in the snapshot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<(String, u64)>,
    pub at: u64,
}

impl Point {
    /// How the point is listed: `#3 item "Add tests" (turn 2)`.
    pub fn label(&self) -> String {
        let what = match &self.kind {
            PointKind::Prompt { text } => format!("before \"{}\"", short(text)),
            PointKind::Item { content, .. } => {
                format!("start of \"{}\"", short(content))
            }
            PointKind::TurnEnd => "end of the turn".into(),
            PointKind::BeforeRestore => "before a restore".into(),
            PointKind::Restored { target } => format!("after undoing {}", short(target)),
        };
        format!("#{} {what} (turn {})", self.id, self.turn)
    }
}

/// A file one of Waypoint's own tools changed (`before` is `None` for a
/// file it created).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The latest point when it was made.
    pub point: u32,
    pub call: String,
    /// Relative to the workspace.
    pub path: String,
    pub before: Option<Entry>,
    pub after: Option<Entry>,
    pub at: u64,
}

/// A command ran where only own-tool changes are kept (outside git): what
/// it changed cannot be undone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRan {
    pub point: u32,
    pub call: String,
    pub summary: String,
}

/// A restore done: what it aimed at, the files it wrote and the ones it
/// refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restored {
    /// What was undone, as the user asked (`the last turn`, `item 2`, `#4`).
    pub target: String,
    /// What the user asked to undo.
    pub undid: Target,
    /// The point files went back to, for a rewind or `/undo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<u32>,
    /// The point taken just before it (rewinding to it undoes the restore).
    pub before: u32,
    pub files: Vec<String>,
    #[serde(default)]
    pub conflicts: Vec<String>,
    /// The conversation was cut back to this many messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<usize>,
    pub at: u64,
}

/// One checkpoint record of the transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mark", rename_all = "snake_case")]
pub enum Mark {
    Point(Point),
    Change(FileChange),
    Command(CommandRan),
    Restore(Restored),
}

/// The session's checkpoints, as recorded.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub points: Vec<Point>,
    pub changes: Vec<FileChange>,
    pub commands: Vec<CommandRan>,
    pub restores: Vec<Restored>,
}

impl History {
    pub fn add(&mut self, mark: Mark) {
        match mark {
            Mark::Point(p) => self.points.push(p),
            Mark::Change(c) => self.changes.push(c),
            Mark::Command(c) => self.commands.push(c),
            Mark::Restore(r) => self.restores.push(r),
        }
    }

    pub fn point(&self, id: u32) -> Option<&Point> {
        self.points.iter().find(|p| p.id == id)
    }

    /// The next point's id.
    pub fn next_id(&self) -> u32 {
        self.points.iter().map(|p| p.id + 1).max().unwrap_or(1)
    }

    /// The latest point (the state the agent last left).
    pub fn latest(&self) -> Option<&Point> {
        self.points.iter().max_by_key(|p| p.id)
    }

    /// The start of the last turn whose changes were not taken back by
    /// `/undo` yet: each `/undo` goes one turn further back, and a turn
    /// made after an undo is the next one taken back.
    pub fn last_turn_start(&self) -> Option<&Point> {
        let undone: Vec<u32> = self
            .restores
            .iter()
            .filter(|r| r.undid == Target::LastTurn)
            .filter_map(|r| r.to)
            .collect();
        self.points
            .iter()
            .filter(|p| matches!(p.kind, PointKind::Prompt { .. }))
            .filter(|p| !undone.contains(&p.id))
            .max_by_key(|p| p.id)
    }

    /// The spans `(start, end)` of points during which the root plan's
    /// item `id` was in progress, oldest first; `end` is the next point.
    pub fn item_spans(&self, id: &str) -> Vec<(&Point, &Point)> {
        let mut sorted: Vec<&Point> = self.points.iter().collect();
        sorted.sort_by_key(|p| p.id);
        sorted
            .windows(2)
            .filter(|w| w[0].item.as_deref() == Some(id))
            .map(|w| (w[0], w[1]))
            .collect()
    }

    /// The root plan's item at 1-based position `n` in the latest plan a
    /// point knows.
    pub fn item_at(&self, n: usize) -> Option<TodoItem> {
        self.latest()?.plan.get(n.checked_sub(1)?).cloned()
    }

    /// Whether an item with this id was ever in progress.
    pub fn item_worked(&self, id: &str) -> bool {
        self.points.iter().any(|p| p.item.as_deref() == Some(id))
    }
}

/// The id of the plan's item in progress.
pub fn in_progress(plan: &[TodoItem]) -> Option<String> {
    plan.iter()
        .find(|i| i.status == TodoStatus::InProgress)
        .map(|i| i.id.clone())
}

/// The first line of `text`, at most 48 characters.
fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(47) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// The fingerprint a point keeps of the conversation's message at
/// `messages - 1` (none for an empty conversation): SHA-256 of its JSON.
pub fn tail_of<M: Serialize>(conversation: &[M], messages: usize) -> Option<String> {
    let last = conversation.get(messages.checked_sub(1)?)?;
    let bytes = serde_json::to_vec(last).ok()?;
    Some(sha256(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: u32, kind: PointKind) -> Mark {
        Mark::Point(Point {
            id,
            kind,
            turn: id,
            item: None,
            tree: None,
            messages: 0,
            tail: None,
            plan: Vec::new(),
            skipped: Vec::new(),
            at: 0,
        })
    }

    fn undo_turn(to: u32) -> Mark {
        Mark::Restore(Restored {
            target: "the last turn".into(),
            undid: Target::LastTurn,
            to: Some(to),
            before: 0,
            files: Vec::new(),
            conflicts: Vec::new(),
            messages: None,
            at: 0,
        })
    }

    #[test]
    fn each_undo_goes_a_turn_further_back_and_a_new_turn_comes_first() {
        let prompt = || PointKind::Prompt { text: "go".into() };
        let mut h = History::default();
        for id in [1, 3, 5] {
            h.add(point(id, prompt()));
            h.add(point(id + 1, PointKind::TurnEnd));
        }
        assert_eq!(h.last_turn_start().map(|p| p.id), Some(5));
        h.add(undo_turn(5));
        assert_eq!(h.last_turn_start().map(|p| p.id), Some(3));
        h.add(undo_turn(3));
        h.add(point(9, prompt()));
        assert_eq!(h.last_turn_start().map(|p| p.id), Some(9), "the new turn");
        h.add(undo_turn(9));
        assert_eq!(h.last_turn_start().map(|p| p.id), Some(1));
    }
}
