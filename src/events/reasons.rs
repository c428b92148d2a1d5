//! Why the model stopped, why a conversation is compacted and why a turn
//! ended early.

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

/// Why the model stopped, whatever the provider called it.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its reply.
    EndTurn,
    /// It asked for tools.
    ToolUse,
    /// The reply hit the token limit and may be cut off.
    MaxTokens,
    /// A stop sequence ended the reply.
    StopSequence,
    /// The provider refused or filtered the reply.
    Refusal,
    /// It wrote a tool call as text instead of calling the tool (nothing ran).
    TextToolCall,
    /// A reason this version does not know, as the provider said it.
    Other(String),
}

impl StopReason {
    /// The snake_case name (`end_turn`, …); `Other` gives the provider's word.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Refusal => "refusal",
            StopReason::TextToolCall => "text_tool_call",
            StopReason::Other(other) => other,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
