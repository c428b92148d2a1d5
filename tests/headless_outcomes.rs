//! Headless text says how a command ended as the app's cells do: a
//! non-zero exit is `[exit 2 · … ms]` and a command the sandbox stopped is
//! `[blocked by the sandbox · … ms]`, never `[ok …]`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Runs `waypoint -p` in text mode on a scenario whose one turn makes these
/// bash calls; returns stdout and stderr.
fn run_text(home: &Path, ws: &Path, commands: &[&str], yolo: bool) -> (String, String) {
    let calls: Vec<Value> = commands
        .iter()
        .map(|c| json!({"name": "bash", "input": {"command": c}}))
        .collect();
    let scenario = home.join("scenario.json");
    let turns = json!({"turns": [{"text": "Running.", "tool_calls": calls}, {"text": "Done."}]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.args(["-p", "go", "--scenario"])
        .arg(&scenario)
        .arg("--workspace")
        .arg(ws)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("TMPDIR", tmp.path())
        .env("WAYPOINT_HOME", home.join(".waypoint"))
        .stdin(Stdio::null());
    if yolo {
        cmd.env("WAYPOINT_APPROVAL", "yolo");
    }
    let out = cmd.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The line of the call whose summary contains `needle`.
fn line_of<'a>(out: &'a str, needle: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with("→ bash") && l.contains(needle))
        .unwrap_or_else(|| panic!("no tool line for {needle:?} in:\n{out}"))
}

#[test]
fn a_command_that_exits_non_zero_says_its_exit_code() {
    let home = support::sandbox::outside_hidden("home-");
    let ws = tempfile::tempdir().unwrap();
    let (out, err) = run_text(
        home.path(),
        ws.path(),
        &["echo fine", "echo oops; exit 2"],
        true,
    );
    let ok = line_of(&out, "echo fine");
    assert!(ok.contains("  [ok "), "{ok}\n{err}");
    let failed = line_of(&out, "exit 2");
    assert!(failed.contains("  [exit 2 · "), "{failed}\n{err}");
    assert!(failed.ends_with(" ms]"), "{failed}");
    assert!(!failed.contains("[ok"), "{failed}");
}

#[test]
fn a_command_the_sandbox_stopped_says_so() {
    if !support::sandbox::landlock("the headless sandbox-block line") {
        return;
    }
    let home = support::sandbox::outside_hidden("home-");
    let ws = tempfile::tempdir().unwrap();
    let target = home.path().join("outside.txt");
    let touch = format!("touch {}", target.display());
    let (out, err) = run_text(home.path(), ws.path(), &[&touch], false);
    let blocked = line_of(&out, "touch");
    assert!(
        blocked.contains("  [blocked by the sandbox · "),
        "{blocked}\n{err}"
    );
    assert!(blocked.ends_with(" ms]"), "{blocked}");
    assert!(!target.exists());
}
