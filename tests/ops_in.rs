//! Driving Waypoint without ACP (`waypoint -p --input-format jsonl
//! --output-format jsonl`): through the real binary on a scripted model, a
//! program sends ops as JSON lines on stdin and reads the events on
//! stdout. Two messages run as two turns (the second queued behind the
//! first), an approval waits for the driver's answer instead of being
//! refused, a malformed line is told on stderr with its number and
//! skipped, and the run ends when stdin closes and the work is done (even
//! when stdin closed before the engine took the op), or at once on `quit`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;

/// How long the test waits for the next line before it gives up.
const PATIENCE: Duration = Duration::from_secs(60);

fn next_event(lines: &mpsc::Receiver<String>, child: &mut std::process::Child) -> Option<Value> {
    match lines.recv_timeout(PATIENCE) {
        Ok(line) => Some(serde_json::from_str(&line).unwrap()),
        Err(mpsc::RecvTimeoutError::Disconnected) => None,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let _ = child.kill();
            panic!("no event for {PATIENCE:?}");
        }
    }
}

/// The binary driven over its pipes on the scripted model `scenario`,
/// with `extra` flags.
fn driver(
    home: &std::path::Path,
    ws: &std::path::Path,
    scenario: &std::path::Path,
    extra: &[&str],
) -> std::process::Child {
    let mut args = vec!["-p", "--input-format", "jsonl", "--output-format", "jsonl"];
    args.extend_from_slice(extra);
    args.extend(["--scenario", scenario.to_str().unwrap()]);
    support::waypoint_command(home, ws, &args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_driver_submits_twice_answers_an_approval_and_a_bad_line_is_skipped() {
    let home = support::sandbox::outside_hidden("ops-in-home-");
    let ws = support::sandbox::outside_hidden("ops-in-ws-");
    let scenario = home.path().join("turns.json");
    let turns = json!({"turns": [
        {"text": "Writing it.", "tool_calls": [
            {"name": "write_file", "input": {"path": "a.txt", "content": "hello\n"}}
        ]},
        {"text": "Wrote a.txt."},
        {"text": "Nothing more to do."}
    ]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let mut child = driver(home.path(), ws.path(), &scenario, &["--approval", "ask"]);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    writeln!(stdin, r#"{{"op":"submit","text":"Write a.txt"}}"#).unwrap();
    writeln!(stdin, "{{oops").unwrap();
    writeln!(stdin, r#"{{"op":"submit","text":"Anything else?"}}"#).unwrap();
    stdin.flush().unwrap();
    let mut events = Vec::new();
    let id = loop {
        let event = next_event(&lines, &mut child).expect("an approval request");
        events.push(event.clone());
        if event["type"] == "approval_requested" {
            break event["id"].as_str().unwrap().to_string();
        }
    };
    // The call waits for the driver: nothing is written yet.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!ws.path().join("a.txt").exists(), "{events:#?}");
    let approve = json!({"op": "approve", "id": id, "decision": {"decision": "once"}});
    writeln!(stdin, "{approve}").unwrap();
    drop(stdin);
    while let Some(event) = next_event(&lines, &mut child) {
        events.push(event);
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{events:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "hello\n"
    );
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(of("turn_started"), 2, "{events:#?}");
    assert_eq!(of("turn_complete"), 2, "{events:#?}");
    assert_eq!(of("approval_requested"), 1, "{events:#?}");
    let written = events
        .iter()
        .find(|e| e["type"] == "tool_call_end" && e["name"] == "write_file")
        .expect("the write ran");
    assert_eq!(written["outcome"]["kind"], "ok", "{written}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result", "{last}");
    assert_eq!(last["exit_code"], 0, "{last}");
    // The bad line is told with its number, and only it is lost.
    assert!(
        stderr.contains("waypoint: stdin line 2: not an op ("),
        "{stderr}"
    );
    assert_eq!(stderr.matches("stdin line").count(), 1, "{stderr}");
    assert!(!stderr.contains("needs approval"), "{stderr}");
}

/// Runs the binary driven by `input` (written at once, then stdin
/// closed) on the scripted `turns`.
fn driven(input: &str, turns: Value) -> (std::process::Output, Vec<Value>) {
    let home = support::sandbox::outside_hidden("ops-in-home-");
    let ws = support::sandbox::outside_hidden("ops-in-ws-");
    let scenario = home.path().join("turns.json");
    std::fs::write(&scenario, json!({ "turns": turns }).to_string()).unwrap();
    let mut child = driver(home.path(), ws.path(), &scenario, &[]);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let events = support::json_lines(&out);
    (out, events)
}

/// The common pipe (`echo OP | waypoint …`): stdin is closed before the
/// engine has even taken the op, and the run still waits for its turn.
#[test]
fn stdin_closed_at_once_still_runs_the_turn_it_sent() {
    let (out, events) = driven(
        "{\"op\":\"submit\",\"text\":\"Hello\"}\n",
        json!([{"delay_ms": 200, "text": "Hi there."}]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{events:#?}");
    let complete = events.iter().filter(|e| e["type"] == "turn_complete");
    assert_eq!(complete.count(), 1, "{events:#?}");
    let idle = events.iter().rev().find(|e| e["type"] == "idle").unwrap();
    assert_eq!(idle["ops"], 1, "{events:#?}");
    assert_eq!(events.last().unwrap()["exit_reason"], "completed");
}

/// `quit` ends the run at once: the running turn is interrupted (and
/// says so), the message queued behind it never runs.
#[test]
fn quit_interrupts_the_running_turn_and_ends_the_run() {
    let (out, events) = driven(
        concat!(
            "{\"op\":\"submit\",\"text\":\"Take your time\"}\n",
            "{\"op\":\"submit\",\"text\":\"Then this\"}\n",
            "{\"op\":\"quit\"}\n",
        ),
        json!([{"delay_ms": 30000, "text": "Slow."}, {"text": "Never."}]),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}\n{events:#?}");
    let aborted = events.iter().find(|e| e["type"] == "turn_aborted");
    assert_eq!(aborted.unwrap()["reason"], "interrupted", "{events:#?}");
    let started = events.iter().filter(|e| e["type"] == "turn_started");
    assert_eq!(started.count(), 1, "{events:#?}");
    assert_eq!(events.last().unwrap()["exit_reason"], "interrupted");
}
