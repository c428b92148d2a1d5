//! The OpenAI Responses wire of the loopback model server: event streams
//! for scripted turns (each with a reasoning item carrying encrypted
//! content, as a reasoning model's are), accessors for recorded requests
//! and the request validator, which also checks that every reasoning item
//! sent back is the one the server wrote, unchanged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use waypoint::llm::ModelClient;
use waypoint::llm::responses::ResponsesClient;

pub use super::Turn;
use super::openai::{EVENT_STREAM, EXHAUSTED, OVERLOADED, error_json};
use super::{lay_out, next_id, pieces, raw_input, text_pieces};
pub use crate::loopback::{
    Answer, ClientOpts, ProviderWire, Recorded, Reply, SentResult, Wire, plan,
};

/// The Responses API at the HTTP level.
pub enum Responses {}

impl Wire for Responses {
    const BASE_PATH: &'static str = "/v1";
    const EVENT_STREAM: &'static str = EVENT_STREAM;
    const EXHAUSTED: &'static str = EXHAUSTED;
}

/// The client the Responses tests use (base delay of retries: 10 ms).
pub fn responses_client(url: &str, opts: &ClientOpts) -> ResponsesClient {
    ResponsesClient::new(opts.openai(url, Responses::MODEL)).expect("client")
}

/// Every reasoning item the server wrote, by id.
fn written() -> &'static Mutex<HashMap<String, Value>> {
    static WRITTEN: std::sync::OnceLock<Mutex<HashMap<String, Value>>> = std::sync::OnceLock::new();
    WRITTEN.get_or_init(Default::default)
}

fn event(out: &mut String, data: Value) {
    let kind = data["type"].as_str().expect("type").to_string();
    out.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
}

/// The SSE body of a complete Responses stream for `answer`: a reasoning
/// item (summary streamed, encrypted content), the text as a message, then
/// each call (its arguments in `answer.piece`-character deltas, the calls'
/// deltas interleaved when asked), then `response.completed`.
pub fn responses_body(answer: &Answer) -> String {
    let n = next_id();
    let mut out = String::new();
    event(
        &mut out,
        json!({"type": "response.created", "response": {"id": format!("resp_t{n}"), "object": "response", "status": "in_progress", "output": []}}),
    );
    let mut index = 0;
    // The reasoning item: its summary streamed, its secret only encrypted.
    let rs = format!("rs_t{n}");
    let summary = format!("Thinking about step {n}");
    let reasoning = json!({"id": rs, "type": "reasoning", "encrypted_content": format!("gAAAAB-enc-{n}-{}", "x".repeat(40)), "summary": [{"type": "summary_text", "text": summary}]});
    written()
        .lock()
        .expect("written")
        .insert(rs.clone(), reasoning.clone());
    event(
        &mut out,
        json!({"type": "response.output_item.added", "output_index": index, "item": {"id": rs, "type": "reasoning", "summary": []}}),
    );
    for piece in summary.as_bytes().chunks(7) {
        let piece = String::from_utf8_lossy(piece);
        event(
            &mut out,
            json!({"type": "response.reasoning_summary_text.delta", "item_id": rs, "output_index": index, "summary_index": 0, "delta": piece}),
        );
    }
    event(
        &mut out,
        json!({"type": "response.output_item.done", "output_index": index, "item": reasoning}),
    );
    index += 1;
    if !answer.text.is_empty() {
        let msg = format!("msg_t{n}");
        event(
            &mut out,
            json!({"type": "response.output_item.added", "output_index": index, "item": {"id": msg, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
        );
        for s in text_pieces(&answer.text) {
            event(
                &mut out,
                json!({"type": "response.output_text.delta", "item_id": msg, "output_index": index, "content_index": 0, "delta": s}),
            );
        }
        event(
            &mut out,
            json!({"type": "response.output_text.done", "item_id": msg, "output_index": index, "content_index": 0, "text": answer.text}),
        );
        event(
            &mut out,
            json!({"type": "response.output_item.done", "output_index": index, "item": {"id": msg, "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": answer.text, "annotations": []}]}}),
        );
        index += 1;
    }
    let mut per_call: Vec<Vec<String>> = Vec::new();
    let mut done_events = Vec::new();
    for (k, (name, input)) in answer.calls.iter().enumerate() {
        let at = index + k;
        let fc = format!("fc_t{n}_{k}");
        let call_id = format!("call_t{n}_{k}");
        let raw = raw_input(input);
        let mut evs = Vec::new();
        let mut added = String::new();
        event(
            &mut added,
            json!({"type": "response.output_item.added", "output_index": at, "item": {"id": fc, "type": "function_call", "status": "in_progress", "call_id": call_id, "name": name, "arguments": ""}}),
        );
        evs.push(added);
        for s in pieces(&raw, answer.piece) {
            let mut e = String::new();
            event(
                &mut e,
                json!({"type": "response.function_call_arguments.delta", "item_id": fc, "output_index": at, "delta": s}),
            );
            evs.push(e);
        }
        per_call.push(evs);
        let mut done = String::new();
        event(
            &mut done,
            json!({"type": "response.function_call_arguments.done", "item_id": fc, "output_index": at, "arguments": raw}),
        );
        event(
            &mut done,
            json!({"type": "response.output_item.done", "output_index": at, "item": {"id": fc, "type": "function_call", "status": "completed", "call_id": call_id, "name": name, "arguments": raw}}),
        );
        done_events.push(done);
    }
    if answer.interleave {
        out.push_str(&lay_out(per_call, true));
        out.push_str(&done_events.concat());
    } else {
        for (mut evs, done) in per_call.into_iter().zip(done_events) {
            evs.push(done);
            out.push_str(&evs.concat());
        }
    }
    event(
        &mut out,
        json!({"type": "response.completed", "response": {"id": format!("resp_t{n}"), "object": "response", "status": "completed",
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 42, "output_tokens_details": {"reasoning_tokens": 10}, "total_tokens": 142}}}),
    );
    out
}

