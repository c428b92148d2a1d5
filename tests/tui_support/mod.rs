//! Builders of TUI states from engine events, shared by the snapshot and
//! state-machine tests; times are offsets from one base instant so frames
//! are deterministic.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use waypoint::chat::Usage;
use waypoint::events::{AbortReason, Event, Failure, Refuser, ToolOutcome, ToolStatus};
use waypoint::todo::{PlanDiff, TodoItem, TodoStatus};
use waypoint::tui::state::{App, EntryKind};
use waypoint::tui::style::Palette;
use waypoint::tui::update::{self, Effect};
use waypoint::tui::view;

pub struct Clock {
    pub base: Instant,
}

impl Clock {
    pub fn new() -> Self {
        Self {
            base: Instant::now(),
        }
    }
    pub fn at(&self, secs: f64) -> Instant {
        self.base + Duration::from_secs_f64(secs)
    }
}

pub fn app(clock: &Clock) -> App {
    App::new(
        "claude-test",
        "/work/project",
        Palette::monochrome(),
        clock.base,
    )
}

/// The texts of the conversation's notices, oldest first.
pub fn notices(a: &App) -> Vec<&str> {
    a.root
        .conversation
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Notice(_)))
        .map(|e| e.text())
        .collect()
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn type_text(app: &mut App, text: &str, now: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    for c in text.chars() {
        effects.extend(update::on_key(app, key(KeyCode::Char(c)), now));
    }
    effects
}

pub fn item(id: &str, content: &str, status: TodoStatus) -> TodoItem {
    let active_form = match content {
        "Read the CLI code" => "Reading the CLI code",
        "Add the flag" => "Adding the flag",
        "Run the tests" => "Running the tests",
        other => other,
    };
    TodoItem {
        id: id.into(),
        content: content.into(),
        status,
        active_form: active_form.into(),
        scope: Default::default(),
    }
}

pub fn plan_event(items: Vec<TodoItem>, diff: PlanDiff) -> Event {
    Event::PlanUpdated {
        rendered: String::new(),
        items,
        diff,
        revision: 0,
        author: waypoint::todo::Author::Model,
        at: 0,
        note: None,
    }
}

pub fn begin(
    id: &str,
    name: &str,
    summary: &str,
    input: serde_json::Value,
    plan_item: Option<&str>,
) -> Event {
    // The detail (plan, diff) as the engine's registry gives it.
    let mut summary_of = waypoint::tools::ToolRegistry::standard().summarize(name, &input);
    summary_of.line = summary.into();
    Event::ToolCallBegin {
        id: id.into(),
        name: name.into(),
        summary: summary_of,
        input,
        plan_item_id: None,
        plan_item: plan_item.map(str::to_string),
    }
}

pub fn end(id: &str, name: &str, status: ToolStatus, ms: u64, output: &str) -> Event {
    Event::ToolCallEnd {
        id: id.into(),
        name: name.into(),
        status,
        outcome: outcome_of(status),
        duration_ms: ms,
        output: output.into(),
        exit_code: None,
    }
}

/// The outcome the engine sends with `status` for a call that ran.
pub fn outcome_of(status: ToolStatus) -> ToolOutcome {
    match status {
        ToolStatus::Ok => ToolOutcome::Ok,
        ToolStatus::Error => ToolOutcome::Failed {
            failure: Failure::Tool,
        },
        ToolStatus::Interrupted => ToolOutcome::Interrupted { partial: false },
    }
}

pub fn text(t: &str) -> Event {
    Event::TextDelta { text: t.into() }
}

