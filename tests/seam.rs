//! The seam between the engine and its drivers: every `Op` and `Event`
//! round-trips through JSON, every op gets the same answer whatever the
//! engine is doing, and the engine's client factory switches models.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use engine_support::*;
use serde_json::json;
use waypoint::agent::{AgentConfig, ClientFactory, ModelChoice};
use waypoint::events::{
    AbortReason, ApprovalMode, ApprovalReason, Decision, Envelope, ErrorKind, Event, Failure,
    McpStatus, Op, Refuser, StopReason, ThreadId, ToolDetail, ToolOutcome, ToolStatus, ToolSummary,
};
use waypoint::llm::ModelClient;
use waypoint::llm::anthropic::{AnthropicClient, AnthropicConfig};
use waypoint::llm::retry::RetryPolicy;
use waypoint::todo::PlanEdit;
use waypoint::todo::{PlanDiff, TodoItem, TodoStatus};

type Rig = engine_support::Rig<Anthropic>;

fn client(url: &str, model: &str) -> Arc<dyn ModelClient> {
    Arc::new(
        AnthropicClient::new(AnthropicConfig {
            api_key: "test-key".into(),
            base_url: url.into(),
            model: model.into(),
            retry: RetryPolicy {
                max_retries: 0,
                base_delay: Duration::from_millis(20),
                max_delay: Duration::from_secs(1),
            },
            idle_timeout: Duration::from_secs(10),
        })
        .expect("client"),
    )
}

#[test]
fn every_op_and_event_round_trips_through_json() {
    let ops = sample_ops();
    assert_covers::<Op>(&ops, "op");
    for op in ops {
        let text = serde_json::to_string(&op).unwrap();
        assert_eq!(serde_json::from_str::<Op>(&text).unwrap(), op, "{text}");
    }
    let events = sample_events();
    assert_covers::<Event>(&events, "type");
    let outcomes: Vec<ToolOutcome> = vec![
        ToolOutcome::Ok,
        ToolOutcome::Failed {
            failure: Failure::TimedOut,
        },
        ToolOutcome::Refused {
            by: Refuser::Plan,
            reason: "two in progress".into(),
        },
        ToolOutcome::Interrupted { partial: true },
        ToolOutcome::SandboxBlocked {
            what: "/etc".into(),
        },
        ToolOutcome::NotRun,
    ];
    assert_covers::<ToolOutcome>(&outcomes, "kind");
    for outcome in outcomes {
        let text = serde_json::to_string(&outcome).unwrap();
        assert_eq!(serde_json::from_str::<ToolOutcome>(&text).unwrap(), outcome);
    }
    for ev in events {
        let text = serde_json::to_string(&ev).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), ev, "{text}");
        // In its envelope, of the root thread and of a child's.
        for envelope in [
            Envelope::root(3, ev.clone()),
            Envelope {
                thread: ThreadId(2),
                parent_call: Some("toolu_9".into()),
                turn: 1,
                event: ev.clone(),
            },
        ] {
            let text = serde_json::to_string(&envelope).unwrap();
            assert_eq!(
                serde_json::from_str::<Envelope>(&text).unwrap(),
                envelope,
                "{text}"
            );
            // As a transcript line, read by the session's own reader.
            let record = waypoint::session::Record::event(&envelope, 7);
            let line = serde_json::to_string(&record).unwrap();
            assert_eq!(
                waypoint::session::Record::from_line(line.as_bytes()).unwrap(),
                record,
                "{line}"
            );
        }
    }
    // The shapes a jsonl reader sees.
    let text = serde_json::to_value(Event::TurnComplete {
        stop_reason: StopReason::EndTurn,
        open_items: 0,
    })
    .unwrap();
    assert_eq!(
        text,
        json!({"type": "turn_complete", "stop_reason": "end_turn", "open_items": 0})
    );
    let text = serde_json::to_value(Event::Error {
        kind: ErrorKind::RateLimited,
        message: "m".into(),
    })
    .unwrap();
    assert_eq!(
        text,
        json!({"type": "error", "kind": "rate_limited", "message": "m"})
    );
}

