//! Sessions survive `kill -9`: the real binary runs a scripted multi-round
//! task headless against a loopback model server (Chat Completions and
//! Anthropic Messages), is killed at many points (inside a tool,
//! mid-stream, between rounds, right after a plan update, before the first
//! reply; some sessions again after a resume), and `waypoint -c -p "go on"`
//! finishes it. Checked each time: no record written before a kill is
//! lost, the plan comes back exactly, every request after the resume keeps
//! the API's pairing of calls and results, no tool call runs twice, and the
//! card agrees with the transcript. Also: a session whose workspace is gone
//! is refused with a clear message, and no transcript holds the API key or
//! an Authorization value.
//!
//! The server picks its reply from the number of assistant messages in the
//! request, so the same server continues the script after a restart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::loopback;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::Anthropic;
use common::openai::{OpenAi, assert_valid_chat_request};
use loopback::{Answer, ProviderWire, Recorded, Reply, plan};
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use waypoint::todo::{TodoItem, TodoManager};

/// The test's API key: it must never reach a transcript.
const KEY: &str = "sk-crash-test-SECRET-4f1d9a";
/// The resumed run's message; the server answers it with a `todo_read`
/// call, so the next request shows the plan the resumed run starts from.
const GO_ON: &str = "go on";
/// Every scripted command appends its tag here (in the workspace).
const COUNT: &str = "count.txt";
/// The replies of the script, by step (assistant messages so far, the
/// `todo_read` probes not counted). The last one ends the task.
const STEPS: usize = 9;
/// The tags the script's commands append, each exactly once in the end.
const TAGS: [&str; 5] = ["s1", "s2", "s4a", "s4b", "s6"];
/// The steps that update the plan.
const PLAN_STEPS: [usize; 4] = [0, 3, 5, 7];

/// Where a run is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kill {
    /// The last command of step k has appended its line and sleeps.
    InTool(usize),
    /// Step k's reply stops halfway (mid-event) and the stream stalls.
    MidStream(usize),
    /// The request for step k is never answered.
    BetweenRounds(usize),
    /// As soon as the transcript holds its `n`th plan record (the request
    /// after that plan's step is never answered, so the kill lands between
    /// the plan record and that request).
    AfterPlan(usize),
}

fn plan_step(items: &[(&str, &str)]) -> Answer {
    Answer::tool("todo_write", plan(items))
}

fn bash(answer: Answer, tag: &str, sleepy: bool) -> Answer {
    let command = if sleepy {
        // The pid first, so the test can kill the orphaned shell's group.
        format!("echo $$ > {tag}.pid; echo {tag} >> {COUNT}; sleep 30")
    } else {
        format!("echo {tag} >> {COUNT}")
    };
    answer.with_tool("bash", json!({ "command": command }))
}

/// Step `k` of the script; `sleepy`: its last command sleeps after its line.
fn step(k: usize, sleepy: bool) -> Answer {
    let none = Answer::default();
    match k {
        0 => plan_step(&[
            ("Write", "in_progress"),
            ("Test", "pending"),
            ("Ship", "pending"),
        ])
        .with_text("Planning first."),
        1 => bash(none, "s1", sleepy),
        2 => bash(none.with_text("Second command."), "s2", sleepy),
        3 => plan_step(&[
            ("Write", "completed"),
            ("Test", "in_progress"),
            ("Ship", "pending"),
        ]),
        4 => bash(bash(none, "s4a", false), "s4b", sleepy),
        5 => plan_step(&[
            ("Write", "completed"),
            ("Test", "completed"),
            ("Ship", "in_progress"),
        ]),
        6 => bash(none, "s6", sleepy),
        7 => plan_step(&[
            ("Write", "completed"),
            ("Test", "completed"),
            ("Ship", "completed"),
        ]),
        _ => Answer::text("All done."),
    }
}

/// What the test reads of a wire's requests, and how it points the binary
/// at the server.
trait Side: ProviderWire {
    const PROVIDER: &'static str;
    /// The names of an assistant message's calls.
    fn call_names(message: &Value) -> Vec<String>;
    /// A user message's text (its text blocks joined).
    fn user_text(message: &Value) -> Option<String>;
    /// Every tool result in the request: call id and content.
    fn results(messages: &[Value]) -> Vec<(String, String)>;
    /// The API's pairing rule, checked on its own (see the impls).
    fn assert_paired(messages: &[Value], case: &str);
    /// The API's own validator from the shared test support.
    fn assert_valid_body(body: &Value);
}

