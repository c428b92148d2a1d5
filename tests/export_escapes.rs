//! `waypoint export` of a session whose model wrote escape sequences (a
//! window title, an OSC 52 clipboard write, a screen clear, an 8-bit CSI):
//! to a terminal nothing of them acts, to a file they are written visibly,
//! and the JSON records stay the same values. The terminal test needs
//! `script` from util-linux (installed by .ci/run).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;

use std::path::Path;

use cli_support::output;
use serde_json::{Value, json};

const HOSTILE: &str =
    "Done.\u{1b}]0;pwned\u{7}\u{1b}]52;c;aGVsbG8=\u{7}\u{1b}[2J\u{1b}[H\u{9b}31mred";

/// A headless session whose reply carries `HOSTILE`; its id.
async fn hostile_session(dir: &Path, ws: &Path) -> String {
    let scenario = dir.join("scenario.json");
    std::fs::write(&scenario, json!({"turns": [{"text": HOSTILE}]}).to_string()).unwrap();
    let (code, out, err) = output(
        cli_support::waypoint(dir)
            .args(["-p", "go", "--output-format", "jsonl", "--scenario"])
            .arg(&scenario)
            .arg("--workspace")
            .arg(ws),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    first["id"].as_str().unwrap().to_string()
}

fn has_controls(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
}

#[tokio::test]
async fn an_export_never_lets_the_model_s_escapes_act() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let id = hostile_session(dir.path(), ws.path()).await;

    // To a terminal: `script` gives the export a pseudo-terminal as stdout
    // and copies everything written to it.
    let line = format!(
        "'{}' export {id}",
        env!("CARGO_BIN_EXE_waypoint").replace('\'', r"'\''")
    );
    let mut script = tokio::process::Command::new("script");
    script
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("WAYPOINT_HOME", dir.path().join("home"))
        .stdin(std::process::Stdio::null());
    let (code, screen, err) = output(&mut script).await;
    assert_eq!(code, 0, "{err}");
    assert!(screen.contains("Done."), "{screen}");
    // Whole sequences go (the 8-bit CSI with its `31m`); the text stays.
    assert!(screen.contains("Done.red"), "{screen:?}");
    assert!(!has_controls(screen.as_bytes()), "{screen:?}");

    // To a file: written visibly, nothing dropped.
    let md = dir.path().join("s.md");
    let (code, _, err) = output(
        cli_support::waypoint(dir.path())
            .args(["export", &id, "--output"])
            .arg(&md),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&md).unwrap();
    assert!(
        !has_controls(&bytes),
        "{:?}",
        String::from_utf8_lossy(&bytes)
    );
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains(r"Done.\x1b]0;pwned\x07\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[H\u{9b}31mred"),
        "{text}"
    );

    // The raw records: the same JSON values, no raw C1 byte.
    let raw = dir.path().join("s.jsonl");
    let (code, _, err) = output(
        cli_support::waypoint(dir.path())
            .args(["export", &id, "--format", "jsonl", "--output"])
            .arg(&raw),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&raw).unwrap();
    assert!(!has_controls(&bytes));
    let records: Vec<Value> = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        records.iter().any(|r| r.to_string().contains("31mred")
            && serde_json::to_string(r).unwrap().contains("\u{9b}")),
        "the C1 byte is still in the values"
    );
}
