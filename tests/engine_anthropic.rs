//! End-to-end engine tests against a real HTTP server on 127.0.0.1 that
//! streams Anthropic-format SSE.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod engine_support;
mod loopback;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use engine_support::*;
use serde_json::{Value, json};
use waypoint::agent::{AgentConfig, reminders::INITIAL_REMINDER};
use waypoint::events::{AbortReason, Event, Op, ToolStatus};
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

async fn rig_with(replies: Vec<Reply>, config: AgentConfig, max_retries: u32) -> Rig {
    Rig::start(replies, config, |url| anthropic(url, max_retries)).await
}

async fn rig(replies: Vec<Reply>) -> Rig {
    rig_with(replies, AgentConfig::default(), 3).await
}

/// Checks the API's pairing rule on a recorded request.
fn assert_valid_request(body: &Value) {
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

#[tokio::test]
async fn multi_turn_task_with_plan_updates_completes() {
    let mut r = rig(vec![
        sse(Turn::tool(
            "todo_write",
            plan(&[
                ("Write notes", "in_progress"),
                ("List files", "pending"),
                ("Report", "pending"),
            ]),
        )
        .with_text("Planning.")),
        sse(Turn::tool(
            "write_file",
            json!({"path": "notes/a.txt", "content": "alpha\n"}),
        )),
        sse(Turn::tool(
            "todo_write",
            plan(&[
                ("Write notes", "completed"),
                ("List files", "in_progress"),
                ("Report", "pending"),
            ]),
        )
        .with_tool("bash", json!({"command": "ls notes"}))),
        sse(Turn::tool(
            "todo_write",
            plan(&[
                ("Write notes", "completed"),
                ("List files", "completed"),
                ("Report", "completed"),
            ]),
        )),
        sse(Turn::text("All done: notes/a.txt written.")),
    ])
    .await;
    r.submit("make notes");
    let events = r.turn_events().await;

    assert!(matches!(
        events.last(),
        Some(Event::TurnComplete { open_items: 0, .. })
    ));
    assert_eq!(
        std::fs::read_to_string(r.dir.path().join("notes/a.txt")).unwrap(),
        "alpha\n"
    );
    let ends = tool_ends(&events);
    let names: Vec<&str> = ends.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "todo_write",
            "write_file",
            "todo_write",
            "bash",
            "todo_write"
        ]
    );
    assert!(
        ends.iter().all(|(_, s, _)| *s == ToolStatus::Ok),
        "{ends:?}"
    );
    assert!(
        ends[3].2.contains("a.txt"),
        "ls output reaches the model: {}",
        ends[3].2
    );

    let plans: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::PlanUpdated { .. }))
        .collect();
    assert_eq!(plans.len(), 3);
    if let Event::PlanUpdated { rendered, diff, .. } = plans[1] {
        assert_eq!(diff.completed, vec!["Write notes".to_string()]);
        assert_eq!(diff.started, vec!["List files".to_string()]);
        assert!(rendered.contains("[>] List files <- Doing List files"));
    }
    // The bash call is tagged with the plan item in progress when it ran.
    assert_eq!(
        plan_item_of(&events, "bash"),
        Some(Some("List files".to_string()))
    );

    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 5);
    for req in &reqs {
        assert_valid_request(&req.body);
        assert_eq!(req.header("x-api-key"), Some("test-key"));
        assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["model"], "claude-test");
    }
    // The initial reminder follows the first prompt; the plan comes back rendered.
    assert_eq!(
        reqs[0].last_user_texts(),
        vec!["make notes".to_string(), INITIAL_REMINDER.to_string()]
    );
    let first_result = &reqs[1].last_tool_results()[0];
    assert!(
        first_result["content"]
            .as_str()
            .unwrap()
            .contains("(0/3 completed)")
    );
    // Usage is summed over the session.
    assert_eq!(last_usage(&events), Some((500, 210)));
}

