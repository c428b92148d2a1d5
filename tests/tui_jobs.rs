//! Background jobs in the app: `jobs N` in the status line while jobs
//! run (none when they all ended), and `/jobs` listing each with how it
//! ended, also when a job ends while the agent is idle.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::loopback;
use crate::support;
use crate::tui_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Anthropic, Turn, sse};
use loopback::{ClientOpts, FakeServer, ProviderWire, Recorded};
use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tui_support::{Clock, app, key, screen_text, type_text};
use waypoint::agent::Agent;
use waypoint::events::{Event, JobInfo, Op};
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

/// A job the model started ends after its turn, while the agent is idle:
/// the engine tells the app then, so the status line drops `jobs 1` and
/// `/jobs` says it ended, with no message sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_ends_while_idle_is_shown_ended_without_a_message() {
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| {
        let answered = r
            .messages()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count();
        match answered {
            0 => sse(Turn::tool(
                "bash",
                json!({"command": "sleep 1; echo finished", "run_in_background": true}),
            )),
            _ => sse(Turn::text("Started it.")),
        }
    }))
    .await;
    let (_dir, workspace) = support::workspace::Fixture::new().into_parts();
    let client = Anthropic::client(&server.url, &ClientOpts::default());
    let mut handle = Agent::builder(client, workspace).spawn().expect("engine");
    handle
        .ops
        .send(Op::Submit {
            text: "start it in the background".into(),
        })
        .unwrap();
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    // The turn ends with the job running.
    let mut ended = false;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ended {
        let envelope = tokio::time::timeout_at(deadline.into(), handle.events.recv())
            .await
            .expect("the turn ended within 30 s")
            .expect("engine running");
        ended = envelope.thread.is_root() && matches!(envelope.event, Event::TurnComplete { .. });
        update::on_envelope(&mut a, envelope, now);
    }
    let s = screen_text(&mut a, 120, 30, now);
    assert!(s.contains(" · jobs 1"), "{s}");
    // No message is sent; the job ends a second later.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let envelope = tokio::time::timeout_at(deadline.into(), handle.events.recv())
            .await
            .expect("the app heard of the job's end within 10 s while idle")
            .expect("engine running");
        let told = matches!(
            &envelope.event,
            Event::Jobs { jobs } if jobs.iter().all(|j| j.ended.is_some())
        );
        update::on_envelope(&mut a, envelope, now);
        if told {
            break;
        }
    }
    let s = screen_text(&mut a, 120, 30, now);
    assert!(!s.contains(" · jobs "), "{s}");
    type_text(&mut a, "/jobs", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    let s = screen_text(&mut a, 120, 30, now);
    assert!(
        s.contains("1 · sleep 1; echo finished · ended: exit code 0"),
        "{s}"
    );
    // Nothing reached the model meanwhile.
    assert_eq!(server.requests().len(), 2);
    handle.ops.send(Op::Quit).unwrap();
}
