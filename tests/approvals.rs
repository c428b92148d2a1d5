//! Approval modes at the engine's level: each mode against each tool, the
//! user's answers (once, always, refuse with a reason) reaching the model,
//! deny rules winning in every mode (and, while they exist, lines they
//! cannot be checked against refused or asked), what "always" and allow
//! rules cover, and auto mode's sandbox: writes outside
//! the workspace are blocked and reported, and can be run outside with the
//! user's approval. Sandbox tests are skipped (with a printed reason) where
//! the kernel has no Landlock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use scripted_support::{plan, scenario, start_with, stop, tool_results, turn_end, until};
use serde_json::{Value, json};
use waypoint::agent::{AgentConfig, SessionSetup};
use waypoint::events::{ApprovalMode, ApprovalReason, Decision, Event, Op};
use waypoint::safety::{Rules, Sandbox, landlock_abi};

/// What happened to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Ran,
    Asked,
    Refused,
}

fn config(mode: ApprovalMode, ws: &Path, rules: Rules) -> AgentConfig {
    let mut config = AgentConfig {
        approval: mode,
        nag_every: 0,
        ..AgentConfig::default()
    };
    config.tools.rules = rules;
    if landlock_abi().is_some() {
        config.tools.sandbox = Some(Sandbox::for_workspace(ws, &[], true));
    }
    config
}

