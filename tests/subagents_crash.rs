//! Subagents survive `kill -9` like their parent: the real binary runs a
//! scripted task headless against a loopback Anthropic server; the parent
//! starts two general children, each child runs a command (that appends
//! its tag to a file) and then waits for a model that never answers; the
//! process is killed while both children run. `waypoint -c -p "go on"`
//! then finishes: each child's cut-off turn is repaired in the transcript
//! (its thread's turn ended, its note recorded), the parent's calls that
//! ran them are answered as interrupted, no child runs again, no command
//! runs twice, and every request after the resume is a valid one. Also
//! headless text: children's lines indented under the parent's, and the
//! `result` line counting their requests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::loopback;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use common::{Anthropic, Turn, assert_valid_request, sse};
use loopback::{FakeServer, ProviderWire, Recorded, Reply, plan};
use serde_json::{Value, json};
use tokio::process::Command;

const KEY: &str = "sk-subagent-crash-test";
const COUNT: &str = "count.txt";

/// Who sent a request: `"A"` or `"B"` for the child whose task names it,
/// else the parent (`"P"`).
fn sender(r: &Recorded) -> &'static str {
    let first = r.messages()[0]["content"].to_string();
    if first.contains("Task: Find A") {
        "A"
    } else if first.contains("Task: Find B") {
        "B"
    } else {
        "P"
    }
}

