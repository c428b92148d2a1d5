//! Item scope narrows the sandbox (issue 45): through the real binary on a
//! scripted model, a plan proposed in plan mode and approved headless into
//! `auto`, whose item 1 declares `files: ["a.txt"]` and `commands:
//! ["touch"]`. While it is in progress a sandboxed command writes a.txt but
//! not b.txt (a block naming the item's scope), and the declared command
//! writes elsewhere in the workspace as usual. Linux with Landlock only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};

/// A `todo_write` input: item 1 (with `status`) declaring its scope.
fn plan(status: &str) -> Value {
    json!({"todos": [
        {"content": "Write a", "activeForm": "Writing a", "status": status,
         "files": ["a.txt"], "commands": ["touch"]},
        {"content": "Check it", "activeForm": "Checking it", "status": "pending"}
    ]})
}

fn bash(command: &str) -> Value {
    json!({"name": "bash", "input": {"command": command}})
}

#[test]
fn a_sandboxed_command_writes_only_the_running_items_files() {
    if !support::sandbox::landlock("the narrowed sandbox test") {
        return;
    }
    let home = support::sandbox::outside_hidden("narrow-home-");
    let ws = support::sandbox::outside_hidden("narrow-ws-");
    // Declared files that exist are writable themselves (a new one would
    // leave its folder, here the whole workspace, writable).
    std::fs::write(ws.path().join("a.txt"), "old\n").unwrap();
    let propose = home.path().join("propose.json");
    let turns = json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "todo_write", "input": plan("pending")}]},
        {"text": "Research done."}
    ]});
    std::fs::write(&propose, turns.to_string()).unwrap();
    let carry = home.path().join("carry.json");
    let turns = json!({"turns": [
        {"text": "Starting.", "tool_calls": [{"name": "todo_write", "input": plan("in_progress")}]},
        {"text": "Working.", "tool_calls": [
            bash("echo x > a.txt"),
            bash("echo y > b.txt"),
            bash("touch c.txt")
        ]},
        {"text": "Done for now."}
    ]});
    std::fs::write(&carry, turns.to_string()).unwrap();
    let out = support::run_waypoint(
        home.path(),
        ws.path(),
        &[
            "-p",
            "Write a",
            "--approval",
            "plan",
            "--output-format",
            "jsonl",
            "--scenario",
            propose.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let lines = support::json_lines(&out);
    let id = lines.last().unwrap()["session_id"].as_str().unwrap();
    let out = support::run_waypoint(
        home.path(),
        ws.path(),
        &[
            "-r",
            id,
            "-p",
            "--approve-plan",
            "--approval",
            "auto",
            "--output-format",
            "jsonl",
            "--scenario",
            carry.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let outputs: Vec<String> = support::json_lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "tool_call_end" && e["name"] == "bash")
        .map(|e| e["output"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(outputs.len(), 3, "{outputs:#?}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "x\n",
        "{outputs:#?}"
    );
    assert!(outputs[0].contains("[exit code: 0]"), "{outputs:#?}");
    // Outside the item's files: refused by the sandbox, told with the scope.
    assert!(!ws.path().join("b.txt").exists(), "{outputs:#?}");
    assert!(outputs[1].contains("Permission denied"), "{outputs:#?}");
    assert!(
        outputs[1].contains("blocked by the sandbox")
            && outputs[1].contains("item 1's scope (Write a: a.txt)"),
        "{outputs:#?}"
    );
    // The item's declared command writes as usual.
    assert!(ws.path().join("c.txt").exists(), "{outputs:#?}\n{stderr}");
}
