//! Anthropic Messages API client with SSE streaming and bounded retries.
//! Invariant: a reply is returned only after `message_stop`; a stream that
//! breaks off earlier is retried from scratch (the UI is told via
//! `StreamEvent::Retrying`), so tool calls are never seen twice or half.

use std::time::Duration;

use std::future::Future;

use bytes::Bytes;
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;

use super::retry::{RetryPolicy, is_retryable_status, parse_retry_after};
use super::sse::{SseDecoder, SseEvent};
use super::{
    AssistantReply, BoxFuture, ContentBlock, LlmError, Message, ModelClient, ModelRequest,
    StreamEvent, Usage,
};
use crate::tools::ToolDef;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
const API_VERSION: &str = "2023-06-01";
/// Largest single SSE event accepted; a stream that buffers more is broken.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

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
    http: reqwest::Client,
    url: String,
}

impl AnthropicClient {
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        if config.api_key.trim().is_empty() {
            return Err(LlmError::Config(
                "no Anthropic API key: set ANTHROPIC_API_KEY, or try the offline demo with `waypoint --demo`".into(),
            ));
        }
        let url = format!("{}/v1/messages", config.base_url.trim_end_matches('/'));
        match reqwest::Url::parse(&url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => {
                return Err(LlmError::Config(format!(
                    "the base URL `{}` is not an http(s) URL (example: https://api.anthropic.com)",
                    config.base_url
                )));
            }
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self { config, http, url })
    }

    /// Waits for `fut` at most the idle timeout; silence counts as a broken stream.
    async fn within<T>(&self, what: &str, fut: impl Future<Output = T>) -> Result<T, Failure> {
        tokio::time::timeout(self.config.idle_timeout, fut)
            .await
            .map_err(|_| {
                Failure::retry(
                    format!(
                        "no answer for {:.1} s while {what}",
                        self.config.idle_timeout.as_secs_f64()
                    ),
                    None,
                )
            })
    }

    async fn attempt(
        &self,
        body: &Bytes,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<AssistantReply, Failure> {
        let request = self
            .http
            .post(&self.url)
            .header("x-api-key", &self.config.api_key)
            .header("anthropic-version", API_VERSION)
            .header("content-type", "application/json")
            .body(body.clone())
            .send();
        let response = self
            .within("waiting for the response", request)
            .await?
            .map_err(|e| {
                let message = connect_message(&self.url, &e);
                if e.is_builder() {
                    Failure::Fatal(LlmError::Config(message))
                } else {
                    Failure::retry(message, None)
                }
            })?;
        let status = response.status().as_u16();
        if status != 200 {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let text = self
                .within("reading an error response", response.text())
                .await?
                .unwrap_or_default();
            let message = describe_http_error(status, &text);
            return Err(if is_retryable_status(status) {
                Failure::retry(format!("HTTP {status}: {message}"), retry_after)
            } else {
                Failure::Fatal(LlmError::Http { status, message })
            });
        }
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        if !content_type.starts_with("text/event-stream") {
            let text = self
                .within("reading the response", response.text())
                .await?
                .unwrap_or_default();
            return Err(Failure::Fatal(LlmError::Api(format!(
                "expected a stream (text/event-stream) but got `{content_type}`: {}",
                describe_http_error(status, &text)
            ))));
        }
        let mut stream = response.bytes_stream();
        let mut decoder = SseDecoder::new();
        let mut asm = Assembler::default();
        loop {
            match self.within("streaming", stream.next()).await? {
                Some(Ok(bytes)) => {
                    for ev in decoder.feed(&bytes) {
                        asm.on_event(&ev, on_event)?;
                        if asm.done {
                            return asm.finish();
                        }
                    }
                    if decoder.buffered() > MAX_EVENT_BYTES {
                        return Err(Failure::retry(
                            format!("an event larger than {MAX_EVENT_BYTES} bytes"),
                            None,
                        ));
                    }
                }
                Some(Err(e)) => return Err(Failure::retry(format!("read error: {e}"), None)),
                None => {
                    let part = if decoder.has_partial() {
                        " (cut mid-event)"
                    } else {
                        ""
                    };
                    return Err(Failure::retry(
                        format!("the connection closed before the message was complete{part}"),
                        None,
                    ));
                }
            }
        }
    }
}