fn step_of(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

fn task(name: &str) -> Value {
    json!({"description": format!("Find {name}"), "prompt": format!("Record {name}, then report."), "agent": "general"})
}

fn items(statuses: [&str; 2]) -> Value {
    plan(&[
        ("Plan the work", statuses[0]),
        ("Explore with helpers", statuses[1]),
    ])
}

/// The script: the parent plans and starts two children; each child
/// appends its tag and then waits forever; the resumed parent finishes.
fn responder() -> loopback::Responder {
    Arc::new(|r: &Recorded| {
        let step = step_of(r);
        match (sender(r), step) {
            ("P", 0) => sse(Turn::tool("todo_write", items(["in_progress", "pending"]))),
            ("P", 1) => sse(
                Turn::tool("todo_write", items(["completed", "in_progress"]))
                    .with_tool("task", task("A"))
                    .with_tool("task", task("B")),
            ),
            ("P", 2) => sse(Turn::tool("todo_write", items(["completed", "completed"]))),
            ("P", _) => sse(Turn::text("Finished after the restart.")),
            (child, 0) => sse(Turn::tool(
                "bash",
                json!({"command": format!("echo {child} >> {COUNT}")}),
            )),
            // The child waits for its model: the process is killed now.
            (_, _) => Reply::Silent,
        }
    })
}

fn waypoint(home: &Path, ws: &Path, url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("WAYPOINT_HOME", home)
        .env("WAYPOINT_LOG", home.join("waypoint.log"))
        .envs(
            waypoint::safety::landlock_abi()
                .is_none()
                .then_some(("WAYPOINT_APPROVAL", "yolo")),
        )
        .env(Anthropic::KEY_VAR, KEY)
        .args(["--provider", "anthropic", "--model", Anthropic::MODEL])
        .args(["--base-url", url])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

fn transcript(home: &Path) -> PathBuf {
    let sessions: Vec<PathBuf> = std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].clone()
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect()
}

/// The event of a record (a child's other records wrapped in `thread`).
fn event_of(record: &Value) -> Option<&Value> {
    (record["type"] == "event").then(|| &record["envelope"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_cut_off_by_kill_9_are_repaired_and_never_run_twice() {
    let server = FakeServer::<Anthropic>::responding(responder()).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut first = waypoint(home.path(), ws.path(), &server.url)
        .args(["--output-format", "jsonl", "-p", "Explore with two helpers"])
        .spawn()
        .unwrap();
    // Both children have run their command and wait for their model.
    let waiting = || {
        let requests = server.requests();
        ["A", "B"]
            .iter()
            .all(|c| requests.iter().any(|r| sender(r) == *c && step_of(r) == 1))
    };
    for _ in 0..2_000 {
        if waiting() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(waiting(), "both children reached their second request");
    first.kill().await.unwrap();
    let count = std::fs::read_to_string(ws.path().join(COUNT)).unwrap();
    let mut tags: Vec<&str> = count.lines().collect();
    tags.sort_unstable();
    assert_eq!(tags, ["A", "B"]);
    let before = server.requests().len();

    let out = tokio::time::timeout(
        Duration::from_secs(60),
        waypoint(home.path(), ws.path(), &server.url)
            .args(["--output-format", "jsonl", "-c", "-p", "go on"])
            .output(),
    )
    .await
    .expect("the resumed run finished")
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(r#""type":"turn_complete""#), "{stdout}");

    // No child ran again, no command twice.
    let after: Vec<Recorded> = server.requests().split_off(before);
    assert!(
        after.iter().all(|r| sender(r) == "P"),
        "only the parent asked after the resume"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join(COUNT)).unwrap(),
        count
    );
    for r in &after {
        assert_valid_request(&r.body);
    }
    // The parent's calls that ran the children are answered as cut off.
    let resumed = &after[0];
    let results: Vec<String> = resumed.messages()[..]
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect();
    let died = results
        .iter()
        .filter(|c| c.contains("Waypoint stopped"))
        .count();
    assert_eq!(died, 2, "{results:?}");

    // Each child's turn was ended in the transcript, in its own thread.
    let records = records(&transcript(home.path()));
    let mut ended: Vec<u64> = records
        .iter()
        .filter_map(event_of)
        .filter(|e| e["type"] == "turn_aborted" && e["thread"].as_u64().is_some())
        .map(|e| e["thread"].as_u64().unwrap())
        .collect();
    ended.sort_unstable();
    assert_eq!(ended, [1, 2], "both children's turns were ended");
    let child_notes = records
        .iter()
        .filter(|r| r["type"] == "thread" && r["record"]["type"] == "user")
        .filter(|r| {
            r["record"]["text"]
                .as_str()
                .unwrap_or_default()
                .contains("Waypoint stopped")
        })
        .count();
    assert_eq!(child_notes, 2);
}

/// A run that finishes: explore children that read and report.
fn finishing() -> loopback::Responder {
    Arc::new(|r: &Recorded| {
        let explore = |name: &str| json!({"description": format!("Find {name}"), "prompt": format!("Read {name}."), "agent": "explore"});
        match (sender(r), step_of(r)) {
            ("P", 0) => sse(Turn::tool("todo_write", items(["in_progress", "pending"]))),
            ("P", 1) => sse(
                Turn::tool("todo_write", items(["completed", "in_progress"]))
                    .with_tool("task", explore("A"))
                    .with_tool("task", explore("B")),
            ),
            ("P", 2) => sse(Turn::tool("todo_write", items(["completed", "completed"]))),
            ("P", _) => sse(Turn::text("Both found.")),
            (child, 0) => sse(Turn::tool(
                "read_file",
                json!({"path": format!("{}.txt", child.to_lowercase())}),
            )),
            (child, _) => sse(Turn::text(&format!("{child} found."))),
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_text_indents_children_and_the_result_counts_their_requests() {
    let server = FakeServer::<Anthropic>::responding(finishing()).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "A\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "B\n").unwrap();
    let run = |format: &'static str| {
        let mut cmd = waypoint(home.path(), ws.path(), &server.url);
        cmd.args(["--output-format", format, "-p", "Find A and B"]);
        async move {
            let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
                .await
                .expect("finished")
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    };
    let text = run("text").await;
    for child in ["A", "B"] {
        let lower = child.to_lowercase();
        assert!(
            text.contains(&format!(
                "  │ explore · Find {child} → read_file {lower}.txt  [ok "
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("  │ explore · Find {child} done\n")),
            "{text}"
        );
        assert!(
            !text.contains(&format!("{child} found.")),
            "a child's answer is the parent's to read: {text}"
        );
    }
    assert!(text.contains("→ task explore · Find A  [ok "), "{text}");
    let jsonl = run("jsonl").await;
    let result: Value = jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "result")
        .expect("a result line");
    // Four requests of the parent and two of each child, 100 tokens each.
    assert_eq!(result["usage"]["input_tokens"], 800, "{result}");
    assert_eq!(
        result["plan"],
        json!({"completed": 2, "total": 2}),
        "{result}"
    );

    // The export shows each child: its task, account and conversation.
    let id = result["session_id"].as_str().unwrap();
    let out = waypoint(home.path(), ws.path(), &server.url)
        .args(["export", id])
        .output()
        .await
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{md}");
    let subagents = md
        .split("\n## Subagents\n")
        .nth(1)
        .expect("a Subagents section");
    for (n, child) in ["A", "B"].iter().enumerate() {
        let head = format!("### explore · Find {child} (thread {})", n + 1);
        assert!(subagents.contains(&head), "{subagents}");
        assert!(
            subagents.contains(&format!("{child} found.")),
            "{subagents}"
        );
    }
    assert_eq!(
        subagents
            .matches("- Account: 1 tool call · 284 tokens · ")
            .count(),
        2,
        "{subagents}"
    );
    // The parent's conversation holds only the parent's prompt.
    let parent = md.split("\n## Subagents\n").next().unwrap();
    assert!(!parent.contains("Task: Find A"), "{parent}");
}
