//! A loopback HTTP server that speaks the Anthropic Messages streaming
//! format from a script of replies, for the engine's integration tests.
//! It records every request and can split, cut or stall its responses.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
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
    /// Text blocks of the last user message.
    pub fn last_user_texts(&self) -> Vec<String> {
        let last = self.messages().last().expect("a message");
        assert_eq!(last["role"], "user");
        last["content"]
            .as_array()
            .expect("content blocks")
            .iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }
    /// tool_result blocks of the last user message.
    pub fn last_tool_results(&self) -> Vec<Value> {
        let last = self.messages().last().expect("a message");
        last["content"]
            .as_array()
            .expect("content blocks")
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .cloned()
            .collect()
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
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
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
            headers,
            body,
            raw_len: len,
        });
        st.replies.pop_front()
    };
    let reply = reply.unwrap_or(Reply::Status {
        code: 500,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"test_error","message":"the fake server has no more scripted replies"}}"#.into(),
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
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n".into()
}

async fn write_chunk(sock: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    sock.write_all(data).await?;
    sock.write_all(b"\r\n").await
}

/// One assistant turn for the fake model.
#[derive(Clone, Debug, Default)]
pub struct Turn {
    pub text: String,
    pub tools: Vec<(String, Value)>,
    /// Size of each `input_json_delta` piece (0 = the whole input at once).
    pub json_piece: usize,
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
}

static NEXT_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The SSE body of a complete Messages stream for `turn`.
pub fn sse_body(turn: &Turn) -> String {
    let mut out = String::new();
    let mut ev = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":100,"output_tokens":1}}}),
    );
    ev("ping", json!({"type":"ping"}));
    let mut index = 0;
    if !turn.text.is_empty() {
        ev(
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"text","text":""}}),
        );
        let chars: Vec<char> = turn.text.chars().collect();
        for piece in chars.chunks(4) {
            let s: String = piece.iter().collect();
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":index,"delta":{"type":"text_delta","text":s}}),
            );
        }
        ev(
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        );
        index += 1;
    }
    for (name, input) in &turn.tools {
        let id = format!(
            "toolu_{}",
            NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        ev(
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}),
        );
        let raw = match input {
            Value::String(s) => s.clone(), // a raw (possibly malformed) JSON text
            other => other.to_string(),
        };
        let chars: Vec<char> = raw.chars().collect();
        let piece = if turn.json_piece == 0 {
            chars.len().max(1)
        } else {
            turn.json_piece
        };
        for p in chars.chunks(piece) {
            let s: String = p.iter().collect();
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":index,"delta":{"type":"input_json_delta","partial_json":s}}),
            );
        }
        ev(
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        );
        index += 1;
    }
    let stop = if turn.tools.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},"usage":{"output_tokens":42}}),
    );
    ev("message_stop", json!({"type":"message_stop"}));
    out
}

pub fn sse(turn: Turn) -> Reply {
    Reply::Sse {
        body: sse_body(&turn),
        chunk_sizes: vec![],
        cut_after: None,
    }
}

/// The same stream split into chunks of awkward sizes.
pub fn sse_split(turn: Turn, chunk_sizes: Vec<usize>) -> Reply {
    Reply::Sse {
        body: sse_body(&turn),
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
