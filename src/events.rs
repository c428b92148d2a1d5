//! The seam between the engine and whatever drives it: `Op`s are requests
//! sent in, `Event`s are facts sent out. Invariant: every `ToolCallBegin`
//! is followed by exactly one `ToolCallEnd` for the same id, even when the
//! turn is interrupted; every `TurnStarted` ends in `TurnComplete` or
//! `TurnAborted`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::todo::{PlanDiff, TodoItem};

/// A request to the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message: starts a turn, or is queued until the running turn ends.
    Submit { text: String },
    /// Stop the running turn now: cancel the request, kill the running tool.
    Interrupt,
    /// Continue an interrupted (or stopped) turn where it left off.
    Resume,
    /// Stop the engine.
    Quit,
    /// Switch model (and optionally provider) for the next turn.
    SetModel {
        provider: Option<String>,
        model: String,
    },
    /// Drop the conversation and the plan; a running turn is stopped first.
    NewSession,
    /// Use another model client from now on (settings were fixed and reloaded).
    #[serde(skip)]
    SetClient(NewClient),
}

/// A model client handed to the engine; compared by identity.
#[derive(Clone)]
pub struct NewClient(pub std::sync::Arc<dyn crate::llm::ModelClient>);

impl std::fmt::Debug for NewClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NewClient({})", self.0.model())
    }
}

impl PartialEq for NewClient {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for NewClient {}

/// How a tool call is shown: a one-line summary and what its detail view holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    pub line: String,
    pub detail: ToolDetail,
}

/// What a tool call's expanded view shows besides its output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDetail {
    /// Its output.
    Output,
    /// The plan, already on screen: no output to show.
    Plan,
    /// A change to a file.
    Diff {
        path: String,
        old: String,
        new: String,
    },
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Error,
    Interrupted,
}

/// Why a turn ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    Interrupted,
    MaxTurns,
    Failed,
}

/// A fact from the engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A turn began (a user message or a resume).
    TurnStarted {
        resumed: bool,
    },
    /// A model request began; `round` counts requests within the turn from 1.
    RoundStarted {
        round: u32,
    },
    /// A piece of the model's visible reply.
    TextDelta {
        text: String,
    },
    /// The request is being retried; text streamed since `RoundStarted` is void.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    ToolCallBegin {
        id: String,
        name: String,
        /// One-line summary of the arguments (the command, the path).
        summary: String,
        input: Value,
        /// Stable id of the plan item in progress when the call started.
        plan_item_id: Option<String>,
        /// Its content, for display.
        plan_item: Option<String>,
    },
    ToolCallOutputDelta {
        id: String,
        chunk: String,
    },
    ToolCallEnd {
        id: String,
        name: String,
        status: ToolStatus,
        duration_ms: u64,
        output: String,
    },
    /// The plan store changed: the whole new list, its rendering and the diff.
    PlanUpdated {
        items: Vec<TodoItem>,
        rendered: String,
        diff: PlanDiff,
    },
    /// Token usage of the last request, and totals for the session.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        total_input_tokens: u64,
        total_output_tokens: u64,
    },
    /// A message was queued while a turn runs; it starts the next turn.
    Queued {
        text: String,
    },
    /// The model stopped asking for tools. `open_items` counts unfinished plan items.
    TurnComplete {
        stop_reason: String,
        open_items: usize,
    },
    TurnAborted {
        reason: AbortReason,
        message: String,
    },
    /// Something the user must see (the turn may go on or end).
    Error {
        message: String,
    },
    /// The engine waits for the next op.
    Idle,
}