impl Side for OpenAi {
    const PROVIDER: &'static str = "openai";
    fn call_names(message: &Value) -> Vec<String> {
        message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| c["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
    fn user_text(message: &Value) -> Option<String> {
        (message["role"] == "user").then(|| message["content"].as_str().unwrap().to_string())
    }
    fn results(messages: &[Value]) -> Vec<(String, String)> {
        messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                let id = m["tool_call_id"].as_str().unwrap().to_string();
                (id, m["content"].as_str().unwrap().to_string())
            })
            .collect()
    }
    /// Every assistant `tool_calls[].id` is answered by a `tool` message
    /// with that `tool_call_id` before any other message, and no `tool`
    /// message answers anything else.
    fn assert_paired(messages: &[Value], case: &str) {
        let mut i = 0;
        while i < messages.len() {
            let m = &messages[i];
            assert_ne!(m["role"], "tool", "{case}: a stray tool message at {i}");
            i += 1;
            let Some(calls) = m["tool_calls"].as_array() else {
                continue;
            };
            let mut open: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
            while let Some(t) = messages.get(i).filter(|t| t["role"] == "tool") {
                let id = t["tool_call_id"].as_str().unwrap();
                let at = open.iter().position(|o| *o == id);
                assert!(
                    at.is_some(),
                    "{case}: tool message {i} answers no open call"
                );
                open.remove(at.unwrap());
                i += 1;
            }
            assert!(
                open.is_empty(),
                "{case}: calls {open:?} unanswered before message {i}"
            );
        }
    }
    fn assert_valid_body(body: &Value) {
        assert_valid_chat_request(body);
    }
}

/// A Messages API message's blocks (plain string content is one text block).
fn blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        content => content.as_array().unwrap().clone(),
    }
}

impl Side for Anthropic {
    const PROVIDER: &'static str = "anthropic";
    fn call_names(message: &Value) -> Vec<String> {
        blocks(message)
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["name"].as_str().unwrap().to_string())
            .collect()
    }
    fn user_text(message: &Value) -> Option<String> {
        if message["role"] != "user" {
            return None;
        }
        let texts: Vec<String> = blocks(message)
            .iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap().to_string())
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n\n"))
    }
    fn results(messages: &[Value]) -> Vec<(String, String)> {
        messages
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                let id = b["tool_use_id"].as_str().unwrap().to_string();
                (id, b["content"].as_str().unwrap().to_string())
            })
            .collect()
    }
    /// Every `tool_use` is answered by a `tool_result` in the next message,
    /// a user message, where the results come before any other block.
    fn assert_paired(messages: &[Value], case: &str) {
        let ids = |bs: &[Value], kind: &str, key: &str| -> Vec<String> {
            bs.iter()
                .filter(|b| b["type"] == kind)
                .map(|b| b[key].as_str().unwrap().to_string())
                .collect()
        };
        for (i, m) in messages.iter().enumerate() {
            let mut uses = ids(&blocks(m), "tool_use", "id");
            if uses.is_empty() {
                continue;
            }
            let next = messages
                .get(i + 1)
                .unwrap_or_else(|| panic!("{case}: message {i}'s calls are answered"));
            assert_eq!(next["role"], "user", "{case}: message {}", i + 1);
            let next = blocks(next);
            let lead = next
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .count();
            let mut results = ids(&next[..lead], "tool_result", "tool_use_id");
            uses.sort_unstable();
            results.sort_unstable();
            assert_eq!(
                results,
                uses,
                "{case}: message {} opens with a result for each tool_use of message {i}",
                i + 1
            );
            assert!(
                next[lead..].iter().all(|b| b["type"] != "tool_result"),
                "{case}: the results come first in message {}",
                i + 1
            );
        }
    }
    fn assert_valid_body(body: &Value) {
        common::assert_valid_request(body);
    }
}

fn is_probe<W: Side>(message: &Value) -> bool {
    message["role"] == "assistant" && W::call_names(message) == ["todo_read"]
}

/// The script's step for a request: its assistant messages, probes not counted.
fn step_of<W: Side>(messages: &[Value]) -> usize {
    messages
        .iter()
        .filter(|m| m["role"] == "assistant" && !is_probe::<W>(m))
        .count()
}

fn asks_to_go_on<W: Side>(messages: &[Value]) -> bool {
    messages
        .last()
        .and_then(W::user_text)
        .is_some_and(|t| t.ends_with(GO_ON))
}

