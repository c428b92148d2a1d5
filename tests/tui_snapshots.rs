//! Snapshots of the whole screen and of each pane (ratatui `TestBackend`
//! + insta) at four sizes, for the states people meet most.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use tui_support::*;
use waypoint::tui::state::{App, Focus};
use waypoint::tui::update;
use waypoint::tui::view::{self, Pane};

const SIZES: [(u16, u16); 4] = [(200, 60), (120, 40), (80, 24), (40, 12)];

fn states(clock: &Clock) -> Vec<(&'static str, App)> {
    let empty = app(clock);
    let progress = plan_in_progress(clock);
    let mut expanded = plan_in_progress(clock);
    expanded.focus = Focus::Trace;
    update::on_key(&mut expanded, key(KeyCode::Up), clock.at(5.0));
    update::on_key(&mut expanded, key(KeyCode::Enter), clock.at(5.0));
    let interrupted = interrupted(clock);
    let mut help = plan_in_progress(clock);
    update::on_key(&mut help, key(KeyCode::F(1)), clock.at(5.0));
    vec![
        ("empty", empty),
        ("plan_in_progress", progress),
        ("expanded_output", expanded),
        ("interrupted", interrupted),
        ("help", help),
    ]
}

#[test]
fn whole_screen_at_every_size() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    for (name, mut app) in states(&clock) {
        for (w, h) in SIZES {
            let terminal = screen(&mut app, w, h, now);
            insta::assert_snapshot!(format!("screen_{name}_{w}x{h}"), terminal.backend());
        }
    }
}

fn pane(w: u16, h: u16, draw: impl FnOnce(&mut ratatui::Frame, Rect)) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| draw(f, f.area())).unwrap();
    t
}

#[test]
fn each_pane_at_every_size() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    for (name, mut app) in states(&clock) {
        if name == "help" {
            continue;
        }
        for (w, h) in SIZES {
            let (pw, ph) = (w / 2, h / 2);
            let t = pane(pw, ph, |f, r| {
                view::draw_pane(f, &mut app, Pane::Plan { collapsed: false }, r, now)
            });
            insta::assert_snapshot!(format!("checklist_{name}_{pw}x{ph}"), t.backend());
            let t = pane(pw, 1, |f, r| {
                view::draw_pane(f, &mut app, Pane::Plan { collapsed: true }, r, now)
            });
            insta::assert_snapshot!(format!("checklist_collapsed_{name}_{pw}x1"), t.backend());
            let t = pane(pw, ph, |f, r| {
                view::draw_pane(f, &mut app, Pane::Trace, r, now)
            });
            insta::assert_snapshot!(format!("trace_{name}_{pw}x{ph}"), t.backend());
            let t = pane(pw, ph, |f, r| {
                view::draw_pane(f, &mut app, Pane::Conversation, r, now)
            });
            insta::assert_snapshot!(format!("conversation_{name}_{pw}x{ph}"), t.backend());
            let t = pane(w, 1, |f, r| {
                view::draw_pane(f, &mut app, Pane::Status, r, now)
            });
            insta::assert_snapshot!(format!("status_{name}_{w}x1"), t.backend());
        }
    }
}

#[test]
fn tiny_and_odd_sizes_render_without_panicking() {
    let clock = Clock::new();
    for (_, mut app) in states(&clock) {
        for w in [1u16, 2, 5, 20, 39, 99, 100, 101] {
            for h in [1u16, 2, 3, 5, 8, 12] {
                let text = screen_text(&mut app, w, h, clock.at(42.0));
                assert_eq!(text.lines().count(), usize::from(h));
            }
        }
    }
}

#[test]
fn the_context_meter_and_a_compaction() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let states = [
        ("context_61", context_at(&clock, 61)),
        ("context_90", context_at(&clock, 90)),
        ("compacted", compacted(&clock)),
    ];
    for (name, mut app) in states {
        for (w, h) in [(80, 24), (120, 40)] {
            let terminal = screen(&mut app, w, h, now);
            insta::assert_snapshot!(format!("screen_{name}_{w}x{h}"), terminal.backend());
        }
    }
}

#[test]
fn the_slash_command_list() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    for (name, typed) in [("empty", "/"), ("filtered", "/mo"), ("no_match", "/zz")] {
        for (w, h) in [(80, 24), (120, 40)] {
            let mut a = plan_in_progress(&clock);
            type_text(&mut a, typed, now);
            let terminal = screen(&mut a, w, h, now);
            insta::assert_snapshot!(format!("commands_{name}_{w}x{h}"), terminal.backend());
        }
    }
}

