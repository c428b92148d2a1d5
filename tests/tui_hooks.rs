//! Hooks in the app, against the real engine: an `ItemCompleting` gate
//! that keeps "Add tests" open shows as a line in the Tools pane and a
//! notice (snapshot), `/hooks` lists the hooks that run, and the user's
//! `d` on the kept item asks, then completes it: an override the engine
//! records. A hook's `ask` makes yolo ask; `PreCompact` sees its focus.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;
use crate::tui_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use ratatui::crossterm::event::KeyCode;
use tui_support::{Clock, app, key, screen, screen_text, type_text};
use waypoint::agent::AgentConfig;
use waypoint::events::{Event, HookResult, Op};
use waypoint::hooks::{Hook, HookEvent, HookOrigin, HookSet, Matcher};
use waypoint::tools::ToolConfig;
use waypoint::tui::state::{App, Focus};
use waypoint::tui::update::{self, Effect};

type Rig = engine_support::Rig<Anthropic>;

fn forward(r: &Rig, effects: Vec<Effect>) -> usize {
    let mut sent = 0;
    for effect in effects {
        if let Effect::Send(op) = effect {
            r.handle.ops.send(op).unwrap();
            sent += 1;
        }
    }
    sent
}

/// Shows `events` as the app would, with every duration set to 3 ms (a
/// snapshot must not depend on how fast the machine ran the hook).
fn show(a: &mut App, events: Vec<Event>, clock: &Clock) {
    for mut e in events {
        match &mut e {
            Event::ToolCallEnd { duration_ms, .. } => *duration_ms = 3,
            Event::Hook { report } => report.duration_ms = 3,
            _ => {}
        }
        update::on_event(a, e, clock.at(1.0));
    }
}

fn gate() -> HookSet {
    let event = HookEvent::ItemCompleting;
    HookSet::new(vec![Hook {
        event,
        matcher: Matcher::new("(?i)tests", event.subject()).unwrap(),
        command: "echo 'cargo test: 2 failed' >&2; exit 2".into(),
        timeout: Duration::from_secs(10),
        origin: HookOrigin::Config(PathBuf::from("config.toml")),
    }])
}

