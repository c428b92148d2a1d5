//! Why a conversation is compacted and why a turn ended early.

use serde::{Deserialize, Serialize};

/// Why the conversation is compacted.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    /// The next request would pass `compact_at` of the window.
    Threshold,
    /// The user asked (`/compact`).
    User,
    /// The provider answered that the prompt is too long.
    TooLong,
    /// The user approved a plan with fresh context: the conversation
    /// restarts from the task, the research's summary and the plan.
    Approval,
}

/// Why a turn ended early.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    /// The user interrupted it (`Interrupt`).
    Interrupted,
    /// It reached a limit: `--max-turns` model requests, or one of a
    /// subagent's `[task]` limits.
    MaxTurns,
    /// A request failed (see `error`).
    Failed,
    /// A hook said to stop (`continue: false`).
    Hook,
}
