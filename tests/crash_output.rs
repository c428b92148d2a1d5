//! What a command printed before `kill -9` reaches the model after the
//! resume: the real binary runs a `bash` call (against a loopback model
//! server) that prints, then sleeps; it is killed while the command runs,
//! and `waypoint -c -p "go on"` sends the repaired result, which carries
//! the printed tail (the last 64 KiB), to the model. Afterwards no kept
//! output is left beside the transcript.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::loopback;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use common::openai::OpenAi;
use loopback::{Answer, ProviderWire, Recorded};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// The line the command prints before it sleeps.
const MARKER: &str = "C19-BEFORE-4b7e";
/// A line printed first, then pushed out of the kept tail by the filler.
const HEAD: &str = "C19-HEAD-91c2";

/// The model: the first request gets the command, every later one (the
/// conversation has a tool result by then) a last word.
fn responder() -> loopback::Responder {
    Arc::new(|req: &Recorded| {
        if req.messages().iter().any(|m| m["role"] == "tool") {
            return OpenAi::reply(Answer::text("Done."));
        }
        // The shell's pid first, so the test can end what outlives it;
        // then a line, 200 KiB of filler (more than is kept, and past the
        // live output's limit of 4 × 30,000 bytes), the marker.
        let command = format!(
            "echo $$ > shell.pid; echo {HEAD}; \
             head -c 204800 /dev/zero | tr '\\0' 'x'; echo; \
             echo {MARKER}; sleep 30"
        );
        OpenAi::reply(Answer::tool("bash", json!({ "command": command })))
    })
}

fn waypoint(home: &Path, ws: &Path, url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("WAYPOINT_LOG", home.join("waypoint.log"))
        .env("WAYPOINT_HOME", home)
        // Headless runs bash in the sandbox; a kernel without Landlock runs it bare.
        .envs(
            waypoint::safety::landlock_abi()
                .is_none()
                .then_some(("WAYPOINT_APPROVAL", "yolo")),
        )
        .env(OpenAi::KEY_VAR, "sk-crash-output-test")
        .args(["--provider", "openai", "--model", OpenAi::MODEL])
        .args(["--base-url", url])
        .args(["--output-format", "jsonl"])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Every call's kept output beside the transcripts, as one text.
fn kept_output(home: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(home.join("sessions")) else {
        return String::new();
    };
    let mut text = String::new();
    for folder in entries.filter_map(Result::ok).map(|e| e.path()) {
        if folder.extension().is_some_and(|x| x == "live")
            && let Ok(files) = std::fs::read_dir(&folder)
        {
            for file in files.filter_map(Result::ok) {
                text.push_str(&std::fs::read_to_string(file.path()).unwrap_or_default());
            }
        }
    }
    text
}

/// The session's transcript (the only one).
fn transcript(home: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(found.len(), 1, "one session: {found:?}");
    found.pop().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_printed_before_kill_9_is_in_the_resumed_result() {
    let dir = support::sandbox::outside_hidden("crash-output");
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let server = loopback::FakeServer::<OpenAi>::responding(responder()).await;

    let mut child = waypoint(&home, &ws, &server.url)
        .args(["-p", "run it"])
        .spawn()
        .unwrap();
    // The live output stops at its limit; the marker, past it, is not
    // shown but is kept: it reaches the disk while the command sleeps.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let cut = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("tool_call_output_delta") {
                assert!(!line.contains(MARKER), "past the live limit: {line:.200}");
                if line.contains("live output truncated") {
                    return true;
                }
            }
        }
        false
    })
    .await;
    assert_eq!(cut, Ok(true), "the live output was cut at its limit");
    let kept = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if kept_output(&home).contains(MARKER) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(kept.is_ok(), "the marker reached the kept output on disk");
    child.kill().await.unwrap();
    // What outlived Waypoint (the sleeping shell's group) ends here.
    if let Some(pid) = support::proc::read_pid(&ws.join("shell.pid")) {
        let pid = support::proc::outer_pid(pid, &ws);
        if pid > 1 {
            // SAFETY: kill(2) on the process group the test's command made.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
    let requests_before = server.requests().len();
    assert_eq!(requests_before, 1, "killed while the command ran");

    let out = tokio::time::timeout(
        Duration::from_secs(60),
        waypoint(&home, &ws, &server.url)
            .args(["-c", "-p", "go on"])
            .output(),
    )
    .await
    .expect("the resumed run finished within 60 s")
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let requests = server.requests();
    let resumed = &requests[requests_before];
    let results: Vec<&Value> = resumed
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    let content = results[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("interrupted: Waypoint stopped (its process ended)"),
        "{content}"
    );
    let marker = format!("\n{MARKER}\n");
    assert!(
        content.contains(&marker),
        "the repaired result carries what the command printed: {}",
        &content[..content.len().min(600)]
    );
    assert!(
        !content.contains(HEAD),
        "only the tail is kept (64 KiB), not the line before the filler"
    );
    assert!(content.len() < 66 * 1024, "{}", content.len());

    // The kept output is in the transcript now, and no longer beside it.
    let path = transcript(&home);
    assert!(
        !path.with_extension("live").exists(),
        "the kept output is forgotten after the resume"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(MARKER),
        "the transcript keeps the repaired result"
    );
}