#[tokio::test]
async fn a_kept_item_shows_in_the_trace_and_the_users_done_overrides_it() {
    let two = |a: &str, b: &str| plan(&[("Write code", a), ("Add tests", b)]);
    let config = AgentConfig {
        tools: ToolConfig {
            hooks: Arc::new(gate()),
            ..ToolConfig::default()
        },
        ..AgentConfig::default()
    };
    let mut r = Rig::with(
        vec![
            sse(Turn::tool("todo_write", two("completed", "in_progress"))),
            sse(Turn::tool("todo_write", two("completed", "completed"))),
            sse(Turn::text("The tests fail; I stop here.")),
        ],
        config,
        loopback::ClientOpts::default(),
    )
    .await;
    let clock = Clock::new();
    let mut a = app(&clock);
    a.status.engine.arrived();
    r.handle
        .ops
        .send(Op::Submit {
            text: "add the tests".into(),
        })
        .unwrap();
    let events = r.turn_events().await;
    let blocked = events.iter().any(|e| {
        matches!(e, Event::Hook { report } if report.result == HookResult::Blocked
            && report.subject.as_deref() == Some("Add tests"))
    });
    assert!(blocked, "{events:?}");
    show(&mut a, events, &clock);
    while a.focus != Focus::Trace {
        update::on_key(&mut a, key(KeyCode::Tab), clock.at(1.0));
    }
    let t = screen(&mut a, 100, 30, clock.at(2.0));
    insta::assert_snapshot!("item_gate_in_the_trace_100x30", t.backend());
    let s = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(s.contains("ItemCompleting · Add tests"), "{s}");
    assert!(s.contains("cargo test: 2 failed"), "{s}");

    // `/hooks` lists the hook that runs.
    while a.focus != Focus::Input {
        update::on_key(&mut a, key(KeyCode::Tab), clock.at(1.0));
    }
    type_text(&mut a, "/hooks", clock.at(3.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(3.0));
    let s = screen_text(&mut a, 120, 40, clock.at(3.0));
    assert!(s.contains("ItemCompleting"), "{s}");
    assert!(s.contains("(?i)tests"), "{s}");

    // The user's `d` on the kept item completes it: an override, recorded.
    while a.focus != Focus::Checklist {
        update::on_key(&mut a, key(KeyCode::Tab), clock.at(4.0));
    }
    update::on_key(&mut a, key(KeyCode::Down), clock.at(4.0));
    update::on_key(&mut a, key(KeyCode::Down), clock.at(4.0));
    assert_eq!(a.root.plan.selected_index(), Some(1));
    // The gate kept it open last: `d` asks first.
    let effects = update::on_key(&mut a, key(KeyCode::Char('d')), clock.at(4.0));
    assert!(effects.is_empty(), "{effects:?}");
    let s = screen_text(&mut a, 120, 40, clock.at(4.0));
    assert!(s.contains("Complete it anyway"), "{s}");
    let effects = update::on_key(&mut a, key(KeyCode::Char('y')), clock.at(4.0));
    assert_eq!(forward(&r, effects), 1);
    let events = r
        .until(|e| matches!(e, Event::Hook { report } if report.result == HookResult::Overridden))
        .await;
    show(&mut a, events, &clock);
    let s = screen_text(&mut a, 120, 40, clock.at(5.0));
    assert!(s.contains("was overridden by the user"), "{s}");
}

#[tokio::test]
async fn pre_compact_runs_before_a_compaction_and_session_start_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let event = HookEvent::PreCompact;
    let start = HookEvent::SessionStart;
    let hooks = HookSet::new(vec![
        Hook {
            event,
            matcher: Matcher::new("manual", event.subject()).unwrap(),
            command: format!("cat > {}", seen.display()),
            timeout: Duration::from_secs(10),
            origin: HookOrigin::Config(PathBuf::from("config.toml")),
        },
        Hook {
            event: start,
            matcher: Matcher::new("compact", start.subject()).unwrap(),
            command: "echo 'after a compaction: re-read PLAN.md'".into(),
            timeout: Duration::from_secs(10),
            origin: HookOrigin::Config(PathBuf::from("config.toml")),
        },
    ]);
    let config = AgentConfig {
        tools: ToolConfig {
            hooks: Arc::new(hooks),
            ..ToolConfig::default()
        },
        ..AgentConfig::default()
    };
    let mut r = Rig::with(
        vec![
            sse(Turn::text("A first answer.")),
            sse(Turn::text("Summary: the user asked; I answered.")),
            sse(Turn::text("Re-reading it.")),
        ],
        config,
        loopback::ClientOpts::default(),
    )
    .await;
    r.submit("hello");
    r.turn_events().await;
    r.handle
        .ops
        .send(Op::Compact {
            focus: Some("keep the API names".into()),
        })
        .unwrap();
    r.until(|e| matches!(e, Event::CompactionEnd { .. })).await;
    let payload: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(payload["hook_event_name"], "PreCompact");
    assert_eq!(payload["trigger"], "manual");
    assert_eq!(payload["custom_instructions"], "keep the API names");
    // `SessionStart` with source `compact` speaks before the next message.
    r.submit("go on");
    r.turn_events().await;
    let sent = r.server.requests().pop().unwrap().body.to_string();
    assert!(
        sent.contains("[SessionStart hook: after a compaction: re-read PLAN.md]"),
        "{sent}"
    );
}

#[tokio::test]
async fn a_hook_asking_makes_yolo_ask_and_the_users_yes_runs_the_call() {
    let ws = tempfile::tempdir().unwrap();
    let event = HookEvent::PreToolUse;
    let answer = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"deploys need a human"}}"#;
    let hooks = HookSet::new(vec![Hook {
        event,
        matcher: Matcher::new("Bash", event.subject()).unwrap(),
        command: format!("echo '{answer}'"),
        timeout: Duration::from_secs(10),
        origin: HookOrigin::Config(PathBuf::from("config.toml")),
    }]);
    let config = AgentConfig {
        tools: ToolConfig {
            hooks: Arc::new(hooks),
            ..ToolConfig::default()
        },
        approval: waypoint::events::ApprovalMode::Yolo,
        ..AgentConfig::default()
    };
    let marker = ws.path().join("deployed");
    let mut r = Rig::with(
        vec![
            sse(Turn::tool(
                "bash",
                serde_json::json!({"command": format!("touch {}", marker.display())}),
            )),
            sse(Turn::text("Deployed.")),
        ],
        config,
        loopback::ClientOpts::default(),
    )
    .await;
    r.submit("deploy");
    let asked = r
        .until(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    let Some(Event::ApprovalRequested { id, reason, .. }) = asked.last() else {
        panic!("no question: {asked:?}");
    };
    let question = format!("{reason:?}");
    assert!(question.contains("deploys need a human"), "{question}");
    assert!(!marker.exists(), "nothing runs before the answer");
    r.handle
        .ops
        .send(Op::Approve {
            id: id.clone(),
            decision: waypoint::events::Decision::Once,
        })
        .unwrap();
    r.turn_events().await;
    assert!(marker.exists(), "the user's yes ran it");
}
