//! MCP against servers nobody here wrote: the reference servers published
//! on npm (`@modelcontextprotocol/server-everything`), installed by
//! `.ci/run` into a cache folder and found through
//! `WAYPOINT_TEST_MCP_BIN` (their `node_modules/.bin`). Without them a
//! test says it was skipped; with `WAYPOINT_TEST_MCP_REQUIRED=1` (as
//! `.ci/run` sets) it fails instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mcp::reference_server;
use support::proc::group_members;
use tokio_util::sync::CancellationToken;
use waypoint::mcp::{McpServerConfig, McpTool, Running, start};
use waypoint::todo::SharedPlan;
use waypoint::tools::{
    Access, Failure, Origin, Tool, ToolConfig, ToolCtx, ToolEnv, ToolHost, ToolOutcome, ToolOutput,
    Workspace,
};

async fn everything(dir: &std::path::Path) -> Option<Running> {
    let program = reference_server("mcp-server-everything")?;
    let config = McpServerConfig {
        command: Some(program.to_string_lossy().into_owned()),
        ..McpServerConfig::default()
    };
    Some(
        start("everything", &config, dir)
            .await
            .expect("the server starts"),
    )
}

fn tool(running: &Running, name: &str, timeout: Duration) -> McpTool {
    let def = running
        .tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("the server has no `{name}`"))
        .clone();
    McpTool::new(&running.name, def, running.peer().unwrap(), timeout)
        .with_progress(running.progress())
}

async fn call(
    tool: &McpTool,
    input: Value,
    dir: &std::path::Path,
    cancel: &CancellationToken,
) -> ToolOutput {
    call_with(tool, input, dir, cancel, ToolHost::detached()).await
}

/// [`call`], with the call's requests to the host going to `host`.
async fn call_with(
    tool: &McpTool,
    input: Value,
    dir: &std::path::Path,
    cancel: &CancellationToken,
    host: ToolHost<'_>,
) -> ToolOutput {
    let workspace = Workspace::new(dir).unwrap();
    let config = ToolConfig::default();
    let plan = SharedPlan::default();
    let ctx = ToolCtx {
        env: ToolEnv {
            workspace: &workspace,
            config: &config,
            cancel,
            output: None,
            kept: None,
            sandboxed: false,
            read_only: false,
            narrowed: None,
            call: None,
        },
        plan: &plan,
        host,
    };
    tool.run(&input, ctx).await
}

/// The server still answers an echo.
async fn still_answers(running: &Running, dir: &std::path::Path) {
    let echo = tool(running, "echo", Duration::from_secs(20));
    let out = call(
        &echo,
        json!({"message": "after"}),
        dir,
        &CancellationToken::new(),
    )
    .await;
    assert!(out.content.contains("after"), "{}", out.content);
}

/// The long-running operation of `running`, interrupted after 300 ms: the
/// call ends at once as interrupted, and the server goes on answering.
async fn a_long_call_is_interrupted(running: &Running, dir: &std::path::Path) {
    let long = tool(
        running,
        "trigger-long-running-operation",
        Duration::from_secs(60),
    );
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        interrupt.cancel();
    });
    let started = Instant::now();
    let out = call(&long, json!({"duration": 30, "steps": 5}), dir, &cancel).await;
    assert!(out.was_interrupted(), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    still_answers(running, dir).await;
}

#[tokio::test]
async fn the_everything_server_lists_its_tools_and_answers_calls() {
    let dir = tempfile::tempdir().unwrap();
    let Some(running) = everything(dir.path()).await else {
        return;
    };
    let names: Vec<&str> = running.tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let cancel = CancellationToken::new();

    let echo = tool(&running, "echo", Duration::from_secs(20));
    let spec = echo.spec();
    assert_eq!(spec.name, "mcp__everything__echo");
    // The server marks echo read-only.
    assert_eq!(spec.access, Access::Read);
    assert_eq!(
        spec.origin,
        Origin::Mcp {
            server: "everything".into()
        }
    );
    assert_eq!(spec.schema["type"], "object");
    let out = call(
        &echo,
        json!({"message": "hi from waypoint"}),
        dir.path(),
        &cancel,
    )
    .await;
    assert_eq!(out.outcome, ToolOutcome::Ok, "{}", out.content);
    assert!(out.content.contains("hi from waypoint"), "{}", out.content);

    let sum = tool(&running, "get-sum", Duration::from_secs(20));
    let out = call(&sum, json!({"a": 19, "b": 23}), dir.path(), &cancel).await;
    assert_eq!(out.outcome, ToolOutcome::Ok, "{}", out.content);
    assert!(out.content.contains("42"), "{}", out.content);

    let image = tool(&running, "get-tiny-image", Duration::from_secs(20));
    let out = call(&image, json!({}), dir.path(), &cancel).await;
    assert!(
        out.content.contains("[image: ") && out.content.contains(" png, not shown: "),
        "{}",
        out.content
    );
    assert!(out.images.is_empty(), "no model to show it to");

    // Arguments the server refuses: an error result, the server still up.
    let out = call(&sum, json!({"a": "nineteen"}), dir.path(), &cancel).await;
    assert!(out.is_error(), "{}", out.content);
    let out = call(&echo, json!({"message": "still here"}), dir.path(), &cancel).await;
    assert!(out.content.contains("still here"), "{}", out.content);
}