#[tokio::test]
async fn tool_input_split_across_many_deltas_and_awkward_chunks() {
    let content = "héllo wörld 😀 — ünïcode\n".repeat(3);
    let mut turn = Turn::tool("write_file", json!({"path": "u.txt", "content": content}))
        .with_text("Écrire 😀 ok");
    turn.json_piece = 1;
    let mut r = rig(vec![
        sse_split(turn, vec![1, 3, 7, 2, 5, 11]),
        sse_split(Turn::text("fin ✓"), vec![2, 1]),
    ])
    .await;
    r.submit("write it");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(
        std::fs::read_to_string(r.dir.path().join("u.txt")).unwrap(),
        content
    );
    assert_eq!(streamed_text(&events), "Écrire 😀 okfin ✓");
}

#[tokio::test]
async fn stream_cut_mid_message_is_retried_and_no_tool_runs_twice() {
    let turn =
        Turn::tool("bash", json!({"command": "echo ran >> log.txt"})).with_text("Running it.");
    let body = sse_body(&turn);
    let cut = body.find("input_json_delta").expect("tool delta") + 10;
    let mut r = rig(vec![
        Reply::Sse {
            body: body.clone(),
            chunk_sizes: vec![9],
            cut_after: Some(cut),
        },
        Reply::stream(body, vec![13]),
        sse(Turn::text("ok")),
    ])
    .await;
    r.submit("run");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(
        std::fs::read_to_string(r.dir.path().join("log.txt")).unwrap(),
        "ran\n"
    );
    assert_eq!(count(&events, |e| matches!(e, Event::Retrying { .. })), 1);
    assert_eq!(
        count(&events, |e| matches!(e, Event::ToolCallBegin { .. })),
        1
    );
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        reqs[0].body, reqs[1].body,
        "the retry resends the same request"
    );
    assert_valid_request(&reqs[2].body);
}

#[tokio::test]
async fn rate_limit_429_honours_retry_after() {
    let mut r = rig(vec![
        Reply::Status {
            code: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
                .into(),
        },
        sse(Turn::text("hello")),
    ])
    .await;
    let started = Instant::now();
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    let (delay, reason, attempt) = first_retry(&events).expect("a retry event");
    assert_eq!((delay, attempt), (1000, 1));
    assert!(
        reason.contains("429") && reason.contains("slow down"),
        "{reason}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "waited as the server asked"
    );
    assert_eq!(r.server.requests().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_read_clearly() {
    let mut r = rig(vec![Reply::Status {
        code: 401,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#.into(),
    }])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("401")
            && message.contains("invalid x-api-key")
            && message.contains("ANTHROPIC_API_KEY"),
        "{message}"
    );
    assert_eq!(r.server.requests().len(), 1);
}

#[tokio::test]
async fn overload_retries_are_bounded_then_the_session_goes_on() {
    let overloaded = || Reply::Status {
        code: 529,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            .into(),
    };
    let mut r = rig_with(
        vec![overloaded(), overloaded(), overloaded()],
        AgentConfig::default(),
        2,
    )
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("gave up after 3 attempts") && message.contains("Overloaded"),
        "{message}"
    );
    assert_eq!(r.server.requests().len(), 3);
    // The user can resume once the service is back; the request is still valid.
    r.server.push(sse(Turn::text("back")));
    r.handle.ops.send(Op::Resume).unwrap();
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_valid_request(&r.server.requests()[3].body);
}

#[tokio::test]
async fn invalid_plan_is_refused_and_the_loop_recovers() {
    let mut r = rig(vec![
        sse(Turn::tool(
            "todo_write",
            plan(&[("A", "in_progress"), ("B", "in_progress")]),
        )),
        sse(Turn::tool(
            "todo_write",
            plan(&[("A", "in_progress"), ("B", "pending")]),
        )),
        sse(Turn::text("fixed")),
    ])
    .await;
    r.submit("plan");
    let events = r.turn_events().await;
    assert!(matches!(
        events.last(),
        Some(Event::TurnComplete { open_items: 2, .. })
    ));
    let ends = tool_ends(&events);
    assert_eq!(ends[0].1, ToolStatus::Error);
    assert!(
        ends[0].2.starts_with("Error:") && ends[0].2.contains("in_progress"),
        "{}",
        ends[0].2
    );
    assert_eq!(ends[1].1, ToolStatus::Ok);
    assert_eq!(
        count(&events, |e| matches!(e, Event::PlanUpdated { .. })),
        1
    );
    let reqs = r.server.requests();
    let refused = &reqs[1].last_tool_results()[0];
    assert_eq!(refused["is_error"], true);
}

