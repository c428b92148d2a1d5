//! Compaction (issue 9) end to end: a model client in process that answers
//! from the request it gets (a summary when no tools are offered, the next
//! tool round otherwise) and records every request as the JSON body a wire
//! would carry, so the tests check sizes, pairing and the plan on each one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use waypoint::agent::compact::{PLAN_HEADER, SUMMARY_HEADER};
use waypoint::agent::{Agent, AgentConfig, AgentHandle};
use waypoint::chat::Conversation;
use waypoint::events::{Envelope, Event, Op};
use waypoint::llm::{
    AssistantReply, BoxFuture, ContentBlock, LlmError, ModelClient, ModelRequest, StopReason,
    StreamEvent, Usage,
};
use waypoint::tools::Workspace;

/// What the client does with a summary request.
#[derive(Clone, Copy, PartialEq)]
enum SummaryMode {
    Ok,
    Fail,
    Hang,
}

struct Recorded {
    body: String,
    tools: bool,
    valid: Result<(), String>,
    /// Plan versions the client had written when it sent this.
    plan_version: usize,
}

struct Model {
    rounds: usize,
    mode: SummaryMode,
    /// Answer the first tool request with "prompt is too long".
    too_long_once: bool,
    tool_rounds: AtomicUsize,
    requests: Mutex<Vec<Recorded>>,
    /// Told when the user's summary request hangs (`SummaryMode::Hang`).
    hung: tokio::sync::Notify,
}

const ITEMS: usize = 6;

impl Model {
    fn new(rounds: usize, mode: SummaryMode) -> Self {
        Model {
            rounds,
            mode,
            too_long_once: false,
            tool_rounds: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
            hung: tokio::sync::Notify::new(),
        }
    }

    fn plan(done: usize) -> Value {
        let todos: Vec<Value> = (0..ITEMS)
            .map(|i| {
                let status = if i < done {
                    "completed"
                } else if i == done {
                    "in_progress"
                } else {
                    "pending"
                };
                json!({"id": format!("{}", i + 1), "content": format!("Step {} of the long task", i + 1),
                       "status": status, "activeForm": format!("Doing step {}", i + 1)})
            })
            .collect();
        json!({ "todos": todos })
    }

