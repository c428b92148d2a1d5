//! The OpenAI Responses wire's own behaviours, against a loopback server:
//! recorded streams from real models (`tests/fixtures/streams/responses_*`,
//! see `SOURCES.md`) replayed a byte at a time through the engine, their
//! reasoning items sent back unchanged and in order in the next request,
//! a failed response reported without retrying, and through the binary:
//! the wire chosen by the model's name and the session's id as the
//! prompt cache key. The behaviours every wire shares are in
//! `tests/engine_suite.rs` (`responses::*`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::engine_support;
use crate::loopback;

use common::responses::*;
use engine_support::*;
use serde_json::{Value, json};
use waypoint::events::Event;

const REASONING_CALL: &str = include_str!("fixtures/streams/responses_reasoning_function_call.sse");
const TEXT: &str = include_str!("fixtures/streams/responses_text.sse");
const FAILED: &str = include_str!("fixtures/streams/responses_failed.sse");

/// The `item` of the last `response.output_item.done` event of `kind` in a
/// recorded stream, as the server sent it.
fn done_item(stream: &str, kind: &str) -> Value {
    stream
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == kind)
        .map(|e| e["item"].clone())
        .next()
        .expect("the item is in the stream")
}

async fn rig(replies: Vec<Reply>) -> Rig<Responses> {
    Rig::default_with(replies).await
}

