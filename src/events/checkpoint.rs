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
        target: Target,
        #[serde(default = "yes")]
        files: bool,
        #[serde(default)]
        conversation: bool,
        #[serde(default)]
        confirm: bool,
    },
    /// What the agent changed since point `since` (the session's start).
    Diff { since: Option<u32> },
}

fn yes() -> bool {
    true
}

/// A point as listed.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointInfo {
    pub id: u32,
    pub label: String,
    pub turn: u32,
    pub at: u64,
}

/// The checkpoints' answer to a [`CheckpointOp`].
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum CheckpointAnswer {
    /// The points, oldest first; `commands`: command changes are caught
    /// too (a git work tree).
    List {
        points: Vec<PointInfo>,
        commands: bool,
    },
    /// What the undo will do; nothing was written.
    Preview {
        preview: Preview,
        files: bool,
        conversation: bool,
    },
    /// The undo was done: its report, and the plan item (id) whose work
    /// it took back when it was an item's undo.
    Done {
        report: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item: Option<String>,
    },
    /// The session's changes as a unified diff.
    Diff { text: String },
}

/// What undo reverts.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum Target {
    /// The last turn not undone yet.
    LastTurn,
    /// Everything since point `id`.
    Point { id: u32 },
    /// The changes made while the root plan's item `id` was in progress.
    Item { id: String },
}

/// What a restore will do; nothing is written until it is applied.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// What it undoes, in words (`the last turn (to #3)`, `item 2 "Add tests"`).
    pub target: String,
    /// The point files go back to (for a rewind of the conversation).
    pub point: Option<u32>,
    pub actions: Vec<Action>,
    pub conflicts: Vec<Conflict>,
    /// Commands whose changes cannot be undone (outside git).
    pub not_undoable: Vec<String>,
    /// Untracked files over the size cap, never snapshotted.
    pub skipped: Vec<(String, u64)>,
}

/// A file a restore writes back (`to: None` removes it).
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    pub path: String,
    pub to: Option<Entry>,
    /// SHA-256 of the content the file must still have when it is written.
    pub expect: Option<String>,
    pub added: usize,
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
    pub path: String,
    pub why: String,
}

/// A path's state in a snapshot: its content's reference and its mode
/// (`0o100644`, `0o100755`, `0o120000` for a symlink).
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub blob: String,
    pub mode: u32,
}
