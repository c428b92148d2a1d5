//! Model clients behind one small trait. The conversation is kept in the
//! Anthropic content-block shape (the richest of the formats); a provider
//! translates it to its own wire format. Invariant: a client returns either
//! a complete assistant message or an error, never a partial one, so no tool
//! runs from a cut stream; a reply's reasoning (thinking) blocks come before
//! its text and tool calls, and go back to the provider that wrote them
//! unchanged, each wire dropping the other's kind.

pub mod anthropic;
pub mod body;
pub mod http;
mod lenient;
pub mod openai;
pub mod prefix;
pub mod responses;
pub mod retry;
pub mod scripted;
pub mod sse;
pub mod too_long;

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::chat::ToolDef;
pub use crate::chat::{
    ContentBlock, ConversationKey, KeptText, Message, ReasoningField, Role, Usage,
};
use crate::events::ErrorKind;
pub use crate::events::StopReason;

/// One request to a model; it borrows the conversation, so building one costs nothing.
#[derive(Clone, Copy, Debug)]
pub struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDef],
    pub max_tokens: u32,
    /// The conversation `messages` are, when they are one: the client then
    /// keeps the serialised bytes of the older messages for the next
    /// request (see [`prefix`]). `None`: everything is written afresh.
    pub conversation: Option<&'a ConversationKey>,
    /// The session's id: the prompt cache key of the providers that take
    /// one (OpenAI's), so a session's requests meet the same cache.
    /// `None`: the client's own key.
    pub session: Option<&'a str>,
}

/// A token count in a provider's usage object: 0 (unknown) when absent
/// or past any request's size ([`crate::chat::MAX_PLAUSIBLE_TOKENS`]).
pub(crate) fn token_count(usage: &Value, key: &str) -> u64 {
    let n = usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let plausible = crate::chat::plausible_tokens(n);
    if plausible != n {
        tracing::warn!("the provider reported {n} {key}: taken for unknown");
    }
    plausible
}

/// An OpenAI usage object (either wire's names: `input`, `output`, and
/// `details` holding `cached_tokens`): the input split into the part read
/// from the automatic prefix cache (never more than the input, whatever a
/// server reports) and the rest. `None` when it counts nothing.
pub(crate) fn cached_usage(u: &Value, input: &str, output: &str, details: &str) -> Option<Usage> {
    let (input, output) = (token_count(u, input), token_count(u, output));
    let cached = u
        .get(details)
        .map_or(0, |d| token_count(d, "cached_tokens"))
        .min(input);
    (input > 0 || output > 0).then_some(Usage {
        input_tokens: input - cached,
        output_tokens: output,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    })
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
                    Some((id.clone(), name.clone(), input.value()))
                }
                _ => None,
            })
            .collect()
    }

    /// The reply's text blocks, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
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
    /// The provider said the conversation is longer than the model's
    /// context window (classified by the wire, see [`too_long`]).
    #[error("the conversation is longer than the model's context window: {0}")]
    ContextTooLong(String),
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
            LlmError::ContextTooLong(_) => ErrorKind::Http,
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
    /// The tool results of `conversation` whose text this client now keeps
    /// in the bytes of its requests (see [`crate::chat::Conversation::keep_texts`]).
    fn kept_texts(&self, conversation: &ConversationKey) -> Vec<KeptText> {
        let _ = conversation;
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
                details: Some(serde_json::json!([{"type": "reasoning.text", "text": "r"}]).into()),
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

    #[test]
    fn absurd_usage_values_are_unknown_and_sums_saturate() {
        let max = u64::MAX;
        // Anthropic's names, OpenAI's and the Responses API's.
        let u =
            json!({"input_tokens": max, "output_tokens": 7, "cache_read_input_tokens": 1u64 << 60});
        assert_eq!(token_count(&u, "input_tokens"), 0);
        assert_eq!(token_count(&u, "output_tokens"), 7);
        assert_eq!(token_count(&u, "cache_read_input_tokens"), 0);
        let u = json!({"prompt_tokens": 500, "completion_tokens": max,
            "prompt_tokens_details": {"cached_tokens": max}});
        assert_eq!(
            cached_usage(
                &u,
                "prompt_tokens",
                "completion_tokens",
                "prompt_tokens_details"
            ),
            Some(Usage::uncached(500, 0))
        );
        // A sane large count stays.
        assert_eq!(token_count(&json!({"n": 2_000_000}), "n"), 2_000_000);
        // Sums (a session's totals, transcripts written before) never wrap.
        let mut total = Usage {
            input_tokens: max - 1,
            output_tokens: 1,
            cache_read_tokens: max,
            cache_write_tokens: 0,
        };
        assert_eq!(total.prompt_tokens(), max);
        total.add(&Usage::uncached(5, max));
        assert_eq!((total.input_tokens, total.output_tokens), (max, max));
        // A transcript's absurd count (written before) reads as unknown.
        let old: Usage =
            serde_json::from_value(json!({"input_tokens": max, "output_tokens": 3})).unwrap();
        assert_eq!(old.plausible(), Usage::uncached(0, 3));
    }
}