#[tokio::test]
async fn a_long_call_shows_the_progress_the_server_reports() {
    let dir = tempfile::tempdir().unwrap();
    let Some(running) = everything(dir.path()).await else {
        return;
    };
    let long = tool(
        &running,
        "trigger-long-running-operation",
        Duration::from_secs(60),
    );
    let (requests, mut asked) = tokio::sync::mpsc::unbounded_channel();
    let out = call_with(
        &long,
        json!({"duration": 2, "steps": 4}),
        dir.path(),
        &CancellationToken::new(),
        waypoint::tools::ToolHost::new(&requests),
    )
    .await;
    assert_eq!(out.outcome, ToolOutcome::Ok, "{}", out.content);
    let mut lines = Vec::new();
    while let Ok(request) = asked.try_recv() {
        if let waypoint::tools::HostRequest::Progress(line) = request {
            lines.push(line);
        }
    }
    // One line a step, counted against the total (the last one races the
    // answer).
    for step in ["1/4", "2/4", "3/4"] {
        assert!(
            lines.iter().any(|l| l.starts_with(step)),
            "{step} in {lines:?}"
        );
    }
}

#[tokio::test]
async fn a_long_call_is_cancelled_by_an_interrupt_and_by_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let Some(running) = everything(dir.path()).await else {
        return;
    };
    a_long_call_is_interrupted(&running, dir.path()).await;

    let short = tool(
        &running,
        "trigger-long-running-operation",
        Duration::from_millis(300),
    );
    let out = call(
        &short,
        json!({"duration": 30, "steps": 5}),
        dir.path(),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        out.outcome,
        ToolOutcome::Failed {
            failure: Failure::TimedOut
        },
        "{}",
        out.content
    );
    // The server goes on answering.
    still_answers(&running, dir.path()).await;
}

#[tokio::test]
async fn a_server_that_dies_gives_a_clear_error_and_a_stopped_one_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(running) = everything(dir.path()).await else {
        return;
    };
    let group = running.group();
    let echo = tool(&running, "echo", Duration::from_secs(20));
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let out = call(
        &echo,
        json!({"message": "anyone?"}),
        dir.path(),
        &CancellationToken::new(),
    )
    .await;
    assert!(out.is_error(), "{}", out.content);
    assert!(out.content.contains("everything"), "{}", out.content);

    // A running server, dropped: its whole group is gone.
    let Some(second) = everything(dir.path()).await else {
        return;
    };
    let group = second.group();
    drop(second);
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        group_members(group).is_empty()
    });
    assert!(
        gone,
        "left of the server's group: {:?}",
        group_members(group)
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = McpServerConfig {
        command: Some("waypoint-no-such-mcp-server".into()),
        ..McpServerConfig::default()
    };
    let err = start("nope", &missing, dir.path()).await.err().unwrap();
    assert!(err.message.contains("was not found"), "{err}");
    // A program that is no MCP server: its stderr is in the report.
    let talker = McpServerConfig {
        command: Some("bash".into()),
        args: vec!["-c".into(), "echo 'config file missing' >&2; exit 3".into()],
        ..McpServerConfig::default()
    };
    let err = start("talker", &talker, dir.path()).await.err().unwrap();
    assert!(err.message.contains("did not initialize"), "{err}");
    assert!(err.to_string().contains("config file missing"), "{err}");
}

