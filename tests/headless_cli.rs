//! Drives the real `waypoint` binary headless: the offline demo, a task
//! against a loopback Anthropic server, and the errors people meet.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;

use std::process::Stdio;
use std::time::Duration;

use cli_support::{output, waypoint};
use common::*;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn demo_runs_offline_and_keeps_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let (code, out, err) = output(
        waypoint(dir.path())
            .args(["--demo", "-p", "show me"])
            .arg("--workspace")
            .arg(&ws),
    )
    .await;
    assert_eq!(code, 0, "stderr: {err}");
    assert!(
        out.contains("[>] Write greet.sh <- Writing greet.sh"),
        "{out}"
    );
    assert!(
        out.contains("(1/3 completed)") && out.contains("(3/3 completed)"),
        "{out}"
    );
    assert!(out.contains("→ bash bash test_greet.sh  [ok"), "{out}");
    assert!(err.contains("tokens"), "{err}");
    let greet = std::fs::read_to_string(ws.join("greet.sh")).unwrap();
    assert!(greet.contains("Hello"));
    assert!(ws.join("test_greet.sh").exists());
}

#[tokio::test]
async fn demo_jsonl_is_the_event_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = output(
        waypoint(dir.path())
            .args(["--demo", "-p", "go", "--output-format", "jsonl"])
            .arg("--workspace")
            .arg(dir.path()),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    // Like `claude -p --output-format stream-json`: the session first, the result last.
    let first = events.first().unwrap();
    assert_eq!(first["type"], "session_started", "{first}");
    let id = first["id"].as_str().unwrap();
    let path = first["path"].as_str().unwrap();
    assert!(
        path.starts_with(dir.path().join("home/sessions").to_str().unwrap()),
        "{path}"
    );
    assert!(std::path::Path::new(path).exists());
    // Headless runs in auto mode: nothing asks, bash is sandboxed.
    assert_eq!(events[1]["type"], "approval_mode", "{}", events[1]);
    assert_eq!(events[1]["mode"], "auto");
    assert_eq!(events[2]["type"], "turn_started");
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["exit_reason"], "completed");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["session_id"], id);
    assert_eq!(
        result["plan"],
        serde_json::json!({"completed": 3, "total": 3})
    );
    assert!(
        result["usage"]["output_tokens"].as_u64().unwrap() > 0,
        "{result}"
    );
    assert!(result["duration_ms"].is_u64(), "{result}");
    let end = &events[events.len() - 2];
    assert_eq!(end["type"], "turn_complete");
    assert_eq!(end["open_items"], 0);
    assert!(
        err.contains(&format!("resume with: waypoint -r {id}")),
        "{err}"
    );
    let begins = events
        .iter()
        .filter(|e| e["type"] == "tool_call_begin")
        .count();
    let ends = events
        .iter()
        .filter(|e| e["type"] == "tool_call_end")
        .count();
    assert_eq!((begins, ends), (8, 8));
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "plan_updated")
            .count(),
        4
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_against_a_loopback_server_with_prompt_on_stdin() {
    let server = FakeServer::start(vec![
        sse(Turn::tool(
            "todo_write",
            plan(&[("Create file", "in_progress")]),
        )),
        sse(Turn::tool(
            "write_file",
            json!({"path": "out.txt", "content": "42\n"}),
        )),
        sse(Turn::tool(
            "todo_write",
            plan(&[("Create file", "completed")]),
        )),
        sse(Turn::text("Wrote out.txt.")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = waypoint(dir.path());
    cmd.arg("-p")
        .arg("--workspace")
        .arg(dir.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_MODEL", "claude-from-env")
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"please write the answer to out.txt\n")
        .await
        .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("→ write_file out.txt  [ok"), "{stdout}");
    assert!(stdout.trim_end().ends_with("Wrote out.txt."), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "42\n"
    );
    let reqs = server.requests();
    assert_eq!(reqs[0].body["model"], "claude-from-env");
    assert_eq!(
        reqs[0].last_user_texts()[0],
        "please write the answer to out.txt\n"
    );
}

#[tokio::test]
async fn missing_key_fails_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = output(
        waypoint(dir.path())
            .args(["-p", "hi"])
            .arg("--workspace")
            .arg(dir.path()),
    )
    .await;
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(
        err.contains("no Anthropic API key") && err.contains("--demo"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_and_max_turns_give_distinct_exit_codes() {
    let server = FakeServer::start(vec![Reply::Status {
        code: 404,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#
            .into(),
    }])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", "hi", "--model", "nope"])
            .arg("--workspace")
            .arg(dir.path())
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &server.url),
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("HTTP 404")
            && err.contains("model: nope")
            && err.contains("check the model name"),
        "{err}"
    );

    server.push(sse(Turn::tool("bash", json!({"command": "true"}))));
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", "loop", "--max-turns", "1"])
            .arg("--workspace")
            .arg(dir.path())
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &server.url),
    )
    .await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("--max-turns"), "{err}");
}

