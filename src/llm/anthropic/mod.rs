//! Anthropic Messages API client with SSE streaming and bounded retries.
//! Invariant: a reply is returned only after `message_stop`; a stream that
//! breaks off earlier is retried from scratch (the UI is told via
//! `StreamEvent::Retrying`), so tool calls are never seen twice or half.
//! Thinking blocks (and redacted ones) are kept with their signature and
//! sent back unchanged, in their place before the text and tool calls.
//! Prompt caching: a request carries at most three `cache_control`
//! breakpoints (the system block, covering the tools before it; the last
//! block of the newest message; the last block of the user message before
//! it), and everything before the newest message is serialised exactly as
//! in the previous request, so each request reads what the previous wrote.

use std::borrow::Cow;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

mod request;

pub use request::{request_body, request_body_with};

use super::body::Body;
use super::http::{Assemble, Attempt, Failure, Names, StreamingHttp, stream_with_retries};
use super::lenient;
use super::prefix::PrefixCache;
use super::retry::RetryPolicy;
use super::sse::SseEvent;
use super::token_count;
use super::{
    AssistantReply, BoxFuture, ContentBlock, ConversationKey, KeptText, LlmError, ModelClient,
    ModelRequest, StopReason, StreamEvent, Usage,
};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
const API_VERSION: &str = "2023-06-01";

#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    pub api_key: String,
    pub base_url: String,
    pub model: String,
    pub retry: RetryPolicy,
    /// Longest silence tolerated inside a stream before it counts as broken.
    pub idle_timeout: Duration,
}

pub struct AnthropicClient {
    config: AnthropicConfig,
    http: StreamingHttp,
    /// Extended thinking's token budget; `None`: thinking off.
    thinking_budget: Option<u32>,
    /// The older messages' bytes, kept between requests.
    prefix: PrefixCache,
}

const NAMES: Names = Names {
    key_var: "ANTHROPIC_API_KEY",
    url_var: "ANTHROPIC_BASE_URL",
    example_url: "https://api.anthropic.com",
};

impl AnthropicClient {
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        if config.api_key.trim().is_empty() {
            return Err(LlmError::Config(
                "no Anthropic API key: set ANTHROPIC_API_KEY, or try the offline demo with `waypoint --demo`".into(),
            ));
        }
        let http =
            StreamingHttp::new(&config.base_url, "/v1/messages", config.idle_timeout, NAMES)?;
        Ok(Self {
            config,
            http,
            thinking_budget: None,
            prefix: PrefixCache::default(),
        })
    }

    /// Turns on extended thinking with `budget` tokens (0: off; at least
    /// 1024, the API's minimum).
    pub fn with_thinking_budget(mut self, budget: u32) -> Self {
        self.thinking_budget = (budget > 0).then_some(budget.max(MIN_THINKING_BUDGET));
        self
    }
}

/// The smallest thinking budget the API accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

impl Attempt for AnthropicClient {
    async fn attempt(
        &self,
        body: &Body,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<AssistantReply, Failure> {
        let headers = [
            ("x-api-key", self.config.api_key.as_str()),
            ("anthropic-version", API_VERSION),
        ];
        let events = self.http.open(&headers, body).await?;
        events.read(Assembler::default(), on_event).await
    }
}

impl Assemble for Assembler {
    fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        Assembler::on_event(self, ev, on_event)
    }
    fn done(&self) -> bool {
        self.done
    }
    fn finish(self) -> Result<AssistantReply, Failure> {
        Assembler::finish(self)
    }
}

impl ModelClient for AnthropicClient {
    fn model(&self) -> &str {
        &self.config.model
    }
    fn provider(&self) -> &str {
        "anthropic"
    }

    fn kept_texts(&self, conversation: &ConversationKey) -> Vec<KeptText> {
        self.prefix.take_kept(conversation)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>> {
        let body = request::write_body(
            &self.config.model,
            request,
            self.thinking_budget,
            &self.prefix,
        );
        Box::pin(stream_with_retries(
            self,
            &self.config.retry,
            body,
            on_event,
        ))
    }
}

enum Partial {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
        start_input: Option<Value>,
    },
}