/// A session with a plan in progress and a command running.
pub fn plan_in_progress(clock: &Clock) -> App {
    let mut a = app(clock);
    let t0 = clock.at(0.0);
    type_text(&mut a, "Add a --verbose flag to the CLI and test it", t0);
    update::on_key(&mut a, key(KeyCode::Enter), t0);
    let events = vec![
        (0.1, Event::TurnStarted { resumed: false }),
        (0.1, Event::RoundStarted { round: 1 }),
        (
            0.5,
            text(
                "I'll plan this first.\n\n## Steps\n- read `src/cli.rs`\n- add the **flag**\n- run the tests",
            ),
        ),
        (
            1.0,
            plan_event(
                vec![
                    item("1", "Read the CLI code", TodoStatus::InProgress),
                    item("2", "Add the flag", TodoStatus::Pending),
                    item("3", "Run the tests", TodoStatus::Pending),
                ],
                PlanDiff {
                    added: vec![
                        "Read the CLI code".into(),
                        "Add the flag".into(),
                        "Run the tests".into(),
                    ],
                    ..PlanDiff::default()
                },
            ),
        ),
        (
            1.2,
            begin(
                "t1",
                "read_file",
                "src/cli.rs",
                json!({"path": "src/cli.rs"}),
                Some("Read the CLI code"),
            ),
        ),
        (
            1.3,
            end(
                "t1",
                "read_file",
                ToolStatus::Ok,
                4,
                "     1\tuse clap::Parser;\n     2\t\n     3\tpub struct Cli {}\n",
            ),
        ),
        (2.0, Event::RoundStarted { round: 2 }),
        (
            3.0,
            plan_event(
                vec![
                    item("1", "Read the CLI code", TodoStatus::Completed),
                    item("2", "Add the flag", TodoStatus::Completed),
                    item("3", "Run the tests", TodoStatus::InProgress),
                ],
                PlanDiff {
                    completed: vec!["Read the CLI code".into(), "Add the flag".into()],
                    started: vec!["Run the tests".into()],
                    ..PlanDiff::default()
                },
            ),
        ),
        (
            3.5,
            begin(
                "t2",
                "edit_file",
                "src/cli.rs",
                json!({"path": "src/cli.rs", "old_text": "pub struct Cli {}\n", "new_text": "pub struct Cli {\n    verbose: bool,\n}\n"}),
                Some("Add the flag"),
            ),
        ),
        (
            3.6,
            end(
                "t2",
                "edit_file",
                ToolStatus::Ok,
                2,
                "Edited src/cli.rs: replaced 1 occurrence",
            ),
        ),
        (
            4.0,
            begin(
                "t3",
                "bash",
                "cargo test",
                json!({"command": "cargo test"}),
                Some("Run the tests"),
            ),
        ),
        (
            4.5,
            Event::ToolCallOutputDelta {
                id: "t3".into(),
                chunk: "   Compiling demo v0.1.0\nrunning 12 tests\ntest cli::parses ... ok\n"
                    .into(),
            },
        ),
        (
            4.6,
            Event::Usage {
                model: "claude-test".into(),
                request: Usage::uncached(1200, 300),
                totals: Usage::uncached(5400, 900),
            },
        ),
    ];
    for (at, ev) in events {
        update::on_event(&mut a, ev, clock.at(at));
    }
    a
}

/// The engine's result for a tool stopped by Esc when its own cancel wins
/// the race (bash's own result adds the output so far after this line).
pub const INTERRUPTED_RESULT: &str = "Error: interrupted by the user before this tool finished.";

/// The same session after Esc stopped the command (its output streamed).
pub fn interrupted(clock: &Clock) -> App {
    let mut a = plan_in_progress(clock);
    update::on_event(
        &mut a,
        end(
            "t3",
            "bash",
            ToolStatus::Interrupted,
            8000,
            INTERRUPTED_RESULT,
        ),
        clock.at(12.0),
    );
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "interrupted while tools were running".into(),
            error: None,
        },
        clock.at(12.0),
    );
    type_text(&mut a, "use --quiet instead", clock.at(13.0));
    a
}

/// Renders the whole screen at `w`x`h`.
pub fn screen(app: &mut App, w: u16, h: u16, now: Instant) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::draw(f, app, now)).unwrap();
    t
}

