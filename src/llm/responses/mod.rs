//! OpenAI Responses client (`POST {base}/responses`): the wire of the codex
//! and pro model lines, and of reasoning models whose reasoning must travel
//! between turns. Stateless: `store: false`, each reasoning item comes back
//! with its `encrypted_content` and goes back verbatim and in order (the
//! same [`ContentBlock::Reasoning`] that carries DeepSeek's reasoning and
//! OpenRouter's details on the chat wire); `prompt_cache_key` is the
//! session's id. Invariant, as for the other wires: a reply is returned only
//! once the stream is complete (`response.completed`); a stream that breaks
//! off earlier is retried from scratch, so no call is seen twice or half.
//!
//! [`ContentBlock::Reasoning`]: crate::llm::ContentBlock::Reasoning

mod request;
mod stream;

use std::sync::atomic::Ordering;

use super::body::Body;
use super::http::{Attempt, Failure, Names, StreamingHttp, stream_with_retries};
use super::openai::{OpenAiConfig, bearer, explain, headers};
use super::prefix::PrefixCache;
use super::{
    AssistantReply, BoxFuture, ConversationKey, KeptText, LlmError, ModelClient, ModelRequest,
    StreamEvent,
};
use request::{Options, request_body};
use stream::Assembler;

pub struct ResponsesClient {
    config: OpenAiConfig,
    http: StreamingHttp,
    authorization: Option<String>,
    /// `prompt_cache_key` when a request names no session.
    cache_key: String,
    /// The model reasons: its summaries and encrypted reasoning are asked for.
    reasoning: bool,
    /// Summaries of the reasoning are asked for (until the API says the
    /// organization may not have them: then never again in this session).
    summaries: std::sync::atomic::AtomicBool,
    /// The older messages' bytes, kept between requests.
    prefix: PrefixCache,
}

const NAMES: Names = Names {
    key_var: "OPENAI_API_KEY",
    url_var: "OPENAI_BASE_URL",
    example_url: "https://api.openai.com/v1",
};

impl ResponsesClient {
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config(
                "no model name: set --model or OPENAI_MODEL (e.g. `gpt-5-codex`)".into(),
            ));
        }
        let http = StreamingHttp::new(&config.base_url, "/responses", config.idle_timeout, NAMES)?;
        let authorization = bearer(config.api_key.as_deref());
        Ok(Self {
            reasoning: crate::models::reasons(&config.model),
            summaries: std::sync::atomic::AtomicBool::new(true),
            config,
            http,
            authorization,
            cache_key: super::openai::session_key(),
            prefix: PrefixCache::default(),
        })
    }

    /// Asks for reasoning (summaries and encrypted items) or not, whatever
    /// the model's name says.
    pub fn with_reasoning(mut self, on: bool) -> Self {
        self.reasoning = on;
        self
    }

    /// Adds what only this client knows to a final HTTP error.
    fn explain(&self, failure: Failure) -> Failure {
        let keyed = self.authorization.is_some();
        let hint = "; a server without the Responses API needs `wire = \"chat\"`";
        explain(failure, &self.config.model, &self.http.url, keyed, hint)
    }
}

impl Attempt for ResponsesClient {
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

impl ModelClient for ResponsesClient {
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
        Box::pin(async move {
            let asked = self.summaries.load(Ordering::Relaxed);
            let first = self.send(request, asked, on_event).await;
            match first {
                // An organization not verified for reasoning summaries is
                // refused them (HTTP 400): asked again without, and never
                // again this session.
                Err(LlmError::Http {
                    status: 400,
                    message,
                }) if asked && message.to_ascii_lowercase().contains("summar") => {
                    self.summaries.store(false, Ordering::Relaxed);
                    tracing::info!(%message, "reasoning summaries refused; asking without them");
                    self.send(request, false, on_event).await
                }
                other => other,
            }
        })
    }
}

impl ResponsesClient {
    /// One request (with its retries), reasoning summaries asked for when
    /// `summaries`.
    async fn send(
        &self,
        request: &ModelRequest<'_>,
        summaries: bool,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<AssistantReply, LlmError> {
        let opts = Options {
            model: &self.config.model,
            cache_key: request
                .session
                .filter(|s| !s.is_empty())
                .unwrap_or(&self.cache_key),
            reasoning: self.reasoning,
            summaries,
        };
        let body = request_body(opts, request, &self.prefix);
        stream_with_retries(self, &self.config.retry, body, on_event).await
    }
}
