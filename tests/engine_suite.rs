//! End-to-end engine behaviours every provider must show, written once and
//! run against each wire format: the agent talks to a real HTTP server on
//! 127.0.0.1 that streams Anthropic Messages SSE (`anthropic::*`), Chat
//! Completions chunks (`openai::*`) or Responses events (`responses::*`). Invariant checked throughout: every
//! request is valid for its API and the session survives every failure.
//!
//! What differs between the wires (clients, bodies, request readers and
//! validators) is `loopback::ProviderWire`, implemented once a wire in
//! `tests/common` (`anthropic`, `openai`, `responses`). Each wire's own
//! tests stay in `tests/engine_anthropic.rs`, `tests/engine_openai.rs` and
//! `tests/engine_responses.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::engine_support;
use crate::loopback;
use crate::support;

use std::time::{Duration, Instant};

use engine_support::*;
use loopback::{Answer, ClientOpts, FakeServer, ProviderWire, Reply, SentResult, plan};
use serde_json::{Value, json};
use waypoint::agent::{
    Agent, AgentConfig, INTERRUPTED_NOTE, RESUME_NOTE, reminders::INITIAL_REMINDER,
};
use waypoint::events::{AbortReason, Event, Op, StopReason, ToolStatus};

/// Runs each behaviour against the three wire formats, as
/// `anthropic::<name>`, `openai::<name>` and `responses::<name>`.
macro_rules! on_both_wires {
    ($($behaviour:ident),* $(,)?) => {
        mod anthropic {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::$behaviour::<crate::common::Anthropic>().await;
                }
            )*
        }
        mod openai {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::$behaviour::<crate::common::openai::OpenAi>().await;
                }
            )*
        }
        mod responses {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::$behaviour::<crate::common::responses::Responses>().await;
                }
            )*
        }
    };
}

on_both_wires!(
    multi_turn_task_with_plan_updates_and_awkward_splits,
    tool_input_split_across_many_pieces_and_awkward_chunks,
    stream_cut_mid_message_is_retried_and_no_tool_runs_twice,
    rate_limit_429_honours_retry_after,
    unauthorized_names_the_key_and_is_not_retried,
    a_long_overload_gives_up_after_bounded_retries,
    connection_refused_is_bounded_and_clear_then_the_session_goes_on,
    a_proxy_html_page_is_retried_then_reported_clearly,
    a_json_answer_instead_of_a_stream_fails_clearly,
    invalid_plan_is_refused_and_the_loop_recovers,
    malformed_input_and_unknown_tools_get_error_results,
    invalid_json_arguments_get_an_error_result_and_the_loop_recovers,
    nag_appears_exactly_after_n_rounds_without_a_plan_update,
    interrupt_kills_a_long_bash_and_the_next_request_is_valid,
    interrupt_during_streaming_then_new_message_is_valid,
    output_printed_before_an_interrupt_reaches_the_model,
    a_message_sent_while_running_is_queued_for_the_next_turn,
    an_interrupt_holds_queued_messages_until_the_user_resumes,
    first_request_is_small_and_states_every_plan_rule,
    whitespace_only_text_is_never_sent_back,
    an_error_event_mid_stream_is_retried,
    a_stream_that_goes_quiet_or_a_silent_server_times_out_and_is_retried,
);

const SPLITS: [usize; 7] = [1, 2, 3, 4, 5, 6, 7];

async fn rig<W: ProviderWire>(replies: Vec<Reply>) -> Rig<W> {
    Rig::default_with(replies).await
}

fn opts(max_retries: u32) -> ClientOpts {
    ClientOpts {
        max_retries,
        ..ClientOpts::default()
    }
}

/// The one place the suite reads a stop reason: the turn completed because
/// the model was done (`end_turn`), with `open` plan items left.
fn completed_at_end_of_turn(events: &[Event], open: usize) -> bool {
    matches!(
        events.last(),
        Some(Event::TurnComplete { stop_reason, open_items, .. })
            if *stop_reason == StopReason::EndTurn && *open_items == open
    )
}

