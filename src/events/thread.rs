//! Which agent a fact is of.

use serde::{Deserialize, Serialize};

/// Which agent a fact is of: the root thread is the one the user talks
/// to; a child (a subagent a tool call started) gets a number of its own.
#[derive(
    schemars::JsonSchema,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
)]
#[serde(transparent)]
pub struct ThreadId(pub u32);

impl ThreadId {
    /// The thread the user talks to.
    pub const ROOT: ThreadId = ThreadId(0);

    pub fn is_root(&self) -> bool {
        *self == Self::ROOT
    }
}

impl std::fmt::Display for ThreadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "thread {}", self.0)
    }
}
