//! The OpenAI Chat Completions wire of the loopback model server: chunk
//! streams for scripted turns, accessors for recorded requests and the
//! request validator. What it shares with the Responses wire (the error
//! body, the "overloaded" answer) is here too.

use std::sync::Arc;

use serde_json::{Value, json};
use waypoint::llm::ModelClient;
use waypoint::llm::openai::OpenAiClient;

pub use super::Turn;
use super::{lay_out, next_id, pieces, raw_input, text_pieces};
pub use crate::loopback::{
    Answer, ClientOpts, ProviderWire, Recorded, Reply, SentResult, Wire, plan,
};

/// The `content-type` of both OpenAI wires' streams.
pub(super) const EVENT_STREAM: &str = "text/event-stream; charset=utf-8";
/// Both OpenAI wires' answer once the script has run out.
pub(super) const EXHAUSTED: &str =
    r#"{"error":{"message":"the fake server has no more scripted replies","type":"test_error"}}"#;
/// Both OpenAI wires' "overloaded" answer.
pub(super) const OVERLOADED: (u16, &str, &str) = (
    503,
    "server_error",
    "That model is currently overloaded with other requests.",
);

/// Both OpenAI wires' JSON error body.
pub(super) fn error_json(kind: &str, message: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
}

/// The Chat Completions API at the HTTP level.
pub enum OpenAi {}

impl Wire for OpenAi {
    const BASE_PATH: &'static str = "/v1";
    const EVENT_STREAM: &'static str = EVENT_STREAM;
    const EXHAUSTED: &'static str = EXHAUSTED;
}

/// The client the OpenAI tests use (base delay of retries: 10 ms).
pub fn openai_client(url: &str, opts: &ClientOpts) -> OpenAiClient {
    OpenAiClient::new(opts.openai(url, OpenAi::MODEL)).expect("client")
}

/// The start of `body` up to the `data:` of its finishing chunk.
fn before_finish(body: &str, finish: &str) -> usize {
    let at = body
        .find(&format!("finish_reason\":\"{finish}"))
        .expect("a finish chunk");
    body[..at].rfind("data:").expect("an event")
}

impl ProviderWire for OpenAi {
    const MODEL: &'static str = "gpt-test";
    const KEY_VAR: &'static str = "OPENAI_API_KEY";
    const OVERLOADED: (u16, &'static str, &'static str) = OVERLOADED;

    fn client(url: &str, opts: &ClientOpts) -> Arc<dyn ModelClient> {
        Arc::new(openai_client(url, opts))
    }

    fn body(answer: &Answer) -> String {
        chat_body(&Turn::from(answer))
    }

    fn error_body(kind: &str, message: &str) -> String {
        error_json(kind, message)
    }

    /// Mid-event, inside the last argument piece, before any finish_reason.
    fn cut_inside_call(body: &str) -> usize {
        before_finish(body, "tool_calls") - 10
    }

    fn stalled_prefix(body: &str) -> String {
        body[..before_finish(body, "stop")].to_string()
    }

    fn error_mid_stream(body: &str, kind: &str, message: &str) -> String {
        let cut = before_finish(body, "stop");
        format!(
            "{}data: {}\n\n",
            &body[..cut],
            Self::error_body(kind, message)
        )
    }

    fn assert_valid(body: &Value) {
        assert_valid_chat_request(body);
    }