/// One op of each kind (and of some of their forms), as drivers send them.
pub fn sample_ops() -> Vec<Op> {
    vec![
        Op::Submit { text: "hi".into() },
        Op::Attach {
            images: vec![waypoint::chat::ImageSource {
                kind: "base64".into(),
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }],
        },
        Op::Interrupt,
        Op::Resume,
        Op::ReloadSettings,
        Op::SetModel {
            provider: Some("openai".into()),
            model: "gpt-x".into(),
        },
        Op::SetModel {
            provider: None,
            model: "claude-y".into(),
        },
        Op::NewSession,
        Op::Quit,
        Op::Compact {
            focus: Some("the parser".into()),
        },
        Op::Compact { focus: None },
        Op::Checkpoint {
            action: waypoint::events::CheckpointOp::Undo {
                target: waypoint::checkpoint::Target::Item { id: "2".into() },
                files: true,
                conversation: false,
                confirm: false,
            },
        },
        Op::Checkpoint {
            action: waypoint::events::CheckpointOp::Diff { since: Some(3) },
        },
        Op::OpenSession { id: "3f2a".into() },
        Op::Approve {
            id: "t1".into(),
            decision: Decision::Refuse {
                reason: Some("not now".into()),
            },
        },
        Op::Approve {
            id: "t2".into(),
            decision: Decision::Always,
        },
        Op::SetApproval {
            mode: ApprovalMode::AutoEdit,
        },
        Op::ApprovePlan {
            mode: Some(ApprovalMode::Auto),
            fresh: true,
            items: None,
        },
        Op::ApprovePlan {
            mode: None,
            fresh: false,
            items: Some(vec![waypoint::todo::TodoItem {
                id: String::new(),
                content: "Write the parser".into(),
                status: waypoint::todo::TodoStatus::Pending,
                active_form: "Write the parser".into(),
                scope: waypoint::todo::ItemScope {
                    files: vec!["src/parser/**".into()],
                    commands: vec!["cargo test".into()],
                    check: Some("cargo test -p parser".into()),
                },
            }]),
        },
        Op::Mcp {
            action: waypoint::events::McpAction::Approve,
        },
        Op::ApproveHooks,
        Op::Goal {
            action: waypoint::events::GoalAction::Set {
                goal: goal_sample(),
            },
        },
        Op::Goal {
            action: waypoint::events::GoalAction::Accept { n: 2 },
        },
        Op::Goal {
            action: waypoint::events::GoalAction::Pause,
        },
        Op::Mcp {
            action: waypoint::events::McpAction::SkipWait,
        },
        Op::Mcp {
            action: waypoint::events::McpAction::Reconnect {
                name: "docs".into(),
            },
        },
        Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: PlanEdit::Add {
                after: Some(1),
                text: "Write the docs".into(),
            },
        },
    ]
}