/// The start of `body` up to the `event:` line of the first `kind` event.
fn before(body: &str, kind: &str) -> usize {
    body.find(&format!("event: {kind}\n"))
        .expect("the event is in the body")
}

impl ProviderWire for Responses {
    /// A codex model: the client asks for reasoning and encrypted content.
    const MODEL: &'static str = "codex-test";
    const KEY_VAR: &'static str = "OPENAI_API_KEY";
    const OVERLOADED: (u16, &'static str, &'static str) = OVERLOADED;

    fn client(url: &str, opts: &ClientOpts) -> Arc<dyn ModelClient> {
        Arc::new(responses_client(url, opts))
    }

    fn body(answer: &Answer) -> String {
        responses_body(answer)
    }

    fn error_body(kind: &str, message: &str) -> String {
        error_json(kind, message)
    }

    /// Inside the last argument delta, before its call is done.
    fn cut_inside_call(body: &str) -> usize {
        before(body, "response.function_call_arguments.done") - 10
    }

    fn stalled_prefix(body: &str) -> String {
        body[..before(body, "response.output_text.done")].to_string()
    }

    fn error_mid_stream(body: &str, kind: &str, message: &str) -> String {
        let cut = before(body, "response.output_text.done");
        let mut out = body[..cut].to_string();
        event(
            &mut out,
            json!({"type": "error", "sequence_number": 9, "error": {"type": kind, "code": kind, "message": message, "param": null}}),
        );
        out
    }

    fn assert_valid(body: &Value) {
        assert_valid_responses_request(body);
    }

    fn assert_envelope(req: &Recorded) {
        assert_eq!(req.path, "/v1/responses");
        assert_eq!(req.header("authorization"), Some("Bearer test-key"));
        assert_eq!(req.body["model"], Self::MODEL);
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["store"], false);
        assert_eq!(req.body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(req.body["reasoning"], json!({"summary": "auto"}));
        assert!(
            req.body["prompt_cache_key"]
                .as_str()
                .is_some_and(|k| !k.is_empty())
        );
        assert_eq!(req.body["max_output_tokens"], 8192);
        assert!(req.body["instructions"].is_string());
        let tools = req.body["tools"].as_array().expect("tools");
        assert!(tools.iter().all(|t| t["type"] == "function"
            && t["name"].is_string()
            && t["parameters"]["type"] == "object"));
    }

    fn last_user_texts(req: &Recorded) -> Vec<String> {
        let items = req.input();
        let start = last_turn_start(items);
        assert!(start < items.len(), "the request ends with a user turn");
        items[start..]
            .iter()
            .filter(|i| i["type"] == "message" && i["role"] == "user")
            .map(message_text)
            .collect()
    }

    fn user_message(parts: &[&str]) -> Vec<String> {
        vec![parts.join("\n\n")]
    }

