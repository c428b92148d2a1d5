//! HTTP plumbing shared by the streaming providers: one POST that must
//! answer 200 with `text/event-stream`, idle timeouts on every wait, readable
//! errors, and the retry loop. Invariant: every failure is classified as
//! worth a retry or final, and retries are bounded by the policy.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;

use super::retry::{RetryPolicy, is_retryable_status, parse_retry_after};
use super::sse::{SseDecoder, SseEvent};
use super::{AssistantReply, LlmError, StreamEvent};

/// Largest single SSE event accepted; a stream that buffers more is broken.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Why an attempt failed.
pub enum Failure {
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    Fatal(LlmError),
}

impl Failure {
    pub fn retry(reason: impl Into<String>, retry_after: Option<Duration>) -> Self {
        Failure::Retry {
            reason: reason.into(),
            retry_after,
        }
    }
}

/// What a provider calls its key and base URL in messages.
#[derive(Clone, Copy, Debug)]
pub struct Names {
    pub key_var: &'static str,
    pub url_var: &'static str,
    pub example_url: &'static str,
}

pub struct StreamingHttp {
    http: reqwest::Client,
    pub url: String,
    idle_timeout: Duration,
    names: Names,
}

impl StreamingHttp {
    /// Checks `base_url` + `path` is an http(s) URL and builds the client.
    pub fn new(
        base_url: &str,
        path: &str,
        idle_timeout: Duration,
        names: Names,
    ) -> Result<Self, LlmError> {
        let url = format!("{}{path}", base_url.trim_end_matches('/'));
        match reqwest::Url::parse(&url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => {
                return Err(LlmError::Config(format!(
                    "the base URL `{base_url}` is not an http(s) URL (example: {})",
                    names.example_url
                )));
            }
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            url,
            idle_timeout,
            names,
        })
    }

    /// Waits for `fut` at most the idle timeout; silence counts as a broken stream.
    pub async fn within<T>(&self, what: &str, fut: impl Future<Output = T>) -> Result<T, Failure> {
        tokio::time::timeout(self.idle_timeout, fut)
            .await
            .map_err(|_| {
                Failure::retry(
                    format!(
                        "no answer for {:.1} s while {what}",
                        self.idle_timeout.as_secs_f64()
                    ),
                    None,
                )
            })
    }

    /// POSTs `body` and returns the event stream, or a classified failure.
    pub async fn open(
        &self,
        headers: &[(&str, &str)],
        body: &Bytes,
    ) -> Result<Events<'_>, Failure> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = self
            .within(
                "waiting for the response",
                request.body(body.clone()).send(),
            )
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
            let message = describe_http_error(status, &text, self.names);
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
                describe_http_error(status, &text, self.names)
            ))));
        }
        Ok(Events {
            http: self,
            stream: Box::pin(response.bytes_stream()),
            decoder: SseDecoder::new(),
            ended: false,
        })
    }
}

type ByteStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// The decoded events of one response.
pub struct Events<'a> {
    http: &'a StreamingHttp,
    stream: ByteStream,
    decoder: SseDecoder,
    /// The server closed the stream and the decoder was told.
    ended: bool,
}

impl Events<'_> {
    /// The next batch of events; `Ok(None)` when the server closed the stream.
    /// At the close, a complete last event without its blank line comes first.
    pub async fn next(&mut self) -> Result<Option<Vec<SseEvent>>, Failure> {
        if self.ended {
            return Ok(None);
        }
        match self.http.within("streaming", self.stream.next()).await? {
            Some(Ok(bytes)) => {
                let events = self.decoder.feed(&bytes);
                if self.decoder.buffered() > MAX_EVENT_BYTES {
                    return Err(Failure::retry(
                        format!("an event larger than {MAX_EVENT_BYTES} bytes"),
                        None,
                    ));
                }
                Ok(Some(events))
            }
            Some(Err(e)) => Err(Failure::retry(format!("read error: {e}"), None)),
            None => {
                self.ended = true;
                Ok(Some(self.decoder.finish().into_iter().collect()))
            }
        }
    }

    /// The failure for a stream that ended before the message was complete.
    pub fn cut_short(&self) -> Failure {
        let part = if self.decoder.has_partial() {
            " (cut mid-event)"
        } else {
            ""
        };
        Failure::retry(
            format!("the connection closed before the message was complete{part}"),
            None,
        )
    }
}

