//! HTTP plumbing shared by the streaming providers: one POST that must
//! answer 200 with `text/event-stream`, idle timeouts on every wait, readable
//! errors, and the retry loop. Invariants: every failure is classified as
//! worth a retry or final, and retries are bounded by the policy; a redirect
//! is never followed (the key would go to wherever it points); a body that
//! is not the event stream is read up to [`MAX_ERROR_BODY`] bytes, no more.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;

use super::body::Body;
use super::retry::{RetryPolicy, is_retryable_status, parse_retry_after};
use super::sse::{SseDecoder, SseEvent};
use super::{AssistantReply, LlmError, StreamEvent};

/// Largest single SSE event accepted; a stream that buffers more is broken.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes read of an error (or otherwise unexpected) response body; the
/// rest is left unread and the connection dropped.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// Retries, at most, of a request nothing is listening for: the server may
/// be starting, but waiting longer only hides the cause.
const REFUSED_RETRIES: u32 = 2;

/// Longest wait before a retry of a refused connection.
const REFUSED_DELAY: Duration = Duration::from_millis(250);

/// Why an attempt failed.
pub enum Failure {
    Retry {
        reason: String,
        retry_after: Option<Duration>,
        /// Nothing listens at the address: retried at most
        /// [`REFUSED_RETRIES`] times, quickly and without a word.
        refused: bool,
    },
    Fatal(LlmError),
}

