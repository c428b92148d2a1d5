//! Integration tests for the `bash` tool's process-group handling: an
//! interrupt, a timeout or a normal exit leaves no grandchild running. The
//! tests wait for what they need (pid files, output) instead of guessing how
//! long a loaded machine takes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::proc::{alive, gone_within};
use support::workspace::Fixture;
use waypoint::tools::{ToolOutput, bash};

/// How long the tests wait for something that should happen at once.
const PATIENCE: Duration = Duration::from_secs(10);

fn fixture() -> Fixture {
    Fixture::new()
}

/// Runs `bash` with `input` in the fixture's workspace.
async fn run(f: &Fixture, input: Value) -> ToolOutput {
    bash::run(&input, &f.env()).await
}

/// Polls up to `PATIENCE` for the pid a command wrote to `file`.
async fn wait_for_pid(f: &Fixture, file: &str) -> i32 {
    support::proc::wait_for_pid(&f.root().join(file), PATIENCE).await
}

/// Polls up to `PATIENCE` for `pid` to disappear.
async fn gone_soon(pid: i32) -> bool {
    gone_within(pid, PATIENCE).await
}

#[tokio::test]
async fn interrupt_kills_the_whole_group() {
    let f = fixture();
    let start = Instant::now();
    let call = run(
        &f,
        json!({"command": "echo waiting; sleep 30 & echo $! > pid; wait"}),
    );
    tokio::pin!(call);
    // Interrupt only once the grandchild runs (`waiting` is in the pipe by
    // then).
    let pid = tokio::select! {
        out = &mut call => panic!("the call ended before the interrupt: {}", out.content),
        pid = wait_for_pid(&f, "pid") => pid,
    };
    assert!(alive(pid), "the grandchild runs before the interrupt");
    f.cancel.cancel();
    let out = call.await;
    assert!(out.is_error());
    assert_eq!(
        out.outcome,
        waypoint::events::ToolOutcome::Interrupted { partial: true },
        "it had printed `waiting`"
    );
    assert!(
        out.content.starts_with("Error: interrupted by the user"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("waiting"),
        "output so far is kept: {}",
        out.content
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "returned before the sleep would have ended"
    );
    assert!(
        gone_soon(pid).await,
        "grandchild {pid} survived the interrupt"
    );
}

#[tokio::test]
async fn timeout_kills_nested_grandchildren() {
    let f = fixture();
    // The command says `ready` only once both pids are on disk, so the
    // timeout hits the whole tree; the timeout is generous for a loaded
    // machine, and the assertions are about what happened, not how fast.
    let out = run(
        &f,
        json!({
            "command": "sh -c 'sleep 30 & echo $! > inner; wait' & echo $! > outer; \
                        until [ -s inner ]; do sleep 0.05; done; echo ready; wait",
            "timeout_secs": 5
        }),
    )
    .await;
    assert!(!out.was_interrupted());
    assert!(
        out.content
            .starts_with("Error: command timed out after 5 s (process group killed)"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("ready"),
        "both processes started: {}",
        out.content
    );
    for file in ["inner", "outer"] {
        let pid = wait_for_pid(&f, file).await;
        assert!(
            gone_soon(pid).await,
            "{file} process {pid} survived the timeout"
        );
    }
}

#[tokio::test]
async fn background_job_is_killed_when_the_shell_exits() {
    let f = fixture();
    let start = Instant::now();
    let out = run(
        &f,
        json!({"command": "sleep 30 & echo $! > pid; echo done"}),
    )
    .await;
    assert!(!out.is_error());
    assert_eq!(out.content, "done\n[exit code: 0]");
    assert!(start.elapsed() < Duration::from_secs(30));
    let pid = wait_for_pid(&f, "pid").await;
    assert!(
        gone_soon(pid).await,
        "background job {pid} outlived the call"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let f = fixture();
    let call = run(&f, json!({"command": "sleep 30 & echo $! > pid; wait"}));
    // Abandon the call once the pid file exists.
    let pid = {
        tokio::pin!(call);
        tokio::select! {
            out = &mut call => panic!("the call ended on its own: {}", out.content),
            pid = wait_for_pid(&f, "pid") => pid,
        }
    };
    assert!(
        gone_soon(pid).await,
        "grandchild {pid} survived the dropped call"
    );
}

#[tokio::test]
async fn dispatcher_routes_to_bash() {
    let f = fixture();
    let out =
        waypoint::tools::run_workspace_tool("bash", &json!({"command": "echo hi"}), &f.env()).await;
    assert_eq!(out.content, "hi\n[exit code: 0]");
}

/// The two ways a command's process escapes its process group: job control
/// (`set -m` puts the job in a group of its own) and a session of its own
/// (`setsid`). Each writes the escaped pid to `pid`.
const ESCAPES: [&str; 2] = [
    "set -m; sleep 1000 & echo $! > pid",
    "setsid sleep 1000 & echo $! > pid",
];

#[tokio::test]
async fn escaped_processes_are_killed_when_the_call_returns() {
    for escape in ESCAPES {
        let f = fixture();
        let out = run(&f, json!({"command": format!("{escape}; echo done")})).await;
        assert!(!out.is_error(), "{escape}: {}", out.content);
        let pid = wait_for_pid(&f, "pid").await;
        assert!(
            gone_within(pid, Duration::from_secs(2)).await,
            "`{escape}`: {pid} outlived the call"
        );
    }
}

#[tokio::test]
async fn escaped_processes_are_killed_on_interrupt() {
    for escape in ESCAPES {
        let f = fixture();
        let command = format!("{escape}; sleep 30");
        let call = run(&f, json!({ "command": command }));
        tokio::pin!(call);
        let pid = tokio::select! {
            out = &mut call => panic!("the call ended before the interrupt: {}", out.content),
            pid = wait_for_pid(&f, "pid") => pid,
        };
        f.cancel.cancel();
        let out = call.await;
        assert!(out.was_interrupted(), "{out:?}");
        assert!(
            gone_within(pid, Duration::from_secs(2)).await,
            "`{escape}`: {pid} outlived the interrupt"
        );
    }
}

#[tokio::test]
async fn escaped_processes_are_killed_on_timeout() {
    for escape in ESCAPES {
        let f = fixture();
        let command = format!("{escape}; sleep 30");
        let out = run(&f, json!({ "command": command, "timeout_secs": 2 })).await;
        assert!(out.content.contains("timed out"), "{}", out.content);
        let pid = wait_for_pid(&f, "pid").await;
        assert!(
            gone_within(pid, Duration::from_secs(2)).await,
            "`{escape}`: {pid} outlived the timeout"
        );
    }
}

#[tokio::test]
async fn the_command_has_no_terminal() {
    let f = fixture();
    let out = run(
        &f,
        json!({"command": "echo hi > /dev/tty; echo rc=$?; tty; ps -o sid= -p $$; echo pid=$$"}),
    )
    .await;
    assert!(out.content.contains("rc=1"), "{}", out.content);
    assert!(out.content.contains("not a tty"), "{}", out.content);
    // The shell leads a session of its own.
    let mut lines = out.content.lines().rev();
    let pid = lines.find_map(|l| l.strip_prefix("pid=")).unwrap().trim();
    let sid = out.content.lines().find(|l| l.trim() == pid).map(str::trim);
    assert_eq!(sid, Some(pid), "{}", out.content);
}

#[tokio::test]
async fn a_deny_rule_blocks_the_command_before_it_runs() {
    let mut f = fixture();
    f.config.rules = waypoint::safety::Rules {
        allow: Vec::new(),
        deny: vec!["rm -rf".into(), "git push".into()],
        ..waypoint::safety::Rules::default()
    };
    f.put("keep/file.txt", "precious");
    for command in [
        "rm -rf keep",
        "echo ok; rm -fr keep",
        "bash -c 'rm -r -f keep'",
        "echo $(rm -rf keep)",
        "touch ran.txt && git push",
    ] {
        let out = run(&f, json!({ "command": command })).await;
        assert!(out.is_error(), "{command}: {}", out.content);
        assert!(
            out.content.starts_with("Blocked by a deny rule: "),
            "{command}: {}",
            out.content
        );
        assert_eq!(f.get("keep/file.txt"), "precious", "{command}");
        assert!(
            !f.root().join("ran.txt").exists(),
            "nothing in the line ran: {command}"
        );
    }
    let out = run(&f, json!({ "command": "echo 'rm -rf keep' > note.txt" })).await;
    assert!(!out.is_error(), "{}", out.content);
    assert_eq!(f.get("note.txt"), "rm -rf keep\n");
}
