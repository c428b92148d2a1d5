//! Checkpoints through the real binary: a headless session on a loopback
//! model changes files in a git repository across two plan items (an own
//! edit, a command's `rm` and new file); `waypoint checkpoints ID` lists
//! the points; `waypoint undo ID --item 2 --dry-run` shows the preview and
//! writes nothing; `waypoint undo ID --item 2` takes back exactly item 2;
//! the resumed session's next request tells the model what was undone;
//! the user's `.git` stays byte for byte. A restore cut off by kill -9
//! is finished (never left half done) when the session is next opened,
//! and a session cut off by kill -9 mid-snapshot resumes and undoes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::loopback;
use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use common::{Anthropic, Turn, sse};
use loopback::{FakeServer, ProviderWire, Recorded, plan};
use serde_json::json;
use support::repo::{git, tree_of};
use tokio::process::Command;

const KEY: &str = "sk-checkpoints-cli-test";

fn waypoint(home: &Path, ws: &Path, url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("WAYPOINT_HOME", home)
        .env("WAYPOINT_LOG", home.join("waypoint.log"))
        .env("WAYPOINT_APPROVAL", "yolo")
        .env(Anthropic::KEY_VAR, KEY)
        .args(["--provider", "anthropic", "--model", Anthropic::MODEL])
        .args(["--base-url", url])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

async fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("it finished")
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every file under `dir`: its bytes.
fn files(dir: &Path, skip_git: bool) -> BTreeMap<String, Vec<u8>> {
    tree_of(dir, skip_git)
        .into_iter()
        .map(|(path, (bytes, _))| (path, bytes))
        .collect()
}

fn session_id(home: &Path) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

/// How many replies the model has given in this request's conversation.
fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

fn two(statuses: [&str; 2]) -> serde_json::Value {
    plan(&[("Write x", statuses[0]), ("Reshape", statuses[1])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_undo_of_one_item_previews_restores_and_tells_the_model() {
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("todo_write", two(["in_progress", "pending"]))),
        1 => sse(Turn::tool(
            "write_file",
            json!({"path": "x.txt", "content": "made by item 1\n"}),
        )),
        2 => sse(Turn::tool("todo_write", two(["completed", "in_progress"]))),
        3 => sse(Turn::tool(
            "bash",
            // n.txt's new first line carries a title-setting escape.
            json!({"command": "rm keep.txt && echo b > b.txt && printf 'one\\033]0;pwned\\007\\n2\\n' > n.txt"}),
        )),
        4 => sse(Turn::tool("todo_write", two(["completed", "completed"]))),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("keep.txt"), "keep me\n").unwrap();
    std::fs::write(ws.path().join("n.txt"), "1\n2\n").unwrap();
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "start"]);
    let dot_git = files(&ws.path().join(".git"), false);
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["-p", "go"])).await;
    assert!(ok, "{out}\n{err}");
    assert!(!ws.path().join("keep.txt").exists());
    let id = session_id(home.path());

    let (ok, listed, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["checkpoints", &id])).await;
    assert!(ok, "{err}");
    assert!(listed.contains("start of \"Reshape\""), "{listed}");
    assert!(listed.contains("before \"go\""), "{listed}");

    let before = files(ws.path(), true);
    let (ok, preview, err) = run(waypoint(home.path(), ws.path(), &server.url).args([
        "undo",
        &id,
        "--item",
        "2",
        "--dry-run",
    ]))
    .await;
    assert!(ok, "{err}");
    assert!(preview.contains("restore keep.txt"), "{preview}");
    assert!(preview.contains("remove  b.txt"), "{preview}");
    assert!(preview.contains("-one\n+1\n"), "{preview}");
    assert!(
        !preview.contains('\x1b') && !preview.contains('\x07'),
        "the file's escape reached the terminal: {preview:?}"
    );
    assert!(preview.contains("Nothing was written"), "{preview}");
    assert_eq!(files(ws.path(), true), before, "a dry run writes nothing");

    let (ok, done, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["undo", &id, "--item", "2"])).await;
    assert!(ok, "{done}\n{err}");
    assert!(done.contains("Written: 3 file(s); left alone: 0"), "{done}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("keep.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("n.txt")).unwrap(),
        "1\n2\n"
    );
    assert!(!ws.path().join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("x.txt")).unwrap(),
        "made by item 1\n",
        "item 1's file stays"
    );

    // Resumed, the model hears what was undone.
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["-c", "-p", "next"])).await;
    assert!(ok, "{out}\n{err}");
    let last = server.requests().pop().unwrap();
    let body = last.body.to_string();
    assert!(body.contains("The user undid item"), "{body}");
    assert!(body.contains("keep.txt"), "{body}");
    assert_eq!(files(&ws.path().join(".git"), false), dot_git);

    // Removing the session removes its checkpoints: the pre-images, and
    // the workspace's shadow repository with its last session.
    let sessions = home.path().join("sessions");
    assert!(sessions.join(format!("{id}.blobs")).exists());
    assert!(std::fs::read_dir(sessions.join("shadow")).unwrap().count() > 0);
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["sessions", "rm", &id])).await;
    assert!(ok, "{out}\n{err}");
    assert!(!sessions.join(format!("{id}.blobs")).exists());
    assert_eq!(
        std::fs::read_dir(sessions.join("shadow")).unwrap().count(),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_cut_off_by_kill_9_is_finished_when_the_session_is_next_opened() {
    const N: usize = 2000;
    let make = format!("for i in $(seq {N}); do echo $i > f$i.txt; done");
    let server = FakeServer::<Anthropic>::responding(Arc::new(move |r: &Recorded| match step(r) {
        0 => sse(Turn::tool("bash", json!({"command": make.clone()}))),
        _ => sse(Turn::text("Made them.")),
    }))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "a\n").unwrap();
    git(ws.path(), &["init", "-q"]);
    let original = files(ws.path(), true);
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["-p", "make files"])).await;
    assert!(ok, "{out}\n{err}");
    let id = session_id(home.path());
    let blobs = home.path().join("sessions").join(format!("{id}.blobs"));

    // Its preview (2,000 diffs) goes nowhere: a full pipe would stop it.
    let mut undo = waypoint(home.path(), ws.path(), &server.url)
        .args(["undo", &id])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the restore has written some files, not all.
    let done_log = blobs.join("restore.done");
    let mut killed_mid_way = false;
    for _ in 0..6_000 {
        let done = std::fs::read_to_string(&done_log)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if done >= 20 {
            undo.start_kill().unwrap();
            killed_mid_way = true;
            break;
        }
        if undo.try_wait().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let _ = undo.wait().await;
    assert!(killed_mid_way, "the restore was cut off part way");
    assert!(blobs.join("restore.json").exists(), "its journal stayed");
    let halfway = files(ws.path(), true);
    assert!(halfway.len() > original.len() && halfway.len() < original.len() + N);

    // The next open finishes it: every file as before the turn.
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["checkpoints", &id])).await;
    assert!(ok, "{out}\n{err}");
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["undo", &id, "--dry-run"])).await;
    assert!(ok, "{out}\n{err}");
    assert!(
        err.contains("A restore cut off earlier was finished"),
        "{err}"
    );
    assert_eq!(files(ws.path(), true), original);
    assert!(!blobs.join("restore.json").exists());
}