/// One event of each kind, as the engine sends them.
pub fn sample_events() -> Vec<Event> {
    let item = TodoItem {
        id: "1".into(),
        content: "Run tests".into(),
        status: TodoStatus::InProgress,
        active_form: "Running tests".into(),
        scope: Default::default(),
    };
    vec![
        Event::TurnStarted { resumed: true },
        Event::RoundStarted { round: 2 },
        Event::TextDelta { text: "x".into() },
        Event::ReasoningDelta { text: "why".into() },
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "cut".into(),
        },
        Event::ToolCallBegin {
            id: "t1".into(),
            name: "edit_file".into(),
            summary: ToolSummary {
                line: "a.rs".into(),
                detail: ToolDetail::Diff {
                    path: "a.rs".into(),
                    old: "a".into(),
                    new: "b".into(),
                    first: 12,
                },
            },
            input: json!({"path": "a.rs"}),
            plan_item_id: Some("1".into()),
            plan_item: Some("Run tests".into()),
        },
        Event::ToolCallBegin {
            id: "t2".into(),
            name: "todo_write".into(),
            summary: ToolSummary {
                line: "1 item".into(),
                detail: ToolDetail::Plan,
            },
            input: json!({}),
            plan_item_id: None,
            plan_item: None,
        },
        Event::ToolCallOutputDelta {
            id: "t1".into(),
            chunk: "out".into(),
        },
        Event::ToolCallProgress {
            id: "t1".into(),
            message: "3 of 5 files".into(),
        },
        Event::ToolCallEnd {
            id: "t1".into(),
            name: "bash".into(),
            status: ToolStatus::Interrupted,
            outcome: waypoint::events::ToolOutcome::Interrupted { partial: true },
            duration_ms: 3,
            output: "o".into(),
            exit_code: Some(3),
        },
        Event::PlanUpdated {
            items: vec![item],
            rendered: "[>] Run tests <- Running tests".into(),
            diff: PlanDiff {
                added: vec!["Run tests".into()],
                ..PlanDiff::default()
            },
            revision: 3,
            author: waypoint::todo::Author::User,
            at: 1_700_000_000_000,
            note: Some("added \"Run tests\"".into()),
        },
        Event::PlanProposed { revision: 2 },
        Event::GoalSet {
            goal: goal_sample(),
        },
        Event::GoalUpdated {
            report: waypoint::events::GoalReport {
                goal: goal_sample(),
                state: waypoint::events::GoalState::BudgetLimited,
                reason: Some("its budget ran out".into()),
                spent: waypoint::events::Spent {
                    tokens: 2_000_100,
                    cost_usd: 0.5,
                    seconds: 300,
                    turns: 12,
                },
                items: vec![waypoint::events::goal::ReportItem {
                    id: "1".into(),
                    content: "Fix the parser".into(),
                    status: waypoint::todo::TodoStatus::Completed,
                    evidence: "verified".into(),
                    check: Some(evidence_sample()),
                }],
                check: None,
            },
        },
        Event::GoalBudget {
            share: 80,
            limit: "tokens".into(),
        },
        Event::ItemChecked {
            n: 1,
            evidence: evidence_sample(),
        },
        Event::PlanChangeRequested {
            lines: vec!["+ Add docs".into()],
        },
        Event::PlanChangeAccepted {
            lines: vec!["~ A -> B".into()],
            asked: true,
        },
        Event::PlanChangeRefused {
            lines: vec!["- Test it".into()],
        },
        Event::PlanApproved {
            revision: 3,
            mode: ApprovalMode::Ask,
            fresh: false,
        },
        Event::TaskDone {
            id: "toolu_7".into(),
            child: waypoint::events::ThreadId(2),
            item: Some("3".into()),
            model: "claude-test".into(),
            usage: waypoint::chat::Usage::uncached(100, 42),
            tool_calls: 3,
            duration_ms: 1200,
        },
        Event::Usage {
            model: "claude-test".into(),
            request: waypoint::chat::Usage {
                input_tokens: 1,
                output_tokens: 2,
                cache_read_tokens: 5,
                cache_write_tokens: 6,
            },
            totals: waypoint::chat::Usage {
                input_tokens: 3,
                output_tokens: 4,
                cache_read_tokens: 7,
                cache_write_tokens: 8,
            },
        },
        Event::ContextUsage {
            used: 61_000,
            window: 200_000,
        },
        Event::CompactionBegin {
            reason: waypoint::events::CompactReason::TooLong,
        },
        Event::SummaryDelta {
            text: "Decisions: …".into(),
        },
        Event::CompactionEnd {
            before_tokens: 171_000,
            after_tokens: 14_000,
            fallback: false,
        },
        Event::Queued {
            text: "next".into(),
        },
        Event::TurnComplete {
            stop_reason: StopReason::MaxTokens,
            open_items: 1,
        },
        Event::TurnComplete {
            stop_reason: StopReason::Other("pause_turn".into()),
            open_items: 0,
        },
        Event::TurnAborted {
            reason: AbortReason::Failed,
            message: "HTTP 401".into(),
            error: Some(ErrorKind::Auth),
        },
        Event::TurnAborted {
            reason: AbortReason::MaxTurns,
            message: "stopped".into(),
            error: None,
        },
        Event::Error {
            kind: ErrorKind::EmptyMessage,
            message: "empty".into(),
        },
        Event::Checkpoint {
            answer: waypoint::events::CheckpointAnswer::Done {
                report: "Undo item \"Add tests\": 1 file (+1 −2)".into(),
                item: Some("3".into()),
            },
        },
        Event::ModelChanged {
            provider: "anthropic".into(),
            model: "claude-y".into(),
        },
        Event::SessionReset,
        Event::McpServer {
            name: "everything".into(),
            status: McpStatus::Failed {
                error: "did not initialize".into(),
                stderr: "missing token".into(),
            },
        },
        Event::McpServer {
            name: "docs".into(),
            status: McpStatus::Slow { after_ms: 10_000 },
        },
        Event::McpServer {
            name: "db".into(),
            status: McpStatus::NeedsApproval {
                command: "npx -y db-server".into(),
            },
        },
        Event::McpWait {
            wait: waypoint::events::McpWait::Waiting {
                names: vec!["docs".into(), "db".into()],
            },
        },
        Event::McpWait {
            wait: waypoint::events::McpWait::Over {
                skipped: false,
                failed: vec!["everything".into()],
                starting: vec!["docs".into()],
            },
        },
        Event::McpTools {
            offered: 1,
            deferred: 412,
            tokens: 90_000,
            budget: 20_000,
        },
        Event::Jobs {
            jobs: vec![waypoint::events::JobInfo {
                id: 1,
                command: "npm run dev".into(),
                ended: None,
            }],
        },
        Event::Catalog {
            entries: vec![waypoint::events::CatalogEntry {
                name: "fix-issue".into(),
                hint: Some("NUMBER".into()),
                description: "Fix a numbered issue".into(),
                skill: false,
            }],
        },
        Event::Hooks {
            active: vec!["PreToolUse Bash 60s ./check.sh (config.toml)".into()],
            waiting: vec!["Stop: make lint".into()],
        },
        Event::Hook {
            report: waypoint::events::HookReport {
                event: "ItemCompleting".into(),
                command: "cargo test".into(),
                subject: Some("Add tests".into()),
                result: waypoint::events::HookResult::Blocked,
                exit_code: Some(2),
                duration_ms: 1200,
                message: Some("2 tests failed".into()),
            },
        },
        Event::Idle { ops: 3 },
        Event::PlanStats {
            items: Vec::new(),
            running: Some("1".into()),
        },
        Event::SessionStarted {
            id: "3f2a".into(),
            path: "/s/3f2a.jsonl".into(),
            resumed: true,
            notes: vec!["a torn line was skipped".into()],
        },
        Event::UserMessage {
            text: "earlier".into(),
        },
        Event::History {
            events: vec![
                Envelope::root(1, Event::TurnStarted { resumed: false }),
                Envelope::root(1, Event::TextDelta { text: "hi".into() }),
            ],
        },
        Event::ApprovalRequested {
            id: "t1".into(),
            name: "bash".into(),
            summary: ToolSummary::default(),
            command: Some("cargo test".into()),
            cwd: "/w".into(),
            reason: ApprovalReason::SandboxBlocked {
                what: "/root/.cargo/bin".into(),
            },
        },
        Event::ApprovalRequested {
            id: "t2".into(),
            name: "release".into(),
            summary: ToolSummary::default(),
            command: None,
            cwd: "/w".into(),
            reason: ApprovalReason::Tool {
                question: "Push the tag?".into(),
            },
        },
        Event::ApprovalMode {
            mode: ApprovalMode::Auto,
            sandboxed: true,
        },
    ]
}