#[tokio::test]
async fn malformed_input_and_unknown_tools_get_error_results() {
    let mut bad = Turn::tool("bash", Value::String(r#"{"command": "echo hi"#.into()));
    bad.tools.push(("teleport".into(), json!({"to": "mars"})));
    bad.tools.push(("read_file".into(), json!({"path": 42})));
    let mut r = rig(vec![sse(bad), sse(Turn::text("sorry"))]).await;
    r.submit("go");
    let events = r.turn_events().await;
    assert_completed(&events);
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 3);
    assert!(
        ends.iter()
            .all(|(_, s, o)| *s == ToolStatus::Error && o.starts_with("Error:")),
        "{ends:?}"
    );
    assert!(ends[0].2.contains("not valid JSON"));
    assert!(ends[1].2.contains("unknown tool `teleport`"));
    assert!(ends[2].2.contains("`path` must be a string"));
    let reqs = r.server.requests();
    assert_valid_request(&reqs[1].body);
    assert_eq!(reqs[1].last_tool_results().len(), 3);
}

#[tokio::test]
async fn nag_appears_exactly_after_n_rounds_without_a_plan_update() {
    let bash = || sse(Turn::tool("bash", json!({"command": "true"})));
    let mut replies = vec![sse(Turn::tool(
        "todo_write",
        plan(&[("Step one", "in_progress"), ("Step two", "pending")]),
    ))];
    replies.extend([bash(), bash(), bash(), bash()]);
    replies.push(sse(Turn::tool(
        "todo_write",
        plan(&[("Step one", "completed"), ("Step two", "in_progress")]),
    )));
    replies.extend([bash(), bash(), sse(Turn::text("done"))]);
    let config = AgentConfig {
        nag_every: 3,
        ..AgentConfig::default()
    };
    let mut r = rig_with(replies, config, 0).await;
    r.submit("work");
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 9);
    let nagged: Vec<usize> = reqs
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, q)| q.last_user_texts().iter().any(|t| t.contains("<reminder>")))
        .map(|(i, _)| i)
        .collect();
    // Rounds: 1 plan, 2-4 bash (nag after the third), 5 bash, 6 plan, 7-8 bash.
    assert_eq!(nagged, vec![4]);
    let nag = reqs[4].last_user_texts().join("\n");
    assert!(
        nag.contains("3 tool rounds since the last plan update"),
        "{nag}"
    );
    assert!(
        nag.contains("[>] Step one") && nag.contains("[ ] Step two"),
        "the nag lists open items: {nag}"
    );
    for q in &reqs {
        assert_valid_request(&q.body);
    }
}

fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie waiting for a reaper is dead too.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn interrupt_kills_a_long_bash_and_the_next_request_is_valid() {
    let mut r = rig(vec![sse(Turn::tool(
        "bash",
        json!({"command": "sleep 60 & echo $! > sleep.pid; wait"}),
    )
    .with_tool("write_file", json!({"path": "never.txt", "content": "x"})))])
    .await;
    r.submit("sleep");
    r.until(|e| matches!(e, Event::ToolCallBegin { name, .. } if name == "bash"))
        .await;
    let pid_file = r.dir.path().join("sleep.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(!process_gone(pid));
    r.handle.ops.send(Op::Interrupt).unwrap();
    let events = r.turn_events().await;
    assert!(
        matches!(
            events.last(),
            Some(Event::TurnAborted {
                reason: AbortReason::Interrupted,
                ..
            })
        ),
        "{events:?}"
    );
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "the second call never started: {ends:?}");
    assert_eq!(ends[0].1, ToolStatus::Interrupted);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_gone(pid) {
        assert!(
            Instant::now() < deadline,
            "sleep {pid} outlived the interrupt"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!r.dir.path().join("never.txt").exists());

    r.server.push(sse(Turn::text("resumed fine")));
    r.handle.ops.send(Op::Resume).unwrap();
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    let last = reqs.last().unwrap();
    assert_valid_request(&last.body);
    let results = last.last_tool_results();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|b| b["is_error"] == true));
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("interrupted")
    );
    assert!(results[1]["content"].as_str().unwrap().contains("not run"));
}