#[test]
fn the_session_picker() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut all = with_picker(plan_in_progress(&clock), sessions());
    update::on_key(&mut all, key(KeyCode::Tab), now);
    update::on_key(&mut all, key(KeyCode::Down), now);
    let mut filtered = with_picker(plan_in_progress(&clock), sessions());
    type_text(&mut filtered, "expl", now);
    let mut none_here = with_picker(app(&clock), sessions());
    if let Some(p) = none_here.overlays.picker.as_mut() {
        p.sessions.retain(|s| s.card.workspace != "/work/project");
    }
    let states = [
        ("here", with_picker(plan_in_progress(&clock), sessions())),
        ("all_other_workspace", all),
        ("filtered", filtered),
        ("empty", with_picker(app(&clock), Vec::new())),
        ("none_here", none_here),
    ];
    for (name, mut app) in states {
        for (w, h) in [(80, 24), (120, 40)] {
            let terminal = screen(&mut app, w, h, now);
            insta::assert_snapshot!(format!("picker_{name}_{w}x{h}"), terminal.backend());
        }
        for w in [1u16, 2, 5, 20, 39, 60, 99] {
            for h in [1u16, 2, 3, 5, 8, 12] {
                let text = screen_text(&mut app, w, h, now);
                assert_eq!(text.lines().count(), usize::from(h));
            }
        }
    }
}

#[test]
fn the_approval_prompt() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut bash = waiting_for(&clock, "t4", "bash", long_command());
    bash.status
        .engine
        .set_approval(waypoint::events::ApprovalMode::Ask, false);
    // What was typed before it asked stays in the input, untouched.
    bash.input.set_text("kept while it asks");
    let mut edit = waiting_for(&clock, "t4", "edit_file", an_edit());
    edit.status
        .engine
        .set_approval(waypoint::events::ApprovalMode::Ask, false);
    let mut reason = waiting_for(&clock, "t4", "bash", long_command());
    update::on_key(&mut reason, key(KeyCode::Char('n')), now);
    type_text(&mut reason, "use the fast tests", now);
    for (name, mut app) in [("bash", bash), ("edit", edit), ("reason", reason)] {
        for (w, h) in [(80, 24), (120, 40)] {
            let terminal = screen(&mut app, w, h, now);
            insta::assert_snapshot!(format!("approval_{name}_{w}x{h}"), terminal.backend());
        }
    }
    let mut sandbox = waiting_for_because(
        &clock,
        "t4",
        "bash",
        serde_json::json!({"command": "npm install"}),
        waypoint::events::ApprovalReason::SandboxBlocked {
            what: "writing outside the workspace (~/.npm)".into(),
        },
    );
    sandbox
        .status
        .engine
        .set_approval(waypoint::events::ApprovalMode::Auto, true);
    let terminal = screen(&mut sandbox, 80, 24, now);
    insta::assert_snapshot!("approval_sandbox_blocked_80x24", terminal.backend());
    // A tool's own question (an MCP server's, a subagent's), after the
    // progress it reported.
    let mut asks = waiting_for_because(
        &clock,
        "t4",
        "release",
        serde_json::json!({}),
        waypoint::events::ApprovalReason::Tool {
            question: "Push the tag v1.0 to origin?".into(),
        },
    );
    feed(
        &mut asks,
        &clock,
        vec![(
            6.5,
            waypoint::events::Event::ToolCallProgress {
                id: "t4".into(),
                message: "tagged v1.0 locally".into(),
            },
        )],
    );
    let terminal = screen(&mut asks, 80, 24, now);
    insta::assert_snapshot!("approval_tool_question_80x24", terminal.backend());
    // An overwrite shows what it replaces; an edit is numbered from where
    // it is in the file (the engine reads both from the workspace).
    for (name, detail) in [
        (
            "overwrite",
            waypoint::events::ToolDetail::Diff {
                path: "greet.sh".into(),
                old: "#!/bin/sh\necho \"Hello, $1\"\nexit 0\n".into(),
                new: "#!/bin/sh\necho \"Hello, ${1:-world}!\"\nexit 0\n".into(),
                first: 1,
            },
        ),
        (
            "edit_at_line_40",
            waypoint::events::ToolDetail::Diff {
                path: "src/cli.rs".into(),
                old: "    pub verbose: bool,\n".into(),
                new: "    /// Say more.\n    pub verbose: bool,\n".into(),
                first: 40,
            },
        ),
    ] {
        let tool = if name == "overwrite" {
            "write_file"
        } else {
            "edit_file"
        };
        let mut app = waiting_for(&clock, "t4", tool, serde_json::json!({"path": "x"}));
        if let Some(request) = app.overlays.approvals.queue.front_mut() {
            request.summary.detail = detail;
        }
        app.overlays.approvals.cache = None;
        let terminal = screen(&mut app, 80, 24, now);
        insta::assert_snapshot!(format!("approval_{name}_80x24"), terminal.backend());
    }
    // An MCP server's tool: who it is, and its arguments as indented JSON;
    // "always" covers that tool.
    let mut mcp = waiting_for(
        &clock,
        "t4",
        "mcp__github__create_issue",
        serde_json::json!({}),
    );
    if let Some(request) = mcp.overlays.approvals.queue.front_mut() {
        request.summary.detail = waypoint::events::ToolDetail::Call {
            server: "github".into(),
            tool: "create_issue".into(),
            args: serde_json::to_string_pretty(&serde_json::json!({
                "owner": "acme",
                "repo": "widgets",
                "title": "Crash when the config file is empty",
                "labels": ["bug", "p1"]
            }))
            .unwrap(),
        };
    }
    mcp.overlays.approvals.cache = None;
    let terminal = screen(&mut mcp, 80, 24, now);
    insta::assert_snapshot!("approval_mcp_tool_80x24", terminal.backend());
    // Tiny and odd sizes draw without panicking.
    for w in [1u16, 2, 5, 20, 39, 60, 99] {
        for h in [1u16, 2, 3, 5, 8, 12] {
            let text = screen_text(&mut sandbox, w, h, now);
            assert_eq!(text.lines().count(), usize::from(h));
        }
    }
}