/// Every variant of `T` (an internally tagged enum, tag `tag`) has a
/// sample: the names come from the type itself (serde lists them when
/// asked for one it does not know), so a new variant without a sample
/// fails here.
fn assert_covers<T: serde::Serialize + serde::de::DeserializeOwned>(samples: &[T], tag: &str) {
    let probe = json!({ tag: "__no_such_variant" });
    let Err(e) = serde_json::from_value::<T>(probe) else {
        panic!("a variant named __no_such_variant was accepted");
    };
    let message = e.to_string();
    let (_, list) = message
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("serde names the variants: {message}"));
    let all: Vec<&str> = list.split(", ").map(|v| v.trim_matches('`')).collect();
    assert!(all.len() > 2, "{all:?}");
    let seen: std::collections::BTreeSet<String> = samples
        .iter()
        .map(|s| {
            serde_json::to_value(s).unwrap()[tag]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let missing: Vec<&&str> = all.iter().filter(|v| !seen.contains(**v)).collect();
    assert!(missing.is_empty(), "no sample of {missing:?}");
}

fn is_empty_message_error(e: &Event) -> bool {
    matches!(
        e,
        Event::Error {
            kind: ErrorKind::EmptyMessage,
            ..
        }
    )
}

#[tokio::test]
async fn an_empty_message_is_an_error_idle_and_mid_turn() {
    let mut r = Rig::start(
        vec![Reply::Stall {
            prefix: ": waiting\n\n".into(),
        }],
        AgentConfig::default(),
        |url| client(url, "claude-test"),
    )
    .await;
    r.submit("  ");
    r.until(is_empty_message_error).await;
    r.submit("hi");
    wait_for("the request of \"hi\" on the server", || {
        !r.server.requests().is_empty()
    })
    .await;
    r.submit("\n");
    let seen = r.until(is_empty_message_error).await;
    assert!(
        !seen.iter().any(|e| matches!(e, Event::Queued { .. })),
        "{seen:?}"
    );
    r.handle.ops.send(Op::Interrupt).unwrap();
    let end = r.turn_events().await;
    assert!(
        matches!(
            end.last(),
            Some(Event::TurnAborted {
                reason: AbortReason::Interrupted,
                error: None,
                ..
            })
        ),
        "{end:?}"
    );
}

/// A factory that builds Anthropic clients for the loopback server, for the
/// model asked for.
struct Loopback(String);

impl ClientFactory for Loopback {
    fn build(
        &self,
        choice: &ModelChoice,
        _reload: bool,
    ) -> Result<Arc<dyn ModelClient>, waypoint::llm::LlmError> {
        Ok(client(
            &self.0,
            choice.model.as_deref().unwrap_or("claude-test"),
        ))
    }
}

#[tokio::test]
async fn set_model_names_the_new_model_in_the_next_request() {
    let mut r = Rig::start_with_factory(
        vec![sse(Turn::text("one")), sse(Turn::text("two"))],
        AgentConfig::default(),
        |url| client(url, "claude-test"),
        |url| Arc::new(Loopback(url.to_string())),
    )
    .await;
    r.submit("first");
    let first = r.turn_events().await;
    assert_completed(&first);
    assert!(
        first
            .iter()
            .any(|e| matches!(e, Event::Usage { model, .. } if model == "claude-test"))
    );
    r.handle
        .ops
        .send(Op::SetModel {
            provider: None,
            model: "claude-other".into(),
        })
        .unwrap();
    let changed = r.until(|e| matches!(e, Event::ModelChanged { .. })).await;
    assert_eq!(
        changed.last(),
        Some(&Event::ModelChanged {
            provider: "anthropic".into(),
            model: "claude-other".into()
        })
    );
    r.submit("second");
    let second = r.turn_events().await;
    assert_completed(&second);
    assert!(
        second
            .iter()
            .any(|e| matches!(e, Event::Usage { model, .. } if model == "claude-other"))
    );
    let requests = r.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["model"], "claude-test");
    assert_eq!(requests[1].body["model"], "claude-other");
}

