//! TUI benchmarks (criterion): time to the first frame, and the cost of one
//! frame for a 100,000-line conversation and a 10 MB tool output, folded
//! and expanded, for the session picker over 10,000 sessions and for the
//! approval prompt over a 10,000-line command or write, compared
//! with a short session (the ratio shows the cost
//! does not grow with length), and for a reply with highlighted Rust (the
//! frame that first highlights it, and the frames after), and the plan's
//! forecast. `cargo bench --bench tui`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use waypoint::tui::state::{App, Focus};
use waypoint::tui::style::Palette;
use waypoint::tui::{update, view};

const W: u16 = 120;
const H: u16 = 40;

#[path = "support/tui_session.rs"]
mod tui_session;

fn app_with_lines(lines: usize, per_entry: usize, now: Instant) -> App {
    let mut app = tui_session::new_app(now);
    tui_session::add_reply_lines(&mut app, lines, per_entry, now);
    app
}

fn app_with_code(lines: usize, now: Instant) -> App {
    let mut app = tui_session::new_app(now);
    tui_session::add_code_reply(&mut app, lines, now);
    app
}

fn app_with_output(bytes: usize, now: Instant) -> App {
    let mut app = tui_session::new_app(now);
    tui_session::add_tool_output(&mut app, bytes, now);
    app
}

/// The session picker open over `n` stored sessions, half of them this
/// workspace's (the listing is filtered on every frame).
fn app_with_picker(n: usize, now: Instant) -> App {
    use waypoint::session::{Card, SessionInfo};
    let now_ms = 1_796_267_100_000;
    let sessions = (0..n as u64)
        .map(|i| SessionInfo {
            card: Card {
                id: format!("{i:08x}-0000-4000-8000-000000000000"),
                workspace: if i % 2 == 0 {
                    "/work/project"
                } else {
                    "/srv/other"
                }
                .into(),
                provider: "anthropic".into(),
                model: "claude-sonnet-4-5".into(),
                started_ms: now_ms - i * 60_000,
                updated_ms: now_ms - i * 60_000,
                first_prompt: Some(format!("Task number {i}: fix the flaky login test")),
                plan_done: 1,
                plan_total: 3,
                records: 10,
                size: 14_000,
                ..Card::default()
            },
            path: format!("/tmp/{i}.jsonl").into(),
            size: 14_000,
        })
        .collect();
    let mut app = tui_session::new_app(now);
    app.overlays.picker = Some(waypoint::tui::state::Picker::new(
        sessions,
        "/work/project",
        now_ms,
    ));
    app
}

/// The approval prompt open over a call: a `bash` command of `lines`
/// lines, or a write of a new file of `lines` lines (all of it in the diff).
fn app_with_approval(lines: usize, write: bool, now: Instant) -> App {
    use waypoint::events::{ApprovalReason, Event, ToolDetail, ToolSummary};
    let mut app = tui_session::new_app(now);
    let text: String = (0..lines)
        .map(|i| format!("echo line {i} of a long generated script\n"))
        .collect();
    let (name, summary, command) = if write {
        let detail = ToolDetail::Diff {
            path: "gen.sh".into(),
            old: String::new(),
            new: text,
            first: 0,
        };
        (
            "write_file",
            ToolSummary {
                line: "gen.sh".into(),
                detail,
            },
            None,
        )
    } else {
        ("bash", ToolSummary::default(), Some(text))
    };
    let event = Event::ApprovalRequested {
        id: "t1".into(),
        name: name.into(),
        summary,
        command,
        cwd: "/work/project".into(),
        reason: ApprovalReason::Mode,
    };
    update::on_event(&mut app, event, now);
    app
}

fn frame(term: &mut Terminal<TestBackend>, app: &mut App, now: Instant) {
    term.draw(|f| view::draw(f, app, now)).unwrap();
}

fn first_frame(c: &mut Criterion) {
    c.bench_function("tui/first_frame_120x40", |b| {
        b.iter(|| {
            let now = Instant::now();
            let mut app = App::new("claude-bench", "/work/project", Palette::colored(), now);
            let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
            frame(&mut term, &mut app, now);
            black_box(term.backend().buffer().area);
        })
    });
}