pub fn screen_text(app: &mut App, w: u16, h: u16, now: Instant) -> String {
    let t = screen(app, w, h, now);
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Feeds `events` to `app`, each at its offset in seconds.
pub fn feed(app: &mut App, clock: &Clock, events: Vec<(f64, Event)>) {
    for (t, e) in events {
        update::on_event(app, e, clock.at(t));
    }
}

/// One request's usage: `cache_read` of its prompt read from the cache.
pub fn usage(input: u64, cache_read: u64, output: u64, totals: (u64, u64, u64)) -> Event {
    Event::Usage {
        model: "claude-test".into(),
        request: Usage {
            cache_read_tokens: cache_read,
            ..Usage::uncached(input, output)
        },
        totals: Usage {
            cache_read_tokens: totals.1,
            ..Usage::uncached(totals.0, totals.2)
        },
    }
}

/// A plan in progress whose last request read most of its prompt from
/// the cache, and whose context is `percent` full of a 200k window.
pub fn context_at(clock: &Clock, percent: u64) -> App {
    let mut a = plan_in_progress(clock);
    feed(
        &mut a,
        clock,
        vec![
            (2.9, usage(500, 40_000, 200, (5_900, 40_000, 1_100))),
            (
                3.0,
                Event::ContextUsage {
                    used: percent * 2_000,
                    window: 200_000,
                },
            ),
        ],
    );
    a
}

/// A plan in progress, then a compaction with its summary (folded), and
/// the context meter after it.
pub fn compacted(clock: &Clock) -> App {
    let mut a = plan_in_progress(clock);
    let mut events = vec![
        (
            3.0,
            Event::ContextUsage {
                used: 171_000,
                window: 200_000,
            },
        ),
        (
            3.1,
            Event::CompactionBegin {
                reason: waypoint::events::CompactReason::Threshold,
            },
        ),
    ];
    for i in 1..=6 {
        events.push((
            3.2,
            Event::SummaryDelta {
                text: format!("- Summary point {i}: the CLI flag work so far.\n"),
            },
        ));
    }
    events.push((
        4.0,
        Event::CompactionEnd {
            before_tokens: 171_000,
            after_tokens: 14_000,
            fallback: false,
        },
    ));
    events.push((
        4.1,
        Event::ContextUsage {
            used: 14_000,
            window: 200_000,
        },
    ));
    feed(&mut a, clock, events);
    a
}

/// The instant the session listings below are read at (Unix ms).
pub const NOW_MS: u64 = 1_796_267_100_000;

fn session(
    id: &str,
    workspace: &str,
    model: &str,
    ago_ms: u64,
    plan: (usize, usize),
    size: u64,
    prompt: Option<&str>,
) -> waypoint::session::SessionInfo {
    waypoint::session::SessionInfo {
        card: waypoint::session::Card {
            id: id.into(),
            workspace: workspace.into(),
            provider: "anthropic".into(),
            model: model.into(),
            started_ms: NOW_MS - ago_ms - 600_000,
            updated_ms: NOW_MS - ago_ms,
            first_prompt: prompt.map(str::to_string),
            plan_done: plan.0,
            plan_total: plan.1,
            records: 12,
            size,
            ..waypoint::session::Card::default()
        },
        path: format!("/home/u/.local/share/waypoint/sessions/{id}.jsonl").into(),
        size,
    }
}

/// Stored sessions, most recent first: three of `/work/project` (the test
/// app's workspace) and two of other folders, one with a hostile prompt.
pub fn sessions() -> Vec<waypoint::session::SessionInfo> {
    vec![
        session(
            "3f9c2a1e-7b6d-4c1a-9e2f-0a1b2c3d4e5f",
            "/work/project",
            "claude-sonnet-4-5",
            300_000,
            (2, 3),
            14_500,
            Some("Fix the flaky login test and add a regression test for the token refresh path"),
        ),
        session(
            "c0ffee12-0000-4000-8000-000000000001",
            "/home/u/elsewhere/a-rather-long-folder-name/service",
            "claude-opus-4-1",
            3 * 3_600_000,
            (5, 5),
            3_200_000,
            Some("Rename \u{1b}[31mthe crate\u{1b}[0m\nacross the workspace\u{7}"),
        ),
        session(
            "a17b0c44-1111-4111-8111-111111111111",
            "/work/project",
            "gpt-5",
            5 * 3_600_000,
            (0, 0),
            812,
            Some("Explain src/cli.rs"),
        ),
        session(
            "d00d0001-2222-4222-8222-222222222222",
            "/work/project",
            "claude-sonnet-4-5",
            12 * 86_400_000,
            (1, 4),
            48_000,
            None,
        ),
        session(
            "e5e5e5e5-3333-4333-8333-333333333333",
            "/srv/other",
            "llama3.1:8b",
            20 * 86_400_000,
            (0, 2),
            2_000,
            Some("Set up CI"),
        ),
    ]
}

/// `app` with the session picker open over `sessions`, the first one open now.
pub fn with_picker(mut app: App, sessions: Vec<waypoint::session::SessionInfo>) -> App {
    let mut picker = waypoint::tui::state::Picker::new(sessions, "/work/project", NOW_MS);
    picker.current = picker.sessions.first().map(|s| s.card.id.clone());
    app.overlays.picker = Some(picker);
    app
}

/// The engine asking about a call (`bash` gets its command, every call
/// the registry's summary, a diff for an edit).
pub fn approval_request(
    id: &str,
    name: &str,
    input: serde_json::Value,
    reason: waypoint::events::ApprovalReason,
) -> Event {
    let summary = waypoint::tools::ToolRegistry::standard().summarize(name, &input);
    let command = input
        .get("command")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    Event::ApprovalRequested {
        id: id.into(),
        name: name.into(),
        summary,
        command,
        cwd: "/work/project".into(),
        reason,
    }
}

/// The session in progress, its command ended, then a call waiting for
/// approval (its `ToolCallBegin` came first, as the engine sends it).
pub fn waiting_for(clock: &Clock, id: &str, name: &str, input: serde_json::Value) -> App {
    waiting_for_because(
        clock,
        id,
        name,
        input,
        waypoint::events::ApprovalReason::Mode,
    )
}

pub fn waiting_for_because(
    clock: &Clock,
    id: &str,
    name: &str,
    input: serde_json::Value,
    reason: waypoint::events::ApprovalReason,
) -> App {
    let mut a = plan_in_progress(clock);
    let line = input
        .get("command")
        .or_else(|| input.get("path"))
        .and_then(|c| c.as_str())
        .unwrap_or_default()
        .to_string();
    let events = vec![
        (
            5.0,
            end("t3", "bash", ToolStatus::Ok, 500, "test result: ok"),
        ),
        (
            6.0,
            begin(id, name, &line, input.clone(), Some("Run the tests")),
        ),
        (6.0, approval_request(id, name, input, reason)),
    ];
    feed(&mut a, clock, events);
    a
}

/// A long `bash` command (two lines, one wider than any terminal).
pub fn long_command() -> serde_json::Value {
    json!({"command": "cargo test --all-features -- --test-threads 1 cli::parses_the_verbose_flag cli::rejects_unknown_flags cli::prints_help\necho done > /tmp/marker"})
}

/// An edit of a few lines, as `edit_file` takes it.
pub fn an_edit() -> serde_json::Value {
    json!({
        "path": "src/cli.rs",
        "old_text": "pub struct Cli {\n    quiet: bool,\n}\n",
        "new_text": "pub struct Cli {\n    quiet: bool,\n    /// Print every step.\n    verbose: bool,\n}\n",
    })
}

/// The session after `cargo test` exited 3 and a plan update was refused.
pub fn failed_tool(clock: &Clock) -> App {
    let mut a = plan_in_progress(clock);
    let refused = "Error: plan refused: items 2 (\"Add the flag\") and 3 (\"Run the tests\") are both in_progress; at most one item may be in progress at a time. The previous plan is unchanged; fix the list and send the whole list again. Current plan:\n[x] Read the CLI code\n[x] Add the flag\n[>] Run the tests\n";
    let events = vec![
        (
            6.0,
            Event::ToolCallEnd {
                id: "t3".into(),
                name: "bash".into(),
                status: ToolStatus::Ok,
                outcome: ToolOutcome::Ok,
                duration_ms: 2000,
                output: "test cli::verbose ... FAILED\nerror: test failed, to rerun pass `--lib`\n"
                    .into(),
                exit_code: Some(3),
            },
        ),
        (
            7.0,
            begin("t4", "todo_write", "3 items", json!({"todos": []}), None),
        ),
        (
            7.1,
            Event::ToolCallEnd {
                id: "t4".into(),
                name: "todo_write".into(),
                status: ToolStatus::Error,
                outcome: ToolOutcome::Refused {
                    by: Refuser::Plan,
                    reason: "items 2 (\"Add the flag\") and 3 (\"Run the tests\") are both in_progress; at most one item may be in progress at a time. The previous plan is unchanged; fix the list and send the whole list again.".into(),
                },
                duration_ms: 1,
                output: refused.into(),
                exit_code: None,
            },
        ),
    ];
    feed(&mut a, clock, events);
    a
}

/// A request retried three times (the server is overloaded), still waiting.
pub fn retrying(clock: &Clock) -> App {
    let mut a = plan_in_progress(clock);
    a.status.engine.set_max_retries(Some(6));
    let mut events = vec![(6.0, Event::RoundStarted { round: 3 })];
    for (i, attempt) in (1..=3).enumerate() {
        let at = 7.0 + i as f64 * 5.0;
        events.push((at, text("Let me")));
        events.push((
            at + 0.5,
            Event::Retrying {
                attempt,
                delay_ms: 1000 << attempt,
                reason: "overloaded".into(),
            },
        ));
    }
    feed(&mut a, clock, events);
    a
}

/// A plan of 20 items with item `active` (1-based) in progress.
pub fn long_plan(clock: &Clock, active: usize) -> App {
    let mut a = app(clock);
    let items = (1..=20)
        .map(|i| {
            let status = match i.cmp(&active) {
                std::cmp::Ordering::Less => TodoStatus::Completed,
                std::cmp::Ordering::Equal => TodoStatus::InProgress,
                std::cmp::Ordering::Greater => TodoStatus::Pending,
            };
            item(
                &i.to_string(),
                &format!("Step {i}: update module {i}"),
                status,
            )
        })
        .collect();
    feed(
        &mut a,
        clock,
        vec![
            (0.0, Event::TurnStarted { resumed: false }),
            (0.5, plan_event(items, PlanDiff::default())),
        ],
    );
    a.focus = waypoint::tui::state::Focus::Checklist;
    a
}

/// A session in colour, `prompt` sent at 0 s.
fn colored_after_prompt(clock: &Clock, prompt: &str) -> App {
    let mut a = App::new(
        "claude-test",
        "/work/project",
        Palette::colored(),
        clock.base,
    );
    let t0 = clock.at(0.0);
    type_text(&mut a, prompt, t0);
    update::on_key(&mut a, key(KeyCode::Enter), t0);
    a
}

/// A session in colour whose reply has a fenced Rust block.
pub fn highlighted_reply(clock: &Clock) -> App {
    let mut a = colored_after_prompt(clock, "Show me the parser");
    let reply = "Here is the parser:\n\n```rust\n/// Parses the flags.\npub fn parse(args: &[String]) -> Cli {\n    let verbose = args.iter().any(|a| a == \"--verbose\");\n    Cli { quiet: false, verbose } // 2 flags\n}\n```\n\nAnd in the shell:\n\n```\n$ cargo run -- --verbose\n```\n\nRun `cargo test` to check it.";
    feed(
        &mut a,
        clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.1, Event::RoundStarted { round: 1 }),
            (0.5, text(reply)),
            (
                1.0,
                Event::TurnComplete {
                    stop_reason: waypoint::events::StopReason::EndTurn,
                    open_items: 0,
                },
            ),
        ],
    );
    a
}

