//! The SDK's Streamable HTTP client, run over Waypoint's own reqwest 0.12
//! (the SDK's ready-made one pulls reqwest 0.13, a second HTTP stack).
//! The SDK drives the protocol (sessions, SSE resumption, retries); this
//! file only sends what it asks and hands back what came, within limits.
//! Invariants: no response body is read past its limit (a JSON body past
//! `max_json_response_size`, one SSE event past `max_sse_event_size`);
//! redirects are followed only to the same origin with the method kept
//! (307/308), so the session id and the configured headers never reach
//! another host; the bearer token is never logged.

use std::borrow::Cow;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, Stream, StreamExt};
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

/// Redirects followed for one request, at most.
const MAX_REDIRECTS: usize = 10;

type Error = StreamableHttpError<Failure>;

/// What the HTTP client reported, with its innermost cause ("error sending
/// request for url (…): Connection refused (os error 111)").
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Failure(String);

fn client(e: reqwest::Error) -> Error {
    let mut text = e.to_string();
    let mut inner: &dyn std::error::Error = &e;
    while let Some(source) = inner.source() {
        inner = source;
    }
    if !std::ptr::addr_eq(inner, &e) {
        text = format!("{text}: {inner}");
    }
    StreamableHttpError::Client(Failure(text))
}

/// Waypoint's HTTP client as the SDK's transport.
#[derive(Clone)]
pub struct Client(reqwest::Client);

impl Client {
    /// A client for one server: same-origin 307/308 redirects only, no idle
    /// connections kept (a reused connection whose last body was not read
    /// to the end costs a delayed-ACK stall), a connect timeout of
    /// `connect`.
    pub fn new(connect: Duration) -> Result<Self, String> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .connect_timeout(connect)
            .build()
            .map(Self)
            .map_err(|e| format!("cannot make an HTTP client: {e}"))
    }
}

/// The headers of an HTTP server's requests: its `headers`, and its bearer
/// token from the environment variable `bearer_token_env_var` names.
pub fn headers(
    config: &crate::config::McpServerConfig,
) -> Result<(HashMap<HeaderName, HeaderValue>, Option<String>), String> {
    let mut headers = HashMap::new();
    for (k, v) in &config.headers {
        let name = HeaderName::try_from(k.as_str())
            .map_err(|_| format!("`{k}` is not a valid header name"))?;
        let value = HeaderValue::try_from(v.as_str())
            .map_err(|_| format!("the value of header `{k}` is not valid in a header"))?;
        headers.insert(name, value);
    }
    let token = match &config.bearer_token_env_var {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.is_empty() => Some(token),
            _ => return Err(format!("`{var}` (its bearer_token_env_var) is not set")),
        },
    };
    Ok((headers, token))
}

/// `content-type` is `mime` (parameters such as a charset allowed).
fn is_media(value: Option<&HeaderValue>, mime: &str) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(mime))
}

/// A 401 with a challenge: the SDK reports it as "auth required".
fn auth_required(response: &reqwest::Response) -> Option<Error> {
    if response.status() != StatusCode::UNAUTHORIZED {
        return None;
    }
    let challenge = response.headers().get(header::WWW_AUTHENTICATE)?;
    Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(
        String::from_utf8_lossy(challenge.as_bytes()).into_owned(),
    )))
}

/// A 429 or a 5xx, with its `retry-after` kept for the SDK.
fn status_error(response: &reqwest::Response) -> Option<Error> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Some(StreamableHttpError::HttpStatus(HttpStatusError::new(
        status.as_u16(),
        retry_after,
    )))
}

