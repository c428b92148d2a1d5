//! Background jobs through the real binary on a loopback model: `bash`
//! with `run_in_background` returns at once; `job_output` reads what the
//! job printed so far and from an offset; the model is told when the job
//! ends, before its next request; `job_kill` stops a job's whole group;
//! and a job still running when the session ends is killed with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Anthropic, Turn, sse};
use loopback::{FakeServer, ProviderWire, Recorded};
use serde_json::json;

fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

/// The process runs: it exists and is not a zombie (a killed process
/// whose parent has not reaped it yet has ended all the same: under the
/// suite's load CI saw job 3's `sleep` as a zombie for the whole wait).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks the pid exists.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let (_, after) = s.rsplit_once(')')?;
            after.split_whitespace().next().map(str::to_string)
        });
    exists && !matches!(state.as_deref(), Some("Z" | "X"))
}

/// The pid a "Started background job N (pid P)" result names.
fn pid_in(text: &str) -> i32 {
    let at = text.find("(pid ").expect("a pid") + 5;
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_runs_is_read_is_told_and_ends_with_the_session() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "bash",
            json!({"command": "echo started; sleep 0.5; echo finished", "run_in_background": true}),
        )),
        1 => sse(Turn::tool("job_output", json!({"id": 1}))),
        2 => sse(Turn::tool("bash", json!({"command": "sleep 1.5"}))),
        3 => sse(Turn::tool("job_output", json!({"id": 1, "since": 0}))),
        4 => sse(Turn::tool(
            "bash",
            json!({"command": "sleep 30", "run_in_background": true}),
        )),
        5 => sse(Turn::tool("job_kill", json!({"id": 2}))),
        6 => sse(Turn::tool(
            "bash",
            json!({"command": "sleep 30", "run_in_background": true}),
        )),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let started = Instant::now();
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, Anthropic::MODEL);
    cmd.args(["-p", "run it in the background"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "nothing waited for a job"
    );
    let requests = server.requests();
    let result = |i: usize| requests[i].last_tool_results()[0]["content"].to_string();
    assert!(
        result(1).contains("Started background job 1 (pid "),
        "{}",
        result(1)
    );
    let early = result(2);
    assert!(
        early.contains("still running") && early.contains("started"),
        "{early}"
    );
    let told = requests[3].messages().last().unwrap().to_string();
    assert!(
        told.contains(
            "Background job 1 (`echo started; sleep 0.5; echo finished`) ended: exit code 0"
        ),
        "the model hears of the end before its next request: {told}"
    );
    let all = result(4);
    assert!(
        all.contains("ended (exit code 0)") && all.contains("finished"),
        "{all}"
    );
    let killed_pid = pid_in(&result(5));
    assert!(result(6).contains("was stopped"), "{}", result(6));
    let left_pid = pid_in(&result(7));
    // Give the reaper a moment: both groups are gone. Under the whole
    // suite's load job 3 was seen to go only just after 5 s (a zombie of
    // its sleep right after the check), so the wait is longer; a job left
    // running would still be caught (it sleeps 30 s).
    let deadline = Instant::now() + Duration::from_secs(15);
    while (alive(killed_pid) || alive(left_pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(killed_pid), "job_kill stopped job 2");
    assert!(
        !alive(left_pid),
        "job 3 ended with the session: {:?}",
        std::fs::read_to_string(format!("/proc/{left_pid}/stat"))
    );
}

/// With `--auto-background-after 1`, a foreground command still running
/// after a second becomes job 1: the call returns with what it printed so
/// far and where to read on; `job_output` from that offset shows only what
/// came after; the model is told when it ends; quicker commands are not
/// moved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_command_moves_to_the_background_after_the_setting() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "bash",
            json!({"command": "echo early; sleep 2; echo late; sleep 0.5"}),
        )),
        // Quick enough to stay in the foreground, while job 1 goes on.
        1..=3 => sse(Turn::tool("bash", json!({"command": "sleep 0.8"}))),
        4 => sse(Turn::tool("job_output", json!({"id": 1, "since": 6}))),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let started = Instant::now();
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, Anthropic::MODEL);
    cmd.args(["--auto-background-after", "1", "-p", "build it"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let requests = server.requests();
    let result = |i: usize| requests[i].last_tool_results()[0]["content"].to_string();
    let moved = result(1);
    assert!(
        moved.contains("early") && !moved.contains("late"),
        "the output so far, and only that: {moved}"
    );
    assert!(
        moved.contains("Still running after 1 s: moved to background job 1 (pid "),
        "{moved}"
    );
    assert!(
        moved.contains(r#"job_output {\"id\": 1, \"since\": 6}"#),
        "{moved}"
    );
    for i in 2..=4 {
        assert!(
            !result(i).contains("moved"),
            "a quick command stays: {}",
            result(i)
        );
    }
    let rest: String = serde_json::from_str(&result(5)).unwrap();
    assert!(rest.contains("bytes 6..11"), "{rest}");
    assert_eq!(rest.split_once('\n').map(|(_, body)| body), Some("late\n"));
    let told: String = requests[2..]
        .iter()
        .map(|r| r.messages().last().unwrap().to_string())
        .collect();
    assert!(
        told.contains(
            "Background job 1 (`echo early; sleep 2; echo late; sleep 0.5`) ended: exit code 0"
        ),
        "{told}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}
