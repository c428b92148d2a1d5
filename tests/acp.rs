//! `waypoint acp` driven by ACP clients nobody here wrote: a client made
//! with the official TypeScript SDK (`tests/acp/client.mjs`) and the
//! `acpx` CLI, both installed by `.ci/run` (see `support::acp`). A
//! scripted model (`--scenario`) plans, writes and runs commands; the
//! tests check what the client receives: capabilities and modes, a plan
//! update for every revision, tool calls with a diff and terminal output,
//! permission requests answered "allow once" and "reject" (that file
//! untouched), a cancel mid-command (its process group gone), a session
//! loaded again in a new process replaying its history, a subagent's plan
//! under its own plan id (or folded under its parent item), and a prompt
//! round trip through acpx. Skipped (with a note) where node or the
//! packages are missing, failed under `.ci/run`. Linux only (`/proc`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::acp::{Log, agent, dirs, entries, owned, play, texts, todo};

#[test]
fn initialize_and_new_session_give_capabilities_and_modes_and_set_mode_switches() {
    let d = dirs();
    let scenario = json!({"turns": [
        {"text": "Writing.", "tool_calls": [{"name": "write_file", "input": {"path": "m.txt", "content": "mode\n"}}]},
        {"text": "Written."}
    ]});
    let steps = json!([
        {"op": "initialize"},
        {"op": "new", "cwd": d.ws},
        {"op": "set_mode", "modeId": "auto-edit"},
        {"op": "prompt", "text": "Write m.txt."}
    ]);
    let Some(log) = play(&d, agent(&d.home, scenario, &[]), steps) else {
        return;
    };
    let init = log.result(0);
    assert_eq!(init["protocolVersion"], 1, "{}", log.dump());
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{init}");
    assert_eq!(caps["promptCapabilities"]["image"], true, "{init}");
    assert_eq!(
        caps["promptCapabilities"]["embeddedContext"], true,
        "{init}"
    );

    let session = log.result(1);
    assert!(
        session["sessionId"].as_str().is_some_and(|s| !s.is_empty()),
        "{session}"
    );
    let modes = &session["modes"];
    assert_eq!(modes["currentModeId"], "ask", "{session}");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["read-only", "plan", "ask", "auto-edit", "auto", "yolo"],
        "{session}"
    );

    // In auto-edit the write runs unasked.
    log.result(2);
    assert_eq!(log.result(3)["stopReason"], "end_turn", "{}", log.dump());
    assert!(log.permissions(3).is_empty(), "{}", log.dump());
    assert_eq!(
        std::fs::read_to_string(d.ws.join("m.txt")).unwrap(),
        "mode\n"
    );
}

/// The main script: three plan items; a write allowed, a write rejected
/// and a command allowed, the plan revised after each.
fn working_scenario() -> Value {
    let (a, b, c) = ("Write a.txt", "Change b.txt", "Run the check");
    json!({"turns": [
        {"text": "Planning the work.", "tool_calls": [todo(&[(a, "in_progress"), (b, "pending"), (c, "pending")])]},
        {"text": "Writing a.txt.", "tool_calls": [{"name": "write_file", "input": {"path": "a.txt", "content": "alpha\n"}}]},
        {"tool_calls": [todo(&[(a, "completed"), (b, "in_progress"), (c, "pending")])]},
        {"text": "Changing b.txt.", "tool_calls": [{"name": "write_file", "input": {"path": "b.txt", "content": "changed\n"}}]},
        {"tool_calls": [todo(&[(a, "completed"), (b, "completed"), (c, "in_progress")])]},
        {"text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "echo checked-$((6*7))"}}]},
        {"tool_calls": [todo(&[(a, "completed"), (b, "completed"), (c, "completed")])]},
        {"text": "All done."}
    ]})
}

fn revisions() -> Vec<Vec<(String, String)>> {
    let (a, b, c) = ("Write a.txt", "Change b.txt", "Run the check");
    vec![
        owned(&[(a, "in_progress"), (b, "pending"), (c, "pending")]),
        owned(&[(a, "completed"), (b, "in_progress"), (c, "pending")]),
        owned(&[(a, "completed"), (b, "completed"), (c, "in_progress")]),
        owned(&[(a, "completed"), (b, "completed"), (c, "completed")]),
    ]
}

/// The tool call (its first `tool_call` update) whose diff is of `file`.
fn edit_of<'a>(updates: &[&'a Value], file: &str) -> &'a Value {
    updates
        .iter()
        .copied()
        .find(|u| {
            u["sessionUpdate"] == "tool_call"
                && u["content"].as_array().is_some_and(|c| {
                    c.iter().any(|c| {
                        c["type"] == "diff" && c["path"].as_str().is_some_and(|p| p.ends_with(file))
                    })
                })
        })
        .unwrap_or_else(|| panic!("no tool call with a diff of {file}"))
}