#[tokio::test]
async fn version_and_bad_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = output(waypoint(dir.path()).arg("--version")).await;
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("waypoint {}", env!("CARGO_PKG_VERSION"))
    );
    let (code, _, err) = output(waypoint(dir.path()).args([
        "--demo",
        "-p",
        "x",
        "--workspace",
        "/nonexistent/waypoint",
    ]))
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("/nonexistent/waypoint") && err.contains("not a usable folder"),
        "{err}"
    );
}

#[tokio::test]
async fn config_shows_each_value_and_its_source_with_keys_masked() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        "nag_every = 5\n[profile.local]\nprovider = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"qwen2.5-coder:7b\"\n",
    )
    .unwrap();
    let (code, out, err) = output(
        waypoint(dir.path())
            .args(["config", "--profile", "local", "--max-tokens", "1000"])
            .env("WAYPOINT_CONFIG", &cfg)
            .env("OPENAI_API_KEY", "sk-proj-supersecretvalue-9876"),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let line = |key: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{key} =")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("provider").contains("\"openai\"") && line("provider").contains("# profile local"),
        "{out}"
    );
    assert!(line("model").contains("qwen2.5-coder:7b"));
    assert!(line("nag_every").contains("# file"), "{out}");
    assert!(
        line("max_tokens").contains("1000") && line("max_tokens").contains("# flag --max-tokens")
    );
    assert!(
        line("api_key").contains("sk-p…9876") && line("api_key").contains("# env OPENAI_API_KEY")
    );
    assert!(!out.contains("supersecret"));

    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["config", "--profile", "nope"])
            .env("WAYPOINT_CONFIG", &cfg),
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("profile `nope` is not in the config file; it has: local"),
        "{err}"
    );
    std::fs::write(&cfg, "nag_evry = 5\n").unwrap();
    let (code, _, err) = output(
        waypoint(dir.path())
            .arg("config")
            .env("WAYPOINT_CONFIG", &cfg),
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("is not valid") && err.contains("nag_evry"),
        "{err}"
    );
}

#[tokio::test]
async fn completions_for_each_shell() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = output(waypoint(dir.path()).args(["completions", shell])).await;
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("workspace") && out.contains("profile") && out.contains("completions"),
            "{shell}: {out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_text_is_attached_to_the_prompt() {
    let server = FakeServer::start(vec![sse(Turn::text("It prints hello."))]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = waypoint(dir.path());
    cmd.args(["-p", "explain this"])
        .arg("--workspace")
        .arg(dir.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"echo hello\n").await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let reqs = server.requests();
    assert_eq!(
        reqs[0].last_user_texts()[0],
        "explain this\n\n<stdin>\necho hello\n</stdin>"
    );
}

#[tokio::test]
async fn an_empty_prompt_says_where_it_came_from_and_nothing_spent_prints_no_totals() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", ""])
            .arg("--workspace")
            .arg(dir.path()),
    )
    .await;
    assert_eq!(code, 1);
    assert_eq!(err.trim(), "waypoint: the prompt given with -p is empty");
    // A failure before any reply spent nothing: no `tokens 0 in / 0 out` line.
    let server = FakeServer::start(vec![Reply::Status {
        code: 401,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            .into(),
    }])
    .await;
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", "hi"])
            .arg("--workspace")
            .arg(dir.path())
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &server.url),
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("invalid x-api-key"), "{err}");
    assert!(!err.contains("tokens"), "{err}");
}

#[tokio::test]
async fn a_profile_without_a_config_file_names_the_path_it_looked_at() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", "hi", "--profile", "fast"])
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("cfg")),
    )
    .await;
    assert_eq!(code, 1);
    let looked_at = dir.path().join("cfg/waypoint/config.toml");
    assert!(
        err.contains(&format!("looked at {}", looked_at.display())),
        "{err}"
    );
}

#[tokio::test]
async fn the_demo_workspace_goes_unless_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path_in = |err: &str| {
        let line = err
            .lines()
            .find(|l| l.starts_with("waypoint: demo workspace "))
            .unwrap_or_else(|| panic!("the path is shown: {err}"));
        let rest = line.trim_start_matches("waypoint: demo workspace ");
        std::path::PathBuf::from(rest.split(" (").next().unwrap())
    };
    let (code, _, err) = output(waypoint(dir.path()).args(["--demo", "-p"])).await;
    assert_eq!(code, 0, "{err}");
    let gone = path_in(&err);
    assert!(err.contains("removed on exit; --keep keeps it"), "{err}");
    assert!(!gone.exists(), "{} was removed", gone.display());
    let (code, _, err) = output(waypoint(dir.path()).args(["--demo", "--keep", "-p"])).await;
    assert_eq!(code, 0, "{err}");
    let kept = path_in(&err);
    assert!(
        kept.join("greet.sh").exists(),
        "{} was kept",
        kept.display()
    );
    std::fs::remove_dir_all(kept).unwrap();
}