/// A provider that makes one attempt at a streamed reply; [`stream_with_retries`]
/// wraps it in the retry loop.
pub trait Attempt: Sync {
    fn attempt<'a>(
        &'a self,
        body: &'a Bytes,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> impl Future<Output = Result<AssistantReply, Failure>> + Send + 'a;
}

/// Sends the encoded `body` through `provider`, retrying under `policy`.
pub async fn stream_with_retries<P: Attempt>(
    provider: &P,
    policy: &RetryPolicy,
    body: serde_json::Result<Bytes>,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<AssistantReply, LlmError> {
    let body = body.map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))?;
    let mut retrier = Retrier::new(policy);
    loop {
        match provider.attempt(&body, on_event).await {
            Ok(reply) => return Ok(reply),
            Err(failure) => retrier.after(failure, on_event).await?,
        }
    }
}

/// Decides, failure by failure, whether to try again: waits the backoff
/// (or the server's `retry-after`) and reports it, or gives up.
pub struct Retrier<'p> {
    policy: &'p RetryPolicy,
    retry: u32,
}

impl<'p> Retrier<'p> {
    pub fn new(policy: &'p RetryPolicy) -> Self {
        Self { policy, retry: 0 }
    }

    /// `Ok` after waiting when another attempt is worth it, else the final error.
    pub async fn after(
        &mut self,
        failure: Failure,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), LlmError> {
        let (reason, retry_after) = match failure {
            Failure::Fatal(e) => return Err(e),
            Failure::Retry {
                reason,
                retry_after,
            } => (reason, retry_after),
        };
        self.retry += 1;
        let attempts = self.retry;
        if let Some(wait) = retry_after.filter(|w| *w > self.policy.max_delay) {
            return Err(LlmError::RetriesExhausted {
                attempts,
                last: format!("{reason} (the server asks to wait {} s)", wait.as_secs()),
            });
        }
        let Some(delay) = self.policy.delay(attempts, retry_after) else {
            return Err(LlmError::RetriesExhausted {
                attempts,
                last: reason,
            });
        };
        tracing::warn!(attempts, ?delay, %reason, "retrying model request");
        on_event(StreamEvent::Retrying {
            attempt: attempts,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason,
        });
        tokio::time::sleep(delay).await;
        Ok(())
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
pub fn describe_http_error(status: u16, body: &str, names: Names) -> String {
    let hint = match status {
        401 => format!(" (check {})", names.key_var),
        403 => " (the key lacks permission for this model or endpoint)".to_string(),
        404 => format!(" (check the model name and {})", names.url_var),
        413 => " (the conversation is too large)".to_string(),
        _ => String::new(),
    };
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let err = v.get("error").unwrap_or(&v);
        let kind = err.get("type").and_then(Value::as_str).unwrap_or("error");
        if let Some(m) = err.get("message").and_then(Value::as_str) {
            return format!("{kind}: {m}{hint}");
        }
        if let Some(m) = err.as_str() {
            return format!("{m}{hint}");
        }
    }
    let trimmed = body.trim();
    if trimmed.starts_with('<') {
        return format!(
            "the server answered with an HTML page, not the API (is the base URL right, or a proxy in the way?){hint}"
        );
    }
    let snippet: String = trimmed.chars().take(200).collect();
    if snippet.is_empty() {
        format!("no details given{hint}")
    } else {
        format!("{snippet}{hint}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: Names = Names {
        key_var: "ANTHROPIC_API_KEY",
        url_var: "ANTHROPIC_BASE_URL",
        example_url: "https://api.anthropic.com",
    };

    #[test]
    fn http_errors_read_well() {
        assert_eq!(
            describe_http_error(
                401,
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                NAMES
            ),
            "authentication_error: invalid x-api-key (check ANTHROPIC_API_KEY)"
        );
        assert!(
            describe_http_error(502, "<html><body>Bad gateway</body></html>", NAMES)
                .contains("HTML page")
        );
        assert_eq!(describe_http_error(500, "", NAMES), "no details given");
        assert_eq!(
            describe_http_error(404, r#"{"error":"model 'x' not found"}"#, NAMES),
            "model 'x' not found (check the model name and ANTHROPIC_BASE_URL)"
        );
    }
}
