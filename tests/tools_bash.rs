//! Integration tests for the `bash` tool's process-group handling: an
//! interrupt, a timeout or a normal exit leaves no grandchild running.
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
    async fn run(&self, input: Value) -> ToolOutput {
        let env = ToolEnv {
            workspace: &self.ws,
            config: &self.config,
            cancel: &self.cancel,
            output: None,
        };
        bash::run(&input, &env).await
    }

    /// The pid a command wrote to `file` in the workspace.
    fn pid_from(&self, file: &str) -> i32 {
        let text = std::fs::read_to_string(self.ws.root().join(file)).unwrap();
        text.trim().parse().unwrap()
    }
}

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

/// Polls up to 2 s for `pid` to disappear.
async fn gone_soon(pid: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
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
    let cancel = f.cancel.clone();
    let start = Instant::now();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let out = f
        .run(json!({"command": "sleep 30 & echo $! > pid; echo waiting; wait"}))
        .await;
    canceller.await.unwrap();
    assert!(out.is_error);
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
    let pid = f.pid_from("pid");
    assert!(
        gone_soon(pid).await,
        "grandchild {pid} survived the interrupt"
    );
}

#[tokio::test]
async fn timeout_kills_nested_grandchildren() {
    let f = fixture();
    let out = f
        .run(json!({
            "command": "sh -c 'sleep 30 & echo $! > inner; wait' & echo $! > outer; wait",
            "timeout_secs": 1
        }))
        .await;
    assert!(
        out.content
            .starts_with("Error: command timed out after 1 s"),
        "{}",
        out.content
    );
    for file in ["inner", "outer"] {
        let pid = f.pid_from(file);
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
    let pid = f.pid_from("pid");
    assert!(
        gone_soon(pid).await,
        "background job {pid} outlived the call"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let f = fixture();
    let fut = f.run(json!({"command": "sleep 30 & echo $! > pid; wait"}));
    // Abandon the call once the pid file exists.
    let pid_path = f.ws.root().join("pid");
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                _ = &mut fut => break,
                _ = tokio::time::sleep(Duration::from_millis(20)) => {
                    if std::fs::read_to_string(&pid_path).is_ok_and(|s| s.ends_with('\n')) {
                        break;
                    }
                }
            }
        }
    })
    .await;
    let pid = f.pid_from("pid");
    assert!(
        gone_soon(pid).await,
        "grandchild {pid} survived the dropped call"
    );
}

#[tokio::test]
async fn dispatcher_routes_to_bash() {
    let f = fixture();
    let env = ToolEnv {
        workspace: &f.ws,
        config: &f.config,
        cancel: &f.cancel,
        output: None,
    };
    let out =
        waypoint::tools::run_workspace_tool("bash", &json!({"command": "echo hi"}), &env).await;
    assert_eq!(out.content, "hi\n[exit code: 0]");
}