/// The old and new text of an edit with two changes far apart.
pub fn a_long_edit() -> serde_json::Value {
    let old: String = [
        "pub fn parse(args: &[String]) -> Cli {",
        "    let quiet = args.iter().any(|a| a == \"-q\");",
        "    let mut files = Vec::new();",
        "    for a in args {",
        "        if !a.starts_with('-') {",
        "            files.push(a.clone());",
        "        }",
        "    }",
        "    // Sort for stable output.",
        "    files.sort();",
        "    files.dedup();",
        "    Cli { quiet, files }",
        "}",
    ]
    .map(|l| format!("{l}\n"))
    .concat();
    let new = old
        .replace(
            "    let quiet = args.iter().any(|a| a == \"-q\");\n",
            "    let quiet = args.iter().any(|a| a == \"-q\");\n    let verbose = args.iter().any(|a| a == \"-v\");\n",
        )
        .replace(
            "    Cli { quiet, files }\n",
            "    Cli { quiet, verbose, files }\n",
        );
    json!({"path": "src/cli.rs", "old_text": old, "new_text": new})
}

/// A session in colour after that edit (at line 40 of the file), expanded
/// in the trace pane.
pub fn expanded_edit(clock: &Clock) -> App {
    let mut a = colored_after_prompt(clock, "Add a verbose flag");
    let output = "Edited src/cli.rs: replaced 1 occurrence\n@@ line 40 @@\n-    let quiet = args.iter().any(|a| a == \"-q\");\n+    let quiet = args.iter().any(|a| a == \"-q\");\n+    let verbose = args.iter().any(|a| a == \"-v\");";
    feed(
        &mut a,
        clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.1, Event::RoundStarted { round: 1 }),
            (0.5, text("Adding the flag.")),
            (
                1.0,
                begin("t1", "edit_file", "src/cli.rs", a_long_edit(), None),
            ),
            (1.0, end("t1", "edit_file", ToolStatus::Ok, 3, output)),
        ],
    );
    a.focus = waypoint::tui::state::Focus::Trace;
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(2.0));
    a
}