/// The body, read to its end or refused past `max` bytes.
async fn read_body(response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(client)?;
        if body.len() + chunk.len() > max {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max` bytes of the body, as text, for an error message.
async fn body_prefix(response: reqwest::Response, max: usize) -> String {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while body.len() < max {
        match chunks.next().await {
            Some(Ok(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(max);
    String::from_utf8_lossy(&body).trim().to_string()
}

/// An SSE body whose events are parsed by the SDK's parser, each refused
/// past `max` bytes.
fn sse_events(
    response: reqwest::Response,
    max: usize,
) -> BoxStream<'static, Result<Sse, SseError>> {
    let bounded = Bounded {
        inner: response.bytes_stream().boxed(),
        event: EventBytes::default(),
        max,
        failed: false,
    };
    SseStream::from_bytes_stream(bounded).boxed()
}

/// Counts the bytes of the SSE event being read: an empty line (after LF,
/// CRLF or CR line ends) ends it.
#[derive(Default)]
struct EventBytes {
    len: usize,
    line_start: bool,
    after_cr: bool,
}

impl EventBytes {
    /// Takes `chunk`; false once an event is longer than `max`.
    fn take(&mut self, chunk: &[u8], max: usize) -> bool {
        for &b in chunk {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' if self.line_start => {
                    self.len = 0;
                    self.after_cr = b == b'\r';
                }
                b'\r' | b'\n' => {
                    self.line_start = true;
                    self.after_cr = b == b'\r';
                    self.len += 1;
                }
                _ => {
                    self.line_start = false;
                    self.after_cr = false;
                    self.len += 1;
                }
            }
            if self.len > max {
                return false;
            }
        }
        true
    }
}

struct Bounded {
    inner: BoxStream<'static, reqwest::Result<Bytes>>,
    event: EventBytes,
    max: usize,
    failed: bool,
}

impl Stream for Bounded {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        match self.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                let max = self.max;
                if self.event.take(&chunk, max) {
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    self.failed = true;
                    Poll::Ready(Some(Err(std::io::Error::other(format!(
                        "an event of the server's stream is larger than {max} bytes"
                    )))))
                }
            }
            Poll::Ready(Some(Err(e))) => {
                self.failed = true;
                Poll::Ready(Some(Err(std::io::Error::other(e))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session: Option<&str>,
    auth: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    for (name, value) in custom {
        request = request.header(name, value);
    }
    if let Some(session) = session {
        request = request.header(HEADER_SESSION_ID, session);
    }
    if let Some(token) = auth {
        request = request.bearer_auth(token);
    }
    request
}

const ACCEPT_BOTH: &str = "text/event-stream, application/json";

impl StreamableHttpClient for Client {
    type Error = Failure;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let had_session = session_id.is_some();
        let request = self
            .0
            .post(uri.as_ref())
            .header(header::ACCEPT, ACCEPT_BOTH)
            .json(&message);
        let response = with_headers(request, session_id.as_deref(), auth_header, custom_headers)
            .send()
            .await
            .map_err(client)?;
        if let Some(e) = auth_required(&response) {
            return Err(e);
        }
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let json = is_media(content_type.as_ref(), JSON_MIME_TYPE);
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        // Notifications, replies and errors wait for nothing back.
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        if !status.is_success() {
            // A JSON-RPC error in the body is the server's answer.
            if json && status != StatusCode::TOO_MANY_REQUESTS {
                let body = read_body(response, limits.max_json_response_size).await?;
                if let Ok(error @ ServerJsonRpcMessage::Error(_)) = serde_json::from_slice(&body) {
                    return Ok(StreamableHttpPostResponse::Json(error, session));
                }
                let text = String::from_utf8_lossy(&body);
                let text: String = text.chars().take(limits.max_error_response_size).collect();
                return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!("HTTP {status}: {}", text.trim()),
                )));
            }
            if let Some(e) = status_error(&response) {
                return Err(e);
            }
            let body = body_prefix(response, limits.max_error_response_size).await;
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {body}"),
            )));
        }
        if is_media(content_type.as_ref(), EVENT_STREAM_MIME_TYPE) {
            let events = sse_events(response, limits.max_sse_event_size);
            return Ok(StreamableHttpPostResponse::Sse(events, session));
        }
        if json {
            let body = read_body(response, limits.max_json_response_size).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                Err(e) => Err(StreamableHttpError::Deserialize(e)),
            };
        }
        if awaits_nothing {
            // Some servers answer a notification with an empty 200.
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let request = self.0.delete(uri.as_ref());
        let response = with_headers(request, Some(&session_id), auth_header, custom_headers)
            .send()
            .await
            .map_err(client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        response.error_for_status().map(drop).map_err(client)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut request = self.0.get(uri.as_ref()).header(header::ACCEPT, ACCEPT_BOTH);
        if let Some(id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, id);
        }
        let response = with_headers(request, session_id.as_deref(), auth_header, custom_headers)
            .send()
            .await
            .map_err(client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(e) = auth_required(&response).or_else(|| status_error(&response)) {
            return Err(e);
        }
        let response = response.error_for_status().map_err(client)?;
        let content_type = response.headers().get(header::CONTENT_TYPE);
        if !is_media(content_type, EVENT_STREAM_MIME_TYPE)
            && !is_media(content_type, JSON_MIME_TYPE)
        {
            return Err(StreamableHttpError::UnexpectedContentType(
                content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            ));
        }
        Ok(sse_events(response, max_sse_event_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]], max: usize) -> bool {
        let mut e = EventBytes::default();
        chunks.iter().all(|c| e.take(c, max))
    }

    #[test]
    fn an_event_is_measured_from_one_empty_line_to_the_next_whatever_the_line_ends() {
        let big = "data: 12345678\n".repeat(4);
        // 60 bytes in one event.
        assert!(!events(&[big.as_bytes()], 40));
        assert!(events(&[big.as_bytes()], 60));
        // Many small events, split at awkward bytes, with each line end.
        for end in ["\n\n", "\r\n\r\n", "\r\r"] {
            let one = format!("data: 1234567890{end}");
            let stream = one.repeat(50);
            let bytes = stream.as_bytes();
            let chunks: Vec<&[u8]> = bytes.chunks(7).collect();
            assert!(events(&chunks, 20), "{end:?}");
            let joined = format!("data: 1234567890{}", &end[..end.len() / 2]).repeat(3);
            assert!(!events(&[joined.as_bytes()], 40), "{end:?}");
        }
    }

    #[test]
    fn content_types_are_matched_without_their_parameters() {
        let v = HeaderValue::from_static("Application/JSON; charset=utf-8");
        assert!(is_media(Some(&v), JSON_MIME_TYPE));
        assert!(!is_media(Some(&v), EVENT_STREAM_MIME_TYPE));
        assert!(!is_media(None, JSON_MIME_TYPE));
    }
}
