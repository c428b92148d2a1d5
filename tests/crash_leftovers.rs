//! `kill -9` of Waypoint while a command runs: its shell dies with it
//! (`PR_SET_PDEATHSIG`), what the shell started and outlived it is found
//! and ended when the session is resumed (the user is told), and after the
//! resume the command runs exactly once more, with nothing left behind.
//! Linux only (reads `/proc`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::proc::{alive, gone_within, read_pid};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Processes that carry `WAYPOINT_SESSION=id` in their environment.
fn carrying(id: &str) -> Vec<i32> {
    support::proc::with_env("WAYPOINT_SESSION", id)
}

fn scenario(dir: &Path, name: &str, command: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let turns = json!({"turns": [
        {"text": "Running it.", "tool_calls": [{"name": "bash", "input": {"command": command}}]},
        {"text": "Done."}
    ]});
    std::fs::write(&path, turns.to_string()).unwrap();
    path
}

#[tokio::test]
async fn after_kill_9_the_command_dies_or_is_ended_on_resume_and_runs_once_more() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // The shell writes its pid, then its child sleeps: the child is what a
    // crash would leave running.
    let slow = scenario(
        dir.path(),
        "slow.json",
        "echo $$ > shell.pid; echo run >> runs.log; sleep 30 & echo $! > sleep.pid; wait",
    );
    // Unsandboxed (yolo, as in ask and auto-edit after a yes): in the
    // sandbox's world a crashed session's processes end with its shell
    // (below); outside it they are what the resume must find.
    let mut first = cli_support::waypoint(dir.path());
    first
        .env("WAYPOINT_APPROVAL", "yolo")
        .args(["-p", "go", "--output-format", "jsonl", "--scenario"])
        .arg(&slow)
        .arg("--workspace")
        .arg(&ws);
    let mut child = first.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let started: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    let id = started["id"].as_str().unwrap().to_string();
    let start = Instant::now();
    let (shell, sleep) = loop {
        if let (Some(shell), Some(sleep)) = (
            read_pid(&ws.join("shell.pid")),
            read_pid(&ws.join("sleep.pid")),
        ) {
            break (shell, sleep);
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the command did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let waypoint = i32::try_from(child.id().unwrap()).unwrap();
    // SAFETY: kill(2) on the process this test started.
    assert_eq!(unsafe { libc::kill(waypoint, libc::SIGKILL) }, 0);
    let _ = child.wait().await;
    // The shell dies with Waypoint; the sleep it started outlives both.
    assert!(
        gone_within(shell, Duration::from_secs(5)).await,
        "the shell outlived Waypoint"
    );
    assert!(alive(sleep), "the test needs a leftover to find");
    assert_eq!(carrying(&id), vec![sleep]);

    // The resume ends it and says so, then runs the command once more.
    let again = scenario(dir.path(), "again.json", "echo run >> runs.log");
    let (code, out, err) = cli_support::output(
        cli_support::waypoint(dir.path())
            .env("WAYPOINT_APPROVAL", "yolo")
            .args([
                "-r",
                &id[..8],
                "-p",
                "go on",
                "--output-format",
                "jsonl",
                "--scenario",
            ])
            .arg(&again),
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        gone_within(sleep, Duration::from_secs(5)).await,
        "the leftover still runs"
    );
    let started: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let notes = started["notes"].to_string();
    assert!(
        notes.contains("now stopped") && notes.contains(&format!("`sleep 30` (pid {sleep})")),
        "{started}"
    );
    assert!(carrying(&id).is_empty(), "nothing of the session is left");
    let runs = std::fs::read_to_string(ws.join("runs.log")).unwrap();
    assert_eq!(
        runs, "run\nrun\n",
        "once before the crash, once after the resume"
    );
}

/// In the sandbox's world (auto mode) nothing of a crashed session is left
/// to find: its shell is the first process of the command's PID
/// namespace, and when it dies with Waypoint the kernel ends the rest.
#[tokio::test]
async fn after_kill_9_nothing_of_a_sandboxed_command_is_left() {
    if !support::sandbox::world("the crashed world test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let slow = scenario(
        dir.path(),
        "slow.json",
        "echo $$ > shell.pid; setsid sleep 30 & echo $! > sleep.pid; wait",
    );
    let mut first = cli_support::waypoint(dir.path());
    first
        .env("WAYPOINT_APPROVAL", "auto")
        .args(["-p", "go", "--output-format", "jsonl", "--scenario"])
        .arg(&slow)
        .arg("--workspace")
        .arg(&ws);
    let mut child = first.spawn().unwrap();
    let shell = support::proc::wait_for_pid(&ws.join("shell.pid"), Duration::from_secs(20)).await;
    let sleep = support::proc::wait_for_pid(&ws.join("sleep.pid"), Duration::from_secs(20)).await;
    assert!(alive(shell) && alive(sleep), "found outside the namespace");
    let waypoint = i32::try_from(child.id().unwrap()).unwrap();
    // SAFETY: kill(2) on the process this test started.
    assert_eq!(unsafe { libc::kill(waypoint, libc::SIGKILL) }, 0);
    let _ = child.wait().await;
    assert!(
        gone_within(shell, Duration::from_secs(5)).await,
        "the shell outlived Waypoint"
    );
    assert!(
        gone_within(sleep, Duration::from_secs(5)).await,
        "what the shell started (in a session of its own) outlived it"
    );
}
