//! End-to-end engine tests of what only the OpenAI-compatible provider
//! does, against a real HTTP server on 127.0.0.1 that streams Chat
//! Completions chunks: streams without `[DONE]`, ollama-style calls, tool
//! calls written as text, servers without a key. Invariant checked
//! throughout: every request is a valid Chat Completions request and the
//! session survives every failure. The behaviours every provider shares are
//! in `tests/engine_suite.rs`, which runs them against this wire too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;

use std::time::Duration;

use common::openai::*;
use engine_support::*;
use serde_json::{Value, json};
use waypoint::events::{Event, Op, StopReason};
use waypoint::llm::openai::{OpenAiClient, OpenAiConfig};
use waypoint::llm::retry::RetryPolicy;
use waypoint::llm::{ContentBlock, Message, ModelClient, ModelRequest, Role, StreamEvent};

type Rig = engine_support::Rig<OpenAi>;

async fn rig(replies: Vec<Reply>) -> Rig {
    Rig::default_with(replies).await
}

#[tokio::test]
async fn a_stream_without_done_completes() {
    let cut_after_finish = {
        let body = chat_body(&Turn::text("second"));
        let at = body.find("\"usage\"").unwrap();
        let at = body[..at].rfind("data:").unwrap();
        Reply::Sse {
            body,
            chunk_sizes: vec![3],
            cut_after: Some(at),
        }
    };
    let mut r = rig(vec![
        chat_split(
            Turn::tool("write_file", json!({"path": "x.txt", "content": "x"})).without_done(),
            vec![5],
        ),
        chat(Turn::text("first").without_done()),
        cut_after_finish,
    ])
    .await;
    r.submit("go");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert!(r.dir.path().join("x.txt").exists());
    r.submit("again");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(count(&events, |e| matches!(e, Event::Retrying { .. })), 0);
    assert_eq!(r.server.requests().len(), 3);
}

#[tokio::test]
async fn unknown_model_names_the_model_and_url_and_is_not_retried() {
    let o = ClientOpts {
        model: Some("qwen-nope"),
        key: None,
        ..ClientOpts::default()
    };
    let mut r = Rig::with(
        vec![OpenAi::error_reply(
            404,
            "api_error",
            "model \"qwen-nope\" not found, try pulling it first",
        )],
        waypoint::agent::AgentConfig::default(),
        o,
    )
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("404")
            && message.contains("model `qwen-nope`")
            && message.contains("/v1/chat/completions")
            && message.contains("OPENAI_BASE_URL"),
        "{message}"
    );
    assert_eq!(r.server.requests().len(), 1);
    assert_eq!(r.server.requests()[0].header("authorization"), None);
    r.survives().await;
}

#[tokio::test]
async fn ollama_style_whole_calls_all_numbered_zero_both_run() {
    let call = |id: &str, name: &str, args: Value| {
        let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0,
            "delta": {"role": "assistant", "content": "", "tool_calls": [{"id": id, "index": 0, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}, "finish_reason": null}]});
        format!("data: {c}\n\n")
    };
    let body = format!(
        "{}{}data: {}\n\ndata: [DONE]\n\n",
        call(
            "call_x1",
            "write_file",
            json!({"path": "h.py", "content": "print('hello')\n"})
        ),
        call(
            "call_x2",
            "write_file",
            json!({"path": "w.py", "content": "print('world')\n"})
        ),
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}),
    );
    let mut r = rig(vec![
        Reply::stream(body, vec![7]),
        chat(Turn::text("both written")),
    ])
    .await;
    r.submit("two files");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(tool_ends(&events).len(), 2);
    assert!(r.dir.path().join("h.py").exists() && r.dir.path().join("w.py").exists());
    let reqs = r.server.requests();
    assert_valid_chat_request(&reqs[1].body);
    let ids: Vec<String> = reqs[1]
        .last_tool_messages()
        .iter()
        .map(|t| t["tool_call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["call_x1", "call_x2"]);
}

#[tokio::test]
async fn a_tool_call_written_as_text_is_flagged_not_run() {
    let server = FakeServer::start(vec![
        chat(Turn::text(
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"rm -rf x\"}}\n</tool_call>",
        )),
        chat(Turn::text("Plain answer.")),
    ])
    .await;
    let c = openai_client(&server.url, &ClientOpts::default());
    let messages = vec![Message {
        role: Role::User,
        content: vec![ContentBlock::Text { text: "hi".into() }],
    }];
    let req = ModelRequest {
        system: "sys",
        messages: &messages,
        tools: &[],
        max_tokens: 100,
        conversation: None,
        session: None,
    };
    let mut seen = Vec::new();
    let mut sink = |e: StreamEvent| seen.push(e);
    let reply = c.stream(&req, &mut sink).await.unwrap();
    assert_eq!(reply.stop_reason, StopReason::TextToolCall);
    assert!(
        reply
            .content
            .iter()
            .all(|b| matches!(b, ContentBlock::Text { .. }))
    );
    let reply = c.stream(&req, &mut sink).await.unwrap();
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_eq!(c.model(), "gpt-test");
    assert!(server.requests()[0].body.get("tools").is_none());
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    for key in [None, Some("  ")] {
        let server = FakeServer::start(vec![chat(Turn::text("hi"))]).await;
        let o = ClientOpts {
            key,
            ..ClientOpts::default()
        };
        let c = openai_client(&server.url, &o);
        let messages = vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: "hi".into() }],
        }];
        let req = ModelRequest {
            system: "",
            messages: &messages,
            tools: &[],
            max_tokens: 10,
            conversation: None,
            session: None,
        };
        let mut sink = |_: StreamEvent| {};
        c.stream(&req, &mut sink).await.unwrap();
        assert_eq!(server.requests()[0].header("authorization"), None);
    }
}

