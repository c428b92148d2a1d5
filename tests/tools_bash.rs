//! Integration tests for the `bash` tool's process-group handling: an
//! interrupt, a timeout or a normal exit leaves no grandchild running. The
//! tests wait for what they need (pid files, output) instead of guessing how
//! long a loaded machine takes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use waypoint::tools::{ToolConfig, ToolEnv, ToolOutput, Workspace, bash};

struct Fixture {
    _dir: tempfile::TempDir,
    ws: Workspace,
    config: ToolConfig,
    cancel: CancellationToken,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    Fixture {
        _dir: dir,
        ws,
        config: ToolConfig::default(),
        cancel: CancellationToken::new(),
    }
}

impl Fixture {
    fn env(&self) -> ToolEnv<'_> {
        ToolEnv {
            workspace: &self.ws,
            config: &self.config,
            cancel: &self.cancel,
            output: None,
        }
    }

    async fn run(&self, input: Value) -> ToolOutput {
        bash::run(&input, &self.env()).await
    }

    /// The pid a command wrote to `file` in the workspace, once the whole
    /// line is there.
    fn pid_from(&self, file: &str) -> Option<i32> {
        let text = std::fs::read_to_string(self.ws.root().join(file)).ok()?;
        if !text.ends_with('\n') {
            return None;
        }
        text.trim().parse().ok()
    }

    /// Polls up to `PATIENCE` for the pid in `file`.
    async fn wait_for_pid(&self, file: &str) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(pid) = self.pid_from(file) {
                return pid;
            }
            assert!(start.elapsed() < PATIENCE, "`{file}` was never written");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// How long the tests wait for something that should happen at once.
const PATIENCE: Duration = Duration::from_secs(10);

/// True while `pid` is a live (non-zombie) process. A zombie counts as gone:
/// it was killed and only waits for its (re)parent to reap it.
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Polls up to `PATIENCE` for `pid` to disappear.
async fn gone_soon(pid: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < PATIENCE {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn interrupt_kills_the_whole_group() {
    let f = fixture();
    let start = Instant::now();
    let call = f.run(json!({"command": "echo waiting; sleep 30 & echo $! > pid; wait"}));
    tokio::pin!(call);
    // Interrupt only once the grandchild runs (`waiting` is in the pipe by
    // then).
    let pid = tokio::select! {
        out = &mut call => panic!("the call ended before the interrupt: {}", out.content),
        pid = f.wait_for_pid("pid") => pid,
    };
    assert!(alive(pid), "the grandchild runs before the interrupt");
    f.cancel.cancel();
    let out = call.await;
    assert!(out.is_error);
    assert!(out.interrupted, "{out:?}");
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
    let out = f
        .run(json!({
            "command": "sh -c 'sleep 30 & echo $! > inner; wait' & echo $! > outer; \
                        until [ -s inner ]; do sleep 0.05; done; echo ready; wait",
            "timeout_secs": 5
        }))
        .await;
    assert!(!out.interrupted);
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
        let pid = f.wait_for_pid(file).await;
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
    let out = f
        .run(json!({"command": "sleep 30 & echo $! > pid; echo done"}))
        .await;
    assert!(!out.is_error);
    assert_eq!(out.content, "done\n[exit code: 0]");
    assert!(start.elapsed() < Duration::from_secs(30));
    let pid = f.wait_for_pid("pid").await;
    assert!(
        gone_soon(pid).await,
        "background job {pid} outlived the call"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let f = fixture();
    let call = f.run(json!({"command": "sleep 30 & echo $! > pid; wait"}));
    // Abandon the call once the pid file exists.
    let pid = {
        tokio::pin!(call);
        tokio::select! {
            out = &mut call => panic!("the call ended on its own: {}", out.content),
            pid = f.wait_for_pid("pid") => pid,
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