#[tokio::test]
async fn interrupt_during_streaming_then_new_message_is_valid() {
    let prefix = sse_body(&Turn::text("I will think about this for a very long time"));
    let prefix = prefix[..prefix.find("content_block_stop").unwrap()].to_string();
    let mut r = rig(vec![Reply::Stall { prefix }]).await;
    r.submit("think");
    r.until(|e| matches!(e, Event::TextDelta { .. })).await;
    r.handle.ops.send(Op::Interrupt).unwrap();
    let events = r.turn_events().await;
    assert!(matches!(
        events.last(),
        Some(Event::TurnAborted {
            reason: AbortReason::Interrupted,
            ..
        })
    ));
    r.server.push(sse(Turn::text("ok, shorter")));
    r.submit("be brief");
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 2);
    assert_valid_request(&reqs[1].body);
    let texts = reqs[1].last_user_texts();
    assert_eq!(
        reqs[1].messages().len(),
        1,
        "the unfinished reply is not kept"
    );
    assert!(
        texts.iter().any(|t| t.contains("interrupted")) && texts.last().unwrap() == "be brief",
        "{texts:?}"
    );
}

#[tokio::test]
async fn a_message_sent_while_running_is_queued_for_the_next_turn() {
    let mut r = rig(vec![
        sse(Turn::tool(
            "bash",
            json!({"command": "while [ ! -f go ]; do sleep 0.02; done"}),
        )),
        sse(Turn::text("first done")),
        sse(Turn::text("second done")),
    ])
    .await;
    r.submit("first");
    r.until(|e| matches!(e, Event::ToolCallBegin { .. })).await;
    r.submit("second");
    // The queue notice proves the engine took the message while the tool ran.
    let seen = r.until(|e| matches!(e, Event::Queued { .. })).await;
    assert!(matches!(seen.last(), Some(Event::Queued { text }) if text == "second"));
    std::fs::write(r.dir.path().join("go"), "").unwrap();
    let first = r.turn_events().await;
    assert_completed(&first);
    assert!(
        !first.iter().any(|e| matches!(e, Event::TurnStarted { .. })),
        "no new turn before the first ends"
    );
    let second = r.turn_events().await;
    assert_completed(&second);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[2].last_user_texts(), vec!["second".to_string()]);
}

#[tokio::test]
async fn first_request_is_small_and_states_every_plan_rule() {
    let mut r = rig(vec![sse(Turn::text("hi"))]).await;
    r.submit("Write a greeting script, run it, and add a test.");
    r.turn_events().await;
    let req = &r.server.requests()[0];
    assert!(
        req.raw_len < 8 * 1024,
        "first request body is {} bytes",
        req.raw_len
    );
    let tools = req.body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "todo_write",
            "todo_read",
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob"
        ]
    );
    let desc = tools[0]["description"].as_str().unwrap();
    for rule in [
        "at most 20 items",
        "`content`",
        "`activeForm`",
        "pending, in_progress or completed",
        "at most ONE item",
        "no duplicate",
        "refused and the old plan stays",
    ] {
        assert!(desc.contains(rule), "todo_write description lacks `{rule}`");
    }
}

