//! What Waypoint runs itself never comes from the workspace, and a
//! repository's config cannot hang or read the terminal through
//! Waypoint's own git: the real binary, headless, with a scripted model
//! (offline), in a git repository. Needs `git`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

/// A git repository with one committed file.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("old.txt"), "old\n").unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(ok.success());
    dir
}

/// Runs `waypoint -p` on `turns` in `dir/ws` with `path` as PATH; its
/// exit status and stdout, or `None` if it had not finished in `patience`.
fn run(
    dir: &Path,
    path: &str,
    turns: serde_json::Value,
    patience: Duration,
) -> Option<(bool, String)> {
    let scenario = dir.join("scenario.json");
    std::fs::write(&scenario, json!({ "turns": turns }).to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args([
            "-p",
            "go",
            "--output-format",
            "jsonl",
            "--approval",
            "yolo",
            "--scenario",
        ])
        .arg(&scenario)
        .arg("--workspace")
        .arg(dir.join("ws"))
        .current_dir(dir.join("ws"))
        .env("PATH", path)
        .env("HOME", dir)
        .env("WAYPOINT_HOME", dir.join("home"))
        .env("WAYPOINT_LOG", dir.join("waypoint.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while start.elapsed() < patience {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Some((
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The folders named `*.git` at most `depth` levels below `dir`.
fn git_dirs(dir: &Path, depth: usize) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let here = usize::from(e.file_name().to_string_lossy().ends_with(".git"));
            here + if depth > 0 {
                git_dirs(&e.path(), depth - 1)
            } else {
                0
            }
        })
        .sum()
}

#[test]
fn a_git_planted_on_a_workspace_path_entry_is_never_run_by_waypoint() {
    let dir = repository();
    let ws = dir.path().join("ws");
    let mark = dir.path().join("planted-git-ran");
    let real = std::env::var("PATH").unwrap_or_default();
    // A PATH with the workspace's bin first, by absolute and by relative name.
    let path = format!("{}:bin:{real}", ws.join("bin").display());
    let plant = format!(
        "mkdir -p bin && printf '#!/bin/sh\\ntouch {}\\nexit 1\\n' > bin/git && chmod +x bin/git \
         && cp bin/git bin/bash && echo planted",
        mark.display()
    );
    let turns = json!([
        {"text": "Planting.", "tool_calls": [{"name": "bash", "input": {"command": plant}}]},
        {"tool_calls": [
            {"name": "todo_write", "input": {"todos": [
                {"content": "Write", "status": "in_progress", "activeForm": "Writing"}]}},
            {"name": "write_file", "input": {"path": "notes.md", "content": "# Notes\n"}}
        ]},
        {"tool_calls": [
            {"name": "bash", "input": {"command": "echo second command"}},
            {"name": "todo_write", "input": {"todos": [
                {"content": "Write", "status": "completed", "activeForm": "Writing"}]}}
        ]},
        {"text": "Done."}
    ]);
    let (ok, stdout) = run(dir.path(), &path, turns, Duration::from_secs(60)).expect("finished");
    assert!(ok, "{stdout}");
    assert!(stdout.contains("planted"), "{stdout}");
    assert!(
        stdout.contains("second command"),
        "the shell is still found: {stdout}"
    );
    assert!(ws.join("notes.md").exists());
    assert!(
        !mark.exists(),
        "Waypoint ran the git (or bash) planted in the workspace"
    );
    // The checkpoints were taken with the real git all the same.
    let shadows = git_dirs(&dir.path().join("home"), 4);
    assert!(shadows > 0, "no shadow repository was made");
}

#[test]
fn a_repository_config_including_a_fifo_does_not_hang_the_session() {
    let dir = repository();
    let ws = dir.path().join("ws");
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let config = ws.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("[include]\n\tpath = {}\n", fifo.display()));
    std::fs::write(&config, text).unwrap();
    let turns = json!([
        {"tool_calls": [
            {"name": "todo_write", "input": {"todos": [
                {"content": "Write", "status": "in_progress", "activeForm": "Writing"}]}},
            {"name": "write_file", "input": {"path": "notes.md", "content": "# Notes\n"}}
        ]},
        {"tool_calls": [{"name": "todo_write", "input": {"todos": [
            {"content": "Write", "status": "completed", "activeForm": "Writing"}]}}]},
        {"text": "Done."}
    ]);
    let path = std::env::var("PATH").unwrap_or_default();
    let finished = run(dir.path(), &path, turns, Duration::from_secs(30));
    let (ok, stdout) = finished.expect("the session hung on the FIFO in .git/config");
    assert!(ok, "{stdout}");
    assert!(ws.join("notes.md").exists());
}