/// Runs one turn of `calls` in `mode`, answering every approval request
/// with `answer`; returns each call's id and the events of the turn, and
/// the tool results the model read next.
async fn run_calls(
    mode: ApprovalMode,
    ws: &Path,
    rules: Rules,
    calls: Value,
    answer: impl Fn(&Event) -> Decision,
) -> (Vec<Event>, Vec<(String, String)>) {
    let client = scenario(json!([{ "tool_calls": calls }, {"text": "done"}]));
    let mut h = start_with(
        client.clone(),
        ws,
        config(mode, ws, rules),
        SessionSetup::Off,
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let mut events = Vec::new();
    loop {
        let mut batch = until(&mut h.events, |e| {
            turn_end(e) || matches!(e, Event::ApprovalRequested { .. })
        })
        .await;
        let last = batch.last().cloned().unwrap();
        events.append(&mut batch);
        match &last {
            Event::ApprovalRequested { id, .. } => {
                let decision = answer(&last);
                h.ops
                    .send(Op::Approve {
                        id: id.clone(),
                        decision,
                    })
                    .unwrap();
            }
            _ => break,
        }
    }
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    let results = tool_results(requests.last().unwrap());
    (events, results)
}

fn fates(events: &[Event], results: &[(String, String)]) -> BTreeMap<String, Fate> {
    let asked: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    results
        .iter()
        .map(|(id, content)| {
            let fate = if asked.contains(&id.as_str()) {
                Fate::Asked
            } else if content.starts_with("Refused") || content.starts_with("Blocked") {
                Fate::Refused
            } else {
                Fate::Ran
            };
            (id.clone(), fate)
        })
        .collect()
}

#[tokio::test]
async fn each_mode_lets_each_tool_run_ask_or_refuse() {
    use Fate::*;
    let table: &[(ApprovalMode, [Fate; 6])] = &[
        //                    read  glob  todo  write    edit     bash
        (
            ApprovalMode::ReadOnly,
            [Ran, Ran, Ran, Refused, Refused, Refused],
        ),
        (ApprovalMode::Ask, [Ran, Ran, Ran, Asked, Asked, Asked]),
        (ApprovalMode::AutoEdit, [Ran, Ran, Ran, Ran, Ran, Asked]),
        (ApprovalMode::Auto, [Ran, Ran, Ran, Ran, Ran, Ran]),
        (ApprovalMode::Yolo, [Ran, Ran, Ran, Ran, Ran, Ran]),
    ];
    for (mode, expected) in table {
        if *mode == ApprovalMode::Auto && landlock_abi().is_none() {
            eprintln!("skipped auto mode: this kernel has no Landlock");
            continue;
        }
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
        let calls = json!([
            {"name": "read_file", "input": {"path": "a.txt"}},
            {"name": "glob", "input": {"pattern": "*.txt"}},
            {"name": "todo_write", "input": plan(&[("Step", "in_progress")])},
            {"name": "write_file", "input": {"path": "b.txt", "content": "new\n"}},
            {"name": "edit_file", "input": {"path": "a.txt", "old_text": "one", "new_text": "two"}},
            {"name": "bash", "input": {"command": "echo ran > c.txt"}}
        ]);
        let (events, results) = run_calls(*mode, ws.path(), Rules::default(), calls, |_| {
            Decision::Refuse {
                reason: Some("not in this test".into()),
            }
        })
        .await;
        let fates: Vec<Fate> = fates(&events, &results).into_values().collect();
        assert_eq!(&fates[..], &expected[..], "{mode}: {results:#?}");
        // What ran changed the workspace; what was refused or asked did not.
        let ran = |i: usize| expected[i] == Ran;
        assert_eq!(ws.path().join("b.txt").exists(), ran(3), "{mode}");
        let a = std::fs::read_to_string(ws.path().join("a.txt")).unwrap();
        assert_eq!(a == "two\n", ran(4), "{mode}");
        assert_eq!(ws.path().join("c.txt").exists(), ran(5), "{mode}");
        // Refusals reach the model as results it can read.
        for (_, content) in &results {
            if content.starts_with("Refused by the user") {
                assert_eq!(content, "Refused by the user: not in this test");
            }
        }
        if *mode == ApprovalMode::ReadOnly {
            assert!(results[5].1.contains("read-only mode"), "{}", results[5].1);
        }
    }
}

#[tokio::test]
async fn an_approved_call_runs_and_always_covers_its_first_words() {
    let ws = tempfile::tempdir().unwrap();
    let calls = json!([
        {"name": "bash", "input": {"command": "echo one >> log.txt"}},
        {"name": "bash", "input": {"command": "echo one again >> log.txt"}},
        {"name": "bash", "input": {"command": "echo two >> log.txt"}},
        {"name": "write_file", "input": {"path": "f.txt", "content": "x"}},
        {"name": "write_file", "input": {"path": "f.txt", "content": "y"}},
        // The same file as typed otherwise: covered by the same "always".
        {"name": "write_file", "input": {"path": "./f.txt", "content": "z"}},
        {"name": "write_file", "input": {"path": ws.path().join("f.txt"), "content": "y"}}
    ]);
    let (events, results) =
        run_calls(
            ApprovalMode::Ask,
            ws.path(),
            Rules::default(),
            calls,
            |e| match e {
                Event::ApprovalRequested {
                    command: Some(c), ..
                } if c.starts_with("echo two") => Decision::Once,
                _ => Decision::Always,
            },
        )
        .await;
    let asked = events
        .iter()
        .filter(|e| matches!(e, Event::ApprovalRequested { .. }))
        .count();
    // `echo one` always, then `echo two` once, then f.txt always.
    assert_eq!(asked, 3, "{results:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("log.txt")).unwrap(),
        "one\none again\ntwo\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("f.txt")).unwrap(),
        "y"
    );
}

#[tokio::test]
async fn a_deny_rule_refuses_in_every_mode_without_asking() {
    let rules = Rules {
        allow: vec!["rm".into()],
        deny: vec!["rm -rf".into()],
        ..Rules::default()
    };
    for mode in ApprovalMode::ALL {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("keep")).unwrap();
        let calls = json!([{"name": "bash", "input": {"command": "true && rm -fr keep"}}]);
        let (events, results) =
            run_calls(mode, ws.path(), rules.clone(), calls, |_| Decision::Once).await;
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::ApprovalRequested { .. })),
            "{mode} asked"
        );
        assert!(
            results[0].1.starts_with("Blocked by a deny rule: rm -rf"),
            "{mode}: {}",
            results[0].1
        );
        assert!(ws.path().join("keep").exists(), "{mode}");
    }
}

