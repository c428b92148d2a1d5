//! The Anthropic Messages side of the loopback model server: SSE bodies
//! for scripted turns and accessors for recorded requests. The server
//! itself is `tests/loopback`, which the test crate declares as well.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

pub use crate::loopback::{Recorded, Reply, Wire, plan};

/// The Anthropic Messages API at the HTTP level.
pub enum Anthropic {}

impl Wire for Anthropic {
    const BASE_PATH: &'static str = "";
    const EVENT_STREAM: &'static str = "text/event-stream";
    const EXHAUSTED: &'static str = r#"{"type":"error","error":{"type":"test_error","message":"the fake server has no more scripted replies"}}"#;
}

/// The loopback server speaking Anthropic SSE; its `url` has no path.
pub type FakeServer = crate::loopback::FakeServer<Anthropic>;

/// Accessors for a recorded Messages request.
impl Recorded {
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
    sse_split(turn, vec![])
}

/// The same stream split into chunks of awkward sizes.
pub fn sse_split(turn: Turn, chunk_sizes: Vec<usize>) -> Reply {
    Reply::stream(sse_body(&turn), chunk_sizes)
}