fn frames(c: &mut Criterion) {
    let now = Instant::now();
    // The app loads the highlighter on a thread when code first needs it.
    waypoint::tui::markdown::warm_up();
    let mut group = c.benchmark_group("tui/frame");
    group.measurement_time(Duration::from_secs(4));
    let mut cases: Vec<(&str, App)> = vec![
        ("conversation_100_lines", app_with_lines(100, 50, now)),
        (
            "conversation_100k_lines_in_50_line_replies",
            app_with_lines(100_000, 50, now),
        ),
        (
            "conversation_100k_lines_in_one_reply",
            app_with_lines(100_000, 100_000, now),
        ),
        (
            "tool_output_10MB_folded",
            app_with_output(10 * 1024 * 1024, now),
        ),
        (
            "conversation_highlighted_rust_200_lines",
            app_with_code(200, now),
        ),
        ("session_picker_10_sessions", app_with_picker(10, now)),
        ("session_picker_10k_sessions", app_with_picker(10_000, now)),
        ("approval_command_3_lines", app_with_approval(3, false, now)),
        (
            "approval_command_10k_lines",
            app_with_approval(10_000, false, now),
        ),
        (
            "approval_write_10k_lines",
            app_with_approval(10_000, true, now),
        ),
        ("tool_output_10MB_expanded", {
            let mut a = app_with_output(10 * 1024 * 1024, now);
            a.focus = Focus::Trace;
            update::on_key(
                &mut a,
                KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
                now,
            );
            a
        }),
    ];
    for (name, app) in &mut cases {
        let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
        frame(&mut term, app, now); // wraps and caches once, as the first frame after a change does
        group.bench_function(*name, |b| b.iter(|| frame(&mut term, app, now)));
    }
    // Scrolled to the middle of the long conversation.
    let mut scrolled = app_with_lines(100_000, 50, now);
    scrolled.focus = Focus::Conversation;
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
    frame(&mut term, &mut scrolled, now);
    for _ in 0..1000 {
        update::on_key(
            &mut scrolled,
            KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE),
            now,
        );
    }
    frame(&mut term, &mut scrolled, now);
    group.bench_function("conversation_100k_lines_scrolled_up", |b| {
        b.iter(|| frame(&mut term, &mut scrolled, now))
    });
    group.finish();
}

/// The frame that first shows a reply with 200 lines of Rust: it starts
/// highlighting it then (at most `LINES_PER_RENDER` lines a frame; the
/// syntaxes are loaded before measuring: the app loads them on a thread).
fn highlight(c: &mut Criterion) {
    let now = Instant::now();
    waypoint::tui::markdown::warm_up();
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
    c.bench_function("tui/frame/highlighted_rust_200_lines_first_layout", |b| {
        b.iter_batched(
            || app_with_code(200, now),
            |mut app| frame(&mut term, &mut app, now),
            criterion::BatchSize::SmallInput,
        )
    });
}

/// The plan's forecast over a full plan (20 items, half done): computed
/// once per `PlanStats`, never per frame or per round.
fn forecast(c: &mut Criterion) {
    use waypoint::todo::{ItemStats, TodoStatus};
    let stats: Vec<ItemStats> = (0..20u64)
        .map(|i| ItemStats {
            id: i.to_string(),
            content: format!("item {i}"),
            status: Some(match i {
                0..10 => TodoStatus::Completed,
                10 => TodoStatus::InProgress,
                _ => TodoStatus::Pending,
            }),
            time_ms: 50_000 + i * 1_000,
            cost_usd: Some(0.01 * i as f64),
            ..ItemStats::default()
        })
        .collect();
    c.bench_function("tui/forecast_20_items", |b| {
        b.iter(|| waypoint::todo::forecast(black_box(&stats)))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_millis(500));
    targets = first_frame, frames, highlight, forecast
}
criterion_main!(benches);