/// The reason of each approval request in `events`.
fn reasons(events: &[Event]) -> Vec<ApprovalReason> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn with_deny_rules_a_line_that_cannot_be_followed_is_refused_or_asked_with_the_reason() {
    let deny = Rules {
        allow: vec!["rm".into()],
        deny: vec!["rm -rf".into()],
        ..Rules::default()
    };
    // `$X` is `rm` when it runs: no deny rule can see that.
    let command = "X=rm; $X -rf keep";
    for mode in ApprovalMode::ALL {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("keep")).unwrap();
        let calls = json!([{"name": "bash", "input": {"command": command}}]);
        let (events, results) = run_calls(mode, ws.path(), deny.clone(), calls, |_| {
            Decision::Refuse { reason: None }
        })
        .await;
        let asked = reasons(&events);
        match mode {
            ApprovalMode::Ask | ApprovalMode::AutoEdit => {
                assert!(
                    matches!(asked.as_slice(), [ApprovalReason::Unfollowable { why }] if why.contains("`$X`")),
                    "{mode}: {asked:?}"
                );
            }
            ApprovalMode::ReadOnly => assert!(asked.is_empty(), "{mode}"),
            // Plan mode asks nobody about a command it can run confined.
            ApprovalMode::Auto | ApprovalMode::Yolo | ApprovalMode::Plan => {
                assert!(asked.is_empty(), "{mode} asked");
                let result = &results[0].1;
                assert!(
                    result.starts_with("Refused: deny rules are configured")
                        && result.contains("the program `$X` is made by an expansion"),
                    "{mode}: {result}"
                );
            }
        }
        assert!(ws.path().join("keep").exists(), "{mode}");
    }
    // Without deny rules nothing changes: yolo runs it.
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("keep")).unwrap();
    let calls = json!([{"name": "bash", "input": {"command": command}}]);
    let (_, results) = run_calls(
        ApprovalMode::Yolo,
        ws.path(),
        Rules::default(),
        calls,
        |_| Decision::Once,
    )
    .await;
    assert!(!ws.path().join("keep").exists(), "{results:?}");
}

#[tokio::test]
async fn always_on_a_line_that_cannot_be_followed_allows_exactly_that_line() {
    let ws = tempfile::tempdir().unwrap();
    let rules = Rules {
        allow: Vec::new(),
        deny: vec!["rm -rf".into()],
        ..Rules::default()
    };
    let calls = json!([
        {"name": "bash", "input": {"command": "X=true; $X one"}},
        {"name": "bash", "input": {"command": "X=true; $X one"}},
        {"name": "bash", "input": {"command": "X=true; $X two"}}
    ]);
    let (events, results) = run_calls(ApprovalMode::Ask, ws.path(), rules, calls, |e| match e {
        Event::ApprovalRequested {
            command: Some(c), ..
        } if c.ends_with("one") => Decision::Always,
        _ => Decision::Refuse { reason: None },
    })
    .await;
    use Fate::*;
    let fates: Vec<Fate> = fates(&events, &results).into_values().collect();
    assert_eq!(fates, [Asked, Ran, Asked], "{results:#?}");
    assert!(
        reasons(&events)
            .iter()
            .all(|r| matches!(r, ApprovalReason::Unfollowable { .. }))
    );
}