/// The Messages API's stop reason, typed. `pause_turn` (a server tool paused
/// a long turn) stays `Other`: the agent treats it as the end of the turn.
fn stop_reason(wire: &str) -> StopReason {
    match wire {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// Builds one assistant message from the Messages API stream events.
#[derive(Default)]
struct Assembler {
    blocks: Vec<Option<Partial>>,
    stop_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl Assembler {
    /// Takes one server-sent event of the stream: usage, a block's start
    /// or delta, the stop reason, the end, or an error (classified: retry
    /// or fatal).
    fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        let name = ev.event.as_str();
        if name == "ping" || ev.data.is_empty() {
            return Ok(());
        }
        let data: WireEvent<'_> = serde_json::from_str(&ev.data).map_err(|e| {
            Failure::retry(
                format!("malformed event `{name}` from the server: {e}"),
                None,
            )
        })?;
        match data.kind.as_deref().unwrap_or(name) {
            "message_start" => {
                if let Some(u) = data.message.as_ref().and_then(|m| m.get("usage")) {
                    self.usage = usage_of(u);
                }
            }
            "content_block_start" => self.block_start(&data, on_event)?,
            "content_block_delta" => self.block_delta(data, on_event)?,
            "content_block_stop" => {}
            "message_delta" => self.message_delta(&data),
            "message_stop" => self.done = true,
            "error" => return Err(error_event(&data)),
            _ => {}
        }
        Ok(())
    }

    /// A new content block: text (said at once), a tool call, thinking (said
    /// at once) or redacted thinking; other kinds are not kept.
    fn block_start(
        &mut self,
        data: &WireEvent<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        let index = block_index(data)?;
        let block = data.content_block.as_ref();
        let field = |f: for<'b> fn(&'b WireBlock<'_>) -> &'b Option<Cow<'b, str>>| {
            block
                .and_then(|b| f(b).as_deref())
                .unwrap_or_default()
                .to_string()
        };
        let partial = match block.and_then(|b| b.kind.as_deref()) {
            Some("text") => {
                let text = field(|b| &b.text);
                if !text.is_empty() {
                    on_event(StreamEvent::TextDelta(text.clone()));
                }
                Some(Partial::Text(text))
            }
            Some("tool_use") => Some(Partial::Tool {
                id: field(|b| &b.id),
                name: field(|b| &b.name),
                json: String::new(),
                // Some compatible servers send the whole input here, with no deltas.
                start_input: block.and_then(|b| b.input.clone()).filter(Value::is_object),
            }),
            Some("thinking") => {
                let thinking = field(|b| &b.thinking);
                if !thinking.is_empty() {
                    on_event(StreamEvent::ReasoningDelta(thinking.clone()));
                }
                Some(Partial::Thinking {
                    thinking,
                    signature: field(|b| &b.signature),
                })
            }
            Some("redacted_thinking") => Some(Partial::Redacted(field(|b| &b.data))),
            // other block kinds are not kept
            _ => None,
        };
        if self.blocks.len() <= index {
            self.blocks.resize_with(index + 1, || None);
        }
        self.blocks[index] = partial;
        Ok(())
    }

    /// More of a block: text and thinking are said as they come; a
    /// signature and a tool's input JSON are only kept. A delta for a block
    /// that never started is an error (retried).
    fn block_delta(
        &mut self,
        data: WireEvent<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        let index = block_index(&data)?;
        let delta = data.delta.unwrap_or_default();
        let piece = |p: Option<Cow<'_, str>>| p.map(Cow::into_owned).unwrap_or_default();
        match (self.blocks.get_mut(index), delta.kind.as_deref()) {
            (Some(Some(Partial::Text(t))), Some("text_delta")) => {
                let piece = piece(delta.text);
                t.push_str(&piece);
                on_event(StreamEvent::TextDelta(piece));
            }
            (Some(Some(Partial::Thinking { thinking, .. })), Some("thinking_delta")) => {
                let piece = piece(delta.thinking);
                thinking.push_str(&piece);
                on_event(StreamEvent::ReasoningDelta(piece));
            }
            (Some(Some(Partial::Thinking { signature, .. })), Some("signature_delta")) => {
                signature.push_str(delta.signature.as_deref().unwrap_or(""));
            }
            (Some(Some(Partial::Tool { json, .. })), Some("input_json_delta")) => {
                json.push_str(delta.partial_json.as_deref().unwrap_or(""));
            }
            (Some(_), _) => {}
            (None, _) => {
                return Err(Failure::retry(
                    format!("delta for unknown block {index}"),
                    None,
                ));
            }
        }
        Ok(())
    }

    /// The stop reason, and the final usage when the server repeats it.
    fn message_delta(&mut self, data: &WireEvent<'_>) {
        if let Some(r) = data.delta.as_ref().and_then(|d| d.stop_reason.as_deref()) {
            self.stop_reason = Some(r.to_string());
        }
        if let Some(u) = &data.usage {
            // The final (cumulative) counts, when the server repeats
            // them here; a server sending zeros keeps the start's.
            let (new, kept) = (usage_of(u), &mut self.usage);
            kept.input_tokens = new.input_tokens.max(kept.input_tokens);
            kept.output_tokens = new.output_tokens.max(kept.output_tokens);
            kept.cache_read_tokens = new.cache_read_tokens.max(kept.cache_read_tokens);
            kept.cache_write_tokens = new.cache_write_tokens.max(kept.cache_write_tokens);
        }
    }

    fn finish(self) -> Result<AssistantReply, Failure> {
        // Exactly as many as there are blocks: the reply is kept for the
        // whole conversation.
        let mut content = Vec::with_capacity(self.blocks.iter().flatten().count());
        let mut invalid_inputs = Vec::new();
        for partial in self.blocks.into_iter().flatten() {
            match partial {
                // The API refuses whitespace-only text blocks if they are sent back.
                Partial::Text(text) if !text.trim().is_empty() => {
                    content.push(ContentBlock::Text { text })
                }
                Partial::Text(_) => {}
                Partial::Thinking {
                    thinking,
                    signature,
                } => content.push(ContentBlock::Thinking {
                    thinking,
                    signature,
                }),
                Partial::Redacted(data) => content.push(ContentBlock::RedactedThinking { data }),
                Partial::Tool {
                    id,
                    name,
                    json,
                    start_input,
                } => {
                    let input = if json.trim().is_empty() {
                        start_input.unwrap_or_else(|| Value::Object(Default::default()))
                    } else {
                        crate::json::arguments(&json).unwrap_or_else(|why| {
                            invalid_inputs.push((id.clone(), why));
                            Value::Object(Default::default())
                        })
                    };
                    content.push(ContentBlock::ToolUse {
                        id,
                        name,
                        input: input.into(),
                    });
                }
            }
        }
        Ok(AssistantReply {
            content,
            stop_reason: self
                .stop_reason
                .as_deref()
                .map_or(StopReason::EndTurn, stop_reason),
            usage: self.usage,
            invalid_inputs,
        })
    }
}

