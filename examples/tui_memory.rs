//! Memory after a big TUI session: a 100,000-line conversation and a 10 MB
//! tool output, rendered once at 120x40. Prints resident memory (VmRSS and
//! the peak VmHWM from /proc/self/status) before and after, and where the
//! tool output went (it spills to a file past the in-memory cap).
//! `cargo run --release --example tui_memory`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use waypoint::tui::view;

fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", ")
}

#[path = "../benches/support/tui_session.rs"]
mod tui_session;

fn main() {
    println!("start: {}", rss());
    let now = Instant::now();
    let mut app = tui_session::new_app(now);
    tui_session::add_reply_lines(&mut app, 100_000, 50, now);
    tui_session::add_tool_output(&mut app, 10 * 1024 * 1024, now);
    println!("after 100k lines + 10 MB output: {}", rss());
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| view::draw(f, &mut app, now)).unwrap();
    println!(
        "after the first frame (100k lines wrapped; only visible ones kept): {}",
        rss()
    );
    let t = &app.root.trace.entries[0];
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