fn diff(call: &Value) -> &Value {
    call["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap()
}

/// The statuses told of tool call `id` (its `tool_call` and updates).
fn statuses(updates: &[&Value], id: &Value) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["toolCallId"] == *id)
        .filter_map(|u| u["status"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_prompt_plans_writes_runs_asks_and_loads_again() {
    let d = dirs();
    std::fs::write(d.ws.join("b.txt"), "original\n").unwrap();
    let steps = json!([
        {"op": "initialize"},
        {"op": "new", "cwd": d.ws},
        {"op": "prompt", "text": "Do the three things.",
         "permissions": ["allow_once", "reject_once", "allow_once"]},
        {"op": "restart"},
        {"op": "load", "cwd": d.ws}
    ]);
    let Some(log) = play(&d, agent(&d.home, working_scenario(), &[]), steps) else {
        return;
    };
    let dump = log.dump();
    assert_eq!(log.result(2)["stopReason"], "end_turn", "{dump}");
    let updates = log.updates(2);

    // A plan update for every revision, in order, each entry with a priority.
    let plans = log.updates_of(2, "plan");
    let seen: Vec<_> = plans.iter().map(|p| entries(&p["entries"])).collect();
    let mut next = revisions().into_iter().peekable();
    for plan in &seen {
        if next.peek() == Some(plan) {
            next.next();
        }
    }
    assert!(
        next.peek().is_none(),
        "revision {:?} never arrived; plans: {seen:?}",
        next.peek()
    );
    for p in &plans {
        for e in p["entries"].as_array().unwrap() {
            assert!(
                ["high", "medium", "low"].contains(&e["priority"].as_str().unwrap_or("")),
                "{p}"
            );
        }
    }
    let said = texts(&json!(log.updates_of(2, "agent_message_chunk")));
    assert!(said.contains("Planning the work."), "{said}");

    // The writes: kind edit, a diff (new file: no old text), locations.
    let a = edit_of(&updates, "a.txt");
    assert_eq!(a["kind"], "edit", "{a}");
    assert_eq!(diff(a)["newText"], "alpha\n", "{a}");
    assert!(diff(a)["oldText"].is_null(), "{a}");
    assert!(
        a["locations"].as_array().is_some_and(|l| l
            .iter()
            .any(|l| l["path"].as_str().unwrap().ends_with("a.txt"))),
        "{a}"
    );
    assert_eq!(
        statuses(&updates, &a["toolCallId"])
            .last()
            .map(String::as_str),
        Some("completed"),
        "{dump}"
    );
    let b = edit_of(&updates, "b.txt");
    assert_eq!(diff(b)["oldText"], "original\n", "{b}");
    assert_eq!(diff(b)["newText"], "changed\n", "{b}");
    assert!(
        !statuses(&updates, &b["toolCallId"]).contains(&"completed".to_string()),
        "the rejected write completed: {dump}"
    );

    // The command: kind execute, its output in an update.
    let run = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == "execute")
        .unwrap_or_else(|| panic!("no execute tool call: {dump}"));
    let ran: Vec<&&Value> = updates
        .iter()
        .filter(|u| {
            u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == run["toolCallId"]
        })
        .collect();
    assert!(
        ran.iter()
            .any(|u| texts(&u["content"]).contains("checked-42")),
        "no output of the command: {dump}"
    );
    assert_eq!(
        statuses(&updates, &run["toolCallId"])
            .last()
            .map(String::as_str),
        Some("completed"),
        "{dump}"
    );

    // Three requests: the diff of a.txt (allowed once), of b.txt
    // (rejected), the command (allowed once).
    let asked = log.permissions(2);
    assert_eq!(asked.len(), 3, "{dump}");
    for p in &asked {
        let kinds: Vec<&str> = p["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        for kind in ["allow_once", "allow_always", "reject_once"] {
            assert!(kinds.contains(&kind), "{p}");
        }
    }
    let shown = |p: &Value| p["params"]["toolCall"].clone();
    assert!(
        shown(asked[0]).to_string().contains("alpha\\n"),
        "{}",
        asked[0]
    );
    assert_eq!(asked[0]["answer"], "allow_once");
    assert!(
        shown(asked[1]).to_string().contains("changed\\n"),
        "{}",
        asked[1]
    );
    assert_eq!(asked[1]["answer"], "reject_once");
    assert!(
        shown(asked[2])
            .to_string()
            .contains("echo checked-$((6*7))"),
        "{}",
        asked[2]
    );
    assert_eq!(
        std::fs::read_to_string(d.ws.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.ws.join("b.txt")).unwrap(),
        "original\n",
        "the rejected write changed b.txt"
    );

    loaded_replays_history(&log, &dump);
}

/// Step 4 (session/load in a new process) replayed the prompt, the
/// answer, the tool calls and the plan before its response.
fn loaded_replays_history(log: &Log, dump: &str) {
    let session = log.result(1)["sessionId"].clone();
    log.result(4);
    let replay = log.updates(4);
    assert!(!replay.is_empty(), "nothing replayed: {dump}");
    let user = texts(&json!(log.updates_of(4, "user_message_chunk")));
    assert!(user.contains("Do the three things."), "{dump}");
    let agent = texts(&json!(log.updates_of(4, "agent_message_chunk")));
    assert!(agent.contains("Planning the work."), "{dump}");
    assert!(agent.contains("All done."), "{dump}");
    assert_eq!(edit_of(&replay, "a.txt")["kind"], "edit", "{dump}");
    assert!(!log.updates_of(4, "tool_call_update").is_empty(), "{dump}");
    let plans = log.updates_of(4, "plan");
    assert_eq!(
        plans.last().map(|p| entries(&p["entries"])),
        revisions().last().cloned(),
        "{dump}"
    );
    // All before the response, and of the loaded session.
    let answered = log
        .position(|l| l["event"] == "result" && l["step"] == 4)
        .unwrap();
    let last_update = log
        .lines
        .iter()
        .rposition(|l| l["event"] == "update" && l["step"] == 4)
        .unwrap();
    assert!(last_update < answered, "{dump}");
    assert!(
        log.lines
            .iter()
            .filter(|l| l["event"] == "update" && l["step"] == 4)
            .all(|l| l["params"]["sessionId"] == session),
        "{dump}"
    );
}

#[test]
fn a_cancel_mid_command_ends_the_turn_and_kills_its_process_group() {
    let d = dirs();
    // No sandbox (yolo): the pid the command writes is one of this world.
    let scenario = json!({"turns": [
        {"text": "Running the long one.", "tool_calls": [{"name": "bash", "input": {
            "command": "echo $$ > pid.txt; sleep 60 & sleep 60; echo late > late.txt"}}]},
        {"text": "Not reached."}
    ]});
    let steps = json!([
        {"op": "initialize"},
        {"op": "new", "cwd": d.ws},
        {"op": "prompt", "text": "Run it.",
         "cancel": {"update": {"sessionUpdate": "tool_call", "kind": "execute"},
                    "pidFile": d.ws.join("pid.txt")}},
        {"op": "wait_gone", "timeoutMs": 10000}
    ]);
    let started = std::time::Instant::now();
    let Some(log) = play(&d, agent(&d.home, scenario, &["--approval", "yolo"]), steps) else {
        return;
    };
    let dump = log.dump();
    let cancelled = log.event("cancelled");
    let pid = cancelled["pid"]
        .as_i64()
        .unwrap_or_else(|| panic!("{dump}")) as i32;
    let pgid = cancelled["pgid"]
        .as_i64()
        .unwrap_or_else(|| panic!("{dump}")) as i32;
    assert_eq!(log.result(2)["stopReason"], "cancelled", "{dump}");
    let gone = log.event("gone");
    assert_eq!(
        gone["proc_gone"], true,
        "the command outlived the cancel: {dump}"
    );
    assert_eq!(
        gone["group_gone"], true,
        "its process group outlived the cancel: {dump}"
    );
    assert!(!support::proc::alive(pid), "{dump}");
    assert!(support::proc::group_members(pgid).is_empty(), "{dump}");
    assert!(!d.ws.join("late.txt").exists());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(50),
        "{dump}"
    );
}