/// `kill`'s trap in the server: served once, while armed; `fired` tells
/// the test it was served.
#[derive(Default)]
struct Trap {
    kill: std::sync::Mutex<Option<Kill>>,
    armed: AtomicBool,
    fired: AtomicBool,
}

impl Trap {
    /// Sets the trap for the next run.
    fn arm(&self, kill: Kill) {
        *self.kill.lock().unwrap() = Some(kill);
        self.fired.store(false, Ordering::SeqCst);
        self.armed.store(true, Ordering::SeqCst);
    }
}

/// The server: the script, with the trap's kill.
fn responder<W: Side>(trap_state: Arc<Trap>) -> loopback::Responder {
    Arc::new(move |req: &Recorded| {
        let kill = *trap_state.kill.lock().unwrap();
        let messages = req.messages();
        if asks_to_go_on::<W>(messages) {
            return W::reply(Answer::tool("todo_read", json!({})));
        }
        let n = step_of::<W>(messages);
        let trap = match kill {
            Some(Kill::InTool(k) | Kill::MidStream(k) | Kill::BetweenRounds(k)) => k == n,
            Some(Kill::AfterPlan(p)) => PLAN_STEPS[p - 1] + 1 == n,
            None => false,
        };
        if trap && trap_state.armed.swap(false, Ordering::SeqCst) {
            trap_state.fired.store(true, Ordering::SeqCst);
            return match kill {
                Some(Kill::InTool(_)) => W::reply(step(n, true)),
                Some(Kill::MidStream(_)) => {
                    let body = W::body(&step(n, false));
                    Reply::Stall {
                        prefix: body[..body.len() / 2].to_string(),
                    }
                }
                _ => Reply::Silent,
            };
        }
        W::reply(step(n.min(STEPS - 1), false))
    })
}

fn waypoint<W: Side>(home: &Path, ws: &Path, url: &str) -> Command {
    waypoint_via::<W>(Command::new(env!("CARGO_BIN_EXE_waypoint")), home, ws, url)
}

/// `cmd` (the binary, or a shell that execs it with its arguments) set up
/// as [`waypoint`] sets it up.
fn waypoint_via<W: Side>(mut cmd: Command, home: &Path, ws: &Path, url: &str) -> Command {
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("WAYPOINT_LOG", home.join("waypoint.log"))
        .env("WAYPOINT_HOME", home)
        // Headless runs bash in the sandbox; a kernel without Landlock runs it bare.
        .envs(
            waypoint::safety::landlock_abi()
                .is_none()
                .then_some(("WAYPOINT_APPROVAL", "yolo")),
        )
        .env(W::KEY_VAR, KEY)
        .args(["--provider", W::PROVIDER, "--model", W::MODEL])
        .args(["--base-url", url])
        .args(["--output-format", "jsonl"])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

async fn finish(cmd: &mut Command) -> (i32, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .unwrap_or_else(|_| panic!("waypoint {cmd:?} finished within 60 s"))
        .expect("waypoint ran");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Polls `ready` every 5 ms; a generous guard, not a timing assertion.
async fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    for _ in 0..6_000 {
        if ready() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("timed out waiting for {what}");
}

fn transcripts(home: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(home.join("sessions")) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect()
}

fn records(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every line is a JSON record"))
        .collect()
}

/// The type of a record's event (`plan_updated`, `tool_call_end`, …), or
/// of the record itself (`user`, `assistant`, …).
fn kind(record: &Value) -> &str {
    let of = if record["type"] == "event" {
        &record["envelope"]["type"]
    } else {
        &record["type"]
    };
    of.as_str().unwrap_or_default()
}

fn plans(bytes: &[u8]) -> Vec<Vec<TodoItem>> {
    records(bytes)
        .into_iter()
        .filter(|r| kind(r) == "plan_updated")
        .map(|r| serde_json::from_value(r["envelope"]["items"].clone()).expect("plan items"))
        .collect()
}

/// Kills whatever shell a sleepy command left behind (it leads its group).
fn kill_orphans(ws: &Path) {
    for entry in std::fs::read_dir(ws).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "pid") {
            let pid: i32 = std::fs::read_to_string(&path)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            // A pid written inside the sandbox's PID namespace (the shell
            // is its first process there: 1) is found as this namespace
            // sees it; never `kill(-1)`, which is every process there is.
            let pid = support::proc::outer_pid(pid, ws);
            if pid > 1 {
                // SAFETY: kill(2) on the process group the test's command made.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            // Once: a later kill must not hit a reused id.
            std::fs::remove_file(&path).unwrap();
        }
    }
}

fn assert_no_secret(home: &Path, case: &str) {
    let mut stack = vec![home.join("sessions")];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            files += 1;
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_lowercase();
            for needle in [
                KEY.to_lowercase().as_str(),
                "bearer",
                "authorization",
                "x-api-key",
            ] {
                assert!(
                    !text.contains(needle),
                    "{case}: {} holds `{needle}`",
                    path.display()
                );
            }
        }
    }
    assert!(files > 0, "{case}: the sessions folder holds files");
}

