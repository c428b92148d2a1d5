//! Sessions from the command line, with the real binary: a headless run is
//! listed by `waypoint sessions`, exported as Markdown and as raw records,
//! continued with `-c`, and deleted; a file from a newer Waypoint is
//! refused with a message that says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;

use std::path::Path;

use cli_support::output;

use serde_json::Value;
use tokio::process::Command;

/// `waypoint` in `cwd`, its sessions in `dir/home/sessions`.
fn waypoint(dir: &Path, cwd: &Path) -> Command {
    let mut cmd = cli_support::waypoint(dir);
    cmd.current_dir(cwd);
    cmd
}

fn jsonl(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// Runs the demo headless in `ws` with `prompt`; the session's id.
async fn demo_session(home: &Path, ws: &Path, prompt: &str) -> String {
    let (code, out, err) = output(
        waypoint(home, ws)
            .args([
                "--demo",
                "-p",
                prompt,
                "--output-format",
                "jsonl",
                "--workspace",
            ])
            .arg(ws),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    jsonl(&out)[0]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_headless_session_is_listed_exported_continued_and_deleted() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path().canonicalize().unwrap();
    let id = demo_session(home.path(), &ws, "make the greeting").await;
    let short = &id[..8];

    let (code, list, err) = output(waypoint(home.path(), &ws).arg("sessions")).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        list.contains(short) && list.contains("3/3") && list.contains("make the greeting"),
        "{list}"
    );
    assert!(list.contains("1 session(s)"), "{list}");
    // Headless `-r` without an id lists them too.
    let (code, listed, _) = output(waypoint(home.path(), &ws).arg("-r")).await;
    assert_eq!(code, 0);
    assert!(listed.contains(short), "{listed}");

    let (code, md, err) = output(waypoint(home.path(), &ws).args(["export", short])).await;
    assert_eq!(code, 0, "{err}");
    for part in [
        "# Waypoint session",
        "## Task\n\nmake the greeting",
        "## Plan (3/3 completed)",
        "| 1 | Write greet.sh | completed |",
        "<details><summary>✓ bash",
        "- Tokens:",
    ] {
        assert!(md.contains(part), "missing {part:?} in:\n{md}");
    }
    let raw = home.path().join("raw.jsonl");
    let (code, _, err) = output(
        waypoint(home.path(), &ws)
            .args(["export", short, "--format", "jsonl", "--output"])
            .arg(&raw),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let transcript = home.path().join(format!("home/sessions/{id}.jsonl"));
    assert_eq!(
        std::fs::read(&raw).unwrap(),
        std::fs::read(&transcript).unwrap()
    );

    // Continue it with a one-reply scenario: same session, same file.
    let scenario = home.path().join("more.json");
    std::fs::write(&scenario, r#"{"turns":[{"text":"Nothing left to do."}]}"#).unwrap();
    let (code, out, err) = output(
        waypoint(home.path(), &ws)
            .args([
                "-c",
                "-p",
                "anything else?",
                "--output-format",
                "jsonl",
                "--scenario",
            ])
            .arg(&scenario),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let events = jsonl(&out);
    assert_eq!(events[0]["type"], "session_started");
    assert_eq!(events[0]["id"], id.as_str());
    assert_eq!(events[0]["resumed"], true);
    assert!(
        events.iter().all(|e| e["type"] != "history"),
        "history is not printed headless"
    );
    let result = events.last().unwrap();
    assert_eq!(
        result["plan"],
        serde_json::json!({"completed": 3, "total": 3}),
        "{result}"
    );
    assert!(
        err.contains("resumed session") && err.contains(&format!("resume with: waypoint -r {id}")),
        "{err}"
    );
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert_eq!(
        text.matches(r#""prompt":true"#).count(),
        2,
        "both prompts in one transcript"
    );

    let (code, out, _) = output(waypoint(home.path(), &ws).args(["sessions", "rm", short])).await;
    assert_eq!(code, 0);
    assert!(out.contains(&id), "{out}");
    assert!(!transcript.exists());
    let (code, _, err) = output(waypoint(home.path(), &ws).args(["-c", "-p", "again"])).await;
    assert_ne!(code, 0);
    assert!(err.contains("no session of this workspace"), "{err}");
}

#[tokio::test]
async fn a_session_from_a_newer_waypoint_is_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = home.path().join("home/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let id = "feedbeef-0000-4000-8000-000000000000";
    let header = serde_json::json!({
        "type": "header", "format": 99, "id": id,
        "workspace": ws.path().canonicalize().unwrap(), "provider": "scripted", "model": "m",
        "started_ms": 1, "version": "9.0.0", "new_field": true
    });
    std::fs::write(dir.join(format!("{id}.jsonl")), format!("{header}\n")).unwrap();
    let (code, _, err) =
        output(waypoint(home.path(), ws.path()).args(["-r", "feedbeef", "-p", "hi"])).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("newer Waypoint") && err.contains("format 99"),
        "{err}"
    );
    let (code, _, err) = output(waypoint(home.path(), ws.path()).args(["-c", "-p", "hi"])).await;
    assert_eq!(code, 1);
    assert!(err.contains("newer Waypoint"), "{err}");
}

#[tokio::test]
async fn a_resumed_session_says_its_folder_and_refuses_another_or_the_root() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path().canonicalize().unwrap();
    let id = demo_session(home.path(), &ws, "go").await;
    let short = id[..8].to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    // Resumed from another folder: it works in its own, and says so.
    let (code, _, err) = output(
        waypoint(home.path(), elsewhere.path())
            .args(["-r", &short, "-p", "again", "--scenario"])
            .arg(scenario_done(home.path())),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("session {short} works in {}", ws.display())),
        "{err}"
    );
    // Another existing folder than its own is refused, not silently taken.
    let (code, _, err) = output(
        waypoint(home.path(), elsewhere.path())
            .args(["-r", &short, "-p", "again", "--workspace"])
            .arg(elsewhere.path()),
    )
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("works in {}, not", ws.display())),
        "{err}"
    );
    // A header naming `/` is never worked in.
    let path = home.path().join(format!("home/sessions/{id}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    header["workspace"] = Value::from("/");
    lines[0] = header.to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (code, _, err) =
        output(waypoint(home.path(), elsewhere.path()).args(["-r", &short, "-p", "again"])).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("names / as its folder, which Waypoint will not work in"),
        "{err}"
    );
}

/// A scenario whose one turn just answers.
fn scenario_done(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("done.json");
    std::fs::write(&path, r#"{"turns": [{"text": "Done."}]}"#).unwrap();
    path
}
