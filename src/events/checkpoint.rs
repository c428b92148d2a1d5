//! The checkpoint ops and their answers: list the points, preview or
//! apply an undo, show what the session changed.

use serde::{Deserialize, Serialize};

use crate::checkpoint::Target;
use crate::checkpoint::restore::Preview;

/// What the user asks of the checkpoints (only while no turn runs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointInfo {
    pub id: u32,
    pub label: String,
    pub turn: u32,
    pub at: u64,
}

/// The checkpoints' answer to a [`CheckpointOp`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
