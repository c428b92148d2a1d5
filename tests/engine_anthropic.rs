//! End-to-end engine tests of what only the Anthropic provider does,
//! against a real HTTP server on 127.0.0.1 that streams Anthropic-format
//! SSE. The behaviours every provider shares are in `tests/engine_suite.rs`,
//! which runs them against this wire too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use engine_support::FnFactory;
use waypoint::agent::AgentConfig;
use waypoint::events::{AbortReason, Event, Op};
use waypoint::llm::anthropic::{AnthropicClient, AnthropicConfig};
use waypoint::llm::retry::RetryPolicy;

type Rig = engine_support::Rig<Anthropic>;

fn anthropic(url: &str, max_retries: u32) -> Arc<AnthropicClient> {
    Arc::new(
        AnthropicClient::new(AnthropicConfig {
            api_key: "test-key".into(),
            base_url: url.into(),
            model: "claude-test".into(),
            retry: RetryPolicy {
                max_retries,
                base_delay: Duration::from_millis(20),
                max_delay: Duration::from_secs(5),
            },
            idle_timeout: Duration::from_secs(10),
        })
        .expect("client"),
    )
}

#[test]
fn a_base_url_without_a_scheme_is_refused_at_once() {
    let err = AnthropicClient::new(AnthropicConfig {
        api_key: "k".into(),
        base_url: "localhost:8080".into(),
        model: "m".into(),
        retry: RetryPolicy::default(),
        idle_timeout: Duration::from_secs(1),
    })
    .err()
    .expect("refused");
    assert!(err.to_string().contains("not an http(s) URL"), "{err}");
}

#[tokio::test]
async fn a_reload_fixes_a_failed_turn_on_resume() {
    // The user fixed the setting: reloading builds a client from it.
    let good = FakeServer::start(vec![sse(Turn::text("fixed"))]).await;
    let good_url = good.url.clone();
    let factory = move |_: &str| -> Arc<dyn waypoint::agent::ClientFactory> {
        let url = good_url.clone();
        Arc::new(FnFactory(
            move |_: &waypoint::agent::ModelChoice, reload: bool| {
                assert!(reload, "only a reload is asked for");
                Ok(anthropic(&url, 0) as Arc<dyn waypoint::llm::ModelClient>)
            },
        ))
    };
    let replies = vec![Reply::Status {
        code: 404,
        headers: vec![],
        body:
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-typo"}}"#
                .into(),
    }];
    let mut r = Rig::start_with_factory(
        replies,
        AgentConfig::default(),
        |url| anthropic(url, 3),
        factory,
    )
    .await;
    r.submit("hi");
    let failed = r.turn_events().await;
    assert!(matches!(
        failed.last(),
        Some(Event::TurnAborted {
            reason: AbortReason::Failed,
            ..
        })
    ));
    r.handle.ops.send(Op::ReloadSettings).unwrap();
    r.handle.ops.send(Op::Resume).unwrap();
    let resumed = r.turn_events().await;
    assert!(
        matches!(resumed.last(), Some(Event::TurnComplete { .. })),
        "{resumed:?}"
    );
    assert_eq!(good.requests().len(), 1);
    assert_valid_request(&good.requests()[0].body);
    assert_eq!(
        r.server.requests().len(),
        1,
        "the old endpoint is not asked again"
    );
}

/// A recorded stream that ends right after `data: {"type":"message_stop"}`,
/// with no blank line (the official SDKs accept it): the turn completes at
/// once, whole and without a retry, whatever the chunking.
#[tokio::test]
async fn a_stream_whose_last_event_has_no_blank_line_completes_without_a_retry() {
    let body = include_str!("fixtures/streams/anthropic_no_final_blank_line.sse");
    for sizes in [vec![], vec![5], vec![1, 7, 3]] {
        let mut r = Rig::default_with(vec![Reply::stream(body.to_string(), sizes)]).await;
        r.submit("hi");
        let events = r.turn_events().await;
        engine_support::assert_completed(&events);
        assert_eq!(
            engine_support::count(&events, |e| matches!(e, Event::Retrying { .. })),
            0
        );
        assert_eq!(engine_support::streamed_text(&events), "Hello — wörld 😀");
        assert_eq!(r.server.requests().len(), 1);
    }
}

/// A recorded extended-thinking stream (a thinking block with its
/// signature, a redacted one, text, a tool call): the next request carries
/// the thinking blocks unchanged, first, before the tool_use.
#[tokio::test]
async fn thinking_blocks_go_back_unchanged_before_the_tool_use() {
    let recorded = include_str!("fixtures/streams/anthropic_thinking_tool_use.sse");
    let mut r = Rig::default_with(vec![
        Reply::stream(recorded.to_string(), vec![1, 9, 4]),
        sse(Turn::text("Written.")),
    ])
    .await;
    r.submit("make notes");
    let events = r.turn_events().await;
    engine_support::assert_completed(&events);
    let thought = "The user wants notes.txt with \"hello\". I'll write it — ünïcode — with write_file, then confirm.";
    let reasoning = engine_support::streamed_reasoning(&events);
    assert_eq!(reasoning, thought);
    assert!(r.dir.path().join("notes.txt").exists());
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 2);
    assert_valid_request(&reqs[1].body);
    let blocks = reqs[1].messages()[1]["content"].as_array().unwrap().clone();
    assert_eq!(
        blocks,
        vec![
            serde_json::json!({"type": "thinking", "thinking": thought,
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8E2yuL2uAm0/RLd0+2Ei6BzmNPYPmd4kVh/mDxSHWvKAiTyFF6rVjDxUuPlLCiOb2zN8hG0KNUm0pRXHwhCQY3C7EyVUQ=="}),
            serde_json::json!({"type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URj2pLmN3kY8sKq5dPw=="}),
            serde_json::json!({"type": "text", "text": "I'll write the file."}),
            serde_json::json!({"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "name": "write_file", "input": {"path": "notes.txt", "content": "hello\n"}}),
        ]
    );
}

/// The server answers "prompt is too long" (HTTP 400): the engine compacts
/// once (a summary request without tools) and retries the request.
#[tokio::test]
async fn prompt_too_long_compacts_and_retries_once() {
    let too_long = Reply::Status {
        code: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}"#
            .into(),
    };
    let mut r = Rig::default_with(vec![
        too_long,
        sse(Turn::text("Summary: nothing done yet.")),
        sse(Turn::text("Done.")),
    ])
    .await;
    r.submit("do the task");
    let events = r.turn_events().await;
    engine_support::assert_completed(&events);
    assert_eq!(
        engine_support::count(&events, |e| matches!(
            e,
            Event::CompactionBegin {
                reason: waypoint::events::CompactReason::TooLong
            }
        )),
        1
    );
    let requests = r.server.requests();
    assert_eq!(requests.len(), 3);
    let tools = |i: usize| requests[i].body["tools"].as_array().map_or(0, |t| t.len());
    assert!(tools(0) > 0 && tools(2) > 0);
    assert_eq!(tools(1), 0, "the summary request offers no tools");
    for req in &requests {
        assert_valid_request(&req.body);
    }
    let retried = requests[2].body.to_string();
    assert!(retried.contains("Summary: nothing done yet."));
    assert!(retried.contains("do the task"));
}