impl Failure {
    pub fn retry(reason: impl Into<String>, retry_after: Option<Duration>) -> Self {
        Failure::Retry {
            reason: reason.into(),
            retry_after,
            refused: false,
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
        // No redirects: reqwest would carry `x-api-key` (any header but
        // Authorization and Cookie) to whatever host a 3xx names.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .redirect(reqwest::redirect::Policy::none())
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

    /// The start of `response`'s body, at most [`MAX_ERROR_BODY`] bytes, read
    /// chunk by chunk; the rest is never read (dropping the response closes
    /// the connection). A body cut by a read error gives what came before it.
    async fn read_bounded(
        &self,
        what: &str,
        mut response: reqwest::Response,
    ) -> Result<String, Failure> {
        let mut body = Vec::new();
        while body.len() < MAX_ERROR_BODY {
            match self.within(what, response.chunk()).await? {
                Ok(Some(chunk)) => {
                    let room = MAX_ERROR_BODY - body.len();
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Ok(None) | Err(_) => break,
            }
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// POSTs `body` and returns the event stream, or a classified failure.
    pub async fn open(&self, headers: &[(&str, &str)], body: &Body) -> Result<Events<'_>, Failure> {
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
                request
                    .header("content-length", body.len())
                    .body(body.to_reqwest())
                    .send(),
            )
            .await?
            .map_err(|e| {
                if is_refused(&e) {
                    return Failure::Retry {
                        reason: refused_message(&self.url),
                        retry_after: None,
                        refused: true,
                    };
                }
                let message = connect_message(&self.url, &e);
                if e.is_builder() {
                    Failure::Fatal(LlmError::Config(message))
                } else {
                    Failure::retry(message, None)
                }
            })?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .map(|l| resolve_location(&self.url, l));
            return Err(Failure::Fatal(LlmError::Http {
                status,
                message: redirect_message(&self.url, location.as_deref(), self.names),
            }));
        }
        if status != 200 {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let text = self
                .read_bounded("reading an error response", response)
                .await?;
            let message = describe_http_error(status, &text, self.names);
            return Err(if is_retryable_status(status) {
                Failure::retry(format!("HTTP {status}: {message}"), retry_after)
            } else if status == 413 || super::too_long::body_says_too_long(&text) {
                Failure::Fatal(LlmError::ContextTooLong(format!(
                    "HTTP {status}: {message}"
                )))
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
            let text = self.read_bounded("reading the response", response).await?;
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
            // The body broke off: the server (or the network between)
            // closed the stream mid-reply.
            Some(Err(e)) => Err(Failure::retry(
                format!("the server cut the stream mid-reply ({e})"),
                None,
            )),
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

/// What reads one response's events into a reply (each wire has one).
pub trait Assemble {
    fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure>;
    /// The stream said the reply is complete.
    fn done(&self) -> bool;
    /// The reply is whole even if the stream ends or breaks here (Chat
    /// Completions: a `finish_reason` without the `[DONE]` after it).
    fn whole(&self) -> bool {
        false
    }
    fn finish(self) -> Result<AssistantReply, Failure>;
}

impl Events<'_> {
    /// Reads the events into `asm` until it is done: its reply, or the
    /// failure of a stream that broke off before.
    pub async fn read<A: Assemble>(
        mut self,
        mut asm: A,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<AssistantReply, Failure> {
        loop {
            let batch = match self.next().await {
                Ok(Some(batch)) => batch,
                Ok(None) => break,
                Err(_) if asm.whole() => return asm.finish(),
                Err(f) => return Err(f),
            };
            for ev in batch {
                asm.on_event(&ev, on_event)?;
                if asm.done() {
                    return asm.finish();
                }
            }
        }
        if asm.whole() {
            asm.finish()
        } else {
            Err(self.cut_short())
        }
    }
}

/// A provider that makes one attempt at a streamed reply; [`stream_with_retries`]
/// wraps it in the retry loop.
pub trait Attempt: Sync {
    fn attempt<'a>(
        &'a self,
        body: &'a Body,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> impl Future<Output = Result<AssistantReply, Failure>> + Send + 'a;
}

/// Sends the encoded `body` through `provider`, retrying under `policy`.
pub async fn stream_with_retries<P: Attempt>(
    provider: &P,
    policy: &RetryPolicy,
    body: serde_json::Result<Body>,
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
    /// Retries of refused connections so far.
    refused: u32,
}

impl<'p> Retrier<'p> {
    pub fn new(policy: &'p RetryPolicy) -> Self {
        Self {
            policy,
            retry: 0,
            refused: 0,
        }
    }

    /// `Ok` after waiting when another attempt is worth it, else the final error.
    pub async fn after(
        &mut self,
        failure: Failure,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), LlmError> {
        let (reason, retry_after, refused) = match failure {
            Failure::Fatal(e) => return Err(e),
            Failure::Retry {
                reason,
                retry_after,
                refused,
            } => (reason, retry_after, refused),
        };
        self.retry += 1;
        let attempts = self.retry;
        if refused {
            self.refused += 1;
            let delay = self
                .policy
                .delay(attempts, None)
                .filter(|_| self.refused <= REFUSED_RETRIES);
            let Some(delay) = delay else {
                return Err(LlmError::Unreachable {
                    attempts,
                    last: reason,
                });
            };
            tracing::warn!(attempts, %reason, "retrying a refused connection");
            tokio::time::sleep(delay.min(REFUSED_DELAY)).await;
            return Ok(());
        }
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

/// `location` made absolute against the `url` that answered with it.
fn resolve_location(url: &str, location: &str) -> String {
    reqwest::Url::parse(url)
        .and_then(|base| base.join(location))
        .map(String::from)
        .unwrap_or_else(|_| location.to_string())
}

/// What to tell the user about a redirect, which is never followed.
fn redirect_message(url: &str, location: Option<&str>, names: Names) -> String {
    let to = location.unwrap_or("another address (no location given)");
    format!(
        "the server at {url} redirected to {to}; redirects are not followed, so the key \
goes nowhere else: set base_url (or {}) to the final address",
        names.url_var
    )
}

/// Whether the connection was refused: nothing listens at the address.
fn is_refused(e: &reqwest::Error) -> bool {
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        src = s.source();
    }
    false
}

/// What to tell the user when nothing listens at `url`'s host and port.
fn refused_message(url: &str) -> String {
    let origin = reqwest::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| url.to_string());
    format!("nothing is listening at {origin}; is the server running?")
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

    #[tokio::test(start_paused = true)]
    async fn a_refused_connection_is_retried_twice_quickly_and_silently() {
        let policy = RetryPolicy::default();
        let mut retrier = Retrier::new(&policy);
        let mut events = Vec::new();
        let refused = || Failure::Retry {
            reason: refused_message("http://127.0.0.1:9/v1/messages"),
            retry_after: None,
            refused: true,
        };
        let start = tokio::time::Instant::now();
        for _ in 0..REFUSED_RETRIES {
            let mut on_event = |e| events.push(e);
            assert!(retrier.after(refused(), &mut on_event).await.is_ok());
        }
        let mut on_event = |e| events.push(e);
        let e = retrier.after(refused(), &mut on_event).await;
        assert!(start.elapsed() <= REFUSED_DELAY * REFUSED_RETRIES);
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(
            e.map_err(|e| e.to_string()).err().as_deref(),
            Some(
                "gave up after 3 attempts: nothing is listening at http://127.0.0.1:9; is the server running?"
            )
        );
        // No retries allowed means none for a refused connection either.
        let none = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        let mut on_event = |_| {};
        assert!(
            Retrier::new(&none)
                .after(refused(), &mut on_event)
                .await
                .is_err()
        );
    }

    #[test]
    fn a_redirect_names_where_it_points() {
        let url = "http://127.0.0.1:9/v1/messages";
        assert_eq!(
            resolve_location(url, "/elsewhere"),
            "http://127.0.0.1:9/elsewhere"
        );
        assert_eq!(
            resolve_location(url, "https://other.example/v1"),
            "https://other.example/v1"
        );
        let m = redirect_message(url, Some("https://other.example/v1"), NAMES);
        assert!(m.starts_with(
            "the server at http://127.0.0.1:9/v1/messages redirected to https://other.example/v1;"
        ));
        assert!(m.contains("ANTHROPIC_BASE_URL"));
        assert!(redirect_message(url, None, NAMES).contains("no location given"));
    }

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
