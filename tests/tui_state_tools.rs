//! Tool calls in the conversation: one-line cells, a running command's
//! last lines, failures, and opening a call whole in the trace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tui_support::*;
use waypoint::events::{AbortReason, Event, ToolStatus};
use waypoint::todo::TodoStatus;
use waypoint::tui::state::{EntryKind, Focus, TraceStatus};
use waypoint::tui::update;

#[test]
fn a_failed_edit_shows_no_diff() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let input = json!({"path": "src/cli.rs", "old_text": "pub struct Cli {}\n", "new_text": "pub struct Cli { verbose: bool }\n"});
    update::on_event(
        &mut a,
        begin("e1", "edit_file", "src/cli.rs", input.clone(), None),
        clock.at(0.0),
    );
    update::on_event(
        &mut a,
        end(
            "e1",
            "edit_file",
            ToolStatus::Error,
            2,
            "Error: old_text was not found in src/cli.rs",
        ),
        clock.at(0.1),
    );
    a.focus = Focus::Trace;
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(1.0));
    assert!(a.root.trace.expanded);
    let s = screen_text(&mut a, 120, 40, clock.at(1.0));
    assert!(s.contains("old_text was not found"), "{s}");
    assert!(!s.contains("+ pub struct Cli { verbose"), "{s}");
    assert!(!s.contains("- pub struct Cli {}"), "{s}");
    // The same edit succeeding shows its diff.
    update::on_event(
        &mut a,
        begin("e2", "edit_file", "src/cli.rs", input, None),
        clock.at(2.0),
    );
    update::on_event(
        &mut a,
        end("e2", "edit_file", ToolStatus::Ok, 2, "Edited src/cli.rs"),
        clock.at(2.1),
    );
    // Fold, select the newest, expand.
    for k in [KeyCode::Enter, KeyCode::End, KeyCode::Enter] {
        update::on_key(&mut a, key(k), clock.at(3.0));
    }
    assert!(a.root.trace.expanded);
    assert_eq!(a.root.trace.selected, Some(1));
    let s = screen_text(&mut a, 120, 40, clock.at(3.0));
    assert!(s.contains("+ pub struct Cli { verbose: bool }"), "{s}");
}

#[test]
fn a_non_zero_exit_fails_the_call_and_a_refused_plan_is_noticed() {
    let clock = Clock::new();
    let mut a = failed_tool(&clock);
    let bash = a.root.trace.entries.iter().find(|t| t.id == "t3").unwrap();
    assert_eq!(bash.status, TraceStatus::Error);
    assert_eq!(bash.exit_code, Some(3));
    let plan = a.root.trace.entries.iter().find(|t| t.id == "t4").unwrap();
    let reason = plan.refusal.as_deref().unwrap();
    assert!(reason.ends_with("send the whole list again."), "{reason}");
    assert_eq!(
        a.root.plan.refused.as_deref(),
        Some("items 2 (\"Add the flag\") and 3 (\"Run the tests\") are both in_progress")
    );
    // The one-line plan says so too.
    let line = waypoint::tui::widgets::checklist::summary_line(&a.root.plan, &a.ctx(clock.at(8.0)));
    let line: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(line.contains("update refused"), "{line}");
    // Exit code 0 is a success.
    update::on_event(
        &mut a,
        begin("t5", "bash", "ls", json!({"command": "ls"}), None),
        clock.at(8.0),
    );
    update::on_event(
        &mut a,
        Event::ToolCallEnd {
            id: "t5".into(),
            name: "bash".into(),
            status: ToolStatus::Ok,
            outcome: waypoint::events::ToolOutcome::Ok,
            duration_ms: 5,
            output: "a\n".into(),
            exit_code: Some(0),
        },
        clock.at(8.1),
    );
    assert_eq!(a.root.trace.entries.last().unwrap().status, TraceStatus::Ok);
    // The next accepted update clears the notice.
    update::on_event(
        &mut a,
        plan_event(
            vec![item("1", "Read the CLI code", TodoStatus::InProgress)],
            Default::default(),
        ),
        clock.at(9.0),
    );
    assert_eq!(a.root.plan.refused, None);
}

#[test]
fn a_running_command_shows_its_last_lines_under_its_cell() {
    let clock = Clock::new();
    let mut a = plan_in_progress(&clock);
    update::on_event(
        &mut a,
        begin("t9", "bash", "make", json!({"command": "make"}), None),
        clock.at(7.0),
    );
    for chunk in ["one\ntwo\n", "three\nfour \x1b[31mred\x1b[0m\n\n"] {
        update::on_event(
            &mut a,
            Event::ToolCallOutputDelta {
                id: "t9".into(),
                chunk: chunk.into(),
            },
            clock.at(8.0),
        );
    }
    let s = screen_text(&mut a, 80, 24, clock.at(9.0));
    assert!(!s.contains('\x1b'), "{s}");
    let lines: Vec<&str> = s.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("⠋ bash make"))
        .unwrap_or_else(|| panic!("{s}"));
    let tail: Vec<&str> = lines[at + 1..at + 4]
        .iter()
        .map(|l| l.trim_start_matches('│').trim_end_matches('│').trim())
        .collect();
    assert_eq!(tail, ["│ two", "│ three", "│ four red"], "{s}");
    assert!(!s.contains("│ one"), "only the last three: {s}");
    // It ends well: the command keeps its last lines; a read shows none.
    update::on_event(
        &mut a,
        end("t9", "bash", ToolStatus::Ok, 1200, ""),
        clock.at(10.0),
    );
    update::on_event(
        &mut a,
        begin("t10", "read_file", "a.rs", json!({"path": "a.rs"}), None),
        clock.at(10.0),
    );
    update::on_event(
        &mut a,
        end("t10", "read_file", ToolStatus::Ok, 3, "1\tfn main() {}\n"),
        clock.at(10.1),
    );
    let s = screen_text(&mut a, 80, 24, clock.at(11.0));
    assert!(s.contains("│ four red"), "{s}");
    assert!(!s.contains("fn main"), "{s}");
}

