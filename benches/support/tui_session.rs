//! Builds big TUI sessions from engine events, for the TUI benchmark and the
//! memory example: many lines of replies, and one huge tool output.

use std::time::Instant;

use serde_json::json;
use waypoint::events::{Event, ToolStatus};
use waypoint::tui::state::App;
use waypoint::tui::style::Palette;
use waypoint::tui::update;

pub fn new_app(now: Instant) -> App {
    App::new("claude-bench", "/work/project", Palette::colored(), now)
}

/// Adds `lines` lines of Markdown replies, `per_entry` lines to a reply.
pub fn add_reply_lines(app: &mut App, lines: usize, per_entry: usize, now: Instant) {
    update::on_event(app, Event::TurnStarted { resumed: false }, now);
    let mut n = 0;
    while n < lines {
        update::on_event(app, Event::RoundStarted { round: 1 }, now);
        let mut text = String::new();
        for i in 0..per_entry.min(lines - n) {
            text.push_str(&format!(
                "Line {} of the reply with `code` and **bold** words.\n",
                n + i
            ));
        }
        n += per_entry;
        update::on_event(app, Event::TextDelta { text }, now);
    }
}

/// Adds one reply with a fenced Rust block of `lines` lines (highlighted).
#[allow(dead_code)] // the memory example does not use it
pub fn add_code_reply(app: &mut App, lines: usize, now: Instant) {
    update::on_event(app, Event::TurnStarted { resumed: false }, now);
    update::on_event(app, Event::RoundStarted { round: 1 }, now);
    let mut text = String::from("Here is the code:\n\n```rust\n");
    for i in 0..lines {
        text.push_str(&format!(
            "    let value_{i} = compute(\"item {i}\", {i}) + 1; // step {i}\n"
        ));
    }
    text.push_str("```\n");
    update::on_event(app, Event::TextDelta { text }, now);
}

/// Adds one `bash` call whose output streams `bytes` bytes.
pub fn add_tool_output(app: &mut App, bytes: usize, now: Instant) {
    let begin = Event::ToolCallBegin {
        id: "t".into(),
        name: "bash".into(),
        summary: waypoint::events::ToolSummary {
            line: "cat big.log".into(),
            detail: waypoint::events::ToolDetail::Output,
        },
        input: json!({"command": "cat big.log"}),
        plan_item_id: None,
        plan_item: None,
    };
    update::on_event(app, begin, now);
    let chunk =
        "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 log line\n"
            .repeat(400);
    let mut sent = 0;
    while sent < bytes {
        update::on_event(
            app,
            Event::ToolCallOutputDelta {
                id: "t".into(),
                chunk: chunk.clone(),
            },
            now,
        );
        sent += chunk.len();
    }
    let end = Event::ToolCallEnd {
        id: "t".into(),
        name: "bash".into(),
        status: ToolStatus::Ok,
        outcome: waypoint::events::ToolOutcome::Ok,
        duration_ms: 900,
        output: String::new(),
        exit_code: Some(0),
    };
    update::on_event(app, end, now);
}