    fn assert_envelope(req: &Recorded) {
        assert_eq!(req.path, "/v1/chat/completions");
        assert_eq!(req.header("authorization"), Some("Bearer test-key"));
        assert_eq!(req.body["model"], Self::MODEL);
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["stream_options"], json!({"include_usage": true}));
        assert_eq!(req.body["max_tokens"], 8192);
        let tools = req.body["tools"].as_array().expect("tools");
        assert!(tools.iter().all(|t| t["type"] == "function"
            && t["function"]["name"].is_string()
            && t["function"]["parameters"]["type"] == "object"));
    }

    /// The user turn the request ends with is the `tool` and `user`
    /// messages after the last assistant message: their user texts.
    fn last_user_texts(req: &Recorded) -> Vec<String> {
        let msgs = req.messages();
        let start = msgs
            .iter()
            .rposition(|m| m["role"] == "assistant")
            .map_or(0, |i| i + 1);
        assert!(start < msgs.len(), "the request ends with a user turn");
        msgs[start..]
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().expect("text content").to_string())
            .collect()
    }

    /// The provider joins the text blocks of a user message with a blank line.
    fn user_message(parts: &[&str]) -> Vec<String> {
        vec![parts.join("\n\n")]
    }

    fn last_tool_results(req: &Recorded) -> Vec<SentResult> {
        req.last_tool_messages()
            .iter()
            .map(|t| SentResult {
                id: t["tool_call_id"].as_str().expect("tool_call_id").into(),
                content: t["content"].as_str().expect("text content").into(),
                is_error: None,
            })
            .collect()
    }

    fn last_assistant_calls(req: &Recorded) -> Vec<(String, String)> {
        let assistant = req.last_assistant();
        assistant["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| {
                        let f = &c["function"];
                        let name = f["name"].as_str().expect("name").to_string();
                        (name, f["arguments"].as_str().expect("arguments").into())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn history_len(req: &Recorded) -> usize {
        let msgs = req.messages();
        assert_eq!(msgs[0]["role"], "system");
        msgs.len() - 1
    }

    fn tool_specs(req: &Recorded) -> Vec<(String, String)> {
        super::tool_specs_at(req, |t| &t["function"])
    }

    fn conversation_texts(req: &Recorded) -> Vec<String> {
        req.messages()
            .iter()
            .filter(|m| m["role"] == "user" || m["role"] == "assistant")
            .filter_map(|m| m["content"].as_str())
            .map(str::to_string)
            .collect()
    }
}

/// The loopback server speaking Chat Completions; its `url` ends in `/v1`.
pub type FakeServer = crate::loopback::FakeServer<OpenAi>;

/// Accessors for a recorded Chat Completions request.
impl Recorded {
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
                // Text, or parts (text and images) where images ride along.
                let parts_ok = m["content"].as_array().is_some_and(|parts| {
                    !parts.is_empty()
                        && parts.iter().all(|p| {
                            (p["type"] == "text"
                                && p["text"].as_str().is_some_and(|t| !t.is_empty()))
                                || (p["type"] == "image_url"
                                    && p["image_url"]["url"]
                                        .as_str()
                                        .is_some_and(|u| u.starts_with("data:image/")))
                        })
                });
                assert!(
                    m["content"].as_str().is_some_and(|c| !c.is_empty()) || parts_ok,
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
    for s in text_pieces(&turn.text) {
        out.push_str(&chunk(json!({"content": s}), None));
    }
    // Per call: the opening chunk (id, name) and the argument pieces.
    let mut per_call: Vec<Vec<String>> = Vec::new();
    for (index, (name, input)) in turn.tools.iter().enumerate() {
        let id = format!("call_t{}", next_id());
        let raw = raw_input(input);
        // Piece size 0: all the arguments in the opening chunk.
        let (first, rest) = if turn.piece == 0 {
            (raw, Vec::new())
        } else {
            (String::new(), pieces(&raw, turn.piece))
        };
        let mut chunks = vec![chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": first}}]}),
            None,
        )];
        for s in rest {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": s}}]}),
                None,
            ));
        }
        per_call.push(chunks);
    }
    out.push_str(&lay_out(per_call, turn.interleave));
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
    chat_split(turn, vec![])
}

/// The same stream split into chunks of awkward sizes.
pub fn chat_split(turn: Turn, chunk_sizes: Vec<usize>) -> Reply {
    Reply::stream(chat_body(&turn), chunk_sizes)
}