#[test]
fn a_failed_command_and_a_refused_plan() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let folded = failed_tool(&clock);
    // The failed command expanded (the entry before the refused plan).
    let mut bash = failed_tool(&clock);
    bash.focus = Focus::Trace;
    update::on_key(&mut bash, key(KeyCode::Up), now);
    update::on_key(&mut bash, key(KeyCode::Enter), now);
    // The refused plan update expanded: its whole reason, wrapped.
    let mut plan = failed_tool(&clock);
    plan.focus = Focus::Trace;
    update::on_key(&mut plan, key(KeyCode::Enter), now);
    for (name, mut app) in [("folded", folded), ("bash", bash), ("plan", plan)] {
        for (w, h) in [(80, 24), (120, 40)] {
            let terminal = screen(&mut app, w, h, now);
            insta::assert_snapshot!(format!("failed_{name}_{w}x{h}"), terminal.backend());
        }
    }
}

#[test]
fn a_retried_request_has_one_notice() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = retrying(&clock);
    for (w, h) in [(80, 24), (120, 40)] {
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("retrying_{w}x{h}"), terminal.backend());
    }
}

#[test]
fn a_long_plan_scrolls_to_its_end() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let following = long_plan(&clock, 20);
    let mut top = long_plan(&clock, 20);
    let mut end = long_plan(&clock, 5);
    let mut middle = long_plan(&clock, 5);
    // Lay out once (scrolling moves from what is shown), then scroll.
    for (a, keys) in [
        (&mut top, vec![KeyCode::Home]),
        (
            &mut end,
            vec![KeyCode::PageDown, KeyCode::PageDown, KeyCode::PageDown],
        ),
        (&mut middle, vec![KeyCode::Char('j'); 2]),
    ] {
        for k in keys {
            pane(60, 20, |f, r| {
                view::draw_pane(f, a, Pane::Plan { collapsed: false }, r, now)
            });
            update::on_key(a, key(k), now);
        }
    }
    let states = [
        ("following", following),
        ("top", top),
        ("end", end),
        ("middle", middle),
    ];
    for (name, mut app) in states {
        let t = pane(60, 20, |f, r| {
            view::draw_pane(f, &mut app, Pane::Plan { collapsed: false }, r, now)
        });
        insta::assert_snapshot!(format!("long_plan_{name}_60x20"), t.backend());
        if name == "middle" {
            for (w, h) in [(80, 24), (120, 40)] {
                let terminal = screen(&mut app, w, h, now);
                insta::assert_snapshot!(format!("long_plan_{name}_{w}x{h}"), terminal.backend());
            }
        }
    }
}

/// The foreground colour of the first cell where `needle` starts on screen.
fn fg_at(terminal: &Terminal<TestBackend>, needle: &str) -> ratatui::style::Color {
    let buf = terminal.backend().buffer();
    let want: Vec<String> = needle.chars().map(String::from).collect();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let fits = want.iter().enumerate().all(|(i, c)| {
                u16::try_from(i)
                    .ok()
                    .and_then(|i| x.checked_add(i))
                    .filter(|&xi| xi < buf.area.width)
                    .is_some_and(|xi| buf[(xi, y)].symbol() == c)
            });
            if fits {
                return buf[(x, y)].fg;
            }
        }
    }
    panic!("{needle:?} not on screen:\n{:?}", terminal.backend());
}

