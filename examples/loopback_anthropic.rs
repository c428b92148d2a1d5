//! A tiny loopback stand-in for a model API, for benchmarking the real
//! `waypoint` binary without a network (std only: `std::net` and threads).
//! It speaks the Anthropic Messages API (`--wire anthropic`, the default) or
//! the OpenAI Chat Completions API (`--wire openai`).
//!
//! It answers at once with a complete SSE stream for a fixed 6-turn task:
//! (1) `todo_write` with 3 items, the first in progress; (2) `write_file
//! hello.txt`; (3) `todo_write` (1 completed, 2 in progress); (4) `bash ls`;
//! (5) `todo_write` all completed; (6) a final text answer. Which turn to
//! play is decided by counting the assistant messages in the request, so one
//! server can serve any number of runs in a row.
//!
//! - `--wire anthropic`: `POST /v1/messages`, Messages API events
//!   (`message_start`, `content_block_*`, `message_delta`, `message_stop`).
//! - `--wire openai`: `POST /v1/chat/completions`, `data: {chunk}` lines
//!   (content deltas, `tool_calls` deltas with index/id/name/arguments, a
//!   `finish_reason`, a final usage chunk, `data: [DONE]`).
//!
//! Usage:
//!   loopback_anthropic [--wire anthropic|openai] [--port N] [--log FILE]
//!                      [--idle-secs N] [--max-requests N]
//!
//! The first line on stdout is the base URL to give the client:
//! `http://127.0.0.1:PORT` (anthropic) or `http://127.0.0.1:PORT/v1` (openai).
//! `--log FILE` (or `LOOPBACK_LOG=FILE`) appends one line per request:
//! `<turn index 0..5> <request body bytes>`. The server exits by itself after
//! `--idle-secs` without a request (default 30) or after `--max-requests`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The number of assistant turns in the scripted task.
pub const TURNS: usize = 6;

/// The API the server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wire {
    /// Anthropic Messages: `POST /v1/messages`.
    #[default]
    Anthropic,
    /// OpenAI Chat Completions: `POST /v1/chat/completions`.
    OpenAi,
}

impl Wire {
    /// The one path the server answers.
    pub fn path(self) -> &'static str {
        match self {
            Wire::Anthropic => "/v1/messages",
            Wire::OpenAi => "/v1/chat/completions",
        }
    }

    /// The base URL a client of this wire is given, from `http://host:port`.
    pub fn base_url(self, root: &str) -> String {
        match self {
            Wire::Anthropic => root.to_string(),
            Wire::OpenAi => format!("{root}/v1"),
        }
    }

    /// The complete SSE stream of assistant turn `n`.
    pub fn body(self, n: usize) -> String {
        match self {
            Wire::Anthropic => sse_body(n),
            Wire::OpenAi => chat_body(n),
        }
    }

    /// The JSON body of a 404 answer.
    fn not_found(self) -> String {
        let message = format!("only POST {}", self.path());
        match self {
            Wire::Anthropic => {
                json!({"type": "error", "error": {"type": "not_found_error", "message": message}})
            }
            Wire::OpenAi => {
                json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": "not_found"}})
            }
        }
        .to_string()
    }
}

/// What the server does besides answering.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The API to speak.
    pub wire: Wire,
    /// Appends `<turn> <body bytes>` per request.
    pub log: Option<PathBuf>,
    /// Stop accepting after this many requests.
    pub max_requests: Option<u64>,
}

/// Shared counters, readable by the owner of the server.
#[derive(Debug)]
pub struct Stats {
    pub requests: AtomicU64,
    /// Milliseconds since `start` of the last request.
    pub last_request_ms: AtomicU64,
    pub start: Instant,
}

impl Default for Stats {
    fn default() -> Self {
        Self {
            requests: AtomicU64::new(0),
            last_request_ms: AtomicU64::new(0),
            start: Instant::now(),
        }
    }
}

/// Binds `127.0.0.1:port` (0 = any free port); returns the listener and its base URL.
pub fn bind(port: u16) -> std::io::Result<(TcpListener, String)> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let url = format!("http://{}", listener.local_addr()?);
    Ok((listener, url))
}