    fn reply(&self, request: &ModelRequest<'_>) -> Result<AssistantReply, LlmError> {
        let body = json!({
            "system": request.system,
            "messages": request.messages,
            "tools": request.tools,
            "max_tokens": request.max_tokens,
        })
        .to_string();
        let tokens = (body.len() / 4) as u64;
        let tools = !request.tools.is_empty();
        let round = self.tool_rounds.load(Ordering::SeqCst);
        let plan_version = if round == 0 { 0 } else { (round - 1) / 10 + 1 };
        self.requests.lock().unwrap().push(Recorded {
            body,
            tools,
            valid: Conversation::from_messages(request.messages.to_vec()).validate(),
            plan_version,
        });
        let usage = Usage {
            input_tokens: tokens,
            output_tokens: 10,
            ..Usage::default()
        };
        if !tools {
            return match self.mode {
                SummaryMode::Ok => Ok(AssistantReply {
                    content: vec![ContentBlock::Text {
                        text: format!("Work so far: {round} rounds of echo; all commands worked."),
                    }],
                    stop_reason: StopReason::EndTurn,
                    usage,
                    invalid_inputs: Vec::new(),
                }),
                SummaryMode::Fail | SummaryMode::Hang => Err(LlmError::Http {
                    status: 529,
                    message: "overloaded".into(),
                }),
            };
        }
        if self.too_long_once
            && round == 1
            && !self.requests.lock().unwrap().iter().any(|r| !r.tools)
        {
            // As a wire classifies it (see llm::too_long).
            return Err(LlmError::ContextTooLong(
                "prompt is too long: 210000 tokens > 200000 maximum".into(),
            ));
        }
        let n = self.tool_rounds.fetch_add(1, Ordering::SeqCst);
        let content = if n > self.rounds {
            vec![ContentBlock::Text {
                text: "All done.".into(),
            }]
        } else if n.is_multiple_of(10) {
            vec![ContentBlock::ToolUse {
                id: format!("t{n}"),
                name: "todo_write".into(),
                input: Model::plan((n / 10).min(ITEMS)).into(),
            }]
        } else {
            vec![ContentBlock::ToolUse {
                id: format!("t{n}"),
                name: "bash".into(),
                input: json!({"command": format!("head -c 2400 /dev/zero | tr '\\0' x; echo ' round {n}'")}).into(),
            }]
        };
        let stop_reason = if n > self.rounds {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        Ok(AssistantReply {
            content,
            stop_reason,
            usage,
            invalid_inputs: Vec::new(),
        })
    }
}

impl ModelClient for Model {
    fn model(&self) -> &str {
        "loop-model"
    }
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        _on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>> {
        Box::pin(async move {
            let asked_by_user = serde_json::to_string(request.messages)
                .unwrap()
                .contains("the echo rounds");
            if request.tools.is_empty() && self.mode == SummaryMode::Hang && asked_by_user {
                let body = serde_json::to_string(request.messages).unwrap();
                self.requests.lock().unwrap().push(Recorded {
                    body,
                    tools: false,
                    valid: Ok(()),
                    plan_version: 0,
                });
                self.hung.notify_one();
                std::future::pending::<()>().await;
            }
            self.reply(request)
        })
    }
}

fn config(window: u64) -> AgentConfig {
    AgentConfig {
        system_prompt: "You are a test agent.".into(),
        max_tokens: 1000,
        nag_every: 0,
        max_rounds: 200,
        context_window: Some(window),
        ..AgentConfig::default()
    }
}

fn start(model: Arc<Model>, window: u64) -> (AgentHandle, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let handle = Agent::builder(model, ws)
        .config(config(window))
        .spawn()
        .unwrap();
    (handle, dir)
}

async fn until_idle(events: &mut UnboundedReceiver<Envelope>, after_turn: bool) -> Vec<Event> {
    let mut seen = Vec::new();
    let mut turn_done = !after_turn;
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the engine went quiet")
            .expect("the engine stopped")
            .event;
        match &ev {
            Event::TurnComplete { .. } | Event::TurnAborted { .. } => turn_done = true,
            Event::Idle { .. } if turn_done => {
                seen.push(ev);
                return seen;
            }
            _ => {}
        }
        seen.push(ev);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_rounds_in_an_8k_window_keep_the_plan_and_the_contract() {
    let model = Arc::new(Model::new(60, SummaryMode::Ok));
    let (handle, _dir) = start(model.clone(), 8000);
    let mut events = handle.events;
    until_idle(&mut events, false).await;
    handle
        .ops
        .send(Op::Submit {
            text: "Do the long task in six steps.".into(),
        })
        .unwrap();
    let seen = until_idle(&mut events, true).await;
    assert!(
        seen.iter().any(|e| matches!(e, Event::TurnComplete { .. })),
        "{:?}",
        seen.iter().rev().take(5).collect::<Vec<_>>()
    );

    let ends: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            Event::CompactionEnd {
                before_tokens,
                after_tokens,
                fallback,
            } => Some((*before_tokens, *after_tokens, *fallback)),
            _ => None,
        })
        .collect();
    eprintln!("compactions (before, after, fallback): {ends:?}");
    assert!(ends.len() >= 3, "compactions: {ends:?}");
    assert!(ends.iter().all(|(b, a, f)| a < b && !f), "{ends:?}");
    assert!(
        seen.iter()
            .any(|e| matches!(e, Event::ContextUsage { window: 8000, .. }))
    );
    // Every request is counted, the summaries' included: one usage report
    // each, and the totals are the sum of all of them.
    let usages: Vec<(u64, u64)> = seen
        .iter()
        .filter_map(|e| match e {
            Event::Usage {
                request, totals, ..
            } => Some((request.input_tokens, totals.input_tokens)),
            _ => None,
        })
        .collect();
    let (sent, summaries, sum) = {
        let requests = model.requests.lock().unwrap();
        let sum: u64 = requests.iter().map(|r| (r.body.len() / 4) as u64).sum();
        (
            requests.len(),
            requests.iter().filter(|r| !r.tools).count(),
            sum,
        )
    };
    assert!(summaries >= 3, "{summaries} summaries");
    assert_eq!(usages.len(), sent, "one usage report per request");
    assert_eq!(
        usages.last().map(|u| u.1),
        Some(sum),
        "totals include the summaries"
    );

