//! Subagents' cost to the engine (criterion, scripted model, no network):
//! the engine's own CPU for a piece of work (plan, read a file, plan,
//! answer: four requests, three calls) done by the parent itself, and the
//! same work done by a child through `task`, less the parent's own part
//! of that (its `task` request and its closing one, measured apart); and
//! the memory four parallel children hold beyond their conversations,
//! counted by a counting allocator while all four wait for their model.
//! `cargo bench --bench subagents`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use waypoint::agent::{Agent, AgentConfig, AgentHandle};
use waypoint::events::{Event, Op};
use waypoint::llm::scripted::{Scenario, ScriptedCall, ScriptedClient, ScriptedTurn};
use waypoint::tools::Workspace;

/// The heap in use, in bytes.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only a
// counter is kept beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: a pointer this allocator gave out, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as `realloc`'s contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn turn(delay_ms: u64, text: &str, calls: Vec<(&str, Value)>) -> ScriptedTurn {
    ScriptedTurn {
        text: text.into(),
        tool_calls: calls
            .into_iter()
            .map(|(name, input)| ScriptedCall {
                name: name.into(),
                input,
            })
            .collect(),
        delay_ms,
    }
}

fn plan(done: bool) -> Value {
    let status = |first: bool| match (done, first) {
        (true, _) => "completed",
        (false, true) => "in_progress",
        (false, false) => "pending",
    };
    json!({"todos": [
        {"content": "Read the notes", "status": status(true), "activeForm": "Reading the notes"},
        {"content": "Report them", "status": status(false), "activeForm": "Reporting them"}
    ]})
}

/// The piece of work: plan, read, plan, answer (the first turn waits
/// `delay_ms` for its model).
fn work(delay_ms: u64) -> Vec<ScriptedTurn> {
    work_reading(delay_ms, 1)
}

/// Plan, read `reads` times, plan, answer.
fn work_reading(delay_ms: u64, reads: usize) -> Vec<ScriptedTurn> {
    let mut turns = vec![turn(delay_ms, "", vec![("todo_write", plan(false))])];
    for _ in 0..reads {
        turns.push(turn(
            0,
            "",
            vec![("read_file", json!({"path": "notes.txt"}))],
        ));
    }
    turns.push(turn(0, "", vec![("todo_write", plan(true))]));
    turns.push(turn(0, "The notes say: remember the milk.", vec![]));
    turns
}

fn task(n: usize) -> (&'static str, Value) {
    (
        "task",
        json!({"description": format!("Read notes {n}"), "prompt": "Read notes.txt and report.", "agent": "explore"}),
    )
}

fn scenario(turns: Vec<ScriptedTurn>, subagents: BTreeMap<String, Vec<ScriptedTurn>>) -> Scenario {
    Scenario {
        description: String::new(),
        chunk_delay_ms: 0,
        turns,
        subagents,
    }
}

/// The parent does the work itself.
fn itself() -> Scenario {
    scenario(work(0), BTreeMap::new())
}

/// The parent hands the work to `children` explore children in one reply
/// (it and each child wait `delay_ms` for their first reply), then answers.
fn delegated(children: usize, delay_ms: u64) -> Scenario {
    let calls = (1..=children).map(task).collect();
    let subagents = (1..=children)
        .map(|n| (format!("Task: Read notes {n}\n"), work(delay_ms)))
        .collect();
    scenario(
        vec![turn(delay_ms, "", calls), turn(0, "Reported.", vec![])],
        subagents,
    )
}

/// The parent's own part of a delegation: a reply with one call that
/// does next to nothing, and the closing one.
fn wrapper() -> Scenario {
    scenario(
        vec![
            turn(0, "", vec![("todo_read", json!({}))]),
            turn(0, "Reported.", vec![]),
        ],
        BTreeMap::new(),
    )
}

fn start(scenario: Scenario, workspace: &Workspace) -> AgentHandle {
    let mut config = AgentConfig::default();
    config.tools.task.max_parallel = 8;
    Agent::builder(Arc::new(ScriptedClient::new(scenario)), workspace.clone())
        .config(config)
        .spawn()
        .unwrap()
}

/// Runs one task to the root thread's end, calling `seen` on each event;
/// panics on an aborted turn.
async fn run(mut handle: AgentHandle, mut seen: impl FnMut(&waypoint::events::Envelope)) {
    handle
        .ops
        .send(Op::Submit {
            text: "Read the notes.".into(),
        })
        .unwrap();
    loop {
        let envelope = handle.events.recv().await.expect("engine");
        seen(&envelope);
        match &envelope.event {
            Event::TurnComplete { .. } if envelope.thread.is_root() => break,
            Event::TurnAborted { message, .. } => panic!("aborted: {message}"),
            _ => {}
        }
    }
    handle.ops.send(Op::Quit).unwrap();
    handle.task.await.unwrap();
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn bench_turns(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir_in(
        Some(std::path::Path::new("/dev/shm"))
            .filter(|p| p.is_dir())
            .unwrap_or(&std::env::temp_dir()),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let mut group = c.benchmark_group("subagents");
    group
        .sample_size(60)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    type Case = (&'static str, fn() -> Scenario);
    let cases: [Case; 5] = [
        ("work_by_the_parent", itself),
        ("work_by_one_child", || delegated(1, 0)),
        ("parent_part_of_a_delegation", wrapper),
        ("work_x20_by_the_parent", || {
            scenario(work_reading(0, 20), BTreeMap::new())
        }),
        ("work_x20_by_one_child", || {
            let mut s = delegated(1, 0);
            for script in s.subagents.values_mut() {
                *script = work_reading(0, 20);
            }
            s
        }),
    ];
    for (name, make) in cases {
        group.bench_function(name, |b| {
            b.iter(|| rt.block_on(async { run(start(make(), &workspace), |_| {}).await }));
        });
    }
    group.finish();
}

/// The heap four children hold while all wait for their model, beyond
/// the engine's while the parent waits for its own (their conversations,
/// a few KiB each, included).
fn memory_of_four_children() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    for round in 1..=3 {
        let mut base = None;
        let mut waiting = std::collections::BTreeSet::new();
        let mut four = None;
        rt.block_on(async {
            run(start(delegated(4, 300), &workspace), |e| {
                if let Event::RoundStarted { round: 1 } = e.event {
                    if e.thread.is_root() {
                        base = Some(LIVE.load(Ordering::Relaxed));
                    } else {
                        waiting.insert(e.thread);
                        if waiting.len() == 4 {
                            four = Some(LIVE.load(Ordering::Relaxed));
                        }
                    }
                }
            })
            .await
        });
        let (base, four) = (base.unwrap(), four.unwrap());
        let per_child = (four - base) as f64 / 4.0 / 1024.0;
        println!(
            "subagents/memory round {round}: engine waiting {} KiB, with four children waiting {} KiB: {per_child:.1} KiB per child",
            base / 1024,
            four / 1024
        );
    }
}

fn bench_memory(_: &mut Criterion) {
    memory_of_four_children();
}

criterion_group!(benches, bench_turns, bench_memory);
criterion_main!(benches);
