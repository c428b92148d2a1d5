//! The checkpoint ops and their answers: list the points, preview or
//! apply an undo, show what the session changed. The data they carry (an
//! undo's target, its preview) is defined here, in the seam, and computed
//! by the checkpoint module, which adds its methods.

use serde::{Deserialize, Serialize};

/// What the user asks of the checkpoints (only while no turn runs).
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum CheckpointOp {
    /// The points files (and the conversation) can go back to.
    List,
    /// Undo `target`: its preview (`confirm: false`), or do it (`confirm:
    /// true`, applying the preview last sent for the same request).
    /// `files: false` leaves the files; `conversation` cuts the
    /// conversation back to the point (and the plan to its revision then).
    Undo {
        /// What to undo.
        target: Target,
        /// Put the files back (true when left out).
        #[serde(default = "yes")]
        files: bool,
        /// Cut the conversation (and the plan) back to the point too
        /// (false when left out).
        #[serde(default)]
        conversation: bool,
        /// Do it (true), or only preview it (false, when left out).
        #[serde(default)]
        confirm: bool,
    },
    /// What the agent changed since point `since` (the session's start).
    Diff {
        /// The point's id (left out: the session's start).
        since: Option<u32>,
    },
}

fn yes() -> bool {
    true
}

/// A point as listed.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointInfo {
    /// Its number, from 1 (an undo's `point` target names it).
    pub id: u32,
    /// How it is listed (`#3 start of "Add tests" (turn 2)`).
    pub label: String,
    /// The turn it belongs to, from 1.
    pub turn: u32,
    /// When it was made, in unix milliseconds.
    pub at: u64,
}

/// The checkpoints' answer to a [`CheckpointOp`].
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum CheckpointAnswer {
    /// The points, oldest first; `commands`: command changes are caught
    /// too (a git work tree).
    List {
        /// The points, oldest first.
        points: Vec<PointInfo>,
        /// Changes made by commands are caught too (a git work tree).
        commands: bool,
    },
    /// What the undo will do; nothing was written.
    Preview {
        /// What it will do.
        preview: Preview,
        /// It will put the files back.
        files: bool,
        /// It will cut the conversation (and the plan) back too.
        conversation: bool,
    },
    /// The undo was done: its report, and the plan item (id) whose work
    /// it took back when it was an item's undo.
    Done {
        /// What was done, for a person.
        report: String,
        /// The id of the plan item whose work it took back (an item's
        /// undo only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item: Option<String>,
    },
    /// The session's changes as a unified diff.
    Diff {
        /// The unified diff.
        text: String,
    },
}

/// What undo reverts.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum Target {
    /// The last turn not undone yet.
    LastTurn,
    /// Everything since point `id`.
    Point {
        /// The point's id, as listed.
        id: u32,
    },
    /// The changes made while the root plan's item `id` was in progress.
    Item {
        /// The plan item's id (`TodoItem`'s `id`).
        id: String,
    },
}

/// What a restore will do; nothing is written until it is applied.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// What it undoes, in words (`the last turn (to #3)`, `item 2 "Add tests"`).
    pub target: String,
    /// The point files go back to (for a rewind of the conversation).
    pub point: Option<u32>,
    /// The files it writes back or removes.
    pub actions: Vec<Action>,
    /// The files it leaves alone, and why.
    pub conflicts: Vec<Conflict>,
    /// Commands whose changes cannot be undone (outside git).
    pub not_undoable: Vec<String>,
    /// Untracked files over the size cap, never snapshotted.
    pub skipped: Vec<(String, u64)>,
}

/// A file a restore writes back (`to: None` removes it).
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// The file's path in the workspace.
    pub path: String,
    /// What it becomes; null: it is removed.
    pub to: Option<Entry>,
    /// SHA-256 of the content the file must still have when it is written.
    pub expect: Option<String>,
    /// Lines the restore adds to the file as it is now.
    pub added: usize,
    /// Lines the restore removes from the file as it is now.
    pub removed: usize,
    /// Its unified diff (current → restored), capped.
    pub diff: String,
    /// Merged with a later step's change to the same file.
    #[serde(default)]
    pub merged: bool,
}

/// A file a restore leaves alone, and why.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The file's path in the workspace.
    pub path: String,
    /// Why it is left alone, in words.
    pub why: String,
}

/// A path's state in a snapshot: its content's reference and its mode
/// (`0o100644`, `0o100755`, `0o120000` for a symlink).
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The content's reference in the store (`sha256:HEX`, or `git:OID`
    /// in the shadow repository).
    pub blob: String,
    /// The file's mode as git writes it (`0o100644` is 33188), in decimal.
    pub mode: u32,
}
