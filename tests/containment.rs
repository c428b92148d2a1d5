//! Drives the real `waypoint` binary headless with a scripted model and
//! checks what its commands cannot do: reach the user's terminal, outlive
//! the run, or survive a SIGHUP/SIGTERM of the app (which exits 129/143).
//! Linux only (reads `/proc`); the terminal test needs `script` from
//! util-linux.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::proc::{alive, gone_within, wait_for_pid};
use tokio::process::Command;

const PATIENCE: Duration = Duration::from_secs(20);

/// A workspace and a scenario whose one turn runs `command` with bash.
struct Run {
    dir: tempfile::TempDir,
    scenario: PathBuf,
}

impl Run {
    fn new(command: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let scenario = dir.path().join("scenario.json");
        let turns = json!({"turns": [
            {"text": "Running it.", "tool_calls": [
                {"name": "bash", "input": {"command": command}}
            ]},
            {"text": "Done."}
        ]});
        std::fs::write(&scenario, turns.to_string()).unwrap();
        Self { dir, scenario }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// The arguments of a headless jsonl run of the scenario.
    fn args(&self) -> Vec<String> {
        [
            "-p",
            "go",
            "--output-format",
            "jsonl",
            "--scenario",
            &self.scenario.display().to_string(),
            "--workspace",
            &self.ws().display().to_string(),
        ]
        .map(String::from)
        .to_vec()
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
        cmd.args(self.args())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("WAYPOINT_LOG", self.dir.path().join("waypoint.log"))
            .env("WAYPOINT_HOME", self.dir.path().join("home"))
            .envs(bare_without_landlock())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }
}

/// Headless runs bash in the sandbox; a kernel without Landlock runs it
/// bare (`WAYPOINT_APPROVAL=yolo`), and the test says that its sandboxed
/// run was skipped.
fn bare_without_landlock() -> Option<(&'static str, &'static str)> {
    let bare = waypoint::safety::landlock_abi().is_none();
    if bare {
        assert!(
            std::env::var_os("WAYPOINT_TEST_SANDBOX_REQUIRED").is_none(),
            "this kernel has no Landlock"
        );
        eprintln!("skipped the sandboxed run: this kernel has no Landlock; the command runs bare");
    }
    bare.then_some(("WAYPOINT_APPROVAL", "yolo"))
}

/// The output of the first `ToolCallEnd` in a jsonl event stream.
fn tool_output(jsonl: &str) -> String {
    jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(|e| e["type"] == "tool_call_end")
        .map(|e| e["output"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no tool_call_end event in:\n{jsonl}"))
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[tokio::test]
async fn commands_cannot_reach_the_terminal() {
    // The marker and the escape sequences are assembled by the shell, so
    // they reach the terminal only if the write to /dev/tty succeeds.
    let run = Run::new(
        "printf '%s%s\\n' TTY LEAK > /dev/tty; echo rc=$?; \
         printf '\\033]0;%s\\007\\033]52;c;%s\\007' pwned aGVsbG8= > /dev/tty; \
         stty -F /dev/tty raw; echo stty=$?; tty",
    );
    let mut line = sh_quote(env!("CARGO_BIN_EXE_waypoint"));
    for a in run.args() {
        line.push(' ');
        line.push_str(&sh_quote(&a));
    }
    // `script` gives the app a pseudo-terminal as its controlling terminal;
    // everything written to that terminal is in script's stdout.
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env("WAYPOINT_LOG", run.dir.path().join("waypoint.log"))
        .env("WAYPOINT_HOME", run.dir.path().join("home"))
        .envs(bare_without_landlock())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(PATIENCE, cmd.output())
        .await
        .expect("waypoint finished")
        .expect("`script` (util-linux) runs");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    let output = tool_output(&screen);
    assert!(output.contains("rc=1"), "{output}");
    assert!(output.contains("stty=1"), "{output}");
    assert!(output.contains("not a tty"), "{output}");
    // No controlling terminal; in the sandbox's world no /dev/tty at all
    // (its /dev is read-only).
    assert!(
        output.contains("No such device or address")
            || output.contains("/dev/tty: Read-only file system"),
        "a clear error: {output}"
    );
    assert!(
        !screen.contains("TTYLEAK"),
        "reached the terminal:\n{screen}"
    );
    assert!(!screen.contains("\x1b]0;pwned"), "title set:\n{screen}");
    assert!(!screen.contains("\x1b]52;"), "clipboard set:\n{screen}");
}

#[tokio::test]
async fn no_process_of_the_run_outlives_it() {
    let run = Run::new(
        "sleep 1000 & echo $! > plain.pid; \
         (set -m; sleep 1000 & echo $! > job.pid); \
         setsid sleep 1000 & echo $! > session.pid; \
         nohup setsid sh -c 'sleep 1000 & echo $! > nested.pid; wait' >/dev/null 2>&1 & \
         until [ -s nested.pid ]; do sleep 0.05; done; echo started",
    );
    let out = tokio::time::timeout(PATIENCE, run.command().output())
        .await
        .expect("waypoint finished")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(tool_output(&stdout).contains("started"), "{stdout}");
    for file in ["plain.pid", "job.pid", "session.pid", "nested.pid"] {
        let pid = wait_for_pid(&run.ws().join(file), PATIENCE).await;
        assert!(
            gone_within(pid, Duration::from_secs(2)).await,
            "{file}: {pid} outlived the run"
        );
    }
}

/// Sends `signal` to a headless run while its command sleeps; returns the
/// exit code after checking the sleep (escaped from its group) is gone.
async fn signalled(signal: i32) -> Option<i32> {
    let run = Run::new("setsid sleep 1000 & echo $! > sleep.pid; sleep 1000");
    let mut child = run.command().spawn().unwrap();
    let pid = wait_for_pid(&run.ws().join("sleep.pid"), PATIENCE).await;
    assert!(alive(pid));
    let app = i32::try_from(child.id().unwrap()).unwrap();
    // SAFETY: kill(2) on the child we spawned, which has not been reaped.
    assert_eq!(unsafe { libc::kill(app, signal) }, 0);
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("waypoint exited after the signal")
        .unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(2)).await,
        "signal {signal}: the command's sleep {pid} outlived the app"
    );
    status.code()
}

#[tokio::test]
async fn sighup_kills_the_command_and_exits_129() {
    assert_eq!(signalled(libc::SIGHUP).await, Some(129));
}

#[tokio::test]
async fn sigterm_kills_the_command_and_exits_143() {
    assert_eq!(signalled(libc::SIGTERM).await, Some(143));
}