/// An `error` event: overloaded, API, rate-limit and timeout errors are
/// retried, the rest are fatal.
fn error_event(data: &WireEvent<'_>) -> Failure {
    let (etype, message) = match &data.error {
        Some(err) => (
            err.get("type").and_then(Value::as_str),
            err.get("message").and_then(Value::as_str),
        ),
        // No `error` object: the event's own type and message.
        None => (
            data.kind.as_deref(),
            data.message.as_ref().and_then(Value::as_str),
        ),
    };
    let etype = etype.unwrap_or("error");
    let text = format!("{etype}: {}", message.unwrap_or(""));
    match etype {
        "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error" => {
            Failure::retry(text, None)
        }
        _ if data
            .error
            .as_ref()
            .is_some_and(crate::llm::too_long::says_too_long) =>
        {
            Failure::Fatal(LlmError::ContextTooLong(text))
        }
        _ => Failure::Fatal(LlmError::Api(text)),
    }
}

fn block_index(data: &WireEvent<'_>) -> Result<usize, Failure> {
    data.index
        .and_then(|i| usize::try_from(i).ok())
        .filter(|i| *i < 1024)
        .ok_or_else(|| Failure::retry("content block event without a valid index", None))
}

/// One event of the Messages stream, read straight from its bytes: what
/// [`Assembler`] uses of it, each field as leniently as a `Value` lookup.
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::u64")]
    index: Option<u64>,
    /// `message_start`'s message: only its usage is read.
    #[serde(default)]
    message: Option<Value>,
    #[serde(default, borrow)]
    content_block: Option<WireBlock<'a>>,
    #[serde(default, borrow)]
    delta: Option<WireDelta<'a>>,
    #[serde(default)]
    usage: Option<Value>,
    /// An `error` event's error (the event itself when it has none).
    #[serde(default)]
    error: Option<Value>,
}

/// A `content_block_start`'s block.
#[derive(Default, Deserialize)]
struct WireBlock<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    signature: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    data: Option<Cow<'a, str>>,
}

/// A `content_block_delta`'s or `message_delta`'s delta.
#[derive(Default, Deserialize)]
struct WireDelta<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    signature: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    partial_json: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    stop_reason: Option<Cow<'a, str>>,
}

