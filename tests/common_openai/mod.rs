//! A loopback HTTP server that speaks the OpenAI Chat Completions streaming
//! format from a script of replies, for the OpenAI provider's integration
//! tests. It records every request and can split, cut or stall its responses.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub raw_len: usize,
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
    /// The `tool` messages at the end of the conversation, in order.
    pub fn last_tool_messages(&self) -> Vec<Value> {
        let msgs = self.messages();
        let end = msgs
            .iter()
            .rposition(|m| m["role"] == "assistant")
            .map_or(0, |i| i + 1);
        msgs[end..]
            .iter()
            .filter(|m| m["role"] == "tool")
            .cloned()
            .collect()
    }
    /// The content of the last `user` message.
    pub fn last_user_text(&self) -> String {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    }
}

/// Checks the Chat Completions contract on a recorded request: a system
/// message first, then a user message; every assistant `tool_calls` list is
/// answered, in order, by `tool` messages right after it; no stray `tool`
/// message; no empty assistant message.
pub fn assert_valid_chat_request(body: &Value) {
    let msgs = body["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["role"], "system", "system message first");
    assert_eq!(msgs[1]["role"], "user", "then the user's message");
    let mut i = 1;
    while i < msgs.len() {
        let m = &msgs[i];
        match m["role"].as_str() {
            Some("user") => {
                assert!(
                    m["content"].as_str().is_some_and(|c| !c.is_empty()),
                    "user message {i} has text"
                );
                i += 1;
            }
            Some("assistant") => {
                let calls: Vec<String> = m["tool_calls"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|c| {
                                assert_eq!(c["type"], "function");
                                let args = c["function"]["arguments"].as_str().expect("string");
                                let parsed: Value =
                                    serde_json::from_str(args).expect("arguments are JSON");
                                assert!(parsed.is_object(), "arguments are an object");
                                assert!(c["function"]["name"].is_string());
                                c["id"].as_str().expect("call id").to_string()
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if calls.is_empty() {
                    assert!(
                        m["content"].as_str().is_some_and(|c| !c.is_empty()),
                        "assistant message {i} says something"
                    );
                    assert!(m.get("tool_calls").is_none(), "no empty tool_calls");
                }
                i += 1;
                let answered: Vec<String> = msgs[i..]
                    .iter()
                    .take_while(|t| t["role"] == "tool")
                    .map(|t| {
                        assert!(t["content"].is_string());
                        t["tool_call_id"].as_str().expect("id").to_string()
                    })
                    .collect();
                assert_eq!(
                    answered,
                    calls,
                    "tool messages after assistant message {} answer every call in order",
                    i - 1
                );
                i += answered.len();
            }
            other => panic!("unexpected role {other:?} at message {i}"),
        }
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

pub struct FakeServer {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeServer {
    /// A server on a free loopback port; its `url` ends in `/v1`.
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::start_on("127.0.0.1:0", replies).await
    }

    pub async fn start_on(addr: &str, replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind(addr).await.expect("bind loopback");
        let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, shared).await;
                });
            }
        });
        Self { url, state }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().expect("state").requests.clone()
    }

    pub fn push(&self, reply: Reply) {
        self.state.lock().expect("state").replies.push_back(reply);
    }
}

async fn serve(mut sock: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
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
        st.requests.push(Recorded {
            path,
            headers,
            body,
            raw_len: len,
        });
        st.replies.pop_front()
    };
    let reply = reply.unwrap_or(Reply::Status {
        code: 500,
        headers: vec![],
        body: r#"{"error":{"message":"the fake server has no more scripted replies","type":"test_error"}}"#.into(),
    });
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
            sock.write_all(sse_head().as_bytes()).await?;
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
        Reply::Silent => tokio::time::sleep(Duration::from_secs(120)).await,
        Reply::Stall { prefix } => {
            sock.write_all(sse_head().as_bytes()).await?;
            write_chunk(&mut sock, prefix.as_bytes()).await?;
            sock.flush().await?;
            tokio::time::sleep(Duration::from_secs(120)).await;
        }
    }
    sock.shutdown().await
}

fn sse_head() -> String {
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".into()
}

async fn write_chunk(sock: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    sock.write_all(data).await?;
    sock.write_all(b"\r\n").await
}

