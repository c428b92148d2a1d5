//! End-to-end engine tests of the OpenAI-compatible provider against a real
//! HTTP server on 127.0.0.1 that streams Chat Completions chunks. Invariant
//! checked throughout: every request is a valid Chat Completions request and
//! the session survives every failure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_openai;
mod engine_support;
mod loopback;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common_openai::*;
use engine_support::*;
use serde_json::{Value, json};
use waypoint::agent::{Agent, AgentConfig, reminders::INITIAL_REMINDER};
use waypoint::events::{ErrorKind, Event, Op, StopReason, ToolStatus};
use waypoint::llm::openai::{OpenAiClient, OpenAiConfig};
use waypoint::llm::retry::RetryPolicy;
use waypoint::llm::{ContentBlock, Message, ModelClient, ModelRequest, Role, StreamEvent};
use waypoint::tools::Workspace;

const SPLITS: [usize; 7] = [1, 2, 3, 4, 5, 6, 7];

#[derive(Clone)]
struct Opts {
    key: Option<&'static str>,
    model: &'static str,
    max_retries: u32,
    idle: Duration,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            key: Some("test-key"),
            model: "gpt-test",
            max_retries: 3,
            idle: Duration::from_secs(10),
        }
    }
}

fn client(url: &str, o: &Opts) -> OpenAiClient {
    OpenAiClient::new(OpenAiConfig {
        api_key: o.key.map(str::to_string),
        base_url: url.into(),
        model: o.model.into(),
        retry: RetryPolicy {
            max_retries: o.max_retries,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(5),
        },
        idle_timeout: o.idle,
    })
    .expect("client")
}

type Rig = engine_support::Rig<OpenAi>;

async fn rig_with(replies: Vec<Reply>, o: Opts) -> Rig {
    Rig::start(replies, AgentConfig::default(), |url| {
        Arc::new(client(url, &o))
    })
    .await
}

async fn rig(replies: Vec<Reply>) -> Rig {
    rig_with(replies, Opts::default()).await
}

impl Rig {
    /// After a failed turn: the service is back, the user resumes, the turn completes.
    async fn survives(&mut self) {
        self.server.push(chat(Turn::text("back")));
        self.handle.ops.send(Op::Resume).unwrap();
        let events = self.turn_events().await;
        assert_completed(&events);
        assert_valid_chat_request(&self.server.requests().last().unwrap().body);
    }
}