fn interrupted(events: &[Event]) -> bool {
    matches!(
        events.last(),
        Some(Event::TurnAborted {
            reason: AbortReason::Interrupted,
            ..
        })
    )
}

/// A result the model must read as an error: flagged so where the wire has
/// a flag (Chat Completions has none; the text says it).
#[track_caller]
fn assert_flagged_error(result: &SentResult) {
    assert_ne!(result.is_error, Some(false), "{result:?}");
}

async fn multi_turn_task_with_plan_updates_and_awkward_splits<W: ProviderWire>() {
    let content = "alpha \"quoted\" \\ back\n\tünïcode 😀 — end\n";
    let mut r = rig::<W>(vec![
        W::split(
            Answer::tool(
                "todo_write",
                plan(&[
                    ("Write notes", "in_progress"),
                    ("List files", "pending"),
                    ("Report", "pending"),
                ]),
            )
            .with_text("Planning. ")
            .pieces(3, false),
            SPLITS.to_vec(),
        ),
        W::split(
            Answer::tool(
                "write_file",
                json!({"path": "notes/a.txt", "content": content}),
            )
            .pieces(1, false),
            SPLITS.to_vec(),
        ),
        // Two parallel calls, their argument pieces interleaved where the
        // wire allows it.
        W::split(
            Answer::tool(
                "todo_write",
                plan(&[
                    ("Write notes", "completed"),
                    ("List files", "in_progress"),
                    ("Report", "pending"),
                ]),
            )
            .with_tool("bash", json!({"command": "ls notes"}))
            .pieces(2, true),
            SPLITS.to_vec(),
        ),
        W::split(
            Answer::tool(
                "todo_write",
                plan(&[
                    ("Write notes", "completed"),
                    ("List files", "completed"),
                    ("Report", "completed"),
                ]),
            )
            .pieces(5, false),
            SPLITS.to_vec(),
        ),
        W::split(Answer::text("All done: notes/a.txt ✓"), SPLITS.to_vec()),
    ])
    .await;
    r.submit("make notes");
    let events = r.turn_events().await;

    assert!(completed_at_end_of_turn(&events, 0), "{events:?}");
    assert_eq!(
        std::fs::read_to_string(r.dir.path().join("notes/a.txt")).unwrap(),
        content
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

    let s = |c: &str, st: &str| (c.to_string(), st.to_string());
    assert_eq!(
        plan_states(&events),
        vec![
            vec![
                s("Write notes", "in_progress"),
                s("List files", "pending"),
                s("Report", "pending")
            ],
            vec![
                s("Write notes", "completed"),
                s("List files", "in_progress"),
                s("Report", "pending")
            ],
            vec![
                s("Write notes", "completed"),
                s("List files", "completed"),
                s("Report", "completed")
            ],
        ]
    );
    let plans: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::PlanUpdated { .. }))
        .collect();
    let Event::PlanUpdated { rendered, diff, .. } = plans[1] else {
        unreachable!("filtered on PlanUpdated")
    };
    assert_eq!(diff.completed, vec!["Write notes".to_string()]);
    assert_eq!(diff.started, vec!["List files".to_string()]);
    assert!(rendered.contains("[>] List files <- Doing List files"));
    // The bash call ran after the plan change of the same reply, and is
    // tagged with the plan item in progress then.
    assert_eq!(
        plan_item_of(&events, "bash"),
        Some(Some("List files".to_string()))
    );
    assert_eq!(streamed_text(&events), "Planning. All done: notes/a.txt ✓");

    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 5);
    for req in &reqs {
        W::assert_valid(&req.body);
        W::assert_envelope(req);
    }
    // The initial reminder follows the first prompt.
    assert_eq!(
        W::last_user_texts(&reqs[0]),
        W::user_message(&["make notes", INITIAL_REMINDER])
    );
    // The plan comes back rendered.
    let first_result = &W::last_tool_results(&reqs[1])[0];
    assert!(first_result.content.contains("(0/3 completed)"));
    // The parallel calls are echoed back and answered in order.
    let calls = W::last_assistant_calls(&reqs[3]);
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[1],
        (
            "bash".to_string(),
            json!({"command": "ls notes"}).to_string()
        )
    );
    let answers = W::last_tool_results(&reqs[3]);
    assert_eq!(answers.len(), 2);
    assert!(answers[0].content.contains("(1/3 completed)"));
    assert!(answers[1].content.contains("a.txt"));
    // Usage is summed over the session.
    assert_eq!(last_usage(&events), Some((500, 210)));
}