/// Serves connections until `max_requests` is reached (or forever), one
/// thread per connection.
pub fn serve(listener: TcpListener, options: Options, stats: Arc<Stats>) {
    let log = options.log.as_ref().map(|path| {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap_or_else(|e| panic!("cannot open the log {}: {e}", path.display()));
        Arc::new(Mutex::new(file))
    });
    let wire = options.wire;
    let bodies: Arc<Vec<String>> = Arc::new((0..TURNS).map(|n| wire.body(n)).collect());
    let mut handlers = Vec::new();
    let mut accepted: u64 = 0;
    for conn in listener.incoming() {
        let Ok(sock) = conn else { continue };
        accepted += 1;
        let log = log.clone();
        let bodies = bodies.clone();
        let stats_c = stats.clone();
        handlers.push(std::thread::spawn(move || {
            if let Err(e) = handle(sock, wire, &bodies, log.as_deref(), &stats_c) {
                eprintln!("loopback_anthropic: connection error: {e}");
            }
        }));
        handlers.retain(|h| !h.is_finished());
        // Every answer says `connection: close`, so one connection is one request.
        if options.max_requests.is_some_and(|max| accepted >= max) {
            break;
        }
    }
    for h in handlers {
        let _ = h.join();
    }
}

fn handle(
    sock: TcpStream,
    wire: Wire,
    bodies: &[String],
    log: Option<&Mutex<std::fs::File>>,
    stats: &Stats,
) -> std::io::Result<()> {
    sock.set_nodelay(true)?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(sock.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            content_length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body)?;
    let mut sock = sock;
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "POST" || path != wire.path() {
        let msg = wire.not_found();
        write!(
            sock,
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{msg}",
            msg.len()
        )?;
        return sock.flush();
    }
    let turn = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| {
            v.get("messages").and_then(Value::as_array).map(|m| {
                m.iter()
                    .filter(|msg| msg.get("role").and_then(Value::as_str) == Some("assistant"))
                    .count()
            })
        })
        .unwrap_or(0)
        .min(TURNS - 1);
    if let Some(log) = log {
        let mut f = log.lock().unwrap();
        writeln!(f, "{turn} {}", body.len())?;
    }
    stats.requests.fetch_add(1, Ordering::SeqCst);
    stats
        .last_request_ms
        .store(stats.start.elapsed().as_millis() as u64, Ordering::SeqCst);
    let sse = &bodies[turn];
    write!(
        sock,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        sse.len()
    )?;
    sock.write_all(sse.as_bytes())?;
    sock.flush()?;
    sock.shutdown(std::net::Shutdown::Both)
}

fn plan(statuses: [&str; 3]) -> Value {
    let items = [
        ("Create hello.txt", "Creating hello.txt"),
        ("List the workspace", "Listing the workspace"),
        ("Report the result", "Reporting the result"),
    ];
    let todos: Vec<Value> = items
        .iter()
        .zip(statuses)
        .map(|((content, active), status)| {
            json!({"content": content, "status": status, "activeForm": active})
        })
        .collect();
    json!({ "todos": todos })
}

/// The assistant turn `n` (0-based): its text and its one tool call.
pub fn turn(n: usize) -> (&'static str, Option<(&'static str, Value)>) {
    match n {
        0 => (
            "I'll plan this first.",
            Some(("todo_write", plan(["in_progress", "pending", "pending"]))),
        ),
        1 => (
            "Creating the file.",
            Some((
                "write_file",
                json!({"path": "hello.txt", "content": "Hello, world!\n"}),
            )),
        ),
        2 => (
            "",
            Some(("todo_write", plan(["completed", "in_progress", "pending"]))),
        ),
        3 => (
            "Checking the workspace.",
            Some(("bash", json!({"command": "ls"}))),
        ),
        4 => (
            "",
            Some(("todo_write", plan(["completed", "completed", "completed"]))),
        ),
        _ => (
            "Done: I created `hello.txt` containing \"Hello, world!\" and checked that it is in the workspace.",
            None,
        ),
    }
}