/// gpt-5.1-codex-max's reasoning (summary streamed, encrypted content) and
/// its `calculator` call, fed a byte at a time: the summary is shown as
/// reasoning, the call runs (an unknown tool here, so an error result),
/// and the next request carries the reasoning item exactly as the server
/// wrote it at `output_item.done`, then the call with its item id and
/// `call_id`, then its output.
#[tokio::test]
async fn a_recorded_reasoning_call_goes_back_verbatim_at_every_byte() {
    for sizes in [vec![1], vec![7, 1, 3], vec![]] {
        let mut r = rig(vec![
            Reply::stream(REASONING_CALL.to_string(), sizes),
            Responses::text("12 + 7 = 19."),
        ])
        .await;
        r.submit("what is 12 + 7?");
        let events = r.turn_events().await;
        assert_completed(&events);
        let reasoning = streamed_reasoning(&events);
        assert!(
            reasoning.starts_with("**Calculating step-by-step using calculator**"),
            "{reasoning}"
        );
        assert!(streamed_text(&events).ends_with("12 + 7 = 19."));
        let reqs = r.server.requests();
        assert_eq!(reqs.len(), 2);
        let input = reqs[1].input();
        let rs = done_item(REASONING_CALL, "reasoning");
        let at = input
            .iter()
            .position(|i| i["type"] == "reasoning")
            .expect("the reasoning item went back");
        assert_eq!(input[at], rs, "byte for byte the item the server wrote");
        assert!(
            input[at]["encrypted_content"]
                .as_str()
                .is_some_and(|e| e.len() > 1000)
        );
        let call = &input[at + 1];
        assert_eq!(call["type"], "function_call");
        assert_eq!(
            call["id"],
            "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f"
        );
        assert_eq!(call["call_id"], "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
        assert_eq!(call["name"], "calculator");
        let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args, json!({"a": 12, "b": 7, "op": "add"}));
        let output = &input[at + 2];
        assert_eq!(output["type"], "function_call_output");
        assert_eq!(output["call_id"], "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
        assert!(output["output"].as_str().unwrap().contains("calculator"));
        // 134 input tokens, none cached; 28 out.
        let usage = events.iter().find_map(|e| match e {
            Event::Usage { request, .. } => Some(*request),
            _ => None,
        });
        let usage = usage.expect("usage reported");
        assert_eq!(
            (
                usage.input_tokens,
                usage.cache_read_tokens,
                usage.output_tokens
            ),
            (134, 0, 28)
        );
        r.survives().await;
    }
}

/// gpt-5's plain answer after a reasoning item without a summary: the
/// text is the reply, and the reasoning item goes back before the
/// assistant message it led to, with that message's id.
#[tokio::test]
async fn a_recorded_text_answer_keeps_its_reasoning_before_the_message() {
    let mut r = rig(vec![
        Reply::stream(TEXT.to_string(), vec![1]),
        Responses::text("Lyon is second."),
    ])
    .await;
    r.submit("capital of France?");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(streamed_text(&events), "Paris.");
    assert_eq!(streamed_reasoning(&events), "");
    r.submit("and the second city?");
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 2);
    let input = reqs[1].input();
    let kinds: Vec<(&str, &str)> = input
        .iter()
        .map(|i| {
            (
                i["type"].as_str().unwrap_or(""),
                i["role"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("message", "user"),
            ("reasoning", ""),
            ("message", "assistant"),
            ("message", "user")
        ]
    );
    assert_eq!(input[1], done_item(TEXT, "reasoning"));
    let message = done_item(TEXT, "message");
    assert_eq!(input[2]["id"], message["id"]);
    assert_eq!(input[2]["content"][0]["text"], "Paris.");
}

/// A recorded quota failure (`error`, then `response.failed`) is reported
/// once, with the API's words, and not retried; the session goes on.
#[tokio::test]
async fn a_recorded_failure_is_reported_and_not_retried() {
    let mut r = rig(vec![Reply::stream(FAILED.to_string(), vec![1])]).await;
    r.submit("hi");
    let events = r.turn_events().await;
    let said = failure(&events);
    assert!(said.contains("insufficient_quota"), "{said}");
    assert!(said.contains("exceeded your current quota"), "{said}");
    assert_eq!(count(&events, |e| matches!(e, Event::Retrying { .. })), 0);
    assert_eq!(r.server.requests().len(), 1);
    r.server.push(Responses::text("back"));
    r.survives().await;
}

/// Through the binary: `gpt-5-codex` takes the Responses wire by itself
/// (the chat wire's path is never asked), the prompt cache key is the
/// session's id, every request is valid with its reasoning items
/// unchanged; `--wire chat` sends the same model to Chat Completions.
#[tokio::test]
async fn the_binary_picks_the_wire_by_model_and_keys_the_cache_by_session() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = FakeServer::start(vec![
        Responses::reply(Answer::tool("bash", json!({"command": "echo wired"}))),
        Responses::text("Done."),
    ])
    .await;
    let mut cmd =
        cli_support::on_loopback_openai(home.path(), ws.path(), &server.url, "gpt-5-codex");
    cmd.args(["-p", "say it"]);
    let (code, _out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{err}");
    let session = err
        .lines()
        .find_map(|l| l.strip_prefix("waypoint: resume with: waypoint -r "))
        .expect("the session's id")
        .trim()
        .to_string();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        assert_eq!(req.path, "/v1/responses");
        assert_eq!(req.body["prompt_cache_key"], session.as_str());
        assert_eq!(req.body["store"], false);
        assert_valid_responses_request(&req.body);
    }
    let outputs: Vec<&Value> = reqs[1]
        .input()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .collect();
    assert!(outputs[0]["output"].as_str().unwrap().contains("wired"));

    // The same model on the chat wire, when the config says so.
    let chat = loopback::FakeServer::<Responses>::start(vec![]).await;
    let mut cmd = cli_support::on_loopback_openai(home.path(), ws.path(), &chat.url, "gpt-5-codex");
    cmd.args(["--wire", "chat", "--max-retries", "0", "-p", "hi"]);
    let _ = cli_support::output(&mut cmd).await;
    let reqs = chat.requests();
    assert!(!reqs.is_empty());
    assert!(reqs.iter().all(|r| r.path == "/v1/chat/completions"));
}

/// An organization not verified for reasoning summaries gets HTTP 400 for
/// `reasoning.summary` (as OpenAI answers it): the request is made again
/// without summaries (the encrypted reasoning still asked for), the turn
/// completes, and later requests leave them out.
#[tokio::test]
async fn refused_reasoning_summaries_are_dropped_for_the_session() {
    let refused = Reply::Status {
        code: 400,
        headers: vec![("content-type".into(), "application/json".into())],
        body: json!({"error": {
            "message": "Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.",
            "type": "invalid_request_error", "param": "reasoning.summary", "code": "unsupported_value"}})
        .to_string(),
    };
    let mut r = rig(vec![
        refused,
        Responses::text("First."),
        Responses::text("Second."),
    ])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(streamed_text(&events), "First.");
    r.submit("again");
    assert_completed(&r.turn_events().await);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].body["reasoning"], json!({"summary": "auto"}));
    for req in &reqs[1..] {
        assert!(req.body.get("reasoning").is_none(), "{}", req.body);
        assert_eq!(req.body["include"], json!(["reasoning.encrypted_content"]));
        assert_valid_responses_request(&req.body);
    }
}
