//! The transcript's lines: a header, then one record per thing that
//! happened. Invariant: replaying the conversation records in order through
//! the same [`Conversation`](crate::chat::Conversation)
//! methods the engine used rebuilds the conversation exactly, so the
//! records are what was sent, never a display copy. A record never holds a
//! credential: the engine has none to write.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::chat::{ContentBlock, Message, Usage};
use crate::events::{CompactReason, ErrorKind, StopReason, ToolOutcome, ToolStatus, ToolSummary};
use crate::todo::{Author, Ledger, TodoItem};

/// The format this version writes; a file of a higher one is refused with
/// a message, a lower one is read.
pub const FORMAT_VERSION: u32 = 1;

/// The first line of every transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always `"header"`: tells a transcript from any other JSON lines file.
    #[serde(rename = "type")]
    pub kind: String,
    pub format: u32,
    pub id: String,
    /// The workspace's canonical path.
    pub workspace: String,
    pub provider: String,
    pub model: String,
    /// Unix time in milliseconds.
    pub started_ms: u64,
    /// The Waypoint version that started the session.
    pub version: String,
}

impl Header {
    pub fn new(id: &str, workspace: &str, provider: &str, model: &str, started_ms: u64) -> Self {
        Self {
            kind: "header".into(),
            format: FORMAT_VERSION,
            id: id.into(),
            workspace: workspace.into(),
            provider: provider.into(),
            model: model.into(),
            started_ms,
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// How a turn ended, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Complete,
    Interrupted,
    /// Stopped at the request limit (`--max-turns`).
    MaxTurns,
    Failed,
}

/// One line after the header. Times (`at`) are Unix milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record<'a> {
    /// User text added to the conversation: the user's own message
    /// (`prompt`), or a note Waypoint adds (reminder, interrupt, resume).
    User {
        text: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        prompt: bool,
        at: u64,
    },
    /// A turn began.
    TurnStart { resumed: bool, at: u64 },
    /// The model's whole reply: reasoning, text and tool calls.
    Assistant {
        content: Cow<'a, [ContentBlock]>,
        model: Cow<'a, str>,
        at: u64,
    },
    /// A tool call began (so a call that was running when the process
    /// died is known as started, not as never run).
    ToolCall {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        summary: Cow<'a, ToolSummary>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan_item_id: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan_item: Option<Cow<'a, str>>,
        at: u64,
    },
    /// A call waits for the user's approval (`waiting`), or was answered:
    /// a call that was waiting when the process died never ran, and the
    /// wait is not its plan item's time.
    Approval {
        id: Cow<'a, str>,
        waiting: bool,
        at: u64,
    },
    /// A tool call's result, exactly as the model gets it.
    ToolResult {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        content: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        status: ToolStatus,
        /// How it ended, typed (transcripts before it have only `status`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<ToolOutcome>,
        duration_ms: u64,
        /// A command's exit code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        at: u64,
    },
    /// An accepted plan revision: the whole list; a user's revision says
    /// so and carries its one-line account.
    Plan {
        items: Cow<'a, [TodoItem]>,
        at: u64,
        #[serde(default, skip_serializing_if = "is_model")]
        author: Author,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<Cow<'a, str>>,
    },
    /// The conversation was compacted and replaced by `messages`.
    Compaction {
        reason: CompactReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<Cow<'a, str>>,
        before_tokens: u64,
        after_tokens: u64,
        fallback: bool,
        messages: Cow<'a, [Message]>,
        at: u64,
    },
    /// One model request's tokens, and the context it filled.
    Usage {
        model: Cow<'a, str>,
        usage: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<(u64, u64)>,
    },
    /// A turn ended.
    TurnEnd {
        outcome: TurnOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorKind>,
        open_items: usize,
        at: u64,
    },
    /// A record type this version does not know (written by a newer one):
    /// skipped.
    #[serde(other)]
    Unknown,
}

fn is_model(author: &Author) -> bool {
    *author == Author::Model
}

impl Record<'_> {
    /// Gives `ledger` what this record tells about the plan items' costs;
    /// true when it changed something. The live engine and a replay feed
    /// the same records, so both compute the same figures.
    pub fn feed(&self, ledger: &mut Ledger) -> bool {
        match self {
            Record::TurnStart { at, .. } => ledger.turn_started(*at),
            Record::TurnEnd { at, .. } => ledger.turn_ended(*at),
            Record::Plan { items, at, .. } => ledger.plan(items, *at),
            Record::ToolCall { plan_item_id, .. } => ledger.tool_call(plan_item_id.as_deref()),
            Record::Usage { model, usage, .. } => ledger.usage(model, usage),
            Record::Approval { waiting, at, .. } => ledger.approval(*waiting, *at),
            _ => return false,
        }
        true
    }

    /// The record's time, where it has one.
    pub fn at(&self) -> Option<u64> {
        match self {
            Record::User { at, .. }
            | Record::TurnStart { at, .. }
            | Record::Assistant { at, .. }
            | Record::ToolCall { at, .. }
            | Record::Approval { at, .. }
            | Record::ToolResult { at, .. }
            | Record::Plan { at, .. }
            | Record::Compaction { at, .. }
            | Record::TurnEnd { at, .. } => Some(*at),
            Record::Usage { .. } | Record::Unknown => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_unknown_types_are_kept_apart() {
        let rec = Record::User {
            text: "hi".into(),
            prompt: true,
            at: 5,
        };
        let line = serde_json::to_string(&rec).unwrap();
        assert_eq!(line, r#"{"type":"user","text":"hi","prompt":true,"at":5}"#);
        assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), rec);
        let future: Record = serde_json::from_str(r#"{"type":"hologram","x":1}"#).unwrap();
        assert_eq!(future, Record::Unknown);
    }
}
