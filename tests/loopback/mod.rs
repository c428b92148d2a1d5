//! A loopback HTTP server that plays a script of replies to a model client,
//! for the integration tests of every provider. It records every request
//! and can split, cut or stall its responses; the wire format's own parts
//! (the SSE bodies, the request accessors and validators) live in
//! `tests/common`, a module a wire (Anthropic, Chat Completions, Responses).
//!
//! A test crate that uses `tests/common` declares `mod loopback;` too.
//!
//! `ProviderWire` is what a provider-neutral test needs of a wire format on
//! top of `Wire`: a client for the server's URL, the bodies of scripted
//! answers, and readers and validators of recorded requests. Each wire of
//! `tests/common` implements it; `tests/engine_suite.rs` runs every shared
//! behaviour against all of them.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use waypoint::llm::ModelClient;

/// What differs, at the HTTP level, between the APIs the server stands in for.
pub trait Wire: 'static {
    /// Appended to `http://host:port` to make the server's `url`.
    const BASE_PATH: &'static str;
    /// The `content-type` of a streamed answer.
    const EVENT_STREAM: &'static str;
    /// The body of the 500 answer sent once the script has run out.
    const EXHAUSTED: &'static str;
}

/// One scripted HTTP response.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 text/event-stream, written in chunks of the given sizes (cycled);
    /// `cut_after` closes the connection after that many body bytes.
    Sse {
        body: String,
        chunk_sizes: Vec<usize>,
        cut_after: Option<usize>,
    },
    /// Any status with headers and a body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Sends `prefix`, then holds the connection open without a word.
    Stall { prefix: String },
    /// Reads the request and never answers, not even the status line.
    Silent,
    /// `reply`, once `delay` has passed (a model that takes its time).
    Late { delay: Duration, reply: Box<Reply> },
}

impl Reply {
    /// A whole stream `body`, written in chunks of `chunk_sizes` (cycled;
    /// none = all at once).
    pub fn stream(body: String, chunk_sizes: Vec<usize>) -> Self {
        Reply::Sse {
            body,
            chunk_sizes,
            cut_after: None,
        }
    }
}

/// One request as the server read it. Accessors that depend on the wire
/// format are added by the wires of `tests/common`.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub raw_len: usize,
    /// When the server had read it whole.
    pub at: std::time::Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn messages(&self) -> &Vec<Value> {
        self.body["messages"].as_array().expect("messages array")
    }
}

/// Picks the reply to a request from the request itself (a server that
/// continues a script correctly whichever process asks).
pub type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    responder: Option<Responder>,
    /// How many `Stall` replies have been written out whole.
    stalls: usize,
}

/// The server, speaking wire format `W`.
pub struct FakeServer<W: Wire> {
    pub url: String,
    state: Arc<Mutex<State>>,
    wire: PhantomData<fn() -> W>,
}

impl<W: Wire> FakeServer<W> {
    /// A server on a free loopback port.
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::start_on("127.0.0.1:0", replies).await
    }

    pub async fn start_on(addr: &str, replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind(addr).await.expect("bind loopback");
        let url = format!(
            "http://{}{}",
            listener.local_addr().expect("addr"),
            W::BASE_PATH
        );
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            ..State::default()
        }));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _ = serve::<W>(sock, shared).await;
                });
            }
        });
        Self {
            url,
            state,
            wire: PhantomData,
        }
    }

    /// A server that answers each request with `responder(request)`
    /// (its script is ignored).
    pub async fn responding(responder: Responder) -> Self {
        let server = Self::start(Vec::new()).await;
        server.state.lock().expect("state").responder = Some(responder);
        server
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().expect("state").requests.clone()
    }

    /// How many `Stall` replies are on the wire: their prefix written and
    /// flushed, the connection held.
    pub fn stalls(&self) -> usize {
        self.state.lock().expect("state").stalls
    }

    pub fn push(&self, reply: Reply) {
        self.state.lock().expect("state").replies.push_back(reply);
    }
}