#[tokio::test]
async fn a_failed_set_model_keeps_the_old_client() {
    // `Rig::start` gives the engine a fixed client: switching is refused.
    let mut r = Rig::start(
        vec![sse(Turn::text("still here"))],
        AgentConfig::default(),
        |url| client(url, "claude-test"),
    )
    .await;
    r.handle
        .ops
        .send(Op::SetModel {
            provider: Some("openai".into()),
            model: "gpt-x".into(),
        })
        .unwrap();
    let seen = r.until(|e| matches!(e, Event::Error { .. })).await;
    match seen.last() {
        Some(Event::Error {
            kind: ErrorKind::Config,
            message,
        }) => assert!(message.contains("gpt-x"), "{message}"),
        other => panic!("expected a config error, got {other:?}"),
    }
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ModelChanged { .. }))
    );
    assert_eq!(r.server.requests()[0].body["model"], "claude-test");
}

#[tokio::test]
async fn a_new_session_mid_turn_interrupts_then_forgets_everything() {
    let plan =
        json!({"todos": [{"content": "A", "activeForm": "Doing A", "status": "in_progress"}]});
    let mut r = Rig::start(
        vec![
            sse(Turn::tool("todo_write", plan)),
            Reply::Stall {
                prefix: ": waiting\n\n".into(),
            },
            sse(Turn::text("fresh")),
        ],
        AgentConfig::default(),
        |url| client(url, "claude-test"),
    )
    .await;
    r.submit("work");
    r.until(|e| matches!(e, Event::RoundStarted { round: 2 }))
        .await;
    // The stalled request is on the server before the session is dropped.
    wait_for("the stalled request on the server", || {
        r.server.requests().len() >= 2
    })
    .await;
    r.handle.ops.send(Op::NewSession).unwrap();
    let rest = r.until(|e| matches!(e, Event::SessionReset)).await;
    assert!(rest.iter().any(|e| matches!(
        e,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            ..
        }
    )));
    let emptied = rest.iter().rev().find_map(|e| match e {
        Event::PlanUpdated { items, diff, .. } => Some((items.len(), diff.removed.clone())),
        _ => None,
    });
    assert_eq!(emptied, Some((0, vec!["A".to_string()])));
    r.submit("again");
    assert_completed(&r.turn_events().await);
    let last = r.server.requests().last().unwrap().clone();
    assert_eq!(last.messages().len(), 1, "the old conversation is gone");
}