#[tokio::test]
async fn always_on_a_bare_command_allows_that_line_only_and_allow_rules_not_what_they_do_not_say() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "hi\n").unwrap();
    let outside = outside();
    let target = outside.path().join("appended.txt");
    let calls = json!([
        {"name": "bash", "input": {"command": "pwd"}},
        {"name": "bash", "input": {"command": "pwd"}},
        {"name": "bash", "input": {"command": "pwd -P"}},
        {"name": "bash", "input": {"command": "cat notes.txt > copy.txt"}},
        {"name": "bash", "input": {"command": format!("cat notes.txt >> {}", target.display())}},
        {"name": "bash", "input": {"command": "FOO=1 cat notes.txt"}}
    ]);
    let rules = Rules {
        allow: vec!["cat notes.txt".into()],
        deny: Vec::new(),
        ..Rules::default()
    };
    let (events, results) = run_calls(ApprovalMode::Ask, ws.path(), rules, calls, |e| match e {
        Event::ApprovalRequested {
            command: Some(c), ..
        } if c == "pwd" => Decision::Always,
        _ => Decision::Refuse { reason: None },
    })
    .await;
    let fates: Vec<Fate> = fates(&events, &results).into_values().collect();
    use Fate::*;
    // `pwd` asked once; `pwd -P` asked again; the redirection inside the
    // workspace is covered by the rule, the one outside and the assignment
    // are not.
    assert_eq!(
        fates,
        [Asked, Ran, Asked, Ran, Asked, Asked],
        "{results:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("copy.txt")).unwrap(),
        "hi\n"
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn the_mode_can_change_mid_session_and_is_announced() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo a > a.txt"}}]},
        {"text": "first"},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo b > b.txt"}}]},
        {"text": "second"}
    ]));
    let mut h = start_with(
        client,
        ws.path(),
        config(ApprovalMode::ReadOnly, ws.path(), Rules::default()),
        SessionSetup::Off,
    );
    let first = until(&mut h.events, |e| matches!(e, Event::ApprovalMode { .. })).await;
    assert!(matches!(
        first.last(),
        Some(Event::ApprovalMode {
            mode: ApprovalMode::ReadOnly,
            ..
        })
    ));
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    assert!(!ws.path().join("a.txt").exists());
    h.ops
        .send(Op::SetApproval {
            mode: ApprovalMode::Yolo,
        })
        .unwrap();
    h.ops
        .send(Op::Submit {
            text: "again".into(),
        })
        .unwrap();
    let events = until(&mut h.events, turn_end).await;
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ApprovalMode {
            mode: ApprovalMode::Yolo,
            sandboxed: false
        }
    )));
    assert!(ws.path().join("b.txt").exists());
    stop(h).await;
}

/// A folder outside the workspace, the temp folder and the caches: the
/// sandbox may not write there.
fn outside() -> tempfile::TempDir {
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap();
    tempfile::Builder::new()
        .prefix(".waypoint-sandbox-test-")
        .tempdir_in(home)
        .unwrap()
}