#[test]
fn a_reply_with_highlighted_code() {
    use ratatui::style::Color;
    let clock = Clock::new();
    let now = clock.at(42.0);
    // The app loads the syntaxes on a thread when code first needs them
    // (drawing plain code meanwhile); here they are loaded first.
    waypoint::tui::markdown::warm_up();
    let mut a = highlighted_reply(&clock);
    for (w, h) in [(80, 24), (120, 40)] {
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("highlighted_code_{w}x{h}"), terminal.backend());
        // The colours are checked too: keywords, strings, comments and
        // names differ from plain text; the unlabelled block is plain code.
        let plain = fg_at(&terminal, "Here is");
        assert_eq!(fg_at(&terminal, "pub fn"), Color::Magenta);
        assert_ne!(fg_at(&terminal, "pub fn"), plain);
        assert_eq!(fg_at(&terminal, "\"--verbose\""), Color::Green);
        assert_eq!(fg_at(&terminal, "parse("), Color::Blue);
        assert_ne!(fg_at(&terminal, "// 2 flags"), Color::Magenta);
        assert_eq!(fg_at(&terminal, "$ cargo run"), Color::Cyan);
        assert_eq!(fg_at(&terminal, "cargo test"), Color::Cyan);
    }
}

#[test]
fn an_edit_diff_with_line_numbers_and_context() {
    use ratatui::style::Color;
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = expanded_edit(&clock);
    // The inline cell counts the lines the edit adds and removes.
    let cell = a
        .root
        .conversation
        .entries
        .iter()
        .find(|e| e.tool.is_some())
        .map(|e| e.text().to_string());
    assert_eq!(cell.as_deref(), Some("edit_file src/cli.rs +2 −1 · 3 ms"));
    for (w, h) in [(80, 24), (120, 40)] {
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("edit_diff_{w}x{h}"), terminal.backend());
        let text = screen_text(&mut a, w, h, now);
        // Numbered from where the edit was, with one `⋯` between the hunks
        // and the tool's own raw diff not repeated below.
        assert!(text.contains("41 41   "), "{text}");
        assert!(text.contains("   42 + "), "{text}");
        assert_eq!(text.matches('⋯').count(), 1, "{text}");
        assert!(!text.contains("@@ line 40 @@"), "{text}");
        assert_eq!(fg_at(&terminal, "+     let verbose"), Color::Green);
        assert_eq!(fg_at(&terminal, "-     Cli {"), Color::Red);
    }
}

#[test]
fn inline_tool_cells() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = tool_cells(&clock);
    for (w, h) in [(80, 24), (120, 40)] {
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("tool_cells_{w}x{h}"), terminal.backend());
    }
}

/// An edit of line 10 of a 20-line file, as the engine describes it from
/// the file: three unchanged lines on each side, numbered, in the approval
/// prompt and in the trace's expanded view once it ran.
#[test]
fn an_edit_shows_three_lines_of_context() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let dir = tempfile::tempdir().unwrap();
    let file: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("notes.txt"), &file).unwrap();
    let ws = waypoint::tools::Workspace::new(dir.path()).unwrap();
    let input =
        serde_json::json!({"path": "notes.txt", "old_text": "line 10\n", "new_text": "line ten\n"});
    let summary = waypoint::tools::ToolRegistry::standard().describe("edit_file", &input, &ws);
    let mut app = waiting_for(&clock, "t4", "edit_file", input);
    if let Some(request) = app.overlays.approvals.queue.front_mut() {
        request.summary = summary.clone();
    }
    app.overlays.approvals.cache = None;
    let terminal = screen(&mut app, 80, 30, now);
    insta::assert_snapshot!("approval_edit_with_context_80x30", terminal.backend());
    // Once it ran, the trace's expanded view shows the same lines.
    let mut ran = plan_in_progress(&clock);
    let mut start = begin("t4", "edit_file", "notes.txt", serde_json::json!({}), None);
    if let waypoint::events::Event::ToolCallBegin { summary: s, .. } = &mut start {
        *s = summary;
    }
    feed(
        &mut ran,
        &clock,
        vec![
            (6.0, start),
            (
                6.5,
                end(
                    "t4",
                    "edit_file",
                    waypoint::events::ToolStatus::Ok,
                    3,
                    "Edited notes.txt: replaced 1 occurrence\n@@ line 10 @@\n-line 10\n+line ten",
                ),
            ),
        ],
    );
    ran.focus = Focus::Trace;
    update::on_key(&mut ran, key(KeyCode::Enter), clock.at(7.0));
    let text = screen_text(&mut ran, 100, 40, now);
    for want in [
        " 7  7   line 7",
        " 9  9   line 9",
        "10    - line 10",
        "   10 + line ten",
        "11 11   line 11",
        "13 13   line 13",
    ] {
        assert!(
            text.contains(want),
            "{want:?} missing from the trace:\n{text}"
        );
    }
    assert!(!text.contains("line 14"), "{text}");
}