async fn serve<W: Wire>(mut sock: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
    sock.set_nodelay(true)?;
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_string();
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body_bytes = &buf[head_end..(head_end + len).min(buf.len())];
    let body: Value = serde_json::from_slice(body_bytes).unwrap_or(Value::Null);
    let reply = {
        let mut st = state.lock().expect("state");
        let recorded = Recorded {
            path,
            headers,
            body,
            raw_len: len,
            at: std::time::Instant::now(),
        };
        let reply = match &st.responder {
            Some(respond) => Some(respond(&recorded)),
            None => st.replies.pop_front(),
        };
        st.requests.push(recorded);
        reply
    };
    let mut reply = reply.unwrap_or(Reply::Status {
        code: 500,
        headers: vec![],
        body: W::EXHAUSTED.into(),
    });
    while let Reply::Late {
        delay,
        reply: later,
    } = reply
    {
        tokio::time::sleep(delay).await;
        reply = *later;
    }
    match reply {
        Reply::Status {
            code,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {code} Status\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await?;
        }
        Reply::Sse {
            body,
            chunk_sizes,
            cut_after,
        } => {
            sock.write_all(sse_head::<W>().as_bytes()).await?;
            let bytes = body.as_bytes();
            let limit = cut_after.unwrap_or(bytes.len()).min(bytes.len());
            let sizes = if chunk_sizes.is_empty() {
                vec![bytes.len().max(1)]
            } else {
                chunk_sizes
            };
            let mut pos = 0;
            let mut i = 0;
            while pos < limit {
                let n = sizes[i % sizes.len()].max(1).min(limit - pos);
                write_chunk(&mut sock, &bytes[pos..pos + n]).await?;
                sock.flush().await?;
                pos += n;
                i += 1;
                if sizes.len() > 1 {
                    tokio::task::yield_now().await;
                }
            }
            if cut_after.is_none() {
                sock.write_all(b"0\r\n\r\n").await?;
            }
            // On a cut the socket is dropped here without the final chunk.
        }
        Reply::Silent | Reply::Late { .. } => tokio::time::sleep(Duration::from_secs(120)).await,
        Reply::Stall { prefix } => {
            sock.write_all(sse_head::<W>().as_bytes()).await?;
            write_chunk(&mut sock, prefix.as_bytes()).await?;
            sock.flush().await?;
            state.lock().expect("state").stalls += 1;
            tokio::time::sleep(Duration::from_secs(120)).await;
        }
    }
    sock.shutdown().await
}

fn sse_head<W: Wire>() -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        W::EVENT_STREAM
    )
}

async fn write_chunk(sock: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    sock.write_all(data).await?;
    sock.write_all(b"\r\n").await
}

/// The input of a `todo_write` call, for scripting either wire format:
/// `(content, status)` pairs, each with an `activeForm` made from its content.
pub fn plan(items: &[(&str, &str)]) -> Value {
    let todos: Vec<Value> = items
        .iter()
        .map(|(content, status)| json!({"content": content, "status": status, "activeForm": format!("Doing {content}")}))
        .collect();
    json!({ "todos": todos })
}

/// How a test wants its model client built.
#[derive(Clone, Debug)]
pub struct ClientOpts {
    /// The API key; `None` (or blank) for a server that needs none, where
    /// the wire allows that.
    pub key: Option<&'static str>,
    /// The model name; `None` for the wire's `MODEL`.
    pub model: Option<&'static str>,
    pub max_retries: u32,
    /// How long the client waits for a byte before it gives up on a request.
    pub idle: Duration,
}

impl Default for ClientOpts {
    fn default() -> Self {
        ClientOpts {
            key: Some("test-key"),
            model: None,
            max_retries: 3,
            idle: Duration::from_secs(10),
        }
    }
}

impl ClientOpts {
    /// The settings of an OpenAI client (either wire) for the server at
    /// `url`, `model` unless the options name one; retries start at 10 ms.
    pub fn openai(&self, url: &str, model: &str) -> waypoint::llm::openai::OpenAiConfig {
        waypoint::llm::openai::OpenAiConfig {
            api_key: self.key.map(str::to_string),
            base_url: url.into(),
            model: self.model.unwrap_or(model).into(),
            retry: waypoint::llm::retry::RetryPolicy {
                max_retries: self.max_retries,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_secs(5),
            },
            idle_timeout: self.idle,
        }
    }
}