impl ModelClient for AnthropicClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>> {
        Box::pin(async move {
            let body = request_body(&self.config.model, request)
                .map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))?;
            let mut retry = 0;
            loop {
                match self.attempt(&body, on_event).await {
                    Ok(reply) => return Ok(reply),
                    Err(Failure::Fatal(e)) => return Err(e),
                    Err(Failure::Retry {
                        reason,
                        retry_after,
                    }) => {
                        retry += 1;
                        if let Some(wait) = retry_after.filter(|w| *w > self.config.retry.max_delay)
                        {
                            return Err(LlmError::RetriesExhausted {
                                attempts: retry,
                                last: format!(
                                    "{reason} (the server asks to wait {} s)",
                                    wait.as_secs()
                                ),
                            });
                        }
                        let Some(delay) = self.config.retry.delay(retry, retry_after) else {
                            return Err(LlmError::RetriesExhausted {
                                attempts: retry,
                                last: reason,
                            });
                        };
                        tracing::warn!(retry, ?delay, %reason, "retrying model request");
                        on_event(StreamEvent::Retrying {
                            attempt: retry,
                            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            reason,
                        });
                        tokio::time::sleep(delay).await;
                    }
                }
            }
        })
    }
}

/// The JSON body of a streaming Messages request, serialised once and
/// reused by every retry.
pub fn request_body(model: &str, req: &ModelRequest<'_>) -> serde_json::Result<Bytes> {
    #[derive(Serialize)]
    struct Body<'a> {
        model: &'a str,
        max_tokens: u32,
        system: &'a str,
        messages: &'a [Message],
        tools: &'a [ToolDef],
        stream: bool,
    }
    let body = Body {
        model,
        max_tokens: req.max_tokens,
        system: req.system,
        messages: req.messages,
        tools: req.tools,
        stream: true,
    };
    serde_json::to_vec(&body).map(Bytes::from)
}

enum Failure {
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    Fatal(LlmError),
}

impl Failure {
    fn retry(reason: String, retry_after: Option<Duration>) -> Self {
        Failure::Retry {
            reason,
            retry_after,
        }
    }
}

fn connect_message(url: &str, e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg = format!("{msg}: {s}");
        src = s.source();
    }
    format!("could not reach {url}: {msg}")
}

/// One readable sentence for an HTTP error body (JSON error, HTML page, or text).
fn describe_http_error(status: u16, body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let err = v.get("error").unwrap_or(&v);
        let kind = err.get("type").and_then(Value::as_str).unwrap_or("error");
        if let Some(m) = err.get("message").and_then(Value::as_str) {
            return format!("{kind}: {m}{}", hint(status));
        }
    }
    let trimmed = body.trim();
    if trimmed.starts_with('<') {
        return format!(
            "the server answered with an HTML page, not the API (is the base URL right, or a proxy in the way?){}",
            hint(status)
        );
    }
    let snippet: String = trimmed.chars().take(200).collect();
    if snippet.is_empty() {
        format!("no details given{}", hint(status))
    } else {
        format!("{snippet}{}", hint(status))
    }
}

fn hint(status: u16) -> &'static str {
    match status {
        401 => " (check ANTHROPIC_API_KEY)",
        403 => " (the key lacks permission for this model or endpoint)",
        404 => " (check the model name and ANTHROPIC_BASE_URL)",
        413 => " (the conversation is too large)",
        _ => "",
    }
}

