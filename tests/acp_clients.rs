//! `waypoint acp`'s plans of several threads, and a round trip through
//! `acpx`: a subagent (the `task` tool) whose child script writes its own
//! plan reaches a client that advertises the unstable plan operations
//! (`clientCapabilities.plan`) as `plan_update`s under its own plan id
//! (`thread-N`; the root plan is `thread-0`), and one that does not as
//! `plan` entries folded under the parent's item (`  ↳ `). acpx, the
//! headless ACP CLI, runs one prompt whose scripted model writes a file,
//! its permission answered by `--approve-all`, the file written through
//! acpx (it offers `fs/write_text_file`); with `acp_terminal = "editor"`
//! a command runs in acpx's terminal (`terminal/create`). Skipped (with a note)
//! without node or the packages, failed under `.ci/run`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::acp::{Dirs, Log, agent, dirs, entries, owned, play, texts, todo};

/// The parent plans two items and starts one explore child on the first;
/// the child plans two items of its own, reads a file and reports.
fn threads_scenario() -> Value {
    let (e, s) = ("Explore the notes", "Summarize");
    let (o, r) = ("Open notes.txt", "Report the notes");
    json!({
        "turns": [
            {"text": "Planning.", "tool_calls": [todo(&[(e, "in_progress"), (s, "pending")])]},
            {"tool_calls": [{"name": "task", "input": {
                "description": "Find the notes",
                "prompt": "Read notes.txt and say what it holds.",
                "agent": "explore"}}]},
            {"tool_calls": [todo(&[(e, "completed"), (s, "completed")])]},
            {"text": "The notes say: buy milk."}
        ],
        "subagents": {"Task: Find the notes": [
            {"tool_calls": [todo(&[(o, "in_progress"), (r, "pending")])]},
            {"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]},
            {"tool_calls": [todo(&[(o, "completed"), (r, "completed")])]},
            {"text": "notes.txt says: buy milk."}
        ]}
    })
}

fn run_threads(d: &Dirs, plan_capability: bool) -> Option<Log> {
    std::fs::write(d.ws.join("notes.txt"), "buy milk\n").unwrap();
    let steps = json!([
        {"op": "initialize", "plan": plan_capability},
        {"op": "new", "cwd": d.ws},
        {"op": "prompt", "text": "What do the notes say?"}
    ]);
    let log = play(
        d,
        agent(&d.home, threads_scenario(), &["--approval", "auto"]),
        steps,
    )?;
    assert_eq!(log.result(2)["stopReason"], "end_turn", "{}", log.dump());
    Some(log)
}

#[test]
fn with_the_plan_capability_a_child_plan_has_its_own_plan_id() {
    let d = dirs();
    let Some(log) = run_threads(&d, true) else {
        return;
    };
    let dump = log.dump();
    assert!(
        log.updates_of(2, "plan").is_empty(),
        "plan updates besides plan_update: {dump}"
    );
    let updates = log.updates_of(2, "plan_update");
    let of = |id: &dyn Fn(&str) -> bool| -> Vec<Vec<(String, String)>> {
        updates
            .iter()
            .filter(|u| u["plan"]["type"] == "items")
            .filter(|u| u["plan"]["planId"].as_str().is_some_and(id))
            .map(|u| entries(&u["plan"]["entries"]))
            .collect()
    };
    let root = of(&|id| id == "thread-0");
    assert_eq!(
        root.first(),
        Some(&owned(&[
            ("Explore the notes", "in_progress"),
            ("Summarize", "pending")
        ])),
        "{dump}"
    );
    assert_eq!(
        root.last(),
        Some(&owned(&[
            ("Explore the notes", "completed"),
            ("Summarize", "completed")
        ])),
        "{dump}"
    );
    let child_id = |id: &str| {
        id.strip_prefix("thread-")
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > 0)
    };
    let child = of(&child_id);
    assert_eq!(
        child.first(),
        Some(&owned(&[
            ("Open notes.txt", "in_progress"),
            ("Report the notes", "pending")
        ])),
        "{dump}"
    );
    assert_eq!(
        child.last(),
        Some(&owned(&[
            ("Open notes.txt", "completed"),
            ("Report the notes", "completed")
        ])),
        "{dump}"
    );
    assert!(
        root.iter().flatten().all(|(c, _)| !c.contains('↳')),
        "the child's items folded into the root plan: {dump}"
    );
}

#[test]
fn without_the_plan_capability_a_child_plan_is_folded_under_its_item() {
    let d = dirs();
    let Some(log) = run_threads(&d, false) else {
        return;
    };
    let dump = log.dump();
    assert!(log.updates_of(2, "plan_update").is_empty(), "{dump}");
    let plans: Vec<Vec<(String, String)>> = log
        .updates_of(2, "plan")
        .iter()
        .map(|p| entries(&p["entries"]))
        .collect();
    let folded = plans
        .iter()
        .find(|p| p.iter().any(|(c, _)| c == "  ↳ Open notes.txt"))
        .unwrap_or_else(|| panic!("the child's plan never came folded: {dump}"));
    let contents: Vec<&str> = folded.iter().map(|(c, _)| c.as_str()).collect();
    let parent = contents.iter().position(|c| *c == "Explore the notes");
    let open = contents.iter().position(|c| *c == "  ↳ Open notes.txt");
    let report = contents.iter().position(|c| *c == "  ↳ Report the notes");
    assert!(
        matches!((parent, open, report), (Some(p), Some(o), Some(r)) if p + 1 == o && o + 1 == r),
        "not folded under its item: {contents:?}"
    );
}

