//! Memory after a big TUI session: a 100,000-line conversation and a 10 MB
//! tool output, rendered once at 120x40. Prints resident memory (VmRSS and
//! the peak VmHWM from /proc/self/status) before and after, and where the
//! tool output went (it spills to a file past the in-memory cap).
//! `cargo run --release --example tui_memory`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use waypoint::events::{Event, ToolStatus};
use waypoint::tui::state::App;
use waypoint::tui::style::Palette;
use waypoint::tui::{update, view};

fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() {
    println!("start: {}", rss());
    let now = Instant::now();
    let mut app = App::new("claude-bench", "/work/project", Palette::colored(), now);
    update::on_event(&mut app, Event::TurnStarted { resumed: false }, now);
    for block in 0..2000 {
        update::on_event(&mut app, Event::RoundStarted { round: 1 }, now);
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!(
                "Line {} of the reply with `code` and **bold** words.\n",
                block * 50 + i
            ));
        }
        update::on_event(&mut app, Event::TextDelta { text }, now);
    }
    let begin = Event::ToolCallBegin {
        id: "t".into(),
        name: "bash".into(),
        summary: "cat big.log".into(),
        input: json!({"command": "cat big.log"}),
        plan_item_id: None,
        plan_item: None,
    };
    update::on_event(&mut app, begin, now);
    let chunk =
        "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ log line\n".repeat(400);
    let mut sent = 0;
    while sent < 10 * 1024 * 1024 {
        update::on_event(
            &mut app,
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
        duration_ms: 1,
        output: String::new(),
    };
    update::on_event(&mut app, end, now);
    println!("after 100k lines + 10 MB output: {}", rss());
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| view::draw(f, &app, now)).unwrap();
    println!(
        "after the first frame (100k lines wrapped; only visible ones kept): {}",
        rss()
    );
    let t = &app.trace[0];
    println!(
        "tool output: {} bytes total, {} held in memory, full copy on disk at {}",
        t.output.total_bytes(),
        t.output.total_bytes() - t.output.dropped_bytes(),
        t.output
            .spill_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(none)".into())
    );
}