/// An Anthropic `usage` object: `input_tokens` is already the part billed
/// at the full price; cache reads and writes are counted apart.
fn usage_of(u: &Value) -> Usage {
    Usage {
        input_tokens: token_count(u, "input_tokens"),
        output_tokens: token_count(u, "output_tokens"),
        cache_read_tokens: token_count(u, "cache_read_input_tokens"),
        cache_write_tokens: token_count(u, "cache_creation_input_tokens"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;
    use serde_json::json;

    fn run(events: &[(&str, &str)]) -> (Result<AssistantReply, String>, Vec<StreamEvent>) {
        let mut asm = Assembler::default();
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        for (event, data) in events {
            let ev = SseEvent {
                event: event.to_string(),
                data: data.to_string(),
            };
            if let Err(f) = asm.on_event(&ev, &mut sink) {
                let msg = match f {
                    Failure::Retry { reason, .. } => format!("retry: {reason}"),
                    Failure::Fatal(e) => format!("fatal: {e}"),
                };
                return (Err(msg), seen);
            }
        }
        let reply = asm.finish().map_err(|_| "finish".to_string());
        (reply, seen)
    }

    #[test]
    fn assembles_text_and_tool_input_from_deltas() {
        let (reply, seen) = run(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"bash","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"and\": \"ls\"}"}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":1}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        let reply = reply.unwrap();
        assert_eq!(seen, vec![StreamEvent::TextDelta("Hi".into())]);
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 30,
                ..Usage::default()
            }
        );
        assert_eq!(
            reply.content,
            vec![
                ContentBlock::Text { text: "Hi".into() },
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "bash".into(),
                    input: json!({"command": "ls"}).into()
                },
            ]
        );
        assert!(reply.invalid_inputs.is_empty());
    }

    const THINKING: &[u8] =
        include_bytes!("../../../tests/fixtures/streams/anthropic_thinking_tool_use.sse");

    /// Replays recorded bytes fed in `pieces` through the decoder and the
    /// assembler, as the client does (the end of the stream included).
    fn replay(pieces: &[&[u8]]) -> (AssistantReply, Vec<StreamEvent>) {
        let mut decoder = crate::llm::sse::SseDecoder::new();
        let mut events = Vec::new();
        for p in pieces {
            events.extend(decoder.feed(p));
        }
        events.extend(decoder.finish());
        let mut asm = Assembler::default();
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        for ev in &events {
            assert!(asm.on_event(ev, &mut sink).is_ok(), "{ev:?}");
        }
        assert!(asm.done, "message_stop arrived");
        (asm.finish().ok().unwrap(), seen)
    }

    /// A recorded extended-thinking stream, split at every byte (and at many
    /// pairs of points): the thinking block keeps its text and signature and
    /// the redacted block its data, both before the text and the tool call.
    #[test]
    fn thinking_blocks_are_kept_whole_at_every_split() {
        let thought = "The user wants notes.txt with \"hello\". I'll write it — ünïcode — with write_file, then confirm.";
        let check = |(reply, seen): (AssistantReply, Vec<StreamEvent>)| {
            assert_eq!(reply.content.len(), 4);
            assert!(
                matches!(&reply.content[0], ContentBlock::Thinking { thinking, signature }
                if thinking == thought && signature.starts_with("EqQBCgIYAhIM") && signature.ends_with("EyVUQ=="))
            );
            assert!(
                matches!(&reply.content[1], ContentBlock::RedactedThinking { data } if data.starts_with("EmwKAhgB"))
            );
            assert_eq!(
                reply.content[2],
                ContentBlock::Text {
                    text: "I'll write the file.".into()
                }
            );
            assert_eq!(
                reply.tool_calls(),
                vec![(
                    "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    "write_file".into(),
                    json!({"path": "notes.txt", "content": "hello\n"})
                )]
            );
            let reasoning: String = seen
                .iter()
                .map(|e| match e {
                    StreamEvent::ReasoningDelta(t) => t.as_str(),
                    _ => "",
                })
                .collect();
            assert_eq!(reasoning, thought);
        };
        for cut in 0..=THINKING.len() {
            check(replay(&[&THINKING[..cut], &THINKING[cut..]]));
        }
        for a in (0..THINKING.len()).step_by(53) {
            for b in (a..=THINKING.len()).step_by(89) {
                check(replay(&[&THINKING[..a], &THINKING[a..b], &THINKING[b..]]));
            }
        }
    }

    #[test]
    fn a_thinking_budget_turns_thinking_on_below_max_tokens_and_reasoning_stays_out() {
        let messages = vec![Message {
            role: crate::llm::Role::Assistant,
            content: vec![
                ContentBlock::Reasoning {
                    text: "deepseek's".into(),
                    field: crate::llm::ReasoningField::ReasoningContent,
                    details: None,
                },
                ContentBlock::Text { text: "hi".into() },
            ],
        }];
        let req = |max_tokens| ModelRequest {
            system: "s",
            messages: &messages,
            tools: &[],
            max_tokens,
            conversation: None,
            session: None,
        };
        let body = |r: &ModelRequest<'_>, budget| -> Value {
            serde_json::from_slice(&request_body_with("m", r, budget).unwrap()).unwrap()
        };
        let on = body(&req(8192), Some(4000));
        assert_eq!(
            on["thinking"],
            json!({"type": "enabled", "budget_tokens": 4000})
        );
        assert_eq!(on["max_tokens"], 8192);
        assert_eq!(
            on["messages"][0]["content"],
            json!([{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}])
        );
        let raised = body(&req(2000), Some(4000));
        assert_eq!(raised["max_tokens"], 6000);
        let off = body(&req(2000), None);
        assert!(off.get("thinking").is_none());
        assert_eq!(off["max_tokens"], 2000);
    }

    #[test]
    fn cache_reads_and_writes_are_parsed_apart_from_the_input() {
        let (reply, _) = run(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":40,"cache_creation_input_tokens":1500,"cache_read_input_tokens":9000,"output_tokens":1}}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12,"cache_read_input_tokens":9100}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(
            reply.unwrap().usage,
            Usage {
                input_tokens: 40,
                output_tokens: 12,
                cache_read_tokens: 9100,
                cache_write_tokens: 1500,
            }
        );
    }

    #[test]
    fn breakpoints_mark_the_system_and_the_two_newest_user_turns() {
        use crate::llm::Role;
        let text = |t: &str| ContentBlock::Text { text: t.into() };
        let messages = vec![
            Message {
                role: Role::User,
                content: vec![text("one")],
            },
            Message {
                role: Role::Assistant,
                content: vec![text("two")],
            },
            Message {
                role: Role::User,
                content: vec![text("three"), text("four")],
            },
            Message {
                role: Role::Assistant,
                content: vec![text("five")],
            },
            Message {
                role: Role::User,
                content: vec![text("six")],
            },
        ];
        let req = ModelRequest {
            system: "sys",
            messages: &messages,
            tools: &[],
            max_tokens: 100,
            conversation: None,
            session: None,
        };
        let body: Value = serde_json::from_slice(&request_body("m", &req).unwrap()).unwrap();
        let marked = json!({"type": "ephemeral"});
        assert_eq!(body["system"][0]["text"], "sys");
        assert_eq!(body["system"][0]["cache_control"], marked);
        let marks: Vec<String> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().iter())
            .filter(|b| b.get("cache_control").is_some())
            .map(|b| b["text"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(marks, ["four", "six"]);
        // No system prompt: the last tool carries the first breakpoint.
        let tools = crate::tools::definitions();
        let req = ModelRequest {
            system: "",
            tools: &tools,
            ..req
        };
        let body: Value = serde_json::from_slice(&request_body("m", &req).unwrap()).unwrap();
        assert!(body.get("system").is_none());
        let last = body["tools"].as_array().unwrap().last().unwrap();
        assert_eq!(last["cache_control"], marked);
    }

    #[test]
    fn empty_tool_input_is_an_empty_object_and_bad_json_is_reported() {
        let (reply, _) = run(&[
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"todo_read","input":{}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"b","name":"bash","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\": "}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        let reply = reply.unwrap();
        assert_eq!(reply.content.len(), 2);
        assert_eq!(reply.invalid_inputs.len(), 1);
        assert_eq!(reply.invalid_inputs[0].0, "b");
        assert!(reply.invalid_inputs[0].1.contains("not valid JSON"));
    }

    #[test]
    fn error_events_are_classified() {
        let (r, _) = run(&[(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )]);
        assert_eq!(r.unwrap_err(), "retry: overloaded_error: Overloaded");
        let (r, _) = run(&[(
            "error",
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#,
        )]);
        assert!(r.unwrap_err().starts_with("fatal:"));
    }
}