/// One of each inline tool cell: done, failed with an exit code,
/// interrupted, and running (since 30 s).
pub fn tool_cells(clock: &Clock) -> App {
    let mut a = app(clock);
    let t0 = clock.at(0.0);
    type_text(&mut a, "Build it", t0);
    update::on_key(&mut a, key(KeyCode::Enter), t0);
    let failed = Event::ToolCallEnd {
        id: "t2".into(),
        name: "bash".into(),
        status: ToolStatus::Ok,
        outcome: ToolOutcome::Ok,
        duration_ms: 2100,
        output: "error: 1 test failed\n".into(),
        exit_code: Some(101),
    };
    feed(
        &mut a,
        clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.1, Event::RoundStarted { round: 1 }),
            (0.5, text("Reading first.")),
            (
                1.0,
                begin(
                    "t1",
                    "read_file",
                    "Cargo.toml",
                    json!({"path": "Cargo.toml"}),
                    None,
                ),
            ),
            (
                1.0,
                end("t1", "read_file", ToolStatus::Ok, 4, "[package]\n"),
            ),
            (
                2.0,
                begin(
                    "t2",
                    "bash",
                    "cargo test",
                    json!({"command": "cargo test"}),
                    None,
                ),
            ),
            (4.1, failed),
            (
                5.0,
                begin(
                    "t3",
                    "bash",
                    "sleep 100",
                    json!({"command": "sleep 100"}),
                    None,
                ),
            ),
            (
                9.0,
                end("t3", "bash", ToolStatus::Interrupted, 4000, "interrupted"),
            ),
            (
                30.0,
                begin(
                    "t4",
                    "bash",
                    "cargo build --release",
                    json!({"command": "cargo build --release"}),
                    None,
                ),
            ),
        ],
    );
    a
}
