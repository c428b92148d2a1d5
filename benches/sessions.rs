//! Session benchmarks (criterion): the cost of recording one record (no
//! fsync), of opening a 10,000-record session up to its first frame, and
//! of listing 1,000 sessions with and without their cards.
//! `cargo bench --bench sessions`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use waypoint::events::{Envelope, Event, StopReason, ToolDetail, ToolStatus, ToolSummary};
use waypoint::llm::{ContentBlock, Usage};
use waypoint::session::{self, Header, Record, SessionStore, Transcript};
use waypoint::todo::{PlanDiff, TodoItem, TodoManager, TodoStatus};
use waypoint::tui::state::App;
use waypoint::tui::style::Palette;
use waypoint::tui::{update, view};

const W: u16 = 120;
const H: u16 = 40;
const AT: u64 = 1_796_267_100_000;

fn header(id: &str) -> Header {
    Header::new(id, "/work/project", "anthropic", "claude-bench", AT)
}

fn user(text: &str) -> Record<'static> {
    Record::User {
        text: Cow::Owned(text.into()),
        prompt: true,
        at: AT,
    }
}

fn assistant(round: usize) -> Record<'static> {
    Record::Assistant {
        content: Cow::Owned(vec![
            ContentBlock::Text {
                text: format!(
                    "Round {round}: the tests fail in `parse_config` because the default \
                     profile is read before the file; I will look at the loader next."
                ),
            },
            ContentBlock::ToolUse {
                id: format!("toolu_{round:06}"),
                name: "bash".into(),
                input:
                    json!({"command": format!("cargo test -p core config::tests::case_{round}")})
                        .into(),
            },
        ]),
        model: Cow::Borrowed("claude-bench"),
        at: AT,
    }
}

/// A durable event as the engine records it.
fn event(event: Event) -> Record<'static> {
    Record::Event {
        at: AT,
        envelope: Cow::Owned(Envelope::root(1, event)),
    }
}

fn round_started(round: usize) -> Record<'static> {
    event(Event::RoundStarted {
        round: u32::try_from(round % 40 + 1).unwrap(),
    })
}

fn tool_call(round: usize) -> Record<'static> {
    event(Event::ToolCallBegin {
        id: format!("toolu_{round:06}"),
        name: "bash".into(),
        summary: ToolSummary {
            line: format!("cargo test -p core config::tests::case_{round}"),
            detail: ToolDetail::Output,
        },
        // The reply holds it: the transcript leaves it out.
        input: serde_json::Value::Null,
        plan_item_id: Some("3".into()),
        plan_item: Some("Fix the loader".into()),
    })
}

fn tool_result(round: usize, bytes: usize) -> Record<'static> {
    let line = "test config::tests::case ... ok  (compiling core v0.3.1, 12 warnings)\n";
    let content: String = line.repeat(bytes / line.len() + 1)[..bytes].to_string();
    event(Event::ToolCallEnd {
        id: format!("toolu_{round:06}"),
        name: "bash".into(),
        status: ToolStatus::Ok,
        outcome: waypoint::events::ToolOutcome::Ok,
        duration_ms: 840,
        output: content,
        exit_code: Some(0),
    })
}

fn plan(done: usize) -> Record<'static> {
    let items = (0..8)
        .map(|i| {
            let status = match i.cmp(&done) {
                std::cmp::Ordering::Less => TodoStatus::Completed,
                std::cmp::Ordering::Equal => TodoStatus::InProgress,
                std::cmp::Ordering::Greater => TodoStatus::Pending,
            };
            TodoItem {
                id: (i + 1).to_string(),
                content: format!("Step {} of the refactor: move the loader", i + 1),
                status,
                active_form: format!("Doing step {} of the refactor", i + 1),
                scope: Default::default(),
            }
        })
        .collect::<Vec<_>>();
    let rendered = TodoManager::restore(items.clone()).unwrap().render();
    event(Event::PlanUpdated {
        items,
        rendered,
        diff: PlanDiff::default(),
        revision: u32::try_from(done).unwrap() + 1,
        author: waypoint::todo::Author::Model,
        at: AT,
        note: None,
    })
}

fn usage() -> [Record<'static>; 2] {
    let request = Usage {
        input_tokens: 1_200,
        output_tokens: 180,
        cache_read_tokens: 40_000,
        cache_write_tokens: 900,
    };
    [
        event(Event::ContextUsage {
            used: 42_000,
            window: 200_000,
        }),
        event(Event::Usage {
            model: "claude-bench".into(),
            request,
            totals: request,
        }),
    ]
}

fn turn_start() -> Record<'static> {
    event(Event::TurnStarted { resumed: false })
}

fn turn_end() -> Record<'static> {
    event(Event::TurnComplete {
        stop_reason: StopReason::EndTurn,
        open_items: 3,
    })
}

