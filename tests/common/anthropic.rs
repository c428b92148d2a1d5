//! The Anthropic Messages wire of the loopback model server: SSE bodies
//! for scripted turns, accessors for recorded requests and the request
//! validator.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use waypoint::llm::ModelClient;
use waypoint::llm::anthropic::{AnthropicClient, AnthropicConfig};
use waypoint::llm::retry::RetryPolicy;

use super::{Turn, next_id, pieces, raw_input, text_pieces};
use crate::loopback::{Answer, ClientOpts, ProviderWire, Recorded, Reply, SentResult, Wire};

/// The Anthropic Messages API at the HTTP level.
pub enum Anthropic {}

impl Wire for Anthropic {
    const BASE_PATH: &'static str = "";
    const EVENT_STREAM: &'static str = "text/event-stream";
    const EXHAUSTED: &'static str = r#"{"type":"error","error":{"type":"test_error","message":"the fake server has no more scripted replies"}}"#;
}

impl ProviderWire for Anthropic {
    const MODEL: &'static str = "claude-test";
    const KEY_VAR: &'static str = "ANTHROPIC_API_KEY";
    const OVERLOADED: (u16, &'static str, &'static str) = (529, "overloaded_error", "Overloaded");

    fn client(url: &str, opts: &ClientOpts) -> Arc<dyn ModelClient> {
        Arc::new(
            AnthropicClient::new(AnthropicConfig {
                api_key: opts.key.unwrap_or_default().into(),
                base_url: url.into(),
                model: opts.model.unwrap_or(Self::MODEL).into(),
                retry: RetryPolicy {
                    max_retries: opts.max_retries,
                    base_delay: Duration::from_millis(10),
                    max_delay: Duration::from_secs(5),
                },
                idle_timeout: opts.idle,
            })
            .expect("client"),
        )
    }

    fn body(answer: &Answer) -> String {
        sse_body(&Turn::from(answer))
    }

    fn error_body(kind: &str, message: &str) -> String {
        json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
    }

    fn cut_inside_call(body: &str) -> usize {
        body.find("input_json_delta").expect("tool delta") + 10
    }

    fn stalled_prefix(body: &str) -> String {
        body[..body.find("content_block_stop").expect("a text block")].to_string()
    }

    fn error_mid_stream(body: &str, kind: &str, message: &str) -> String {
        let cut = body.find("content_block_stop").expect("a text block");
        format!(
            "{}event: error\ndata: {}\n\n",
            &body[..cut - "event: ".len()],
            Self::error_body(kind, message)
        )
    }

    fn assert_valid(body: &Value) {
        assert_valid_request(body);
    }

    fn assert_envelope(req: &Recorded) {
        assert_eq!(req.path, "/v1/messages");
        assert_eq!(req.header("x-api-key"), Some("test-key"));
        assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["model"], Self::MODEL);
        assert!(req.body["system"].is_string() || req.body["system"].is_array());
        let tools = req.body["tools"].as_array().expect("tools");
        assert!(
            tools
                .iter()
                .all(|t| t["name"].is_string() && t["input_schema"]["type"] == "object")
        );
    }

    fn last_user_texts(req: &Recorded) -> Vec<String> {
        req.last_user_texts()
    }

    fn user_message(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|p| p.to_string()).collect()
    }

    fn last_tool_results(req: &Recorded) -> Vec<SentResult> {
        req.last_tool_results()
            .iter()
            .map(|b| SentResult {
                id: b["tool_use_id"].as_str().expect("tool_use_id").into(),
                content: b["content"].as_str().expect("text content").into(),
                is_error: Some(b["is_error"] == true),
            })
            .collect()
    }

    fn last_assistant_calls(req: &Recorded) -> Vec<(String, String)> {
        let assistant = req.last_assistant();
        assistant["content"]
            .as_array()
            .expect("blocks")
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| {
                let name = b["name"].as_str().expect("name").to_string();
                (name, b["input"].to_string())
            })
            .collect()
    }

    fn history_len(req: &Recorded) -> usize {
        req.messages().len()
    }

    fn tool_specs(req: &Recorded) -> Vec<(String, String)> {
        super::tool_specs_at(req, |t| t)
    }

    fn conversation_texts(req: &Recorded) -> Vec<String> {
        req.messages()
            .iter()
            .flat_map(|m| m["content"].as_array().expect("blocks").iter())
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().expect("text").to_string())
            .collect()
    }
}

/// Checks the Messages API's pairing rule on a recorded request: roles
/// alternate from a user message; no message is empty; every `tool_use` is
/// answered, in order, by the `tool_result` blocks that open the next user
/// message.
pub fn assert_valid_request(body: &Value) {
    let msgs = body["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["role"], "user");
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        assert_eq!(m["role"], role, "roles alternate at message {i}");
        let blocks = m["content"].as_array().expect("blocks");
        assert!(!blocks.is_empty(), "message {i} empty");
        if role == "user" {
            let results: Vec<String> = blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_string())
                .collect();
            assert!(
                blocks
                    .iter()
                    .skip(results.len())
                    .all(|b| b["type"] == "text"),
                "tool results come first in message {i}"
            );
            assert_eq!(results, pending, "message {i} answers every tool_use");
            pending.clear();
        } else {
            pending = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap_or_default().to_string())
                .collect();
        }
    }
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
        for s in text_pieces(&turn.text) {
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
        let id = format!("toolu_{}", next_id());
        ev(
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}),
        );
        for s in pieces(&raw_input(input), turn.piece) {
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