    fn last_tool_results(req: &Recorded) -> Vec<SentResult> {
        let items = req.input();
        items[last_turn_start(items)..]
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| SentResult {
                id: i["call_id"].as_str().expect("call_id").into(),
                content: i["output"].as_str().expect("text output").into(),
                is_error: None,
            })
            .collect()
    }

    fn last_assistant_calls(req: &Recorded) -> Vec<(String, String)> {
        let items = req.input();
        let end = last_turn_start(items);
        let start = items[..end]
            .iter()
            .rposition(|i| !assistant_side(i))
            .map_or(0, |i| i + 1);
        items[start..end]
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(|i| {
                (
                    i["name"].as_str().expect("name").into(),
                    i["arguments"].as_str().expect("arguments").into(),
                )
            })
            .collect()
    }

    /// Turns: runs of user-side items and of assistant-side items.
    fn history_len(req: &Recorded) -> usize {
        let items = req.input();
        let mut turns = 0;
        let mut last = None;
        for i in items {
            let side = assistant_side(i);
            if last != Some(side) {
                turns += 1;
                last = Some(side);
            }
        }
        turns
    }

    fn tool_specs(req: &Recorded) -> Vec<(String, String)> {
        super::tool_specs_at(req, |t| t)
    }

    fn conversation_texts(req: &Recorded) -> Vec<String> {
        req.input()
            .iter()
            .filter(|i| i["type"] == "message")
            .map(message_text)
            .collect()
    }
}

/// Items the model wrote: reasoning, calls, its messages.
fn assistant_side(item: &Value) -> bool {
    match item["type"].as_str() {
        Some("reasoning" | "function_call") => true,
        Some("message") => item["role"] == "assistant",
        _ => false,
    }
}

/// Where the user turn the request ends with starts.
fn last_turn_start(items: &[Value]) -> usize {
    items.iter().rposition(assistant_side).map_or(0, |i| i + 1)
}

/// A message item's text (one text part).
fn message_text(item: &Value) -> String {
    let parts = item["content"].as_array().expect("content parts");
    assert_eq!(parts.len(), 1, "one text part: {item}");
    let want = if item["role"] == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    assert_eq!(parts[0]["type"], want);
    parts[0]["text"].as_str().expect("text").to_string()
}

/// The loopback server speaking Responses; its `url` ends in `/v1`.
pub type FakeServer = crate::loopback::FakeServer<Responses>;

/// Accessors for a recorded Responses request.
impl Recorded {
    pub fn input(&self) -> &Vec<Value> {
        self.body["input"].as_array().expect("input array")
    }
}

/// Checks what the Responses API enforces with `store: false`: the input
/// starts with the user's message; every `function_call_output` answers a
/// call made before it, every call is answered once before the next user
/// message; a reasoning item is the one the server wrote, unchanged, and
/// is followed by the call or message it led to; no empty message.
pub fn assert_valid_responses_request(body: &Value) {
    assert_eq!(body["store"], false);
    let items = body["input"].as_array().expect("input");
    assert_eq!(items[0]["type"], "message", "a message first");
    assert_eq!(items[0]["role"], "user", "the user's");
    let mut open: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("message") => {
                let text = message_text(item);
                assert!(!text.trim().is_empty(), "message {i} says something");
                if item["role"] == "user" {
                    assert!(open.is_empty(), "calls {open:?} unanswered before item {i}");
                }
            }
            Some("reasoning") => {
                let id = item["id"].as_str().expect("reasoning id");
                // This server's items (a recorded stream's are checked by
                // the test that plays it).
                if id.starts_with("rs_t") {
                    let written = written().lock().expect("written").get(id).cloned();
                    assert_eq!(
                        Some(item),
                        written.as_ref(),
                        "reasoning item {id} goes back as written"
                    );
                }
                let next = items.get(i + 1).expect("an item after the reasoning");
                assert!(
                    next["type"] == "function_call"
                        || (next["type"] == "message" && next["role"] == "assistant"),
                    "reasoning {id} is followed by its item, not {next}"
                );
            }
            Some("function_call") => {
                let args = item["arguments"].as_str().expect("string arguments");
                let parsed: Value = serde_json::from_str(args).expect("arguments are JSON");
                assert!(parsed.is_object(), "arguments are an object");
                assert!(item["name"].is_string());
                let call_id = item["call_id"].as_str().expect("call_id").to_string();
                if let Some(rest) = call_id.strip_prefix("call_t") {
                    // This server's call: its item id goes back with it.
                    assert_eq!(item["id"], format!("fc_t{rest}"), "item id of {call_id}");
                }
                assert!(!open.contains(&call_id), "call {call_id} made once");
                open.push(call_id);
            }
            Some("function_call_output") => {
                let call_id = item["call_id"].as_str().expect("call_id");
                let at = open
                    .iter()
                    .position(|c| c == call_id)
                    .unwrap_or_else(|| panic!("output {i} answers an open call ({call_id})"));
                open.remove(at);
                assert!(item["output"].is_string());
            }
            other => panic!("unexpected item type {other:?} at {i}"),
        }
    }
    assert!(open.is_empty(), "calls {open:?} unanswered at the end");
}

/// A scripted answer as a reply.
pub fn answer(a: Answer) -> Reply {
    Responses::reply(a)
}