#[tokio::test]
async fn the_projects_agents_md_and_the_environment_reach_the_system_prompt() {
    let server = FakeServer::start(vec![sse(Turn::text("Noted."))]).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/trunk\n").unwrap();
    std::fs::write(
        ws.join("AGENTS.md"),
        "Always answer in haiku. MARKER-7f3a\n",
    )
    .unwrap();
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", "hello"])
            .arg("--workspace")
            .arg(&ws)
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &server.url),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let reqs = server.requests();
    let system = reqs[0].body["system"].to_string();
    assert!(system.contains("MARKER-7f3a"), "{system}");
    assert!(system.contains("<instructions path="), "{system}");
    assert!(
        system.contains("Git repository: yes, on branch trunk"),
        "{system}"
    );
    assert!(
        system.contains(&format!(
            "Working directory: {}",
            ws.canonicalize().unwrap().display()
        )),
        "{system}"
    );
    // The model is told how its calls are handled (headless: auto).
    assert!(system.contains("Approval mode: auto"), "{system}");
    if waypoint::safety::landlock_abi().is_some() {
        assert!(
            system.contains("Commands run in a sandbox") && system.contains("write only under"),
            "{system}"
        );
    }
}

#[tokio::test]
async fn stopping_with_open_plan_items_exits_4_and_says_so() {
    let server = FakeServer::start(vec![
        sse(Turn::tool(
            "todo_write",
            plan(&[("Write code", "in_progress"), ("Write tests", "pending")]),
        )),
        sse(Turn::text("I wrote the code; that is all for now.")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = output(
        waypoint(dir.path())
            .args(["-p", "do both", "--output-format", "jsonl"])
            .arg("--workspace")
            .arg(dir.path())
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &server.url),
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("stopped with 2 plan item(s) still open"),
        "{err}"
    );
    let result: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(result["exit_reason"], "open_items");
    assert_eq!(result["exit_code"], 4);
    assert_eq!(result["plan"], json!({"completed": 0, "total": 2}));
}

#[tokio::test]
async fn the_log_is_the_user_s_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // A new log in a new folder.
    let log = dir.path().join("state/waypoint/waypoint.log");
    let (code, _, err) = output(waypoint(dir.path()).arg("config").env("WAYPOINT_LOG", &log)).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    // An older log left 0644 is tightened.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, _, err) = output(waypoint(dir.path()).arg("config").env("WAYPOINT_LOG", &log)).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(mode(&log), 0o600);
}

#[tokio::test]
async fn the_demo_leaves_no_session_behind_and_says_what_to_do_next() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) =
        output(waypoint(dir.path()).args(["--demo", "-p", "--output-format", "jsonl"])).await;
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("session_started"), "{out}");
    assert!(!err.contains("resume with"), "{err}");
    let sessions = dir.path().join("home/sessions");
    let stored = std::fs::read_dir(&sessions).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        stored,
        0,
        "the demo left a session in {}",
        sessions.display()
    );
    assert!(
        err.contains("That was the offline demo") && err.contains("ANTHROPIC_API_KEY"),
        "{err}"
    );
}

/// After `cargo run` there is no `waypoint` on the PATH: the demo's last
/// words say to install it before `cd your-project && waypoint`; with one
/// on the PATH they do not.
#[tokio::test]
async fn the_demo_says_to_install_waypoint_when_it_is_not_on_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let without: String = std::env::split_paths(&path)
        .filter(|d| !d.join("waypoint").exists())
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let (code, _out, err) = output(
        waypoint(dir.path())
            .env("PATH", &without)
            .args(["--demo", "-p"]),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("`cargo install --path .`") && err.contains("`cd your-project && waypoint`"),
        "{err}"
    );
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_waypoint"), bin.join("waypoint")).unwrap();
    let (code, _out, err) = output(
        waypoint(dir.path())
            .env("PATH", format!("{}:{without}", bin.display()))
            .args(["--demo", "-p"]),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("cargo install"), "{err}");
    assert!(err.contains("`cd your-project && waypoint`"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_the_disk_would_not_take_are_said_on_stderr_at_exit() {
    let server = FakeServer::start(vec![sse(Turn::text("Done."))]).await;
    let dir = tempfile::tempdir().unwrap();
    // The sessions folder would be inside a file: no record is ever written.
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    let (code, _, err) = output(
        waypoint(dir.path())
            .args(["-p", "hello", "--workspace"])
            .arg(dir.path())
            .env("WAYPOINT_HOME", dir.path().join("blocker/home"))
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &server.url),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let lost: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("were not saved"))
        .collect();
    assert_eq!(lost.len(), 1, "one line says what was lost: {err}");
    let sessions = dir.path().join("blocker/home/sessions");
    assert!(
        lost[0].starts_with("waypoint: ")
            && lost[0].contains(" records of session ")
            && lost[0].contains(sessions.to_str().unwrap())
            && lost[0].contains("Not a directory"),
        "{}",
        lost[0]
    );
}