fn shadow_locks(home: &Path) -> Vec<PathBuf> {
    let Ok(dirs) = std::fs::read_dir(home.join("sessions/shadow")) else {
        return Vec::new();
    };
    dirs.flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".lock"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_mid_snapshot_resumes_and_undoes() {
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| {
        // The last message: a new prompt, or the answer to a call.
        let last = r.messages().last().map(|m| m["content"].to_string()).unwrap_or_default();
        if last.contains("tool_result") {
            sse(Turn::text("Done."))
        } else if last.contains("WRITE-A") {
            sse(Turn::tool("write_file", json!({"path": "a.txt", "content": "agent\n"})))
        } else {
            sse(Turn::tool(
                "bash",
                json!({"command": "for i in $(seq 400); do head -c 100000 /dev/urandom > big$i.bin; done"}),
            ))
        }
    }))
    .await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "mine\n").unwrap();
    git(ws.path(), &["init", "-q"]);
    // The turn makes 40 MB of new files; the turn's end snapshots them.
    let mut first = waypoint(home.path(), ws.path(), &server.url)
        .args(["-p", "GROW-FILES"])
        .spawn()
        .unwrap();
    let mut seen_lock = false;
    for _ in 0..20_000 {
        if !shadow_locks(home.path()).is_empty() && ws.path().join("big400.bin").exists() {
            seen_lock = true;
            first.start_kill().unwrap();
            break;
        }
        if first.try_wait().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let status = first.wait().await.unwrap();
    eprintln!(
        "first run: {status:?}, {} big files",
        std::fs::read_dir(ws.path()).unwrap().count()
    );
    if !seen_lock {
        eprintln!("the snapshot ended before it could be killed: only the resume is checked");
    }
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["-c", "-p", "WRITE-A"])).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "agent\n"
    );
    let id = session_id(home.path());
    let (ok, out, err) =
        run(waypoint(home.path(), ws.path(), &server.url).args(["undo", &id])).await;
    assert!(ok, "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "mine\n",
        "{out}\n{err}"
    );
    assert!(
        shadow_locks(home.path()).is_empty(),
        "no lock is left behind"
    );
}
