//! Background jobs in the app: `jobs N` in the status line while jobs
//! run (none when they all ended), and `/jobs` listing each with how it
//! ended.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::{Clock, app, key, screen_text, type_text};
use waypoint::events::{Event, JobInfo};
use waypoint::tui::update;

fn job(id: u32, command: &str, ended: Option<&str>) -> JobInfo {
    JobInfo {
        id,
        command: command.into(),
        ended: ended.map(str::to_string),
    }
}

#[test]
fn running_jobs_show_in_the_status_line_and_jobs_lists_them() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let jobs = vec![
        job(1, "npm run dev", None),
        job(2, "cargo build", Some("exit code 0")),
    ];
    update::on_event(&mut a, Event::Jobs { jobs }, clock.at(1.0));
    let s = screen_text(&mut a, 120, 30, clock.at(1.0));
    assert!(s.contains(" · jobs 1"), "{s}");
    type_text(&mut a, "/jobs", clock.at(1.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(1.0));
    let s = screen_text(&mut a, 120, 30, clock.at(1.0));
    assert!(s.contains("1 · npm run dev · running"), "{s}");
    assert!(s.contains("2 · cargo build · ended: exit code 0"), "{s}");
    let done = vec![job(1, "npm run dev", Some("killed by job_kill"))];
    update::on_event(&mut a, Event::Jobs { jobs: done }, clock.at(2.0));
    let s = screen_text(&mut a, 120, 30, clock.at(2.0));
    assert!(!s.contains(" · jobs "), "{s}");
}
