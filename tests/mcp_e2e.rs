//! The real binary, full-screen in tmux, with an MCP server configured (a
//! server written with the official TypeScript SDK, installed with the
//! reference servers): the server starts in the background and is ready
//! without anything typed, and nothing of it is left after the app quits
//! (Ctrl+C twice), is killed with SIGKILL (the server gets SIGTERM from
//! the kernel: `PR_SET_PDEATHSIG`) or gets SIGHUP (the terminal closed).
//! Skipped (with a note) where the servers are not installed, failed under
//! `.ci/run`. Linux only (reads `/proc`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::tmux::{POLL, Tmux, app_pid};

/// Live processes whose environment holds `WAYPOINT_TEST_MARK=mark`.
fn marked(mark: &str) -> Vec<i32> {
    support::proc::with_env("WAYPOINT_TEST_MARK", mark)
}

/// The app in tmux with the SDK server configured as `sdk` (marked with
/// `mark`), once the server is ready; `None` when the servers are not
/// installed.
fn app_with_server(dir: &Path, mark: &str) -> Option<Tmux> {
    let server = support::mcp::sdk_server(&[("WAYPOINT_TEST_MARK", mark)])?;
    let mut env = String::new();
    for (k, v) in &server.env {
        env.push_str(&format!("{k} = {v:?}, "));
    }
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.sdk]\ncommand = {:?}\nargs = [{:?}]\nenv = {{ {} }}\n",
            server.command.unwrap(),
            server.args[0],
            env.trim_end_matches(", ")
        ),
    )
    .unwrap();
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let scenario = dir.join("scenario.json");
    std::fs::write(&scenario, r#"{"turns": [{"text": "Hi."}]}"#).unwrap();
    let config = config.to_string_lossy().into_owned();
    let tmux = Tmux::start_with_env(
        120,
        40,
        dir,
        &[("WAYPOINT_CONFIG", &config)],
        &[
            Path::new("--scenario"),
            &scenario,
            Path::new("--workspace"),
            &ws,
        ],
    );
    // Ready with nothing typed: the server started on its own.
    tmux.wait_for("the server to be ready", |s| {
        s.contains("MCP server sdk ready: 3 tools")
    });
    assert_eq!(marked(mark).len(), 1, "one server process");
    Some(tmux)
}

fn none_left(mark: &str, how: &str) {
    let start = Instant::now();
    while !marked(mark).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the MCP server outlived the app ({how}): {:?}",
            marked(mark)
        );
        std::thread::sleep(POLL);
    }
}

fn mark(test: &str) -> String {
    format!("{test}-{}", std::process::id())
}

#[test]
fn nothing_of_a_server_is_left_after_quit() {
    let dir = tempfile::tempdir().unwrap();
    let mark = mark("quit");
    let Some(tmux) = app_with_server(dir.path(), &mark) else {
        return;
    };
    tmux.quit_and_wait(false);
    none_left(&mark, "quit");
}

/// `signal` to the app: it ends (with `code` when it can say one) and the
/// server goes with it.
fn signal_leaves_nothing(signal: i32, code: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let mark = mark(&format!("signal{signal}"));
    let Some(tmux) = app_with_server(dir.path(), &mark) else {
        return;
    };
    let app = app_pid(&tmux);
    // SAFETY: kill(2) on the app's pid, a child of the pane's live shell.
    assert_eq!(unsafe { libc::kill(app, signal) }, 0);
    let status = tmux.exit_status(&format!("signal {signal}"));
    if let Some(code) = code {
        assert_eq!(status, code);
    }
    none_left(&mark, &format!("signal {signal}"));
}

#[test]
fn nothing_of_a_server_is_left_after_kill_9() {
    signal_leaves_nothing(libc::SIGKILL, Some("137"));
}

#[test]
fn nothing_of_a_server_is_left_after_sighup() {
    signal_leaves_nothing(libc::SIGHUP, Some("129"));
}