/// A factory whose reloads fail until `fixed` is set.
struct Fixable {
    url: String,
    fixed: Arc<std::sync::atomic::AtomicBool>,
}

impl ClientFactory for Fixable {
    fn build(
        &self,
        _: &ModelChoice,
        _reload: bool,
    ) -> Result<Arc<dyn ModelClient>, waypoint::llm::LlmError> {
        if self.fixed.load(std::sync::atomic::Ordering::SeqCst) {
            Ok(client(&self.url, "claude-fixed"))
        } else {
            Err(waypoint::llm::LlmError::Config(
                "base_url `htp://typo` is not a URL".into(),
            ))
        }
    }
}

#[tokio::test]
async fn a_resume_after_a_failed_reload_waits_for_settings_that_work() {
    let fixed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = fixed.clone();
    let mut r = Rig::start_with_factory(
        vec![
            loopback::Reply::Status {
                code: 404,
                headers: vec![],
                body: r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-typo"}}"#.into(),
            },
            sse(Turn::text("fixed")),
        ],
        AgentConfig::default(),
        |url| client(url, "claude-typo"),
        move |url| {
            Arc::new(Fixable {
                url: url.to_string(),
                fixed: flag,
            })
        },
    )
    .await;
    r.submit("hi");
    let failed = r.turn_events().await;
    assert!(matches!(failed.last(), Some(Event::TurnAborted { .. })));
    // The settings still fail: the resume is held back, nothing is sent.
    r.handle.ops.send(Op::ReloadSettings).unwrap();
    r.handle.ops.send(Op::Resume).unwrap();
    let refused = r
        .until(|e| matches!(e, Event::Error { message, .. } if message.starts_with("Not resumed")))
        .await;
    assert!(
        refused
            .iter()
            .all(|e| !matches!(e, Event::TurnStarted { .. })),
        "{refused:?}"
    );
    assert!(refused.iter().any(|e| matches!(
        e,
        Event::Error {
            kind: ErrorKind::Config,
            message
        } if message.contains("htp://typo")
    )));
    assert_eq!(
        r.server.requests().len(),
        1,
        "no request with the broken settings"
    );
    // Fixed: the same two ops resume with the new client.
    fixed.store(true, std::sync::atomic::Ordering::SeqCst);
    r.handle.ops.send(Op::ReloadSettings).unwrap();
    r.handle.ops.send(Op::Resume).unwrap();
    let resumed = r.turn_events().await;
    assert_completed(&resumed);
    let requests = r.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["model"], "claude-fixed");
}

/// A factory that can only build Anthropic clients and notes each choice.
struct AnthropicOnly(String, std::sync::Mutex<Vec<ModelChoice>>);