#[tokio::test]
async fn whitespace_only_text_is_never_sent_back() {
    let mut r = rig(vec![
        sse(Turn::tool("bash", json!({"command": "true"})).with_text("\n\n")),
        sse(Turn::text("  \n")),
        sse(Turn::text("done")),
    ])
    .await;
    r.submit("go");
    r.turn_events().await;
    r.submit("again");
    r.turn_events().await;
    for req in r.server.requests() {
        assert_valid_request(&req.body);
        for m in req.messages() {
            for b in m["content"].as_array().unwrap() {
                if b["type"] == "text" {
                    assert!(
                        !b["text"].as_str().unwrap().trim().is_empty(),
                        "blank text sent: {b}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_is_retried() {
    let full = sse_body(&Turn::text("steady answer"));
    let cut = full.find("content_block_stop").unwrap();
    let broken = format!(
        "{}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}}\n\n",
        &full[..cut - "event: ".len()]
    );
    let mut r = rig(vec![
        Reply::stream(broken, vec![17]),
        sse(Turn::text("steady answer")),
    ])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(retry_reasons(&events), ["overloaded_error: Overloaded"]);
}

#[tokio::test]
async fn a_json_answer_instead_of_a_stream_fails_clearly() {
    let mut r = rig(vec![Reply::Status {
        code: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: r#"{"type":"error","error":{"type":"proxy_error","message":"streaming disabled"}}"#
            .into(),
    }])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("text/event-stream") && message.contains("streaming disabled"),
        "{message}"
    );
    assert_eq!(r.server.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    let mut r = Rig::start(
        vec![Reply::Silent, sse(Turn::text("finally"))],
        AgentConfig::default(),
        |url| {
            Arc::new(
                AnthropicClient::new(AnthropicConfig {
                    api_key: "k".into(),
                    base_url: url.into(),
                    model: "m".into(),
                    retry: RetryPolicy {
                        max_retries: 2,
                        base_delay: Duration::from_millis(10),
                        max_delay: Duration::from_secs(1),
                    },
                    idle_timeout: Duration::from_millis(300),
                })
                .unwrap(),
            )
        },
    )
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    if let Some(Event::TurnAborted { message, .. }) = events.last() {
        panic!("aborted: {message}");
    }
    let reason = retry_reasons(&events).pop().expect("a retry");
    assert!(
        reason.contains("no answer for 0.3 s while waiting for the response")
            || reason.contains("waiting for the response"),
        "{reason}"
    );
    assert_eq!(r.server.requests().len(), 2);
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
async fn an_interrupt_holds_queued_messages_until_the_user_resumes() {
    let mut r = rig(vec![sse(Turn::tool(
        "bash",
        json!({"command": "while [ ! -f go ]; do sleep 0.02; done"}),
    ))])
    .await;
    r.submit("first");
    r.until(|e| matches!(e, Event::ToolCallBegin { .. })).await;
    r.submit("also update the README");
    r.until(|e| matches!(e, Event::Queued { .. })).await;
    r.handle.ops.send(Op::Interrupt).unwrap();
    let aborted = r.turn_events().await;
    assert!(matches!(
        aborted.last(),
        Some(Event::TurnAborted {
            reason: AbortReason::Interrupted,
            ..
        })
    ));
    // The engine goes idle: the queued message does not start a turn by itself.
    let next = tokio::time::timeout(Duration::from_secs(5), r.handle.events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next, Event::Idle);
    r.server.push(sse(Turn::text("resumed with the README")));
    r.handle.ops.send(Op::Resume).unwrap();
    let resumed = r.turn_events().await;
    assert!(matches!(resumed.last(), Some(Event::TurnComplete { .. })));
    let last = r.server.requests().last().unwrap().clone();
    assert_valid_request(&last.body);
    let texts = last.last_user_texts();
    let pos = |needle: &str| texts.iter().position(|t| t.contains(needle));
    assert!(
        pos("interrupted") < pos("also update the README")
            && pos("also update the README") < pos("continue"),
        "the queued message follows the interrupt note and precedes the resume: {texts:?}"
    );
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
