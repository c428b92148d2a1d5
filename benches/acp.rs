//! The ACP layer's cost per update (`cargo bench --bench acp`): a scripted
//! 200-round session through the real agent loop, alone and with every
//! event translated into ACP session updates and serialised as the
//! JSON-RPC notification lines `waypoint acp` writes. The difference is
//! what the ACP layer adds to each round.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

use waypoint::acp::translate::Translator;
use waypoint::agent::{Agent, AgentConfig};
use waypoint::events::{ApprovalMode, Envelope};
use waypoint::llm::ModelClient;
use waypoint::llm::scripted::{Scenario, ScriptedCall, ScriptedClient, ScriptedTurn};
use waypoint::tools::Workspace;

#[allow(dead_code)]
#[path = "support/task.rs"]
mod task;

const ROUNDS: usize = 200;

fn call(name: &str, input: Value) -> ScriptedCall {
    serde_json::from_value(json!({"name": name, "input": input})).unwrap()
}

fn turn(text: &str, calls: Vec<ScriptedCall>) -> ScriptedTurn {
    let mut t: ScriptedTurn = serde_json::from_value(json!({"text": text})).unwrap();
    t.tool_calls = calls;
    t
}

/// 200 rounds: every 20th updates a 10-item plan, the others write, read
/// and edit small files; then the answer.
fn scenario() -> Scenario {
    let mut turns = Vec::new();
    for r in 0..ROUNDS {
        let path = format!("src/f{}.rs", r % 10);
        let c = match r % 20 {
            0 => {
                let todos: Vec<Value> = (0..10)
                    .map(|i| {
                        let status = match i.cmp(&(r / 20)) {
                            std::cmp::Ordering::Less => "completed",
                            std::cmp::Ordering::Equal => "in_progress",
                            std::cmp::Ordering::Greater => "pending",
                        };
                        json!({"content": format!("Step {i}"), "activeForm": format!("Doing step {i}"), "status": status})
                    })
                    .collect();
                call("todo_write", json!({ "todos": todos }))
            }
            n if n % 3 == 1 => call(
                "write_file",
                json!({"path": path, "content": format!("pub fn f() -> u32 {{ {r} }}\n")}),
            ),
            n if n % 3 == 2 => call("read_file", json!({"path": path})),
            _ => call(
                "edit_file",
                json!({"path": path, "old_text": "pub fn", "new_text": "pub fn"}),
            ),
        };
        turns.push(turn(&format!("Round {r}."), vec![c]));
    }
    turns.push(turn("Done.", Vec::new()));
    serde_json::from_value(json!({ "turns": [] }))
        .map(|mut s: Scenario| {
            s.turns = turns;
            s
        })
        .unwrap()
}

/// What `waypoint acp` does with an event: its updates, each written as a
/// `session/update` notification line. Returns the bytes written.
fn to_wire(translator: &mut Translator, envelope: &Envelope) -> usize {
    translator
        .updates(envelope)
        .into_iter()
        .map(|update| {
            let line = json!({
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "0a6c3e3c-5a8f-4c4e-9d57-000000000000", "update": update},
            });
            serde_json::to_vec(&line).unwrap().len() + 1
        })
        .sum()
}

fn bench_acp(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let scenario = scenario();
    let run = |translate: bool| {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let client: Arc<dyn ModelClient> = Arc::new(ScriptedClient::new(scenario.clone()));
        let handle = {
            let _runtime = rt.enter();
            let config = AgentConfig {
                max_rounds: u32::try_from(ROUNDS).unwrap() + 10,
                nag_every: 0,
                ..AgentConfig::default()
            };
            Agent::builder(client, workspace)
                .config(config)
                .spawn()
                .unwrap()
        };
        let mut translator = Translator::new(Path::new("/ws"), false, ApprovalMode::Ask);
        let mut bytes = 0;
        let (calls, _) = rt.block_on(task::run_task_with(handle, "Work.", |event| {
            if translate {
                bytes += to_wire(&mut translator, &Envelope::root(1, event.clone()));
            }
        }));
        (calls, bytes)
    };
    let (calls, bytes) = run(true);
    assert_eq!(calls, ROUNDS, "every scripted call runs");
    eprintln!("acp: {bytes} bytes of session/update lines for {ROUNDS} rounds");
    let mut group = c.benchmark_group("acp");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(12));
    group.bench_function("engine_200_rounds", |b| b.iter(|| run(false)));
    group.bench_function("engine_200_rounds_with_acp_updates", |b| {
        b.iter(|| run(true))
    });
    group.finish();
}

criterion_group!(benches, bench_acp);
criterion_main!(benches);