/// The complete SSE stream of assistant turn `n`, as the Messages API sends it.
pub fn sse_body(n: usize) -> String {
    let (text, tool) = turn(n);
    let mut out = String::new();
    let mut ev = |data: Value| {
        let name = data["type"].as_str().unwrap_or("").to_string();
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(json!({"type": "message_start", "message": {
        "id": format!("msg_loopback_{n}"), "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null,
        "usage": {"input_tokens": 1200 + 150 * n, "output_tokens": 1}}}));
    ev(json!({"type": "ping"}));
    let mut index = 0;
    if !text.is_empty() {
        ev(
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        );
        // Word-sized deltas, like the real service.
        for piece in text.split_inclusive(' ') {
            ev(
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        ev(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let stop_reason = if let Some((name, input)) = &tool {
        ev(
            json!({"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": format!("toolu_loopback_{n}"), "name": name, "input": {}}}),
        );
        // The input JSON in pieces of about 40 chars (split on char boundaries).
        let raw = input.to_string();
        let chars: Vec<char> = raw.chars().collect();
        for piece in chars.chunks(40) {
            let s: String = piece.iter().collect();
            ev(
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": s}}),
            );
        }
        ev(json!({"type": "content_block_stop", "index": index}));
        "tool_use"
    } else {
        "end_turn"
    };
    ev(
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 40}}),
    );
    ev(json!({"type": "message_stop"}));
    out
}

/// One Chat Completions chunk of the stream of turn `n`.
fn chat_chunk(out: &mut String, n: usize, delta: Value, finish: Option<&str>) {
    let chunk = json!({
        "id": format!("chatcmpl-loopback-{n}"), "object": "chat.completion.chunk",
        "created": 1_700_000_000, "model": "local",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    out.push_str(&format!("data: {chunk}\n\n"));
}

/// The complete Chat Completions stream of assistant turn `n`, as OpenAI
/// sends it with `stream_options.include_usage`.
pub fn chat_body(n: usize) -> String {
    let (text, tool) = turn(n);
    let mut out = String::new();
    chat_chunk(
        &mut out,
        n,
        json!({"role": "assistant", "content": ""}),
        None,
    );
    // Word-sized deltas, like the real service.
    for piece in text.split_inclusive(' ') {
        chat_chunk(&mut out, n, json!({"content": piece}), None);
    }
    let finish = if let Some((name, input)) = &tool {
        chat_chunk(
            &mut out,
            n,
            json!({"tool_calls": [{"index": 0, "id": format!("call_loopback_{n}"), "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        );
        // The arguments JSON in pieces of about 40 chars (split on char boundaries).
        let raw = input.to_string();
        let chars: Vec<char> = raw.chars().collect();
        for piece in chars.chunks(40) {
            let s: String = piece.iter().collect();
            chat_chunk(
                &mut out,
                n,
                json!({"tool_calls": [{"index": 0, "function": {"arguments": s}}]}),
                None,
            );
        }
        "tool_calls"
    } else {
        "stop"
    };
    chat_chunk(&mut out, n, json!({}), Some(finish));
    let usage = json!({
        "id": format!("chatcmpl-loopback-{n}"), "object": "chat.completion.chunk",
        "created": 1_700_000_000, "model": "local", "choices": [],
        "usage": {"prompt_tokens": 1200 + 150 * n, "completion_tokens": 40, "total_tokens": 1240 + 150 * n},
    });
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

fn usage() -> ! {
    eprintln!(
        "usage: loopback_anthropic [--wire anthropic|openai] [--port N] [--log FILE] [--idle-secs N] [--max-requests N]"
    );
    std::process::exit(2);
}

fn main() {
    let mut port: u16 = 0;
    let mut idle_secs: u64 = 30;
    let mut options = Options {
        wire: Wire::Anthropic,
        log: std::env::var_os("LOOPBACK_LOG").map(PathBuf::from),
        max_requests: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--wire" => {
                options.wire = match value().as_str() {
                    "anthropic" => Wire::Anthropic,
                    "openai" => Wire::OpenAi,
                    _ => usage(),
                }
            }
            "--port" => port = value().parse().unwrap_or_else(|_| usage()),
            "--log" => options.log = Some(PathBuf::from(value())),
            "--idle-secs" => idle_secs = value().parse().unwrap_or_else(|_| usage()),
            "--max-requests" => {
                options.max_requests = Some(value().parse().unwrap_or_else(|_| usage()))
            }
            "-h" | "--help" => usage(),
            // A bare number is the port.
            other => port = other.parse().unwrap_or_else(|_| usage()),
        }
    }
    let (listener, url) = bind(port).unwrap_or_else(|e| {
        eprintln!("loopback_anthropic: cannot bind 127.0.0.1:{port}: {e}");
        std::process::exit(1);
    });
    println!("{}", options.wire.base_url(&url));
    let _ = std::io::stdout().flush();

    let stats = Arc::new(Stats::default());
    // The watchdog: no runaway servers.
    let watched = stats.clone();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let idle_ms = (watched.start.elapsed().as_millis() as u64)
                .saturating_sub(watched.last_request_ms.load(Ordering::SeqCst));
            if idle_ms >= idle_secs.saturating_mul(1000) {
                eprintln!(
                    "loopback_anthropic: {} request(s) served; idle for {idle_secs} s, exiting",
                    watched.requests.load(Ordering::SeqCst)
                );
                std::process::exit(0);
            }
        }
    });
    serve(listener, options, stats.clone());
    eprintln!(
        "loopback_anthropic: {} request(s) served, exiting",
        stats.requests.load(Ordering::SeqCst)
    );
}
