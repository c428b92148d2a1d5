//! How a tool call ended, typed: the engine, the drivers and the
//! transcript decide by these, never by the text of the output.

use serde::{Deserialize, Serialize};

/// How a tool call ended.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// It ran (a command may still have exited non-zero).
    Ok,
    /// It failed or was refused.
    Error,
    /// It was interrupted, or never started.
    Interrupted,
}

/// How a tool call ended, typed: drivers and the engine decide by this,
/// never by the text of the output (which is what the model reads).
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// It ran (a command that exited non-zero ran too: see `exit_code`).
    Ok,
    /// It ran, or tried to, and failed.
    Failed {
        /// What kind of failure.
        failure: Failure,
    },
    /// It was not run: `by` refused it, for `reason` (what the user sees).
    Refused {
        /// Who refused it.
        by: Refuser,
        /// Why, as the user sees it.
        reason: String,
    },
    /// The user interrupted it; `partial`: it had output by then (in the
    /// result).
    Interrupted {
        /// It had output by then (in the result).
        partial: bool,
    },
    /// It ran in the sandbox, which stopped it at `what` (a path outside
    /// the writable set, or the network).
    SandboxBlocked {
        /// What the sandbox stopped it at (a path, or the network).
        what: String,
    },
    /// The turn was interrupted before it started.
    NotRun,
}

impl ToolOutcome {
    /// The coarse status drivers show (a sandbox block is a command that
    /// ran and failed: `Ok`, with its exit code).
    pub fn status(&self) -> ToolStatus {
        match self {
            ToolOutcome::Ok | ToolOutcome::SandboxBlocked { .. } => ToolStatus::Ok,
            ToolOutcome::Failed { .. } | ToolOutcome::Refused { .. } => ToolStatus::Error,
            ToolOutcome::Interrupted { .. } | ToolOutcome::NotRun => ToolStatus::Interrupted,
        }
    }

    /// The model reads the result as an error.
    pub fn is_error(&self) -> bool {
        self.status() != ToolStatus::Ok
    }

    /// The line that says why a call stopped, when its outcome alone says
    /// it (a driver that showed the call's output live adds only this).
    pub fn headline(&self) -> Option<&'static str> {
        match self {
            ToolOutcome::Interrupted { .. } => Some(INTERRUPTED),
            _ => None,
        }
    }
}

/// What an interrupted call's result says first.
pub const INTERRUPTED: &str = "Error: interrupted by the user before this tool finished.";

/// The result of a call the turn's interrupt kept from starting.
pub const NOT_RUN: &str = "Error: not run: the user interrupted the turn before this call started.";

/// What kind of failure a failed call was.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The input did not match the tool's schema.
    InvalidInput,
    /// No tool has that name.
    UnknownTool,
    /// The tool said why it could not do it (a missing file, a bad pattern).
    Tool,
    /// The command ran past its timeout and was killed.
    TimedOut,
    /// A bug in Waypoint stopped the tool.
    Crashed,
}

/// Who refused a call.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refuser {
    /// The approval mode (read-only; auto without a sandbox).
    Mode,
    /// A deny rule, or rules the command could not be checked against.
    Rules,
    /// The user, asked for approval.
    User,
    /// The plan's rules (an invalid `todo_write`).
    Plan,
    /// A hook (`PreToolUse` exit 2 or `deny`; `ItemCompleting`).
    Hook,
}