#[tokio::test]
async fn auto_mode_sandboxes_bash_and_asks_to_run_a_blocked_command_outside() {
    if landlock_abi().is_none() {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = outside();
    let target = out.path().join("outside.txt");
    let calls = json!([
        {"name": "bash", "input": {"command": "touch inside.txt && cargo --version && git init -q && git status --short"}},
        {"name": "bash", "input": {"command": format!("touch {}", target.display())}}
    ]);
    // Refused: the model reads what the sandbox stopped.
    let (events, results) = run_calls(
        ApprovalMode::Auto,
        ws.path(),
        Rules::default(),
        calls.clone(),
        |_| Decision::Refuse { reason: None },
    )
    .await;
    assert!(ws.path().join("inside.txt").exists(), "{results:#?}");
    assert!(results[0].1.contains("cargo "), "{}", results[0].1);
    assert!(results[0].1.ends_with("[exit code: 0]"), "{}", results[0].1);
    assert!(!target.exists());
    let blocked: Vec<&ApprovalReason> = events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(blocked.len(), 1, "{events:#?}");
    assert!(
        matches!(blocked[0], ApprovalReason::SandboxBlocked { what } if what.contains("Permission denied"))
    );
    assert!(
        results[1].1.contains("[blocked by the sandbox: "),
        "{}",
        results[1].1
    );

    // Approved: it runs again, outside the sandbox.
    let ws = tempfile::tempdir().unwrap();
    let (_, results) = run_calls(
        ApprovalMode::Auto,
        ws.path(),
        Rules::default(),
        calls,
        |_| Decision::Once,
    )
    .await;
    assert!(target.exists(), "{results:#?}");
    assert!(results[1].1.ends_with("[exit code: 0]"), "{}", results[1].1);
}

#[tokio::test]
async fn the_sandbox_can_turn_the_network_off() {
    match landlock_abi() {
        Some(abi) if abi >= 4 => {}
        other => {
            eprintln!("skipped: Landlock ABI {other:?} has no network rules");
            return;
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    for network in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_waypoint"))
            .current_dir(ws.path())
            .arg("sandbox")
            .args((!network).then_some("--no-network"))
            .args(["--", "bash", "-c", &connect])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.contains("connected"),
            network,
            "network {network}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn waypoint_sandbox_confines_one_command() {
    if landlock_abi().is_none() {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out_dir = outside();
    let run = |cmd: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_waypoint"))
            .current_dir(ws.path())
            .args(["sandbox", "--", "bash", "-c", cmd])
            .output()
            .unwrap()
    };
    assert!(run("touch ok").status.success());
    assert!(ws.path().join("ok").exists());
    let blocked = run(&format!("touch {}/no", out_dir.path().display()));
    assert!(!blocked.status.success());
    assert!(String::from_utf8_lossy(&blocked.stderr).contains("Permission denied"));
    assert!(!out_dir.path().join("no").exists());
    // With --write, that folder is allowed too.
    let allowed = std::process::Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .current_dir(ws.path())
        .arg("sandbox")
        .arg("--write")
        .arg(out_dir.path())
        .args(["--", "touch"])
        .arg(out_dir.path().join("yes"))
        .status()
        .unwrap();
    assert!(allowed.success());
    let missing = run("exec /nonexistent/program");
    assert!(!missing.status.success());
}

#[tokio::test]
async fn the_time_spent_waiting_for_approval_is_not_the_call_s_duration() {
    // How long the user thinks, and what the call may take beyond the time
    // from the answer to its end (describing it and asking, before).
    const THINK: Duration = Duration::from_millis(400);
    const SLACK: Duration = Duration::from_millis(100);
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]},
        {"text": "done"}
    ]));
    let mut h = start_with(
        client,
        ws.path(),
        config(ApprovalMode::Ask, ws.path(), Rules::default()),
        SessionSetup::Off,
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let seen = until(&mut h.events, |e| {
        matches!(e, Event::ApprovalRequested { .. })
    })
    .await;
    let Some(Event::ApprovalRequested { id, .. }) = seen.last().cloned() else {
        unreachable!()
    };
    // The user thinks; nothing may move while the question is open (a
    // wait bounded by the thinking time, on that condition).
    let thinking = tokio::time::timeout(THINK, h.events.recv()).await;
    assert!(thinking.is_err(), "went on without an answer: {thinking:?}");
    let answered = Instant::now();
    h.ops
        .send(Op::Approve {
            id,
            decision: Decision::Once,
        })
        .unwrap();
    let seen = until(&mut h.events, |e| matches!(e, Event::ToolCallEnd { .. })).await;
    let since_answer = answered.elapsed();
    let Some(Event::ToolCallEnd { duration_ms, .. }) = seen.last() else {
        unreachable!()
    };
    // Compared with the time from the answer on (which holds the run, not
    // the thinking), so a slow machine cannot make it fail: had the wait
    // counted, the call would be `THINK` longer than that.
    let took = Duration::from_millis(*duration_ms);
    assert!(
        took <= since_answer + SLACK,
        "the call took {took:?}, {since_answer:?} after the answer"
    );
    until(&mut h.events, turn_end).await;
    stop(h).await;
}

#[tokio::test]
async fn an_overwrite_asks_with_what_it_replaces_and_an_edit_with_its_line() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let calls = json!([
        {"name": "write_file", "input": {"path": "a.txt", "content": "zero\nhalf\nuno\n"}},
        {"name": "edit_file", "input": {"path": "a.txt", "old_text": "uno", "new_text": "one"}}
    ]);
    let (events, _) = run_calls(
        ApprovalMode::Ask,
        ws.path(),
        Rules::default(),
        calls,
        |_| Decision::Once,
    )
    .await;
    let asked: Vec<(String, String, usize)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { name, summary, .. } => match &summary.detail {
                waypoint::events::ToolDetail::Diff { old, first, .. } => {
                    Some((name.clone(), old.clone(), *first))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        [
            ("write_file".to_string(), "one\ntwo\nthree\n".to_string(), 1),
            // Asked after the write ran: the edit's text is on line 3 now,
            // shown with the lines around it (from line 1).
            ("edit_file".to_string(), "zero\nhalf\nuno\n".to_string(), 1),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "zero\nhalf\none\n"
    );
}