/// `Transcript::record` of one typical record, no fsync: each sample
/// appends to a fresh file (deleted after), so the file stays small.
fn record(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("sessions/record");
    group.measurement_time(Duration::from_secs(3));
    let cases: Vec<(&str, Record<'static>)> = vec![
        (
            "user_message",
            user("Fix the failing config tests and keep the API."),
        ),
        ("assistant_with_tool_call", assistant(7)),
        ("tool_result_4KB", tool_result(7, 4096)),
        ("plan_8_items", plan(3)),
    ];
    let mut n = 0;
    for (name, rec) in &cases {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                n += 1;
                let id = format!("bench-{n}");
                let mut t = Transcript::create(dir.path(), header(&id));
                t.record(&turn_start()); // creates the file and writes the header
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(t.record(black_box(rec)));
                }
                let took = start.elapsed();
                let path = t.path().unwrap().to_path_buf();
                drop(t);
                std::fs::remove_file(path).unwrap();
                took
            })
        });
    }
    group.finish();
}

/// The session that was 10,000 records in format 1 (14,800 in format 2,
/// which keeps each request's start and its context usage too): 60 turns
/// of 40 rounds; a round is the reply (text and a `bash` call), the
/// call, its 1 KB result and the usage, with a plan revision every 10
/// rounds. Returns the transcript's path.
fn write_session(dir: &Path, turns: usize) -> PathBuf {
    let mut t = Transcript::create(dir, header("big-session"));
    let mut round = 0;
    for _ in 0..turns {
        for r in [
            user(&format!("Turn {round}: go on with the refactor.")),
            turn_start(),
        ] {
            t.record(&r);
        }
        for _ in 0..40 {
            round += 1;
            let mut recs = vec![
                round_started(round),
                assistant(round),
                tool_call(round),
                tool_result(round, 1024),
            ];
            recs.extend(usage());
            if round % 10 == 0 {
                recs.push(plan(round / 10 % 8));
            }
            for r in recs {
                t.record(&r);
            }
        }
        // The last round's reply has no answered call: end with text only.
        t.record(&Record::Assistant {
            content: Cow::Owned(vec![ContentBlock::Text {
                text: "Done for this turn.".into(),
            }]),
            model: Cow::Borrowed("claude-bench"),
            at: AT,
        });
        t.record(&turn_end());
    }
    t.sync();
    t.path().unwrap().to_path_buf()
}

fn open_and_draw(path: &Path) -> Terminal<TestBackend> {
    let now = Instant::now();
    let restored = session::replay(session::load(path).unwrap()).unwrap();
    let mut app = App::new("claude-bench", "/work/project", Palette::colored(), now);
    update::on_event(
        &mut app,
        Event::History {
            events: restored.history,
        },
        now,
    );
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
    term.draw(|f| view::draw(f, &mut app, now)).unwrap();
    term
}

fn open(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), 60);
    let loaded = session::load(&path).unwrap();
    eprintln!(
        "fixture: {} records, {} bytes",
        loaded.records.len(),
        loaded.valid_len
    );
    let mut group = c.benchmark_group("sessions/open");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(6));
    group.bench_function("load_10k", |b| {
        b.iter(|| black_box(session::load(&path).unwrap()))
    });
    group.bench_function("load_replay_10k", |b| {
        b.iter(|| black_box(session::replay(session::load(&path).unwrap()).unwrap()))
    });
    group.bench_function("load_replay_history_first_frame_10k_120x40", |b| {
        b.iter(|| black_box(open_and_draw(&path).backend().buffer().area))
    });
    group.finish();
}

/// `sessions` stores of 1,000 sessions of a few records each, one with
/// cards and one without (the listing reads the transcripts' first lines).
fn list(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with-cards");
    let without = dir.path().join("without-cards");
    for i in 0..1_000 {
        let id = format!("{:08x}-0000-4000-8000-{:012x}", i, i);
        for folder in [&with, &without] {
            let mut t = Transcript::create(folder, header(&id));
            for r in [
                turn_start(),
                user(&format!("Session {i}: fix the loader and add tests.")),
                plan(2),
                assistant(1),
                tool_call(1),
                tool_result(1, 1024),
                turn_end(),
            ] {
                t.record(&r);
            }
            t.sync(); // writes the card
        }
    }
    for entry in std::fs::read_dir(&without).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".card.json") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let mut group = c.benchmark_group("sessions/list_1000");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    for (name, folder) in [("with_cards", &with), ("without_cards", &without)] {
        let store = SessionStore::new(folder.clone());
        assert_eq!(store.list().unwrap().len(), 1_000);
        group.bench_function(name, |b| b.iter(|| black_box(store.list().unwrap())));
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_millis(500));
    targets = record, open, list
}
criterion_main!(benches);