impl ClientFactory for AnthropicOnly {
    fn build(
        &self,
        choice: &ModelChoice,
        _reload: bool,
    ) -> Result<Arc<dyn ModelClient>, waypoint::llm::LlmError> {
        self.1.lock().unwrap().push(choice.clone());
        match choice.provider.as_deref() {
            Some("openai") => Err(waypoint::llm::LlmError::Config(
                "OPENAI_API_KEY is not set".into(),
            )),
            _ => Ok(client(
                &self.0,
                choice.model.as_deref().unwrap_or("claude-test"),
            )),
        }
    }
}

#[tokio::test]
async fn a_known_model_of_another_provider_switches_provider_or_is_refused() {
    let factory: Arc<std::sync::OnceLock<Arc<AnthropicOnly>>> = Arc::default();
    let keep = factory.clone();
    let mut r = Rig::start_with_factory(
        vec![sse(Turn::text("still claude"))],
        AgentConfig::default(),
        |url| client(url, "claude-test"),
        move |url| {
            let f = Arc::new(AnthropicOnly(url.to_string(), Default::default()));
            let _ = keep.set(f.clone());
            f
        },
    )
    .await;
    r.handle
        .ops
        .send(Op::SetModel {
            provider: None,
            model: "gpt-4o".into(),
        })
        .unwrap();
    let seen = r.until(|e| matches!(e, Event::Error { .. })).await;
    assert!(
        matches!(seen.last(), Some(Event::Error { message, .. }) if message.contains("OPENAI_API_KEY")),
        "{seen:?}"
    );
    let asked = factory.get().unwrap().1.lock().unwrap().clone();
    assert_eq!(asked.last().unwrap().provider.as_deref(), Some("openai"));
    r.submit("hi");
    let events = r.turn_events().await;
    assert_completed(&events);
    // Never sent to Anthropic's API under an OpenAI model's name.
    assert_eq!(r.server.requests()[0].body["model"], "claude-test");
}

#[tokio::test]
async fn every_event_carries_its_thread_and_turn() {
    let mut r = Rig::start(
        vec![sse(Turn::text("one")), sse(Turn::text("two"))],
        AgentConfig::default(),
        |url| client(url, "claude-test"),
    )
    .await;
    let mut seen = Vec::new();
    for text in ["first", "second"] {
        r.submit(text);
        loop {
            let envelope = tokio::time::timeout(Duration::from_secs(30), r.handle.events.recv())
                .await
                .expect("an event within 30 s")
                .expect("engine alive");
            let end = matches!(envelope.event, Event::TurnComplete { .. });
            seen.push(envelope);
            if end {
                break;
            }
        }
    }
    // Before the first turn: turn 0; from each TurnStarted to its end: its number.
    let mut turn = 0;
    for envelope in &seen {
        assert!(envelope.thread.is_root() && envelope.parent_call.is_none());
        if let Event::TurnStarted { .. } = envelope.event {
            turn += 1;
        }
        assert_eq!(envelope.turn, turn, "{envelope:?}");
    }
    assert_eq!(turn, 2);
    // On the wire the address sits beside the event's own fields.
    let text = serde_json::to_string(seen.last().unwrap()).unwrap();
    assert!(
        text.starts_with(r#"{"turn":2,"type":"turn_complete""#),
        "{text}"
    );
}

/// Polls `ready` every 5 ms; fails, naming `what`, when it is still not
/// so after 30 s.
async fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after 30 s waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn goal_sample() -> waypoint::events::Goal {
    waypoint::events::Goal {
        text: "Make the parser pass its tests".into(),
        check: Some("cargo test".into()),
        budget: waypoint::events::Budget::parse("2M, $5").unwrap(),
        item_budget: waypoint::events::Budget::parse("200k, 10m").unwrap(),
    }
}

fn evidence_sample() -> waypoint::events::Evidence {
    waypoint::events::Evidence {
        item: "1".into(),
        content: "Fix the parser".into(),
        command: "cargo test -p parser".into(),
        exit_code: Some(0),
        passed: true,
        duration_ms: 1200,
        tail: "test result: ok. 12 passed".into(),
    }
}