/// One scripted assistant answer in wire-neutral terms: text, then calls.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    pub text: String,
    /// Name and input of each call; a `Value::String` input is sent as raw
    /// (possibly malformed) JSON text.
    pub calls: Vec<(String, Value)>,
    /// Characters per piece of a call's input (0 = the whole input at once).
    pub piece: usize,
    /// Interleave the input pieces of parallel calls where the wire can
    /// (Chat Completions); Anthropic's content blocks follow each other by
    /// protocol, so there the calls come one after the other.
    pub interleave: bool,
}

impl Answer {
    pub fn text(t: &str) -> Self {
        Answer {
            text: t.into(),
            ..Default::default()
        }
    }
    pub fn tool(name: &str, input: Value) -> Self {
        Answer::default().with_tool(name, input)
    }
    pub fn with_tool(mut self, name: &str, input: Value) -> Self {
        self.calls.push((name.into(), input));
        self
    }
    pub fn with_text(mut self, t: &str) -> Self {
        self.text = t.into();
        self
    }
    pub fn pieces(mut self, piece: usize, interleave: bool) -> Self {
        self.piece = piece;
        self.interleave = interleave;
        self
    }
}

/// A tool result as a recorded request carries it back to the model.
#[derive(Clone, Debug)]
pub struct SentResult {
    /// The id of the call it answers.
    pub id: String,
    pub content: String,
    /// The wire's error flag; `None` where the wire has none (Chat
    /// Completions says it in the content only).
    pub is_error: Option<bool>,
}

/// A wire format as the provider-neutral engine tests need it.
pub trait ProviderWire: Wire + Sized {
    /// The model name a default client asks for.
    const MODEL: &'static str;
    /// The environment variable an authentication error points to.
    const KEY_VAR: &'static str;
    /// The API's "overloaded" answer: HTTP status, error type and message.
    const OVERLOADED: (u16, &'static str, &'static str);

    /// A client for the server at `url` (base delay of retries: 10 ms).
    fn client(url: &str, opts: &ClientOpts) -> Arc<dyn ModelClient>;

    /// The whole stream body of `answer`.
    fn body(answer: &Answer) -> String;
    /// The JSON body of an error answer.
    fn error_body(kind: &str, message: &str) -> String;
    /// A byte offset in `body` (an answer with text and one call, input in
    /// pieces) inside the call's input, well before the message ends.
    fn cut_inside_call(body: &str) -> usize;
    /// The start of a text-only `body`, up to before the text ends.
    fn stalled_prefix(body: &str) -> String;
    /// A text-only `body` broken off by the API's error event mid-stream.
    fn error_mid_stream(body: &str, kind: &str, message: &str) -> String;

    /// Asserts the API's own rules on a recorded request body (roles,
    /// pairing of calls and results, no empty message).
    fn assert_valid(body: &Value);
    /// Asserts what every request of a `ClientOpts::default()` client
    /// carries: path, headers, model, streaming and tool format.
    fn assert_envelope(req: &Recorded);
    /// The texts of the last user message, as the wire carries them.
    fn last_user_texts(req: &Recorded) -> Vec<String>;
    /// What `last_user_texts` reads for a user message made of `parts`.
    fn user_message(parts: &[&str]) -> Vec<String>;
    /// The tool results the request ends with, in order.
    fn last_tool_results(req: &Recorded) -> Vec<SentResult>;
    /// Name and input text of each call of the last assistant message.
    fn last_assistant_calls(req: &Recorded) -> Vec<(String, String)>;
    /// How many messages the conversation holds (no system prompt).
    fn history_len(req: &Recorded) -> usize;
    /// Name and description of every tool the request offers.
    fn tool_specs(req: &Recorded) -> Vec<(String, String)>;
    /// Every text the user and the assistant said in the conversation.
    fn conversation_texts(req: &Recorded) -> Vec<String>;

    /// `answer` as one stream, written at once.
    fn reply(answer: Answer) -> Reply {
        Self::split(answer, vec![])
    }
    /// `answer` as one stream, written in chunks of `sizes` (cycled).
    fn split(answer: Answer, sizes: Vec<usize>) -> Reply {
        Reply::stream(Self::body(&answer), sizes)
    }
    /// A text-only answer.
    fn text(t: &str) -> Reply {
        Self::reply(Answer::text(t))
    }
    /// An HTTP error answer with the API's JSON error body.
    fn error_reply(code: u16, kind: &str, message: &str) -> Reply {
        Reply::Status {
            code,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Self::error_body(kind, message),
        }
    }
}