/// The whole task without a kill: the script's reference run.
async fn run_through<W: Side>(home: &Path, ws: &Path, url: &str) {
    let (code, out, err) = finish(waypoint::<W>(home, ws, url).args(["-p", "do the task"])).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
}

/// Waits for `kill`'s point, kills `child` (SIGKILL) and checks the
/// transcript: whole lines only, nothing seen before the kill or written
/// by an earlier run lost. Returns the transcript's bytes after the kill.
async fn kill_at<W: Side>(
    mut child: Child,
    kill: Kill,
    (trap, server, stalls): (&Trap, &loopback::FakeServer<W>, usize),
    home: &Path,
    ws: &Path,
    earlier: &[u8],
    case: &str,
) -> Vec<u8> {
    let case = format!("{case} at {kill:?}");
    match kill {
        Kill::InTool(k) => {
            let tag = match k {
                1 => "s1",
                2 => "s2",
                4 => "s4b",
                6 => "s6",
                _ => panic!("step {k} runs no command"),
            };
            let count = ws.join(COUNT);
            wait_for(&format!("{case}: {tag} in the count file"), || {
                std::fs::read_to_string(&count).is_ok_and(|c| c.lines().any(|l| l == tag))
            })
            .await;
        }
        Kill::MidStream(_) | Kill::BetweenRounds(_) => {
            wait_for(&format!("{case}: the trap"), || {
                trap.fired.load(Ordering::SeqCst)
            })
            .await;
            // Mid-stream, the half reply is on the wire (written, flushed)
            // before the kill. Between rounds nothing is sent.
            if matches!(kill, Kill::MidStream(_)) {
                wait_for(&format!("{case}: the half reply"), || {
                    server.stalls() > stalls
                })
                .await;
            }
        }
        Kill::AfterPlan(n) => {
            wait_for(&format!("{case}: plan record {n}"), || {
                transcripts(home)
                    .first()
                    .and_then(|p| std::fs::read(p).ok())
                    .is_some_and(|b| {
                        // Whole lines only: a line being written is not counted.
                        // And the plan's call answered too: the kill is meant
                        // for the wait on the next request, not for the
                        // moment between the two records (a loaded machine
                        // can stop there).
                        let whole = b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
                        let recs = records(&b[..whole]);
                        recs.iter()
                            .enumerate()
                            .filter(|(_, r)| kind(r) == "plan_updated")
                            .nth(n - 1)
                            .is_some_and(|(at, _)| {
                                recs[at..].iter().any(|r| kind(r) == "tool_call_end")
                            })
                    })
            })
            .await;
        }
    }
    let path = transcripts(home)
        .pop()
        .unwrap_or_else(|| panic!("{case}: a transcript before the kill"));
    let before = std::fs::read(&path).unwrap();
    child.kill().await.unwrap();
    kill_orphans(ws);
    // A trap the killed run never reached must not catch the next one.
    trap.armed.store(false, Ordering::SeqCst);
    let killed = std::fs::read(&path).unwrap();

    // Whole lines only, and nothing seen before the kill is gone.
    assert_eq!(
        killed.last(),
        Some(&b'\n'),
        "{case}: whole lines after kill -9"
    );
    let seen = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    assert!(
        killed.starts_with(&before[..seen]),
        "{case}: the records before the kill are kept"
    );
    assert!(
        killed.starts_with(earlier),
        "{case}: what the earlier runs wrote is kept"
    );
    killed
}