async fn tool_input_split_across_many_pieces_and_awkward_chunks<W: ProviderWire>() {
    let content = "héllo wörld 😀 — ünïcode\n".repeat(3);
    let answer = Answer::tool("write_file", json!({"path": "u.txt", "content": content}))
        .with_text("Écrire 😀 ok")
        .pieces(1, false);
    let mut r = rig::<W>(vec![
        W::split(answer, vec![1, 3, 7, 2, 5, 11]),
        W::split(Answer::text("fin ✓"), vec![2, 1]),
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

async fn stream_cut_mid_message_is_retried_and_no_tool_runs_twice<W: ProviderWire>() {
    let answer = Answer::tool("bash", json!({"command": "echo ran >> log.txt"}))
        .with_text("Running it.")
        .pieces(4, false);
    let body = W::body(&answer);
    let mut r = rig::<W>(vec![
        Reply::Sse {
            body: body.clone(),
            chunk_sizes: vec![9],
            cut_after: Some(W::cut_inside_call(&body)),
        },
        Reply::stream(body, vec![13]),
        W::text("ok"),
    ])
    .await;
    r.submit("run");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(
        std::fs::read_to_string(r.dir.path().join("log.txt")).unwrap(),
        "ran\n"
    );
    let reasons = retry_reasons(&events);
    assert_eq!(reasons.len(), 1);
    assert!(
        reasons[0].contains("closed before the message was complete")
            || reasons[0].contains("the server cut the stream mid-reply"),
        "{reasons:?}"
    );
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
    W::assert_valid(&reqs[2].body);
}

async fn rate_limit_429_honours_retry_after<W: ProviderWire>() {
    let mut r = rig::<W>(vec![
        Reply::Status {
            code: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: W::error_body("rate_limit_error", "Rate limit reached for requests"),
        },
        W::text("hello"),
    ])
    .await;
    let started = Instant::now();
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    let (delay, reason, attempt) = first_retry(&events).expect("a retry event");
    assert_eq!((delay, attempt), (1000, 1));
    assert!(
        reason.contains("429") && reason.contains("Rate limit reached"),
        "{reason}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "waited as the server asked"
    );
    assert_eq!(r.server.requests().len(), 2);
}

async fn unauthorized_names_the_key_and_is_not_retried<W: ProviderWire>() {
    let mut r = rig::<W>(vec![W::error_reply(
        401,
        "authentication_error",
        "Incorrect API key provided: sk-xx",
    )])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("401")
            && message.contains("Incorrect API key")
            && message.contains(W::KEY_VAR),
        "{message}"
    );
    assert_eq!(r.server.requests().len(), 1);
    assert!(retry_reasons(&events).is_empty());
    r.survives().await;
}

async fn a_long_overload_gives_up_after_bounded_retries<W: ProviderWire>() {
    let (code, kind, text) = W::OVERLOADED;
    let busy = || W::error_reply(code, kind, text);
    let mut r = Rig::<W>::with(
        vec![busy(), busy(), busy(), busy(), busy()],
        AgentConfig::default(),
        opts(3),
    )
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("gave up after 4 attempts")
            && message.contains(&code.to_string())
            && message.contains(text),
        "{message}"
    );
    assert_eq!(retry_reasons(&events).len(), 3);
    assert_eq!(r.server.requests().len(), 4);
    // One scripted overload is left: the resumed turn retries past it, and
    // its request is still valid.
    r.survives().await;
}

async fn connection_refused_is_bounded_and_clear_then_the_session_goes_on<W: ProviderWire>() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let url = format!("http://{addr}{}", W::BASE_PATH);
    let (dir, workspace) = support::workspace::Fixture::new().into_parts();
    let mut handle = Agent::builder(W::client(&url, &opts(1)), workspace)
        .spawn()
        .unwrap();
    handle.ops.send(Op::Submit { text: "hi".into() }).unwrap();
    let events = next_turn(&mut handle.events).await;
    let message = failure(&events);
    assert!(
        message.contains("gave up after 2 attempts")
            && message.contains(&format!(
                "nothing is listening at http://{addr}; is the server running?"
            )),
        "{message}"
    );
    // The quick retry of a refused connection is silent.
    assert_eq!(retry_reasons(&events).len(), 0);
    // The server comes up on that port; resuming works.
    let server = FakeServer::<W>::start_on(&addr.to_string(), vec![W::text("up")]).await;
    handle.ops.send(Op::Resume).unwrap();
    let events = next_turn(&mut handle.events).await;
    assert_completed(&events);
    W::assert_valid(&server.requests()[0].body);
    drop(dir);
}