enum Partial {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        start_input: Option<Value>,
    },
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
    fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        let name = ev.event.as_str();
        if name == "ping" || ev.data.is_empty() {
            return Ok(());
        }
        let data: Value = serde_json::from_str(&ev.data).map_err(|e| {
            Failure::retry(
                format!("malformed event `{name}` from the server: {e}"),
                None,
            )
        })?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name);
        match kind {
            "message_start" => {
                if let Some(u) = data.pointer("/message/usage") {
                    self.usage.input_tokens = token_count(u, "input_tokens")
                        + token_count(u, "cache_read_input_tokens")
                        + token_count(u, "cache_creation_input_tokens");
                    self.usage.output_tokens = token_count(u, "output_tokens");
                }
            }
            "content_block_start" => {
                let index = block_index(&data)?;
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let partial = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        if !text.is_empty() {
                            on_event(StreamEvent::TextDelta(text.to_string()));
                        }
                        Some(Partial::Text(text.to_string()))
                    }
                    Some("tool_use") => Some(Partial::Tool {
                        id: str_field(block, "id"),
                        name: str_field(block, "name"),
                        json: String::new(),
                        // Some compatible servers send the whole input here, with no deltas.
                        start_input: block.get("input").filter(|v| v.is_object()).cloned(),
                    }),
                    // thinking and other block kinds are not kept
                    _ => None,
                };
                if self.blocks.len() <= index {
                    self.blocks.resize_with(index + 1, || None);
                }
                self.blocks[index] = partial;
            }
            "content_block_delta" => {
                let index = block_index(&data)?;
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match (
                    self.blocks.get_mut(index),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Some(Partial::Text(t))), Some("text_delta")) => {
                        let piece = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        t.push_str(piece);
                        on_event(StreamEvent::TextDelta(piece.to_string()));
                    }
                    (Some(Some(Partial::Tool { json, .. })), Some("input_json_delta")) => {
                        json.push_str(
                            delta
                                .get("partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or(""),
                        );
                    }
                    (Some(_), _) => {}
                    (None, _) => {
                        return Err(Failure::retry(
                            format!("delta for unknown block {index}"),
                            None,
                        ));
                    }
                }
            }
            "content_block_stop" => {}
            "message_delta" => {
                if let Some(r) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = data.get("usage") {
                    self.usage.output_tokens =
                        token_count(u, "output_tokens").max(self.usage.output_tokens);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let err = data.get("error").unwrap_or(&data);
                let etype = err.get("type").and_then(Value::as_str).unwrap_or("error");
                let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
                let text = format!("{etype}: {msg}");
                return Err(match etype {
                    "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error" => {
                        Failure::retry(text, None)
                    }
                    _ => Failure::Fatal(LlmError::Api(text)),
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Result<AssistantReply, Failure> {
        let mut content = Vec::new();
        let mut invalid_inputs = Vec::new();
        for partial in self.blocks.into_iter().flatten() {
            match partial {
                // The API refuses whitespace-only text blocks if they are sent back.
                Partial::Text(text) if !text.trim().is_empty() => {
                    content.push(ContentBlock::Text { text })
                }
                Partial::Text(_) => {}
                Partial::Tool {
                    id,
                    name,
                    json,
                    start_input,
                } => {
                    let input = if json.trim().is_empty() {
                        start_input.unwrap_or_else(|| Value::Object(Default::default()))
                    } else {
                        match serde_json::from_str::<Value>(&json) {
                            Ok(v @ Value::Object(_)) => v,
                            Ok(other) => {
                                invalid_inputs.push((
                                    id.clone(),
                                    format!("the input must be a JSON object, got `{other}`"),
                                ));
                                Value::Object(Default::default())
                            }
                            Err(e) => {
                                let raw: String = json.chars().take(300).collect();
                                invalid_inputs.push((
                                    id.clone(),
                                    format!("the input is not valid JSON ({e}): {raw}"),
                                ));
                                Value::Object(Default::default())
                            }
                        }
                    };
                    content.push(ContentBlock::ToolUse { id, name, input });
                }
            }
        }
        Ok(AssistantReply {
            content,
            stop_reason: self.stop_reason.unwrap_or_else(|| "end_turn".into()),
            usage: self.usage,
            invalid_inputs,
        })
    }
}

fn block_index(data: &Value) -> Result<usize, Failure> {
    data.get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .filter(|i| *i < 1024)
        .ok_or_else(|| Failure::retry("content block event without a valid index".into(), None))
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn token_count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(reply.stop_reason, "tool_use");
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 30
            }
        );
        assert_eq!(
            reply.content,
            vec![
                ContentBlock::Text { text: "Hi".into() },
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "bash".into(),
                    input: json!({"command": "ls"})
                },
            ]
        );
        assert!(reply.invalid_inputs.is_empty());
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

    #[test]
    fn http_errors_read_well() {
        assert_eq!(
            describe_http_error(
                401,
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            "authentication_error: invalid x-api-key (check ANTHROPIC_API_KEY)"
        );
        assert!(
            describe_http_error(502, "<html><body>Bad gateway</body></html>").contains("HTML page")
        );
        assert_eq!(describe_http_error(500, ""), "no details given");
    }
}