/// Runs the task, killed at each of `kills` in turn (the first run with the
/// task, the later ones `-c -p "go on"`), then `-c -p "go on"` to the end,
/// and checks what the module's doc says.
async fn crash_and_resume<W: Side>(kills: &[Kill]) {
    let case = format!("{} {kills:?}", W::PROVIDER);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let trap = Arc::new(Trap::default());
    let server = loopback::FakeServer::<W>::responding(responder::<W>(trap.clone())).await;
    let mut killed = Vec::new();
    for (i, &kill) in kills.iter().enumerate() {
        trap.arm(kill);
        let mut run = waypoint::<W>(&home, &ws, &server.url);
        if i == 0 {
            run.args(["-p", "do the task"]);
        } else {
            run.args(["-c", "-p", GO_ON]);
        }
        let stalls = server.stalls();
        let child = run.spawn().unwrap();
        let at = (&*trap, &server, stalls);
        killed = kill_at::<W>(child, kill, at, &home, &ws, &killed, &case).await;
    }
    let path = transcripts(&home).pop().unwrap();
    let last_plan = plans(&killed).pop().unwrap_or_default();
    let requests_before = server.requests().len();

    // The second run continues the session to the end.
    let (code, out, err) =
        finish(waypoint::<W>(&home, &ws, &server.url).args(["-c", "-p", GO_ON])).await;
    assert_eq!(code, 0, "{case}: stdout: {out}\nstderr: {err}");
    let result: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(result["type"], "result", "{case}: {result}");
    assert_eq!(
        result["plan"],
        json!({"completed": 3, "total": 3}),
        "{case}"
    );
    assert!(err.contains("resumed session"), "{case}: {err}");
    assert_eq!(
        transcripts(&home),
        vec![path.clone()],
        "{case}: one session"
    );
    let after = std::fs::read(&path).unwrap();
    assert!(
        after.starts_with(&killed),
        "{case}: the resumed run appends to every byte the killed one wrote"
    );
    // The card (what listings read) agrees with the transcript.
    let card: Value =
        serde_json::from_slice(&std::fs::read(path.with_extension("card.json")).unwrap()).unwrap();
    assert_eq!(
        card["records"],
        records(&after).len() - 1,
        "{case}: the card counts the records (header aside)"
    );
    assert_eq!(card["size"], after.len(), "{case}: the card's size");

    // The next request keeps the API contract, and every later one too.
    let requests = server.requests();
    let resumed = &requests[requests_before..];
    assert!(
        asks_to_go_on::<W>(resumed[0].messages()),
        "{case}: the first request after the resume ends with the user's message"
    );
    for req in resumed {
        W::assert_paired(req.messages(), &case);
        W::assert_valid_body(&req.body);
    }
    let first = resumed[0].messages();
    let notes = W::user_text(first.last().unwrap()).unwrap();
    assert!(
        notes.contains("Waypoint stopped (its process ended)"),
        "{case}: the cut-off turn is marked: {notes}"
    );
    let interrupted = W::results(first)
        .iter()
        .filter(|(_, content)| content.starts_with("interrupted:"))
        .count();
    let expected = kills
        .iter()
        .filter(|k| matches!(k, Kill::InTool(_)))
        .count();
    assert_eq!(
        interrupted, expected,
        "{case}: each killed call is answered as interrupted, once"
    );

    // The plan the resumed run starts from is the last one recorded: the
    // probe's todo_read answers with it.
    let probe_id = {
        let messages = resumed[1].messages();
        let probe = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .unwrap();
        assert!(is_probe::<W>(probe), "{case}: the probe came first");
        let results = W::results(messages);
        results.last().unwrap().clone()
    };
    let expected = TodoManager::restore(last_plan).unwrap().render();
    let rest = probe_id
        .1
        .strip_prefix(&expected)
        .unwrap_or_else(|| panic!("{case}: the plan: {}", probe_id.1));
    // Then, once an item was worked on, its account (rebuilt from the
    // transcript across the kill).
    assert!(
        rest.is_empty() || rest.starts_with("\n\nPer item so far:\n| # | item |"),
        "{case}: after the plan: {rest}"
    );

    // No command ran twice, and every one ran.
    let count = std::fs::read_to_string(ws.join(COUNT)).unwrap();
    let mut lines: Vec<&str> = count.lines().collect();
    lines.sort_unstable();
    let mut tags = TAGS.to_vec();
    tags.sort_unstable();
    assert_eq!(lines, tags, "{case}: each command ran exactly once");

    assert_no_secret(&home, &case);
}

