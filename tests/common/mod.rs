//! The wire formats of the loopback model server, one module a wire:
//! `anthropic` (Messages, also re-exported here, as most tests speak it),
//! `openai` (Chat Completions) and `responses` (OpenAI Responses). Each
//! writes the stream bodies of scripted turns, reads recorded requests and
//! checks them against its API's rules; what they share (the scripted
//! `Turn`, the pieces a stream is cut into, the call ids) is here, once.
//! The server itself is `tests/loopback`, which the test crate declares.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

pub mod anthropic;
pub mod openai;
pub mod responses;

pub use crate::loopback::{
    Answer, ClientOpts, ProviderWire, Recorded, Reply, SentResult, Wire, plan,
};
pub use anthropic::*;

/// One assistant turn for the fake model, in any wire's stream.
#[derive(Clone, Debug)]
pub struct Turn {
    pub text: String,
    /// Calls: name and input (a `Value::String` is sent as raw, possibly
    /// malformed, input text).
    pub tools: Vec<(String, Value)>,
    /// Characters per piece of a call's input (0 = the whole input at once).
    pub piece: usize,
    /// Send the input pieces of parallel calls interleaved (Chat
    /// Completions; Anthropic's blocks follow each other by protocol).
    pub interleave: bool,
    /// End with `data: [DONE]` (Chat Completions).
    pub done: bool,
    /// Send a final usage chunk with empty `choices` (Chat Completions).
    pub usage: bool,
}

impl Default for Turn {
    fn default() -> Self {
        Turn {
            text: String::new(),
            tools: Vec::new(),
            piece: 0,
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
    pub fn pieces(mut self, piece: usize, interleave: bool) -> Self {
        self.piece = piece;
        self.interleave = interleave;
        self
    }
    pub fn without_done(mut self) -> Self {
        self.done = false;
        self
    }
}

impl From<&Answer> for Turn {
    fn from(answer: &Answer) -> Self {
        Turn {
            text: answer.text.clone(),
            tools: answer.calls.clone(),
            ..Turn::default()
        }
        .pieces(answer.piece, answer.interleave)
    }
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// A number no other call, response or item of this process has had.
fn next_id() -> usize {
    NEXT_ID.fetch_add(1, Ordering::SeqCst)
}

/// A call's input as the stream carries it: a `Value::String` as the raw
/// (possibly malformed) text it holds, anything else as JSON.
fn raw_input(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `text` in pieces of `size` characters (0 = all of it in one piece).
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = if size == 0 { chars.len().max(1) } else { size };
    chars.chunks(size).map(|p| p.iter().collect()).collect()
}

/// The text deltas of a message: four characters each.
fn text_pieces(text: &str) -> Vec<String> {
    pieces(text, 4)
}

/// The events of every call, one call after the other, or round-robin
/// (the first of each, then the second of each, ...) when `interleave`.
fn lay_out(per_call: Vec<Vec<String>>, interleave: bool) -> String {
    if !interleave {
        return per_call.concat().concat();
    }
    let longest = per_call.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for i in 0..longest {
        for call in &per_call {
            if let Some(e) = call.get(i) {
                out.push_str(e);
            }
        }
    }
    out
}

/// Name and description of every tool a request offers, each read from
/// the tool's `at` (the tool itself, or its `function`).
fn tool_specs_at(req: &Recorded, at: impl Fn(&Value) -> &Value) -> Vec<(String, String)> {
    req.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            let f = at(t);
            let name = f["name"].as_str().expect("name").to_string();
            (name, f["description"].as_str().expect("description").into())
        })
        .collect()
}

/// Accessors for a recorded request that both message-list wires share.
impl Recorded {
    /// The last assistant message (Anthropic Messages, Chat Completions).
    pub fn last_assistant(&self) -> &Value {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .expect("an assistant message")
    }
}
