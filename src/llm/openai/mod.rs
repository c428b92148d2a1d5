//! OpenAI-compatible Chat Completions client (OpenAI, Ollama, llama.cpp,
//! vLLM, LM Studio) with SSE streaming and bounded retries. Invariant: a
//! reply is returned only once the stream is complete (a `finish_reason`
//! followed by `[DONE]` or the end of the stream); a stream that breaks off
//! earlier is retried from scratch, so tool calls are never seen twice or half.

mod request;
pub(super) mod stream;

use std::time::Duration;

use super::body::Body;
use super::http::{Attempt, Failure, Names, StreamingHttp, stream_with_retries};
use super::prefix::PrefixCache;
use super::retry::RetryPolicy;
use super::{
    AssistantReply, BoxFuture, ConversationKey, KeptText, LlmError, ModelClient, ModelRequest,
    StreamEvent,
};
pub use request::request_body;
use request::request_body_for;
use stream::Assembler;
pub use stream::looks_like_text_tool_call;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Most tool calls accepted in one reply; more means a broken stream.
const MAX_TOOL_CALLS: usize = 1024;

#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// Sent as `authorization: Bearer …` when set; local servers need none.
    pub api_key: Option<String>,
    /// Usually ends in `/v1`, e.g. `http://localhost:11434/v1` for Ollama.
    pub base_url: String,
    pub model: String,
    pub retry: RetryPolicy,
    /// Longest silence tolerated inside a stream before it counts as broken.
    pub idle_timeout: Duration,
}

pub struct OpenAiClient {
    config: OpenAiConfig,
    http: StreamingHttp,
    authorization: Option<String>,
    /// `prompt_cache_key` for OpenAI's own API when a request names no
    /// session: random, made once per client.
    cache_key: String,
    /// The older messages' bytes, kept between requests.
    prefix: PrefixCache,
}

const NAMES: Names = Names {
    key_var: "OPENAI_API_KEY",
    url_var: "OPENAI_BASE_URL",
    example_url: "http://localhost:11434/v1",
};

impl OpenAiClient {
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config(
                "no model name: set --model or OPENAI_MODEL (e.g. `gpt-4.1`, or `qwen2.5-coder` for Ollama)"
                    .into(),
            ));
        }
        let http = StreamingHttp::new(
            &config.base_url,
            "/chat/completions",
            config.idle_timeout,
            NAMES,
        )?;
        let authorization = bearer(config.api_key.as_deref());
        Ok(Self {
            config,
            http,
            authorization,
            cache_key: session_key(),
            prefix: PrefixCache::default(),
        })
    }

    /// Adds what only this client knows to a final HTTP error.
    fn explain(&self, failure: Failure) -> Failure {
        let keyed = self.authorization.is_some();
        explain(failure, &self.config.model, &self.http.url, keyed, "")
    }
}

impl Attempt for OpenAiClient {
    async fn attempt(
        &self,
        body: &Body,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<AssistantReply, Failure> {
        let headers = headers(self.authorization.as_deref());
        let events = self
            .http
            .open(&headers, body)
            .await
            .map_err(|f| self.explain(f))?;
        events.read(Assembler::default(), on_event).await
    }
}

impl ModelClient for OpenAiClient {
    fn model(&self) -> &str {
        &self.config.model
    }
    fn provider(&self) -> &str {
        "openai"
    }

    fn kept_texts(&self, conversation: &ConversationKey) -> Vec<KeptText> {
        self.prefix.take_kept(conversation)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>> {
        let official = self.http.url.contains("://api.openai.com/");
        let session = request.session.filter(|s| !s.is_empty());
        let cache_key = official.then(|| session.unwrap_or(&self.cache_key));
        let body = request_body_for(&self.config.model, request, cache_key, &self.prefix);
        Box::pin(stream_with_retries(
            self,
            &self.config.retry,
            body,
            on_event,
        ))
    }
}

/// `Bearer KEY` when a key is set (local servers need none).
pub(super) fn bearer(key: Option<&str>) -> Option<String> {
    key.map(str::trim)
        .filter(|k| !k.is_empty())
        .map(|k| format!("Bearer {k}"))
}

/// The request's headers: the authorization, when there is one.
pub(super) fn headers(authorization: Option<&str>) -> Vec<(&'static str, &str)> {
    authorization
        .map(|v| ("authorization", v))
        .into_iter()
        .collect()
}

/// Adds what only an OpenAI client knows to a final HTTP error: the
/// model and URL on a 404 (then `hint`), that no key was sent on a
/// 401/403 without one.
pub(super) fn explain(
    failure: Failure,
    model: &str,
    url: &str,
    keyed: bool,
    hint: &str,
) -> Failure {
    match failure {
        Failure::Fatal(LlmError::Http { status, message }) => {
            let extra = match status {
                404 => format!(" [model `{model}` at {url}{hint}]"),
                401 | 403 if !keyed => " [no API key was sent]".to_string(),
                _ => String::new(),
            };
            Failure::Fatal(LlmError::Http {
                status,
                message: format!("{message}{extra}"),
            })
        }
        other => other,
    }
}

/// A random id for one session's prompt cache (std's hasher keys are
/// random per process; the time and a counter make each client's distinct).
pub(super) fn session_key() -> String {
    use std::hash::{BuildHasher, Hash, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    COUNT.fetch_add(1, Ordering::Relaxed).hash(&mut h);
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        .hash(&mut h);
    std::process::id().hash(&mut h);
    format!("waypoint-{:016x}", h.finish())
}