#[test]
fn bad_configuration_is_refused_at_once() {
    let cfg = |url: &str, model: &str| OpenAiConfig {
        api_key: None,
        base_url: url.into(),
        model: model.into(),
        retry: RetryPolicy::default(),
        idle_timeout: Duration::from_secs(1),
    };
    let err = OpenAiClient::new(cfg("localhost:11434/v1", "m"))
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("not an http(s) URL")
            && err.to_string().contains("http://localhost:11434/v1"),
        "{err}"
    );
    let err = OpenAiClient::new(cfg("http://localhost:11434/v1", ""))
        .err()
        .expect("refused");
    assert!(err.to_string().contains("--model"), "{err}");
}

#[tokio::test]
async fn the_agent_answers_a_text_tool_call_with_a_correction_and_goes_on() {
    let mut r = rig(vec![
        chat(Turn::text(
            "{\"name\": \"bash\", \"arguments\": {\"command\": \"touch hacked\"}}",
        )),
        chat(Turn::tool("bash", json!({"command": "touch proper"}))),
        chat(Turn::text("Done properly.")),
    ])
    .await;
    r.handle
        .ops
        .send(Op::Submit {
            text: "make a file".into(),
        })
        .unwrap();
    let events = r.turn_events().await;
    assert_completed(&events);
    assert!(events.iter().any(
        |e| matches!(e, Event::Error { message, .. } if message.contains("tool call as text"))
    ));
    assert!(
        !r.dir.path().join("hacked").exists(),
        "a tool call written as text is never run"
    );
    assert!(r.dir.path().join("proper").exists());
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 3);
    for q in &reqs {
        assert_valid_chat_request(&q.body);
    }
    assert!(
        reqs[1].last_user_text().contains("tools interface"),
        "{}",
        reqs[1].last_user_text()
    );
}

/// A recorded stream whose last event (the finishing chunk, or `[DONE]`)
/// has no blank line after it: the turn completes without a retry.
#[tokio::test]
async fn a_stream_whose_last_event_has_no_blank_line_completes_without_a_retry() {
    let recorded = include_str!("fixtures/streams/openai_no_final_blank_line.sse");
    let with_done = format!("{recorded}\n\ndata: [DONE]");
    for body in [recorded.to_string(), with_done] {
        for sizes in [vec![], vec![5], vec![1, 7, 3]] {
            let mut r = rig(vec![Reply::stream(body.clone(), sizes)]).await;
            r.submit("hi");
            let events = r.turn_events().await;
            assert_completed(&events);
            assert_eq!(count(&events, |e| matches!(e, Event::Retrying { .. })), 0);
            assert_eq!(streamed_text(&events), "Hello — wörld 😀");
            assert_eq!(r.server.requests().len(), 1);
        }
    }
}

/// DeepSeek's thinking mode answers 400 "Missing reasoning_content field"
/// unless an assistant message with tool calls carries its reasoning back:
/// the recorded stream's reasoning goes back on that message, under the
/// field it came in, and is shown as reasoning (not reply text).
#[tokio::test]
async fn deepseek_reasoning_goes_back_with_the_tool_calls() {
    let recorded = include_str!("fixtures/streams/deepseek_reasoning_tool_call.sse");
    let mut r = rig(vec![
        Reply::stream(recorded.to_string(), vec![1, 9, 4]),
        chat(Turn::text("Written.")),
    ])
    .await;
    r.submit("make notes");
    let events = r.turn_events().await;
    assert_completed(&events);
    let thought = "The user wants a notes file. I should write notes.txt with the line \"hello\" — then check it. Let me call write_file.";
    let reasoning = engine_support::streamed_reasoning(&events);
    assert_eq!(reasoning, thought);
    assert_eq!(streamed_text(&events), "Written.");
    assert!(r.dir.path().join("notes.txt").exists());
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 2);
    assert_valid_chat_request(&reqs[1].body);
    let assistant = reqs[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the assistant message");
    assert_eq!(assistant["reasoning_content"], thought, "{assistant}");
    assert_eq!(
        assistant["tool_calls"][0]["id"],
        "call_00_kZ3pLx9QfWvN2r8bYh1T4sJc"
    );
    assert!(assistant.get("reasoning").is_none());
}

/// llama.cpp's server says the prompt is longer than its context with a
/// code of its own (`exceed_context_size_error`, HTTP 400): the wire
/// classifies it, so the engine compacts once and retries, as for
/// OpenAI's `context_length_exceeded`.
#[tokio::test]
async fn llama_cpp_context_exceeded_compacts_and_retries_once() {
    let too_long = Reply::Status {
        code: 400,
        headers: vec![],
        body: r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5012,"n_ctx":4096}}"#
            .into(),
    };
    let mut r = rig(vec![
        too_long,
        chat(Turn::text("Summary: nothing done yet.")),
        chat(Turn::text("Done.")),
    ])
    .await;
    r.submit("do the task");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(
        count(&events, |e| matches!(
            e,
            Event::CompactionBegin {
                reason: waypoint::events::CompactReason::TooLong
            }
        )),
        1
    );
    let requests = r.server.requests();
    assert_eq!(requests.len(), 3);
    let retried = requests[2].body.to_string();
    assert!(retried.contains("Summary: nothing done yet."), "{retried}");
}