#[tokio::test]
async fn the_filesystem_server_reads_inside_its_root_and_refuses_outside() {
    let Some(program) = reference_server("mcp-server-filesystem") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "line one\nline two\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "TOPSECRET-42").unwrap();
    let config = McpServerConfig {
        command: Some(program.to_string_lossy().into_owned()),
        args: vec![root.to_string_lossy().into_owned()],
        ..McpServerConfig::default()
    };
    let running = start("fs", &config, dir.path())
        .await
        .expect("the server starts");
    let cancel = CancellationToken::new();
    let read = tool(&running, "read_text_file", Duration::from_secs(20));
    assert_eq!(read.spec().name, "mcp__fs__read_text_file");
    assert_eq!(read.spec().access, Access::Read);
    let path = root.join("notes.txt");
    let out = call(&read, json!({"path": path}), dir.path(), &cancel).await;
    assert_eq!(out.outcome, ToolOutcome::Ok, "{}", out.content);
    assert!(out.content.contains("line two"), "{}", out.content);
    // Outside the server's root: its own refusal, as an error result.
    let outside = dir.path().join("secret.txt");
    let out = call(&read, json!({"path": outside}), dir.path(), &cancel).await;
    assert!(out.is_error(), "{}", out.content);
    assert!(!out.content.contains("TOPSECRET-42"), "{}", out.content);
    // A tool that writes does not say it only reads: it is asked for.
    let write = tool(&running, "write_file", Duration::from_secs(20));
    assert_eq!(write.spec().access, Access::External);
}

#[tokio::test]
async fn a_streamable_http_server_answers_calls_and_is_told_to_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = support::mcp::http_everything() else {
        return;
    };
    let config = McpServerConfig {
        url: Some(server.url.clone()),
        ..McpServerConfig::default()
    };
    let running = start("web", &config, dir.path())
        .await
        .expect("the HTTP server initializes");
    assert!(running.tools.iter().any(|t| t.name == "echo"));
    let cancel = CancellationToken::new();
    let echo = tool(&running, "echo", Duration::from_secs(20));
    assert_eq!(echo.spec().name, "mcp__web__echo");
    let out = call(&echo, json!({"message": "over http"}), dir.path(), &cancel).await;
    assert_eq!(out.outcome, ToolOutcome::Ok, "{}", out.content);
    assert!(out.content.contains("over http"), "{}", out.content);
    let sum = tool(&running, "get-sum", Duration::from_secs(20));
    let out = call(&sum, json!({"a": 40, "b": 2}), dir.path(), &cancel).await;
    assert!(out.content.contains("42"), "{}", out.content);
    let image = tool(&running, "get-tiny-image", Duration::from_secs(20));
    let out = call(&image, json!({}), dir.path(), &cancel).await;
    assert!(
        out.content.contains("[image: ") && out.content.contains(" png, not shown: "),
        "{}",
        out.content
    );
    assert!(out.images.is_empty(), "no model to show it to");

    // A long call (its progress comes as SSE events), interrupted.
    a_long_call_is_interrupted(&running, dir.path()).await;

    // The server gone: a clear error, no hang.
    drop(server);
    let out = call(
        &echo,
        json!({"message": "anyone?"}),
        dir.path(),
        &CancellationToken::new(),
    )
    .await;
    assert!(out.is_error(), "{}", out.content);
}

#[tokio::test]
async fn an_http_server_gets_its_headers_and_bearer_token_and_a_401_is_reported() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        socket
            .write_all(
                b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer realm=\"test\"\r\n\
                  content-length: 0\r\nconnection: close\r\n\r\n",
            )
            .await
            .unwrap();
        String::from_utf8_lossy(&head).to_lowercase()
    });
    // SAFETY: set before any thread of this test reads the environment;
    // the name is this test's own.
    unsafe { std::env::set_var("WAYPOINT_TEST_MCP_TOKEN", "s3cret") };
    let config = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: [("X-Team".to_string(), "waypoint".to_string())].into(),
        bearer_token_env_var: Some("WAYPOINT_TEST_MCP_TOKEN".into()),
        ..McpServerConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let err = start("auth", &config, dir.path()).await.err().unwrap();
    assert!(
        err.message.contains("authorization required: Bearer realm"),
        "{err}"
    );
    let head = seen.await.unwrap();
    assert!(head.starts_with("post /mcp "), "{head}");
    assert!(head.contains("authorization: bearer s3cret"), "{head}");
    assert!(head.contains("x-team: waypoint"), "{head}");
    assert!(
        head.contains("accept: text/event-stream, application/json"),
        "{head}"
    );

    // A token variable that is not set, and no server at all.
    let unset = McpServerConfig {
        bearer_token_env_var: Some("WAYPOINT_TEST_MCP_NO_SUCH_TOKEN".into()),
        ..config.clone()
    };
    let err = start("auth", &unset, dir.path()).await.err().unwrap();
    assert!(
        err.message.contains("WAYPOINT_TEST_MCP_NO_SUCH_TOKEN"),
        "{err}"
    );
    let nobody = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        ..McpServerConfig::default()
    };
    let err = start("gone", &nobody, dir.path()).await.err().unwrap();
    assert!(err.message.contains("did not initialize"), "{err}");
    assert!(err.message.contains("Connection refused"), "{err}");
}