#[tokio::test]
async fn multi_turn_task_with_parallel_calls_and_awkward_splits() {
    let content = "alpha \"quoted\" \\ back\n\tünïcode 😀 — end\n";
    let mut r = rig(vec![
        chat_split(
            Turn::tool(
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
        chat_split(
            Turn::tool(
                "write_file",
                json!({"path": "notes/a.txt", "content": content}),
            )
            .pieces(1, false),
            SPLITS.to_vec(),
        ),
        // Two parallel calls, their argument pieces interleaved.
        chat_split(
            Turn::tool(
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
        chat_split(
            Turn::tool(
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
        chat_split(Turn::text("All done: notes/a.txt ✓"), SPLITS.to_vec()),
    ])
    .await;
    r.submit("make notes");
    let events = r.turn_events().await;

    assert!(
        matches!(
            events.last(),
            Some(Event::TurnComplete { open_items: 0, stop_reason, .. }) if *stop_reason == StopReason::EndTurn
        ),
        "{events:?}"
    );
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
    assert!(ends[3].2.contains("a.txt"), "ls output: {}", ends[3].2);

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
    // The bash call ran after the plan change of the same reply.
    assert_eq!(
        plan_item_of(&events, "bash"),
        Some(Some("List files".to_string()))
    );
    assert_eq!(streamed_text(&events), "Planning. All done: notes/a.txt ✓");

    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 5);
    for req in &reqs {
        assert_valid_chat_request(&req.body);
        assert_eq!(req.path, "/v1/chat/completions");
        assert_eq!(req.header("authorization"), Some("Bearer test-key"));
        assert_eq!(req.body["model"], "gpt-test");
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["stream_options"], json!({"include_usage": true}));
        assert_eq!(req.body["max_tokens"], 8192);
        let tools = req.body["tools"].as_array().unwrap();
        assert!(tools.iter().all(|t| t["type"] == "function"
            && t["function"]["name"].is_string()
            && t["function"]["parameters"]["type"] == "object"));
    }
    assert_eq!(
        reqs[0].messages()[1]["content"],
        format!("make notes\n\n{INITIAL_REMINDER}")
    );
    // The parallel calls are echoed back and answered in order.
    let msgs = reqs[3].messages();
    let assistant = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    let calls = assistant["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1]["function"]["name"], "bash");
    assert_eq!(
        calls[1]["function"]["arguments"],
        json!({"command": "ls notes"}).to_string()
    );
    let answers = reqs[3].last_tool_messages();
    assert_eq!(answers.len(), 2);
    assert!(
        answers[0]["content"]
            .as_str()
            .unwrap()
            .contains("(1/3 completed)")
    );
    assert!(answers[1]["content"].as_str().unwrap().contains("a.txt"));
    assert_eq!(last_usage(&events), Some((500, 210)));
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
async fn a_stream_cut_before_finish_is_retried_and_no_tool_runs_twice() {
    let turn = Turn::tool("bash", json!({"command": "echo ran >> log.txt"}))
        .with_text("Running it.")
        .pieces(4, false);
    let body = chat_body(&turn);
    // Mid-event, inside the last argument piece, before any finish_reason.
    let finish = body.find("finish_reason\":\"tool_calls").expect("finish");
    let cut = body[..finish].rfind("data:").unwrap() - 10;
    let mut r = rig(vec![
        Reply::Sse {
            body: body.clone(),
            chunk_sizes: vec![9],
            cut_after: Some(cut),
        },
        Reply::stream(body, vec![13]),
        chat(Turn::text("ok")),
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
            || reasons[0].contains("read error"),
        "{reasons:?}"
    );
    assert_eq!(
        count(&events, |e| matches!(e, Event::ToolCallBegin { .. })),
        1
    );
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].body, reqs[1].body, "the retry resends the request");
    assert_valid_chat_request(&reqs[2].body);
}

#[tokio::test]
async fn unauthorized_names_the_key_and_is_not_retried() {
    let mut r = rig(vec![error_reply(
        401,
        "invalid_request_error",
        "Incorrect API key provided: sk-xx",
    )])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("401")
            && message.contains("Incorrect API key")
            && message.contains("OPENAI_API_KEY"),
        "{message}"
    );
    assert_eq!(r.server.requests().len(), 1);
    assert!(retry_reasons(&events).is_empty());
    r.survives().await;
}

#[tokio::test]
async fn unknown_model_names_the_model_and_url_and_is_not_retried() {
    let o = Opts {
        model: "qwen-nope",
        key: None,
        ..Opts::default()
    };
    let mut r = rig_with(
        vec![error_reply(
            404,
            "api_error",
            "model \"qwen-nope\" not found, try pulling it first",
        )],
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
async fn connection_refused_is_bounded_and_clear_then_the_session_goes_on() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let o = Opts {
        max_retries: 1,
        ..Opts::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut handle = Agent::spawn(
        Arc::new(client(&format!("http://{addr}/v1"), &o)),
        Workspace::new(dir.path()).unwrap(),
        AgentConfig::default(),
    );
    handle.ops.send(Op::Submit { text: "hi".into() }).unwrap();
    let events = next_turn(&mut handle.events).await;
    let message = failure(&events);
    assert!(
        message.contains("gave up after 2 attempts") && message.contains("could not reach"),
        "{message}"
    );
    assert_eq!(retry_reasons(&events).len(), 1);
    // The server comes up on that port; resuming works.
    let server = FakeServer::start_on(&addr.to_string(), vec![chat(Turn::text("up"))]).await;
    handle.ops.send(Op::Resume).unwrap();
    let events = next_turn(&mut handle.events).await;
    assert_completed(&events);
    assert_valid_chat_request(&server.requests()[0].body);
}

#[tokio::test]
async fn a_proxy_html_page_is_retried_then_reported_clearly() {
    let html = || {
        Reply::Status {
        code: 502,
        headers: vec![("content-type".into(), "text/html".into())],
        body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>".into(),
    }
    };
    let o = Opts {
        max_retries: 2,
        ..Opts::default()
    };
    let mut r = rig_with(vec![html(), html(), html()], o).await;
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

#[tokio::test]
async fn rate_limit_429_honours_retry_after() {
    let mut r = rig(vec![
        Reply::Status {
            code: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}).to_string(),
        },
        chat(Turn::text("hello")),
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
    assert!(started.elapsed() >= Duration::from_millis(1000));
    assert_eq!(r.server.requests().len(), 2);
}

#[tokio::test]
async fn a_long_overload_gives_up_after_bounded_retries() {
    let busy = || error_reply(503, "server_error", "The server is overloaded");
    let o = Opts {
        max_retries: 3,
        ..Opts::default()
    };
    let mut r = rig_with(vec![busy(), busy(), busy(), busy(), busy()], o).await;
    r.submit("hi");
    let events = r.turn_events().await;
    let message = failure(&events);
    assert!(
        message.contains("gave up after 4 attempts")
            && message.contains("503")
            && message.contains("overloaded"),
        "{message}"
    );
    assert_eq!(retry_reasons(&events).len(), 3);
    assert_eq!(r.server.requests().len(), 4);
    // One scripted 503 is left: the resumed turn retries past it.
    r.survives().await;
}

#[tokio::test]
async fn a_stream_that_goes_quiet_times_out_and_is_retried() {
    let prefix = {
        let body = chat_body(&Turn::text("I will think about this for a long time"));
        body[..body.find("finish_reason\":\"stop").unwrap()].to_string()
    };
    let prefix = prefix[..prefix.rfind("data:").unwrap()].to_string();
    let o = Opts {
        idle: Duration::from_millis(300),
        max_retries: 2,
        ..Opts::default()
    };
    let mut r = rig_with(
        vec![
            Reply::Stall { prefix },
            Reply::Silent,
            chat(Turn::text("finally")),
        ],
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
        reasons[1].contains("waiting for the response"),
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

#[tokio::test]
async fn an_error_chunk_mid_stream_is_retried() {
    let full = chat_body(&Turn::text("steady answer"));
    let cut = full.find("finish_reason\":\"stop").unwrap();
    let cut = full[..cut].rfind("data:").unwrap();
    let broken = format!(
        "{}data: {}\n\n",
        &full[..cut],
        json!({"error": {"message": "That model is currently overloaded with other requests.", "type": "server_error", "param": null, "code": null}})
    );
    let mut r = rig(vec![
        Reply::stream(broken, vec![17]),
        chat(Turn::text("steady answer")),
    ])
    .await;
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert_eq!(
        retry_reasons(&events),
        ["server_error: That model is currently overloaded with other requests."]
    );
}

#[tokio::test]
async fn invalid_json_arguments_get_an_error_result_and_the_loop_recovers() {
    let bad = Turn::tool("bash", Value::String(r#"{"command": "echo hi"#.into()))
        .with_tool("write_file", json!({"path": "ok.txt", "content": "fine"}))
        .pieces(3, true);
    let mut r = rig(vec![
        chat_split(bad, vec![4, 1, 6]),
        chat(Turn::tool("bash", json!({"command": "echo hi"}))),
        chat(Turn::text("sorry, fixed")),
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
    let reqs = r.server.requests();
    for q in &reqs {
        assert_valid_chat_request(&q.body);
    }
    let answers = reqs[1].last_tool_messages();
    assert_eq!(answers.len(), 2);
    assert!(
        answers[0]["content"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    // The broken call is echoed back with `{}` so the request stays valid.
    let assistant = &reqs[1].messages()[2];
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], "{}");
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
    let c = client(&server.url, &Opts::default());
    let messages = vec![Message {
        role: Role::User,
        content: vec![ContentBlock::Text { text: "hi".into() }],
    }];
    let req = ModelRequest {
        system: "sys",
        messages: &messages,
        tools: &[],
        max_tokens: 100,
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
        let o = Opts {
            key,
            ..Opts::default()
        };
        let c = client(&server.url, &o);
        let messages = vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: "hi".into() }],
        }];
        let req = ModelRequest {
            system: "",
            messages: &messages,
            tools: &[],
            max_tokens: 10,
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
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Error {
            kind: ErrorKind::TextToolCall,
            ..
        }
    )));
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