/// One assistant turn for the fake model.
#[derive(Clone, Debug)]
pub struct Turn {
    pub text: String,
    /// Calls: name and input (a `Value::String` is sent as raw, possibly
    /// malformed, arguments text).
    pub tools: Vec<(String, Value)>,
    /// Characters per `arguments` piece (0 = the whole text in the first chunk).
    pub arg_piece: usize,
    /// Send the argument pieces of parallel calls interleaved.
    pub interleave: bool,
    /// End with `data: [DONE]`.
    pub done: bool,
    /// Send a final usage chunk with empty `choices`.
    pub usage: bool,
}

impl Default for Turn {
    fn default() -> Self {
        Turn {
            text: String::new(),
            tools: Vec::new(),
            arg_piece: 0,
            interleave: false,
            done: true,
            usage: true,
        }
    }
}

impl Turn {
    pub fn text(t: &str) -> Self {
        Turn {
            text: t.into(),
            ..Default::default()
        }
    }
    pub fn tool(name: &str, input: Value) -> Self {
        Turn {
            tools: vec![(name.into(), input)],
            ..Default::default()
        }
    }
    pub fn with_tool(mut self, name: &str, input: Value) -> Self {
        self.tools.push((name.into(), input));
        self
    }
    pub fn with_text(mut self, t: &str) -> Self {
        self.text = t.into();
        self
    }
    pub fn pieces(mut self, arg_piece: usize, interleave: bool) -> Self {
        self.arg_piece = arg_piece;
        self.interleave = interleave;
        self
    }
    pub fn without_done(mut self) -> Self {
        self.done = false;
        self
    }
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {c}\n\n")
}

/// The SSE body of a complete Chat Completions stream for `turn`.
pub fn chat_body(turn: &Turn) -> String {
    let mut out = chunk(json!({"role": "assistant", "content": ""}), None);
    let chars: Vec<char> = turn.text.chars().collect();
    for piece in chars.chunks(4) {
        let s: String = piece.iter().collect();
        out.push_str(&chunk(json!({"content": s}), None));
    }
    // Per call: the opening chunk (id, name) and the argument pieces.
    let mut per_call: Vec<Vec<String>> = Vec::new();
    for (index, (name, input)) in turn.tools.iter().enumerate() {
        let id = format!("call_t{}", NEXT_ID.fetch_add(1, Ordering::SeqCst));
        let raw = match input {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let chars: Vec<char> = raw.chars().collect();
        let mut chunks = Vec::new();
        if turn.arg_piece == 0 {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": raw}}]}),
                None,
            ));
        } else {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            for p in chars.chunks(turn.arg_piece) {
                let s: String = p.iter().collect();
                chunks.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": s}}]}),
                    None,
                ));
            }
        }
        per_call.push(chunks);
    }
    if turn.interleave {
        let longest = per_call.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for call in &per_call {
                if let Some(c) = call.get(i) {
                    out.push_str(c);
                }
            }
        }
    } else {
        for call in per_call {
            out.extend(call);
        }
    }
    let finish = if turn.tools.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push_str(&chunk(json!({}), Some(finish)));
    if turn.usage {
        let usage = json!({
            "id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": 100, "completion_tokens": 42, "total_tokens": 142},
        });
        out.push_str(&format!("data: {usage}\n\n"));
    }
    if turn.done {
        out.push_str("data: [DONE]\n\n");
    }
    out
}

pub fn chat(turn: Turn) -> Reply {
    Reply::Sse {
        body: chat_body(&turn),
        chunk_sizes: vec![],
        cut_after: None,
    }
}

/// The same stream split into chunks of awkward sizes.
pub fn chat_split(turn: Turn, chunk_sizes: Vec<usize>) -> Reply {
    Reply::Sse {
        body: chat_body(&turn),
        chunk_sizes,
        cut_after: None,
    }
}

pub fn plan(items: &[(&str, &str)]) -> Value {
    let todos: Vec<Value> = items
        .iter()
        .map(|(content, status)| json!({"content": content, "status": status, "activeForm": format!("Doing {content}")}))
        .collect();
    json!({ "todos": todos })
}

/// An HTTP error answer with an OpenAI-style JSON error body.
pub fn error_reply(code: u16, kind: &str, message: &str) -> Reply {
    Reply::Status {
        code,
        headers: vec![("content-type".into(), "application/json".into())],
        body: json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
            .to_string(),
    }
}