async fn a_proxy_html_page_is_retried_then_reported_clearly<W: ProviderWire>() {
    let html = || {
        Reply::Status {
        code: 502,
        headers: vec![("content-type".into(), "text/html".into())],
        body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>".into(),
    }
    };
    let mut r = Rig::<W>::with(
        vec![html(), html(), html()],
        AgentConfig::default(),
        opts(2),
    )
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("gave up after 3 attempts")
            && message.contains("502")
            && message.contains("HTML page")
            && !message.contains("<html"),
        "{message}"
    );
    assert_eq!(retry_reasons(&events).len(), 2);
    assert_eq!(r.server.requests().len(), 3);
    r.survives().await;
}

async fn a_json_answer_instead_of_a_stream_fails_clearly<W: ProviderWire>() {
    let mut r = rig::<W>(vec![Reply::Status {
        code: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: W::error_body("proxy_error", "streaming disabled"),
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

async fn invalid_plan_is_refused_and_the_loop_recovers<W: ProviderWire>() {
    let mut r = rig::<W>(vec![
        W::reply(Answer::tool(
            "todo_write",
            plan(&[("A", "in_progress"), ("B", "in_progress")]),
        )),
        W::reply(Answer::tool(
            "todo_write",
            plan(&[("A", "in_progress"), ("B", "pending")]),
        )),
        W::text("fixed"),
    ])
    .await;
    r.submit("plan");
    let events = r.turn_events().await;
    assert!(completed_at_end_of_turn(&events, 2), "{events:?}");
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
    let refused = &W::last_tool_results(&reqs[1])[0];
    assert_flagged_error(refused);
    assert!(refused.content.starts_with("Error:"), "{refused:?}");
}

async fn malformed_input_and_unknown_tools_get_error_results<W: ProviderWire>() {
    let bad = Answer::tool("bash", Value::String(r#"{"command": "echo hi"#.into()))
        .with_tool("teleport", json!({"to": "mars"}))
        .with_tool("read_file", json!({"path": 42}));
    let mut r = rig::<W>(vec![W::reply(bad), W::text("sorry")]).await;
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
    W::assert_valid(&reqs[1].body);
    let results = W::last_tool_results(&reqs[1]);
    assert_eq!(results.len(), 3);
    results.iter().for_each(assert_flagged_error);
}

async fn invalid_json_arguments_get_an_error_result_and_the_loop_recovers<W: ProviderWire>() {
    let bad = Answer::tool("bash", Value::String(r#"{"command": "echo hi"#.into()))
        .with_tool("write_file", json!({"path": "ok.txt", "content": "fine"}))
        .pieces(3, true);
    let mut r = rig::<W>(vec![
        W::split(bad, vec![4, 1, 6]),
        W::reply(Answer::tool("bash", json!({"command": "echo hi"}))),
        W::text("sorry, fixed"),
    ])
    .await;
    r.submit("go");
    let events = r.turn_events().await;
    assert_completed(&events);
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 3, "{ends:?}");
    assert_eq!(ends[0].1, ToolStatus::Error);
    assert!(
        ends[0].2.starts_with("Error:") && ends[0].2.contains("not valid JSON"),
        "{}",
        ends[0].2
    );
    assert_eq!(ends[1].1, ToolStatus::Ok, "the other call still runs");
    assert_eq!(ends[2].1, ToolStatus::Ok, "the model's retry works");
    assert_eq!(
        std::fs::read_to_string(r.dir.path().join("ok.txt")).unwrap(),
        "fine"
    );
    let reqs = r.server.requests();
    for q in &reqs {
        W::assert_valid(&q.body);
    }
    let answers = W::last_tool_results(&reqs[1]);
    assert_eq!(answers.len(), 2);
    assert!(answers[0].content.contains("not valid JSON"));
    assert_flagged_error(&answers[0]);
    // The broken call is echoed back with `{}` so the request stays valid.
    let calls = W::last_assistant_calls(&reqs[1]);
    assert_eq!(calls[0], ("bash".to_string(), "{}".to_string()));
}

async fn nag_appears_exactly_after_n_rounds_without_a_plan_update<W: ProviderWire>() {
    let bash = || W::reply(Answer::tool("bash", json!({"command": "true"})));
    let mut replies = vec![W::reply(Answer::tool(
        "todo_write",
        plan(&[("Step one", "in_progress"), ("Step two", "pending")]),
    ))];
    replies.extend([bash(), bash(), bash(), bash()]);
    replies.push(W::reply(Answer::tool(
        "todo_write",
        plan(&[("Step one", "completed"), ("Step two", "in_progress")]),
    )));
    replies.extend([bash(), bash(), W::text("done")]);
    let config = AgentConfig {
        nag_every: 3,
        ..AgentConfig::default()
    };
    let mut r = Rig::<W>::with(replies, config, opts(0)).await;
    r.submit("work");
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 9);
    let user_text = |i: usize| W::last_user_texts(&reqs[i]).join("\n");
    let nagged: Vec<usize> = (1..reqs.len())
        .filter(|&i| user_text(i).contains("<reminder>"))
        .collect();
    // Rounds: 1 plan, 2-4 bash (nag after the third), 5 bash, 6 plan, 7-8 bash.
    assert_eq!(nagged, vec![4]);
    let nag = user_text(4);
    assert!(
        nag.contains("3 tool rounds since the last plan update"),
        "{nag}"
    );
    assert!(
        nag.contains("[>] Step one") && nag.contains("[ ] Step two"),
        "the nag lists open items: {nag}"
    );
    for q in &reqs {
        W::assert_valid(&q.body);
    }
}

async fn interrupt_kills_a_long_bash_and_the_next_request_is_valid<W: ProviderWire>() {
    let mut r = rig::<W>(vec![W::reply(
        Answer::tool(
            "bash",
            json!({"command": "sleep 60 & echo $! > sleep.pid; wait"}),
        )
        .with_tool("write_file", json!({"path": "never.txt", "content": "x"})),
    )])
    .await;
    r.submit("sleep");
    r.until(|e| matches!(e, Event::ToolCallBegin { name, .. } if name == "bash"))
        .await;
    let pid =
        support::proc::wait_for_pid(&r.dir.path().join("sleep.pid"), Duration::from_secs(10)).await;
    assert!(support::proc::alive(pid));
    r.handle.ops.send(Op::Interrupt).unwrap();
    let events = r.turn_events().await;
    assert!(interrupted(&events), "{events:?}");
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 1, "the second call never started: {ends:?}");
    assert_eq!(ends[0].1, ToolStatus::Interrupted);
    assert!(
        support::proc::gone_within(pid, Duration::from_secs(5)).await,
        "sleep {pid} outlived the interrupt"
    );
    assert!(!r.dir.path().join("never.txt").exists());

    r.server.push(W::text("resumed fine"));
    r.handle.ops.send(Op::Resume).unwrap();
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    let last = reqs.last().unwrap();
    W::assert_valid(&last.body);
    let results = W::last_tool_results(last);
    assert_eq!(results.len(), 2);
    results.iter().for_each(assert_flagged_error);
    assert!(results[0].content.contains("interrupted"));
    assert!(results[1].content.contains("not run"));
}

async fn interrupt_during_streaming_then_new_message_is_valid<W: ProviderWire>() {
    let prefix = W::stalled_prefix(&W::body(&Answer::text(
        "I will think about this for a very long time",
    )));
    let mut r = rig::<W>(vec![Reply::Stall { prefix }]).await;
    r.submit("think");
    r.until(|e| matches!(e, Event::TextDelta { .. })).await;
    r.handle.ops.send(Op::Interrupt).unwrap();
    let events = r.turn_events().await;
    assert!(interrupted(&events), "{events:?}");
    r.server.push(W::text("ok, shorter"));
    r.submit("be brief");
    let events = r.turn_events().await;
    assert_completed(&events);
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 2);
    W::assert_valid(&reqs[1].body);
    // The reply cut by the interrupt stays the model's (what the user saw),
    // so resuming continues it instead of starting over.
    assert_eq!(W::history_len(&reqs[1]), 3, "prompt, partial reply, note");
    let said = W::conversation_texts(&reqs[1]);
    assert!(
        said.iter()
            .any(|t| t == "I will think about this for a very long time"),
        "the partial reply is sent back: {said:?}"
    );
    let texts = W::last_user_texts(&reqs[1]);
    // The interrupt note and the new message make the next user turn.
    assert_eq!(texts, W::user_message(&[INTERRUPTED_NOTE, "be brief"]));
}

async fn a_message_sent_while_running_is_queued_for_the_next_turn<W: ProviderWire>() {
    let mut r = rig::<W>(vec![
        W::reply(Answer::tool(
            "bash",
            json!({"command": "while [ ! -f go ]; do sleep 0.02; done"}),
        )),
        W::text("first done"),
        W::text("second done"),
    ])
    .await;
    r.submit("first");
    r.until(|e| matches!(e, Event::ToolCallBegin { .. })).await;
    r.submit("second");
    // The queue notice proves the engine took the message while the tool ran.
    let seen = r.until(|e| matches!(e, Event::Queued { .. })).await;
    assert!(matches!(seen.last(), Some(Event::Queued { text, .. }) if text == "second"));
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
    assert_eq!(W::last_user_texts(&reqs[2]), W::user_message(&["second"]));
}

async fn an_interrupt_holds_queued_messages_until_the_user_resumes<W: ProviderWire>() {
    let mut r = rig::<W>(vec![W::reply(Answer::tool(
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
    assert!(interrupted(&aborted), "{aborted:?}");
    // The engine goes idle: the queued message does not start a turn by itself.
    let next = tokio::time::timeout(Duration::from_secs(5), r.handle.events.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(next.event, Event::Idle { .. }), "{next:?}");
    r.server.push(W::text("resumed with the README"));
    r.handle.ops.send(Op::Resume).unwrap();
    let resumed = r.turn_events().await;
    assert!(matches!(resumed.last(), Some(Event::TurnComplete { .. })));
    let last = r.server.requests().last().unwrap().clone();
    W::assert_valid(&last.body);
    let texts = W::last_user_texts(&last);
    let joined = texts.join("\n\n");
    let pos = |needle: &str| joined.find(needle);
    assert!(
        pos("interrupted") < pos("also update the README")
            && pos("also update the README") < pos("continue"),
        "the queued message follows the interrupt note and precedes the resume: {texts:?}"
    );
    assert_eq!(
        texts,
        W::user_message(&[INTERRUPTED_NOTE, "also update the README", RESUME_NOTE])
    );
}

async fn first_request_is_small_and_states_every_plan_rule<W: ProviderWire>() {
    let mut r = rig::<W>(vec![W::text("hi")]).await;
    r.submit("Write a greeting script, run it, and add a test.");
    r.turn_events().await;
    let req = &r.server.requests()[0];
    assert!(
        req.raw_len < 8 * 1024,
        "first request body is {} bytes",
        req.raw_len
    );
    let tools = W::tool_specs(req);
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "todo_write",
            "todo_read",
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "grep",
            "web_fetch",
            "job_output",
            "job_kill",
            "task"
        ]
    );
    let desc = &tools[0].1;
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

async fn whitespace_only_text_is_never_sent_back<W: ProviderWire>() {
    let mut r = rig::<W>(vec![
        W::reply(Answer::tool("bash", json!({"command": "true"})).with_text("\n\n")),
        W::text("  \n"),
        W::text("done"),
    ])
    .await;
    r.submit("go");
    r.turn_events().await;
    r.submit("again");
    r.turn_events().await;
    for req in r.server.requests() {
        W::assert_valid(&req.body);
        for text in W::conversation_texts(&req) {
            assert!(!text.trim().is_empty(), "blank text sent: {text:?}");
        }
    }
}

async fn an_error_event_mid_stream_is_retried<W: ProviderWire>() {
    let (_, kind, message) = W::OVERLOADED;
    let broken = W::error_mid_stream(&W::body(&Answer::text("steady answer")), kind, message);
    let mut r = rig::<W>(vec![
        Reply::stream(broken, vec![17]),
        W::text("steady answer"),
    ])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(retry_reasons(&events), [format!("{kind}: {message}")]);
}

async fn a_stream_that_goes_quiet_or_a_silent_server_times_out_and_is_retried<W: ProviderWire>() {
    let prefix = W::stalled_prefix(&W::body(&Answer::text(
        "I will think about this for a long time",
    )));
    let o = ClientOpts {
        idle: Duration::from_millis(300),
        max_retries: 2,
        ..ClientOpts::default()
    };
    let mut r = Rig::<W>::with(
        vec![Reply::Stall { prefix }, Reply::Silent, W::text("finally")],
        AgentConfig::default(),
        o,
    )
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    let reasons = retry_reasons(&events);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].contains("no answer for 0.3 s while streaming"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("no answer for 0.3 s while waiting for the response"),
        "{reasons:?}"
    );
    assert_eq!(r.server.requests().len(), 3);
    // A stall that outlasts every retry ends the turn; the session goes on.
    r.server.push(Reply::Silent);
    r.server.push(Reply::Silent);
    r.server.push(Reply::Silent);
    r.submit("again");
    let message = failure(&r.turn_events().await);
    assert!(message.contains("gave up after 3 attempts"), "{message}");
    r.survives().await;
}

async fn output_printed_before_an_interrupt_reaches_the_model<W: ProviderWire>() {
    let mut r = rig::<W>(vec![W::reply(Answer::tool(
        "bash",
        json!({"command": "echo marker-before-esc; sleep 60"}),
    ))])
    .await;
    r.submit("run it");
    r.until(|e| {
        matches!(e, Event::ToolCallOutputDelta { chunk, .. } if chunk.contains("marker-before-esc"))
    })
    .await;
    r.handle.ops.send(Op::Interrupt).unwrap();
    let events = r.turn_events().await;
    assert!(interrupted(&events), "{events:?}");
    let ends = tool_ends(&events);
    assert_eq!(ends[0].1, ToolStatus::Interrupted);
    assert!(ends[0].2.contains("marker-before-esc"), "{ends:?}");

    r.server.push(W::text("resumed"));
    r.handle.ops.send(Op::Resume).unwrap();
    assert_completed(&r.turn_events().await);
    let reqs = r.server.requests();
    let last = reqs.last().unwrap();
    W::assert_valid(&last.body);
    let results = W::last_tool_results(last);
    assert_eq!(results.len(), 1);
    assert_flagged_error(&results[0]);
    assert!(
        results[0].content.contains("marker-before-esc"),
        "the model sees what was printed: {}",
        results[0].content
    );
}