/// Where the runs are killed: every kind of point, at a few steps, once;
/// then a few sessions killed again after a resume.
const CASES: &[&[Kill]] = &[
    &[Kill::BetweenRounds(0)], // before the first reply
    &[Kill::InTool(2)],
    &[Kill::InTool(4)], // the second of two calls, the first done
    &[Kill::MidStream(1)],
    &[Kill::MidStream(3)], // a plan update cut in its arguments
    &[Kill::BetweenRounds(5)],
    &[Kill::AfterPlan(2)],
    &[Kill::AfterPlan(4)], // the last plan: all completed
    &[Kill::BetweenRounds(8)],
    &[Kill::BetweenRounds(0), Kill::BetweenRounds(0)],
    &[Kill::InTool(2), Kill::InTool(4)],
    &[Kill::MidStream(1), Kill::AfterPlan(3), Kill::InTool(6)],
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_anywhere_resumes_whole_openai() {
    for kills in CASES {
        crash_and_resume::<OpenAi>(kills).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_anywhere_resumes_whole_anthropic() {
    for kills in CASES {
        crash_and_resume::<Anthropic>(kills).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_script_runs_through_without_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server =
        loopback::FakeServer::<OpenAi>::responding(responder::<OpenAi>(Arc::default())).await;
    run_through::<OpenAi>(&home, &ws, &server.url).await;
    let count = std::fs::read_to_string(ws.join(COUNT)).unwrap();
    assert_eq!(count.lines().collect::<Vec<_>>(), TAGS);
    assert_eq!(server.requests().len(), STEPS);
    for req in server.requests() {
        OpenAi::assert_paired(req.messages(), "no kill");
        // The key goes to the server, in the header only.
        assert_eq!(
            req.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcripts_hold_no_key_or_authorization() {
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server =
        loopback::FakeServer::<OpenAi>::responding(responder::<OpenAi>(Arc::default())).await;
    run_through::<OpenAi>(&home, &ws, &server.url).await;
    // Continued once more, so the resumed writer is covered too.
    let (code, _, err) =
        finish(waypoint::<OpenAi>(&home, &ws, &server.url).args(["-c", "-p", GO_ON])).await;
    assert_eq!(code, 0, "{err}");
    assert_no_secret(&home, "two runs");
    // An export carries none either.
    let id = transcripts(&home)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for format in ["markdown", "jsonl"] {
        let (code, out, err) = finish(
            waypoint::<OpenAi>(&home, &ws, &server.url).args(["export", &id, "--format", format]),
        )
        .await;
        assert_eq!(code, 0, "{err}");
        assert!(!out.contains(KEY) && !out.to_lowercase().contains("bearer"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_workspace_is_gone_says_so_and_how_to_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server =
        loopback::FakeServer::<OpenAi>::responding(responder::<OpenAi>(Arc::default())).await;
    run_through::<OpenAi>(&home, &ws, &server.url).await;
    let id = transcripts(&home)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let gone = ws.canonicalize().unwrap();
    std::fs::remove_dir_all(&ws).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let requests = server.requests().len();

    // `-r ID` from another folder, and `-c` pointed at the gone folder.
    let by_id = ["-r", &id[..8], "-p", GO_ON];
    let gone_flag = gone.display().to_string();
    let latest = ["-c", "-p", GO_ON, "--workspace", &gone_flag];
    for args in [&by_id[..], &latest[..]] {
        let (code, out, err) =
            finish(waypoint::<OpenAi>(&home, &elsewhere, &server.url).args(args)).await;
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(
            err.contains(&gone_flag) && err.contains("--workspace"),
            "{args:?}: the error names the folder and the way on: {err}"
        );
    }
    // `-c` from inside the deleted folder (the shell still stands in it).
    let script = format!(
        "mkdir -p '{0}' && cd '{0}' && rm -rf '{0}' && exec '{1}' \"$@\"",
        gone.display(),
        env!("CARGO_BIN_EXE_waypoint")
    );
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(&script).arg("sh");
    let mut sh = waypoint_via::<OpenAi>(sh, &home, dir.path(), &server.url);
    sh.args(["-c", "-p", GO_ON]);
    let (code, _, err) = finish(&mut sh).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("current directory") && err.contains("--workspace"),
        "-c in a deleted folder says so and how to go on: {err}"
    );
    assert_eq!(server.requests().len(), requests, "nothing was sent");

    // With --workspace it goes on in another folder.
    let (code, out, err) = finish(
        waypoint::<OpenAi>(&home, &elsewhere, &server.url)
            .args(["-r", &id[..8], "-p", GO_ON, "--workspace"])
            .arg(&elsewhere),
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
}