    let rendered: Vec<String> = seen
        .iter()
        .filter_map(|e| match e {
            Event::PlanUpdated { rendered, .. } => Some(rendered.clone()),
            _ => None,
        })
        .collect();
    let requests = model.requests.lock().unwrap();
    let mut after_summary = false;
    let mut checked = 0;
    for (i, r) in requests.iter().enumerate() {
        assert!(
            r.body.len() / 4 < 8000,
            "request {i} is {} tokens",
            r.body.len() / 4
        );
        assert_eq!(r.valid, Ok(()), "request {i}");
        if !r.tools {
            after_summary = true;
            continue;
        }
        if after_summary {
            after_summary = false;
            assert!(r.body.contains(&json_str(SUMMARY_HEADER)), "request {i}");
            let plan = &rendered[r.plan_version - 1];
            let block = json_str(&format!("{PLAN_HEADER}\n\n{plan}"));
            assert!(r.body.contains(&block), "request {i} lacks the plan {plan}");
            checked += 1;
        }
    }
    assert!(checked >= 3);
    let largest = requests.iter().map(|r| r.body.len() / 4).max().unwrap();
    eprintln!(
        "{} requests, the largest {largest} tokens (bytes/4)",
        requests.len()
    );
    // The final plan is complete.
    let last = seen
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::PlanUpdated { items, .. } => Some(items.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(last.len(), ITEMS);
    assert!(
        last.iter().all(|i| i.status.to_string() == "completed"),
        "{last:?}"
    );
}

/// `s` as it appears inside a JSON string (without the quotes).
fn json_str(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap();
    q[1..q.len() - 1].to_string()
}

async fn run_with(mode: SummaryMode) -> (Vec<Event>, Arc<Model>) {
    let model = Arc::new(Model::new(15, mode));
    let (handle, _dir) = start(model.clone(), 8000);
    let mut events = handle.events;
    until_idle(&mut events, false).await;
    handle
        .ops
        .send(Op::Submit {
            text: "Do the task.".into(),
        })
        .unwrap();
    let mut seen = until_idle(&mut events, true).await;
    // Now compact by hand while idle; a hanging summary is interrupted.
    handle
        .ops
        .send(Op::Compact {
            focus: Some("the echo rounds".into()),
        })
        .unwrap();
    if mode == SummaryMode::Hang {
        // Interrupted once the summary request hangs at the model.
        tokio::time::timeout(Duration::from_secs(30), model.hung.notified())
            .await
            .expect("the summary request did not reach the model in 30 s");
        handle.ops.send(Op::Interrupt).unwrap();
    }
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .unwrap()
            .unwrap()
            .event;
        let end = matches!(ev, Event::CompactionEnd { .. });
        seen.push(ev);
        if end {
            break;
        }
    }
    (seen, model)
}

fn compactions(seen: &[Event]) -> Vec<bool> {
    seen.iter()
        .filter_map(|e| match e {
            Event::CompactionEnd { fallback, .. } => Some(*fallback),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_summary_falls_back_to_dropping_old_outputs() {
    let (seen, model) = run_with(SummaryMode::Fail).await;
    let c = compactions(&seen);
    assert!(!c.is_empty() && c.iter().all(|f| *f), "{c:?}");
    assert!(seen.iter().any(|e| matches!(e, Event::TurnComplete { .. })));
    let requests = model.requests.lock().unwrap();
    assert!(
        requests
            .iter()
            .all(|r| r.valid.is_ok() && r.body.len() / 4 < 8000)
    );
    assert!(
        requests
            .iter()
            .any(|r| r.tools && r.body.contains("[output dropped to fit the context window"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_summary_falls_back() {
    let (seen, _model) = run_with(SummaryMode::Hang).await;
    let c = compactions(&seen);
    assert_eq!(c.last(), Some(&true), "{c:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_too_long_compacts_once_and_retries() {
    let mut m = Model::new(3, SummaryMode::Ok);
    m.too_long_once = true;
    let model = Arc::new(m);
    let (handle, _dir) = start(model.clone(), 100_000);
    let mut events = handle.events;
    until_idle(&mut events, false).await;
    handle
        .ops
        .send(Op::Submit {
            text: "Do the task.".into(),
        })
        .unwrap();
    let seen = until_idle(&mut events, true).await;
    let begins = seen
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::CompactionBegin {
                    reason: waypoint::events::CompactReason::TooLong
                }
            )
        })
        .count();
    assert_eq!(begins, 1);
    assert!(seen.iter().any(|e| matches!(e, Event::TurnComplete { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_mid_turn_waits_for_the_next_round() {
    let model = Arc::new(Model::new(5, SummaryMode::Ok));
    let (handle, _dir) = start(model.clone(), 100_000);
    let mut events = handle.events;
    until_idle(&mut events, false).await;
    handle
        .ops
        .send(Op::Submit {
            text: "Do the task.".into(),
        })
        .unwrap();
    handle.ops.send(Op::Compact { focus: None }).unwrap();
    let seen = until_idle(&mut events, true).await;
    let begin = seen
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::CompactionBegin {
                    reason: waypoint::events::CompactReason::User
                }
            )
        })
        .expect("compacted");
    let end = seen
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::CompactionEnd {
                    fallback: false,
                    ..
                }
            )
        })
        .unwrap();
    // At a round boundary: between RoundStarted and that round's tools.
    assert!(matches!(seen[begin - 1], Event::RoundStarted { .. }));
    assert!(end > begin);
    assert!(seen.iter().any(|e| matches!(e, Event::TurnComplete { .. })));
    let requests = model.requests.lock().unwrap();
    assert!(requests.iter().all(|r| r.valid.is_ok()));
    assert_eq!(requests.iter().filter(|r| !r.tools).count(), 1);
}