#[test]
fn enter_in_the_conversation_opens_the_last_call_whole_in_the_trace() {
    let clock = Clock::new();
    let now = clock.at(9.0);
    let mut a = failed_tool(&clock);
    a.focus = Focus::Conversation;
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert_eq!(a.focus, Focus::Trace);
    assert!(a.root.trace.expanded);
    let selected = a
        .root
        .trace
        .selected
        .map(|i| a.root.trace.entries[i].name.clone());
    assert_eq!(selected.as_deref(), Some("todo_write"), "the latest call");
    // At 80x24 the trace is a tab of its own: it is the one on screen now.
    let s = screen_text(&mut a, 80, 24, now);
    assert!(s.contains("todo_write 3 items · Enter folds"), "{s}");
    assert!(!s.contains("Conversation"), "{s}");
    // Enter again folds it.
    update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(!a.root.trace.expanded);
}

#[test]
fn each_tool_call_has_a_one_line_cell_in_the_conversation() {
    let clock = Clock::new();
    let mut a = failed_tool(&clock);
    let cells: Vec<(EntryKind, &str)> = a
        .root
        .conversation
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Tool(_)))
        .map(|e| (e.kind, e.text()))
        .collect();
    assert_eq!(
        cells,
        vec![
            (
                EntryKind::Tool(TraceStatus::Ok),
                "read_file src/cli.rs · 4 ms"
            ),
            (
                EntryKind::Tool(TraceStatus::Ok),
                "edit_file src/cli.rs +3 −1 · 2 ms"
            ),
            (
                EntryKind::Tool(TraceStatus::Error),
                "bash cargo test · 2.0 s · exit 3"
            ),
            (
                EntryKind::Tool(TraceStatus::Error),
                "todo_write 3 items · 1 ms · refused"
            ),
        ]
    );
    // At 80x24 the conversation alone shows the work, one line per call,
    // with no blank line between calls; a hostile name is cleaned.
    update::on_event(
        &mut a,
        begin(
            "t5",
            "bash",
            "echo \x1b[2Jhi\nthere",
            json!({"command": "echo"}),
            None,
        ),
        clock.at(8.0),
    );
    let s = screen_text(&mut a, 80, 24, clock.at(9.0));
    assert!(!s.contains('\x1b'));
    let lines: Vec<&str> = s.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("✘ bash cargo test · 2.0 s · exit 3"))
        .unwrap_or_else(|| panic!("{s}"));
    // The failed command's last three lines of output follow its cell; the
    // refused plan update says why under its own cell.
    for k in 1..=3 {
        assert!(lines[at + k].starts_with("│    │ "), "{s}");
    }
    assert!(lines[at + 3].contains("test cli::parses ... ok"), "{s}");
    assert!(lines[at + 4].contains("✘ todo_write 3 items"), "{s}");
    assert!(
        lines[at + 5].starts_with("│    │ ") && lines[at + 5].contains("both in_"),
        "{s}"
    );
    // A running call: a spinner and its running time, which moves with
    // each redraw (the lines are cached; this one is drawn live).
    assert!(lines[at + 6].contains("⠋ bash echo"), "{s}");
    assert!(lines[at + 6].contains(" · 1s"), "{s}");
    let later = screen_text(&mut a, 80, 24, clock.at(11.45));
    let line = later
        .lines()
        .find(|l| l.contains("bash echo"))
        .unwrap_or_else(|| panic!("{later}"));
    assert!(
        line.contains("⠼ bash echo") && line.contains(" · 3s"),
        "{line}"
    );
    let much_later = screen_text(&mut a, 80, 24, clock.at(8.0 + 75.0));
    assert!(much_later.contains(" · 1:15"), "{much_later}");
}

#[test]
fn a_cell_shows_the_command_s_own_lines_and_a_refused_connection_says_what_to_do() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "go", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    for (id, output) in [
        ("t1", "built ok\nall fine\n[exit code: 0]"),
        ("t2", "(no output)\n[exit code: 0]"),
    ] {
        update::on_event(
            &mut a,
            begin(id, "bash", "make", json!({"command": "make"}), None),
            clock.at(0.2),
        );
        update::on_event(
            &mut a,
            Event::ToolCallEnd {
                id: id.into(),
                name: "bash".into(),
                status: ToolStatus::Ok,
                outcome: waypoint::events::ToolOutcome::Ok,
                duration_ms: 5,
                output: output.into(),
                exit_code: Some(0),
            },
            clock.at(0.3),
        );
    }
    let s = screen_text(&mut a, 120, 40, clock.at(0.4));
    assert!(s.contains("all fine"), "{s}");
    assert!(!s.contains("[exit code: 0]"), "{s}");
    assert!(!s.contains("(no output)"), "{s}");
    update::on_event(
        &mut a,
        Event::TurnAborted {
            reason: AbortReason::Failed,
            message: "gave up after 2 attempts: nothing is listening at http://127.0.0.1:9; is the server running?".into(),
            error: Some(waypoint::events::ErrorKind::Unreachable),
        },
        clock.at(0.5),
    );
    let s = screen_text(&mut a, 120, 40, clock.at(0.6));
    assert!(s.contains("is the server running? Start it"), "{s}");
    assert!(!s.contains("?."), "{s}");
}
