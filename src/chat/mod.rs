//! The words every floor shares about a conversation with a model: who
//! speaks (`Role`), what a message holds (`ContentBlock`, `Message`), what
//! a request cost (`Usage`), and the [`Conversation`] itself. It stands on
//! the ground floor: it imports nothing of Waypoint's, so the model
//! clients, the plan's account, the prices, the sessions and the engine
//! all use it without importing each other.

pub mod conversation;
pub mod image;
mod input;
mod opaque;
mod text;

use serde::{Deserialize, Serialize};

pub use conversation::{Conversation, ConversationKey, KeptText, KeyWatch};
pub use image::{ImageInfo, ImageSource};
pub use input::Input;
pub use opaque::Opaque;
pub use text::Text;

/// A tool as the model sees it (serialises to the Anthropic tool shape):
/// what a request offers, made by the tools, sent by the model clients.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

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
        input: Input,
    },
    ToolResult {
        tool_use_id: String,
        content: Text,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image in a user message: pasted, attached with `@file`, or a
    /// tool's (`read_file` of an image, an MCP result), after the results.
    Image {
        source: ImageSource,
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
    /// in (`details` holds OpenRouter's `reasoning_details` array as merged),
    /// or a Responses reply's output items (`field` = `Responses`).
    Reasoning {
        text: String,
        field: ReasoningField,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Opaque>,
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
    /// Not a Chat Completions field: the output items of an OpenAI
    /// Responses reply, in order, as `details` (each reasoning item whole,
    /// with its `encrypted_content`; a function call's or message's item
    /// id), sent back verbatim on that wire only.
    Responses,
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

impl Message {
    /// Its text blocks, joined by `sep` (reasoning and calls left out).
    pub fn text(&self, sep: &str) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(sep)
    }

    /// Its first text block: a user message's own words (notes and
    /// reminders follow in blocks of their own).
    pub fn first_text(&self) -> Option<&str> {
        self.content.iter().find_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
    }
}

/// The most tokens one request can plausibly count in one field: fifty
/// times a 2M-token context window, the largest offered. A provider's larger
/// figure (2^64−1 has been seen) is a bug of its, taken for unknown (0).
pub const MAX_PLAUSIBLE_TOKENS: u64 = 100_000_000;

/// `n`, or 0 (unknown) when no request can count that many tokens.
pub fn plausible_tokens(n: u64) -> u64 {
    if n > MAX_PLAUSIBLE_TOKENS { 0 } else { n }
}

#[derive(
    schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize,
)]
pub struct Usage {
    /// Prompt tokens billed at the full input price: for every provider,
    /// the prompt minus what was read from or written to its cache.
    pub input_tokens: u64,
    /// Tokens the model wrote.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
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
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// One request's usage with every implausible count made unknown (a
    /// transcript written before providers' counts were checked).
    pub fn plausible(self) -> Usage {
        Usage {
            input_tokens: plausible_tokens(self.input_tokens),
            output_tokens: plausible_tokens(self.output_tokens),
            cache_read_tokens: plausible_tokens(self.cache_read_tokens),
            cache_write_tokens: plausible_tokens(self.cache_write_tokens),
        }
    }

    /// The share (0–100, rounded) of the prompt tokens read from the cache;
    /// `None` when nothing was read from it.
    pub fn cached_percent(&self) -> Option<u64> {
        let prompt = self.prompt_tokens();
        (self.cache_read_tokens > 0 && prompt > 0)
            .then(|| (self.cache_read_tokens.min(prompt) * 100 + prompt / 2) / prompt)
    }

    /// Adds `other`'s counts to these (saturating: a sum never wraps).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
    }
}
