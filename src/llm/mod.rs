//! Model clients behind one small trait. The conversation is kept in the
//! Anthropic content-block shape (the richest of the formats); a provider
//! translates it to its own wire format. Invariant: a client returns either
//! a complete assistant message or an error, never a partial one, so no tool
//! runs from a cut stream; a reply's reasoning (thinking) blocks come before
//! its text and tool calls, and go back to the provider that wrote them
//! unchanged, each wire dropping the other's kind.

pub mod anthropic;
pub mod http;
pub mod openai;
pub mod retry;
pub mod scripted;
pub mod sse;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::ErrorKind;
pub use crate::events::StopReason;
use crate::tools::ToolDef;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// Extended thinking (Anthropic), sent back unchanged with its signature.
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    /// Thinking the provider encrypted (Anthropic), sent back unchanged.
    RedactedThinking {
        data: String,
    },
    /// A reasoning model's reasoning on the Chat Completions wire, sent back
    /// on the assistant message with its tool calls under the field it came
    /// in (`details` holds OpenRouter's `reasoning_details` array as merged).
    Reasoning {
        text: String,
        field: ReasoningField,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
}

/// The Chat Completions field a provider streamed its reasoning in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningField {
    /// DeepSeek (and vLLM, SGLang).
    ReasoningContent,
    /// OpenRouter, Ollama and others.
    Reasoning,
    /// OpenRouter's structured form (keeps signatures).
    ReasoningDetails,
}

impl ContentBlock {
    /// True for the reasoning kinds (thinking, redacted thinking, reasoning).
    pub fn is_reasoning(&self) -> bool {
        matches!(
            self,
            ContentBlock::Thinking { .. }
                | ContentBlock::RedactedThinking { .. }
                | ContentBlock::Reasoning { .. }
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

/// One request to a model; it borrows the conversation, so building one costs nothing.
#[derive(Clone, Copy, Debug)]
pub struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDef],
    pub max_tokens: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens billed at the full input price: for every provider,
    /// the prompt minus what was read from or written to its cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Usage with no cache reads or writes.
    pub const fn uncached(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        }
    }

    /// Every prompt token: full price, read from and written to the cache.
    pub const fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The share (0–100, rounded) of the prompt tokens read from the cache;
    /// `None` when nothing was read from it.
    pub fn cached_percent(&self) -> Option<u64> {
        let prompt = self.prompt_tokens();
        (self.cache_read_tokens > 0 && prompt > 0)
            .then(|| (self.cache_read_tokens.min(prompt) * 100 + prompt / 2) / prompt)
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// A token count in a provider's usage object (0 when absent).
pub(crate) fn token_count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A complete assistant message.
#[derive(Clone, Debug, PartialEq)]
pub struct AssistantReply {
    pub content: Vec<ContentBlock>,
    /// Why the model stopped, mapped from the provider's own word.
    pub stop_reason: StopReason,
    pub usage: Usage,
    /// Tool calls whose input was not valid JSON: id → parse error and raw text.
    /// Their `input` in `content` is `{}`; the agent answers them with an error.
    pub invalid_inputs: Vec<(String, String)>,
}

impl AssistantReply {
    /// The tool calls of the reply, in order: (id, name, input).
    pub fn tool_calls(&self) -> Vec<(String, String, Value)> {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, input } => {
                    Some((id.clone(), name.clone(), input.clone()))
                }
                _ => None,
            })
            .collect()
    }
}

/// What a client reports while it streams.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    /// A piece of the model's reasoning (thinking), shown dimmed.
    ReasoningDelta(String),
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    Config(String),
    #[error("the API refused the request (HTTP {status}): {message}")]
    Http { status: u16, message: String },
    #[error("the model service reported an error: {0}")]
    Api(String),
    #[error("gave up after {attempts} {noun}: {last}", noun = if *attempts == 1 { "attempt" } else { "attempts" })]
    RetriesExhausted { attempts: u32, last: String },
    /// Nothing listens at the base URL (the connection was refused).
    #[error("gave up after {attempts} {noun}: {last}", noun = if *attempts == 1 { "attempt" } else { "attempts" })]
    Unreachable { attempts: u32, last: String },
}

impl LlmError {
    /// The kind of failure, for drivers that must not read the message.
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::Config(_) => ErrorKind::Config,
            LlmError::Http {
                status: 401 | 403, ..
            } => ErrorKind::Auth,
            LlmError::Http { status: 429, .. } => ErrorKind::RateLimited,
            LlmError::Http {
                status: 500..=599, ..
            } => ErrorKind::Server,
            LlmError::Http { .. } => ErrorKind::Http,
            LlmError::Api(_) => ErrorKind::Api,
            LlmError::RetriesExhausted { .. } => ErrorKind::RetriesExhausted,
            LlmError::Unreachable { .. } => ErrorKind::Unreachable,
        }
    }
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model provider. `stream` sends progress to `on_event` and resolves to
/// the complete reply; dropping the future cancels the request.
pub trait ModelClient: Send + Sync {
    fn model(&self) -> &str;
    /// The provider's name as settings spell it (`anthropic`, `openai`, …).
    fn provider(&self) -> &str {
        "custom"
    }
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_blocks_round_trip_through_serde() {
        let blocks = vec![
            ContentBlock::Thinking {
                thinking: "t".into(),
                signature: "s".into(),
            },
            ContentBlock::RedactedThinking { data: "d".into() },
            ContentBlock::Reasoning {
                text: "r".into(),
                field: ReasoningField::ReasoningContent,
                details: None,
            },
            ContentBlock::Reasoning {
                text: "r".into(),
                field: ReasoningField::ReasoningDetails,
                details: Some(serde_json::json!([{"type": "reasoning.text", "text": "r"}])),
            },
        ];
        let json = serde_json::to_value(&blocks).unwrap();
        assert_eq!(json[0]["type"], "thinking");
        assert_eq!(json[1]["type"], "redacted_thinking");
        assert_eq!(json[2]["field"], "reasoning_content");
        let back: Vec<ContentBlock> = serde_json::from_value(json).unwrap();
        assert_eq!(back, blocks);
    }

    #[test]
    fn errors_map_to_kinds() {
        let http = |status| LlmError::Http {
            status,
            message: String::new(),
        };
        assert_eq!(http(401).kind(), ErrorKind::Auth);
        assert_eq!(http(429).kind(), ErrorKind::RateLimited);
        assert_eq!(http(503).kind(), ErrorKind::Server);
        assert_eq!(http(404).kind(), ErrorKind::Http);
        assert_eq!(LlmError::Config(String::new()).kind(), ErrorKind::Config);
    }
}