/// `acpx --agent "waypoint acp --scenario F" --approve-all exec PROMPT`
/// in `d` (with `env` added): the JSON-RPC messages it printed, and all it
/// printed for a failure message; `None` when acpx is not installed.
fn run_acpx(d: &Dirs, scenario: Value, env: &[(&str, &Path)]) -> Option<(Vec<Value>, String)> {
    let acpx = support::acp::acpx()?;
    let spec = agent(&d.home, scenario, &[]);
    let mut command = vec![spec["command"].as_str().unwrap().to_string()];
    command.extend(
        spec["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let command = command.join(" ");
    let mut vars = support::acp::agent_env(&d.home);
    vars.extend(
        env.iter()
            .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned())),
    );
    let (status, stdout, stderr) = support::acp::run_bounded(
        &acpx,
        &[
            "--agent",
            &command,
            "--cwd",
            d.ws.to_str().unwrap(),
            "--approve-all",
            "--format",
            "json",
            "exec",
            "Do it.",
        ],
        &d.home,
        &vars,
    );
    let dump = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(status.success(), "acpx failed ({status})\n{dump}");
    let messages = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Some((messages, dump))
}

#[test]
fn acpx_runs_a_prompt_that_writes_a_file() {
    let d = dirs();
    let scenario = json!({"turns": [
        {"text": "Writing hello.txt.", "tool_calls": [{"name": "write_file", "input": {
            "path": "hello.txt", "content": "hello from acpx\n"}}]},
        {"text": "Wrote hello.txt for you."}
    ]});
    let Some((messages, dump)) = run_acpx(&d, scenario, &[]) else {
        return;
    };
    assert_eq!(
        std::fs::read_to_string(d.ws.join("hello.txt")).unwrap_or_default(),
        "hello from acpx\n",
        "{dump}"
    );
    let chunks: Vec<&Value> = support::acp::updates_in(&messages, "agent_message_chunk");
    assert!(
        texts(&json!(chunks)).contains("Wrote hello.txt for you."),
        "{dump}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["result"]["stopReason"] == "end_turn"),
        "{dump}"
    );
    // acpx offers fs/write_text_file: the file was written through it.
    let through = messages
        .iter()
        .find(|m| m["method"] == "fs/write_text_file")
        .unwrap_or_else(|| panic!("the write did not go through acpx: {dump}"));
    assert_eq!(through["params"]["content"], "hello from acpx\n", "{dump}");
    assert!(
        through["params"]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("/hello.txt")),
        "{dump}"
    );
    // The write asked (ask mode) and acpx's --approve-all answered it.
    let asked = messages
        .iter()
        .find(|m| m["method"] == "session/request_permission")
        .unwrap_or_else(|| panic!("no permission request: {dump}"));
    assert!(
        messages
            .iter()
            .any(|m| m["id"] == asked["id"] && m["result"]["outcome"]["optionId"] == "allow_once"),
        "{dump}"
    );
}

#[test]
fn acpx_runs_a_command_in_its_own_terminal() {
    // acp_terminal = "editor": an approved command runs in the client's
    // terminal (acpx offers terminals).
    let d = dirs();
    let config = d.home.join("config.toml");
    std::fs::write(&config, "acp_terminal = \"editor\"\n").unwrap();
    let command = "echo ran-$((6*7)) | tee ran.txt";
    let scenario = json!({"turns": [
        {"text": "Running.", "tool_calls": [{"name": "bash", "input": {"command": command}}]},
        {"text": "Ran it."}
    ]});
    let Some((messages, dump)) = run_acpx(&d, scenario, &[("WAYPOINT_CONFIG", &config)]) else {
        return;
    };
    assert_eq!(
        std::fs::read_to_string(d.ws.join("ran.txt")).unwrap_or_default(),
        "ran-42\n",
        "{dump}"
    );
    let created = messages
        .iter()
        .find(|m| m["method"] == "terminal/create")
        .unwrap_or_else(|| panic!("no terminal/create: {dump}"));
    assert!(
        created["params"].to_string().contains("echo ran-$((6*7))"),
        "{dump}"
    );
    let terminal = messages
        .iter()
        .find(|m| m["id"] == created["id"] && m["result"]["terminalId"].is_string())
        .unwrap_or_else(|| panic!("acpx made no terminal: {dump}"))["result"]["terminalId"]
        .clone();
    assert!(
        messages
            .iter()
            .any(|m| m["method"] == "terminal/release" && m["params"]["terminalId"] == terminal),
        "the terminal was not released: {dump}"
    );
    let updates: Vec<&Value> = support::acp::updates_in(&messages, "tool_call_update");
    assert!(
        updates.iter().any(|u| u["status"] == "completed"
            && u["content"].as_array().is_some_and(|c| c
                .iter()
                .any(|c| c["type"] == "terminal" && c["terminalId"] == terminal))),
        "{dump}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["result"]["stopReason"] == "end_turn"),
        "{dump}"
    );
}
