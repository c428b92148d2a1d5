//! Drives the real `waypoint` binary in its full-screen mode inside a private
//! tmux server and reads the screen: a plan appears, Esc interrupts a running
//! command (killing its process group), Enter on an empty input resumes and
//! the plan is finished; Ctrl+C twice (when idle) quits and gives the
//! terminal back.
//! The daily-driver keys too: a running command's cell at 80x24, `exit 3`
//! shown, `AGENTS.md` in the first request, `@` + Tab attaching a file,
//! Ctrl+G through a real editor (and a missing one), Ctrl+Y into tmux's
//! clipboard by OSC 52. The plan as an object: `/plan add` while a command
//! runs shows the item at once, the model's next request carries the note
//! (once), and `waypoint export` lists every item's time and tool calls.
//! The keys: Esc leaves views (plan history, the item filter, an expanded
//! output) while a command runs without killing it; Ctrl+C interrupts.
//! Needs `tmux` on the PATH (the CI script installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::proc::{alive, read_pid};
use support::tmux::{POLL, TIMEOUT, Tmux, app_pid};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui_e2e.json")
}

/// The status line: the last non-blank row of the screen.
fn status_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

#[test]
fn interrupt_kills_the_tool_and_resume_finishes_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let pid_file = ws.join("sleep.pid");
    let scenario = fixture();
    let tmux = Tmux::start(
        120,
        40,
        dir.path(),
        &[
            Path::new("--approval"),
            Path::new("yolo"),
            Path::new("--scenario"),
            &scenario,
            Path::new("--workspace"),
            &ws,
        ],
    );

    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("run the task");
    tmux.key("Enter");

    // The plan is shown and the slow command runs.
    tmux.wait_for("the plan with the slow step in progress", |s| {
        s.contains("[>] Wait for the slow step") && s.contains("[ ] Write the result")
    });
    let start = Instant::now();
    let pid = loop {
        if let Some(pid) = read_pid(&pid_file).filter(|&p| alive(p)) {
            break pid;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "the slow command did not start (no live pid in {}); screen:\n{}",
            pid_file.display(),
            tmux.screen()
        );
        std::thread::sleep(POLL);
    };

    // Esc interrupts the turn and kills the command's process group.
    tmux.key("Escape");
    let screen = tmux.wait_for("the interrupted turn", |s| {
        s.contains("Interrupted") && status_line(s).contains("interrupted")
    });
    assert!(
        screen.contains("[>] Wait for the slow step"),
        "the plan survives the interrupt:\n{screen}"
    );
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the interrupted command's child (pid {pid}) still runs; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(POLL);
    }

    // Enter on the empty input resumes; the agent finishes the plan.
    tmux.key("Enter");
    let screen = tmux.wait_for("the finished plan", |s| {
        s.contains("[x] Wait for the slow step")
            && s.contains("[x] Write the result")
            && s.contains("2/2")
            && s.contains("All done.")
    });
    assert!(
        ws.join("result.txt").is_file(),
        "the resumed agent wrote result.txt; screen:\n{screen}"
    );
    assert!(!screen.contains("panicked"), "{screen}");

    tmux.quit_and_wait(true);
}

#[test]
fn small_terminal_shows_a_one_line_plan() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let tmux = Tmux::start(
        40,
        12,
        dir.path(),
        &[
            Path::new("--approval"),
            Path::new("yolo"),
            Path::new("--demo"),
            Path::new("--workspace"),
            &ws,
        ],
    );

    let screen = tmux.wait_for("the one-line plan summary", |s| {
        s.lines().any(|l| l.contains('▶') && l.contains("/3"))
    });
    assert!(!screen.contains("panicked"), "{screen}");
    assert!(
        !screen.contains("[>]"),
        "at 40x12 the plan should be collapsed to one line:\n{screen}"
    );

    // At 40 columns the status line has no room for the quit hint.
    tmux.quit_and_wait(false);
}

/// Waits (without blocking the loopback server's runtime) until `pred`
/// holds for the screen.
async fn wait_async(tmux: &Tmux, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let screen = tmux.screen();
        if pred(&screen) {
            return screen;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "timed out after {TIMEOUT:?} waiting for {what}; last screen:\n{screen}\n--- end of screen ---"
        );
        tokio::time::sleep(POLL).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_switch_the_model_and_never_reach_it() {
    use common::{FakeServer, Turn, sse};
    let server = FakeServer::start(vec![sse(Turn::text("Answered by the second model."))]).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    let config_s = config.display().to_string();
    let tmux = Tmux::start_with_env(
        120,
        40,
        dir.path(),
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", server.url.as_str()),
            ("ANTHROPIC_MODEL", "claude-first"),
            ("WAYPOINT_CONFIG", config_s.as_str()),
        ],
        &[Path::new("--workspace"), &ws],
    );
    wait_async(&tmux, "the first model in the status line", |s| {
        status_line(s).contains("claude-first")
    })
    .await;
    // /help opens the keys; nothing goes to the model.
    tmux.type_text("/help");
    tmux.key("Enter");
    wait_async(&tmux, "the help", |s| {
        s.contains("Keys") && s.contains("Ctrl+R")
    })
    .await;
    // The commands follow the keys, a page down at 40 rows.
    tmux.key("PageDown");
    wait_async(&tmux, "the commands in the help", |s| {
        s.contains("Keys") && s.contains("/model")
    })
    .await;
    tmux.key("Escape");
    // Typed only once the help is gone: an ESC followed at once by `/`
    // reads as Alt+/ to the terminal.
    wait_async(&tmux, "the help to close", |s| !s.contains("┌ Keys")).await;
    // /model NAME: the status line names it once the engine switched.
    tmux.type_text("/model claude-second");
    tmux.key("Enter");
    wait_async(&tmux, "the second model in the status line", |s| {
        status_line(s).contains("claude-second")
    })
    .await;
    assert!(server.requests().is_empty(), "no command reached the model");
    tmux.type_text("hello");
    tmux.key("Enter");
    wait_async(&tmux, "the reply", |s| {
        s.contains("Answered by the second model.")
    })
    .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "only the message was sent");
    assert_eq!(requests[0].body["model"], "claude-second");
    let sent = requests[0].body.to_string();
    assert!(
        !sent.contains("/help") && !sent.contains("/model"),
        "{sent}"
    );
    tmux.quit_and_wait(false);
}

/// Sends `signal` to the app while its command sleeps: the app exits with
/// 128 + the signal's number and the command's child is gone.
fn signal_ends_the_app(signal: i32, code: &str) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let pid_file = ws.join("sleep.pid");
    let scenario = fixture();
    let tmux = Tmux::start(
        120,
        40,
        dir.path(),
        &[
            Path::new("--approval"),
            Path::new("yolo"),
            Path::new("--scenario"),
            &scenario,
            Path::new("--workspace"),
            &ws,
        ],
    );
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("run the task");
    tmux.key("Enter");
    let start = Instant::now();
    let sleep = loop {
        if let Some(pid) = read_pid(&pid_file).filter(|&p| alive(p)) {
            break pid;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "the slow command did not start; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(POLL);
    };
    let app = app_pid(&tmux);
    // SAFETY: kill(2) on the app's pid, a child of the pane's live shell.
    assert_eq!(unsafe { libc::kill(app, signal) }, 0);
    let status = tmux.exit_status(&format!("signal {signal}"));
    assert_eq!(status, code, "exit status after signal {signal}");
    let start = Instant::now();
    while alive(sleep) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the command's child {sleep} outlived the app"
        );
        std::thread::sleep(POLL);
    }
}

#[test]
fn sigterm_exits_143_and_kills_the_command() {
    signal_ends_the_app(libc::SIGTERM, "143");
}

#[test]
fn sighup_exits_129_and_kills_the_command() {
    signal_ends_the_app(libc::SIGHUP, "129");
}

#[test]
fn an_external_sigint_exits_130_and_kills_the_command() {
    signal_ends_the_app(libc::SIGINT, "130");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_added_to_the_config_file_works_after_f5_without_a_restart() {
    use common::{FakeServer, Turn, sse};
    let server = FakeServer::start(vec![sse(Turn::text("Hello after the fix."))]).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    let config_s = config.display().to_string();
    let home = dir.path().display().to_string();
    let tmux = Tmux::start_with_env(
        120,
        40,
        dir.path(),
        &[
            ("WAYPOINT_CONFIG", config_s.as_str()),
            ("HOME", home.as_str()),
        ],
        &[Path::new("--workspace"), &ws],
    );
    wait_async(&tmux, "the first-run help", |s| {
        status_line(s).contains("no provider") && s.contains("press F5")
    })
    .await;
    // The user fixes the config file while the app runs, then presses F5.
    std::fs::write(
        &config,
        format!(
            "provider = \"anthropic\"\napi_key = \"sk-ant-test-0123456789\"\nbase_url = \"{}\"\nmodel = \"claude-fixed\"\n",
            server.url
        ),
    )
    .unwrap();
    tmux.key("F5");
    wait_async(&tmux, "the model in the status line", |s| {
        status_line(s).contains("claude-fixed")
    })
    .await;
    tmux.type_text("hi");
    tmux.key("Enter");
    wait_async(&tmux, "the reply", |s| s.contains("Hello after the fix.")).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "claude-fixed");
    assert_eq!(
        requests[0].header("x-api-key"),
        Some("sk-ant-test-0123456789")
    );
    tmux.quit_and_wait(false);
}

/// A scenario that plans two items and finishes both.
const NOTES_SCENARIO: &str = r#"{
  "description": "TUI sessions end-to-end: a plan of two items, both done.",
  "turns": [
    {"text": "Planning first.", "tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Draft the notes", "status": "in_progress", "activeForm": "Drafting the notes"},
        {"content": "Write the notes", "status": "pending", "activeForm": "Writing the notes"}
      ]}}
    ]},
    {"text": "Writing them.", "tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Draft the notes", "status": "completed", "activeForm": "Drafting the notes"},
        {"content": "Write the notes", "status": "in_progress", "activeForm": "Writing the notes"}
      ]}},
      {"name": "write_file", "input": {"path": "notes.txt", "content": "notes\n"}}
    ]},
    {"text": "Closing the plan.", "tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Draft the notes", "status": "completed", "activeForm": "Drafting the notes"},
        {"content": "Write the notes", "status": "completed", "activeForm": "Writing the notes"}
      ]}}
    ]},
    {"text": "Notes written."}
  ]
}"#;

#[test]
fn a_session_continued_with_c_shows_its_plan_and_conversation_again() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let scenario = dir.path().join("notes.json");
    std::fs::write(&scenario, NOTES_SCENARIO).unwrap();
    let run = |extra: &[&Path]| {
        let mut args: Vec<&Path> = extra.to_vec();
        args.extend([
            // It writes a file: nothing asks.
            Path::new("--approval"),
            Path::new("yolo"),
            Path::new("--scenario"),
            &scenario,
            Path::new("--workspace"),
            &ws,
        ]);
        // Both runs share the folder, so the same WAYPOINT_HOME.
        let _ = std::fs::remove_file(dir.path().join("exit-status"));
        Tmux::start(120, 40, dir.path(), &args)
    };
    let done = |s: &str| {
        s.contains("[x] Draft the notes") && s.contains("[x] Write the notes") && s.contains("2/2")
    };

    let tmux = run(&[]);
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("make the notes");
    tmux.key("Enter");
    tmux.wait_for("the finished plan", |s| {
        done(s) && s.contains("Notes written.")
    });
    tmux.quit_and_wait(true);
    drop(tmux);

    // `-c` in the same workspace: the same plan, states and conversation.
    let tmux = run(&[Path::new("-c")]);
    // (All in one predicate: a screen captured while a frame is being
    // written may show its top half only.)
    let screen = tmux.wait_for("the restored plan and conversation", |s| {
        done(s)
            && s.contains("make the notes")
            && s.contains("Notes written.")
            && s.contains("Resumed session")
    });
    assert!(!screen.contains("panicked"), "{screen}");

    // /resume lists this workspace's one session, with its first prompt.
    tmux.type_text("/resume");
    tmux.key("Enter");
    tmux.wait_for("the session picker with the session's row", |s| {
        s.contains("Sessions of this workspace (1)")
            && s.lines()
                .any(|l| l.contains("2/2") && l.contains("make the notes"))
    });
    tmux.key("Escape");
    tmux.wait_for("the picker to close", |s| {
        !s.contains("Sessions of this workspace")
    });
    tmux.quit_and_wait(true);
    drop(tmux);

    // `-r` without an id opens the picker first; Enter opens the session.
    let tmux = run(&[Path::new("-r")]);
    tmux.wait_for("the session picker at start", |s| {
        s.contains("Sessions of this workspace (1)") && s.contains("make the notes")
    });
    tmux.key("Enter");
    tmux.wait_for("the opened session, the picker closed", |s| {
        done(s)
            && s.contains("Notes written.")
            && s.contains("Resumed session")
            && !s.contains("Sessions of this workspace")
    });
    tmux.quit_and_wait(true);
}

/// A scenario whose commands ask first in ask mode: one the user refuses,
/// one allowed "always", and a second with the same first words.
const APPROVAL_SCENARIO: &str = r#"{
  "description": "TUI approvals end-to-end: refuse a command, then allow echo approved always.",
  "turns": [
    {"text": "Planning first.", "tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Make the marker", "status": "in_progress", "activeForm": "Making the marker"},
        {"content": "Report back", "status": "pending", "activeForm": "Reporting back"}
      ]}},
      {"name": "bash", "input": {"command": "touch marker"}}
    ]},
    {"text": "Refused; echoing instead.", "tool_calls": [
      {"name": "bash", "input": {"command": "echo approved once"}}
    ]},
    {"text": "Echoing again.", "tool_calls": [
      {"name": "bash", "input": {"command": "echo approved again"}}
    ]},
    {"text": "All done here."}
  ]
}"#;

#[test]
fn the_approval_prompt_refuses_and_allows_always() {
    let dir = tempfile::tempdir().unwrap();
    let (tmux, ws) = scenario_app(dir.path(), APPROVAL_SCENARIO, "ask", (120, 40));
    tmux.wait_for("the app to open in ask mode", |s| {
        s.contains("Enter send") && status_line(s).contains("· ask")
    });
    tmux.type_text("make the marker");
    tmux.key("Enter");

    // The plan is there and `touch marker` waits in the prompt.
    let screen = tmux.wait_for("the prompt for touch marker", |s| {
        s.contains("Approve bash?")
            && s.contains("$ touch marker")
            && s.contains("a always (touch marker)")
            && s.contains("[>] Make the marker")
            && status_line(s).contains("waiting for approval")
    });
    assert!(
        !ws.join("marker").exists(),
        "it ran before the answer:\n{screen}"
    );

    // n, then Enter without a reason: refused; the model goes on.
    tmux.key("n");
    tmux.wait_for("the reason line", |s| s.contains("Reason (optional)"));
    tmux.key("Enter");
    let screen = tmux.wait_for("the refusal and the next prompt", |s| {
        s.contains("Refused by the user")
            && s.contains("$ echo approved once")
            && s.contains("a always (echo approved)")
    });
    assert!(
        !ws.join("marker").exists(),
        "a refused command ran:\n{screen}"
    );
    assert!(
        screen.contains("[>] Make the marker") && !screen.contains("[x] Make the marker"),
        "the plan item is still open:\n{screen}"
    );

    // a: it runs, and the next echo runs without asking (or the turn
    // would never reach its last reply).
    tmux.key("a");
    let screen = tmux.wait_for("both echoes and the end of the turn", |s| {
        s.contains("approved once")
            && s.contains("approved again")
            && s.contains("All done here.")
            && s.contains("Allowed for this session: echo approved")
            && !s.contains("Approve bash?")
            && status_line(s).contains("idle")
    });
    assert!(!screen.contains("panicked"), "{screen}");
    assert!(!ws.join("marker").exists(), "{screen}");
    tmux.quit_and_wait(true);
}

/// A scripted scenario written for one test: each turn's bash command
/// (then a closing reply).
fn bash_scenario(commands: &[&str]) -> String {
    let mut turns: Vec<serde_json::Value> = commands
        .iter()
        .map(|c| {
            serde_json::json!({
                "text": format!("Running {c}."),
                "tool_calls": [{"name": "bash", "input": {"command": c}}]
            })
        })
        .collect();
    turns.push(serde_json::json!({"text": "Scenario finished."}));
    serde_json::json!({"description": "bash cells", "turns": turns}).to_string()
}

/// The app at `size` playing `scenario` (its JSON) in approval `mode`, in
/// a fresh workspace `dir/ws` (returned with it).
fn scenario_app(dir: &Path, scenario: &str, mode: &str, size: (u16, u16)) -> (Tmux, PathBuf) {
    scenario_app_with_env(dir, scenario, mode, size, &[])
}

/// Like `scenario_app`, with extra `NAME=value` pairs in the app's environment.
fn scenario_app_with_env(
    dir: &Path,
    scenario: &str,
    mode: &str,
    size: (u16, u16),
    env: &[(&str, &str)],
) -> (Tmux, PathBuf) {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let path = dir.join("scenario.json");
    std::fs::write(&path, scenario).unwrap();
    let args = [
        Path::new("--approval"),
        Path::new(mode),
        Path::new("--scenario"),
        &path,
        Path::new("--workspace"),
        &ws,
    ];
    (Tmux::start_with_env(size.0, size.1, dir, env, &args), ws)
}

#[test]
fn at_80x24_a_running_command_and_a_failed_one_show_in_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = bash_scenario(&["sleep 2; echo done", "exit 3"]);
    let (tmux, _ws) = scenario_app(dir.path(), &scenario, "yolo", (80, 24));
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("run them");
    tmux.key("Enter");
    // No Tab: the call's cell is in the conversation while it runs.
    let screen = tmux.wait_for("the running command in the conversation", |s| {
        s.lines()
            .any(|l| l.contains("bash sleep 2; echo done") && !l.contains('✔'))
    });
    assert!(!screen.contains("Scenario finished."), "{screen}");
    tmux.wait_for("the failed command's exit code", |s| {
        s.lines()
            .any(|l| l.contains("bash exit 3") && l.contains("· exit 3"))
    });
    tmux.wait_for("the end of the scenario", |s| {
        s.contains("Scenario finished.")
    });
    tmux.quit_and_wait(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_reaches_the_first_request() {
    use common::{FakeServer, Turn, sse};
    let server = FakeServer::start(vec![sse(Turn::text("Read your instructions."))]).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        ws.join("AGENTS.md"),
        "Always answer in haiku. MARKER-7c1e\n",
    )
    .unwrap();
    let tmux = loopback_app(dir.path(), &ws, &server.url);
    wait_async(&tmux, "the app to open", |s| s.contains("Enter send")).await;
    tmux.type_text("hello");
    tmux.key("Enter");
    wait_async(&tmux, "the reply", |s| {
        s.contains("Read your instructions.")
    })
    .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].body.to_string();
    assert!(sent.contains("MARKER-7c1e"), "{sent}");
    tmux.quit_and_wait(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_and_tab_insert_a_path_whose_file_reaches_the_model() {
    use common::{FakeServer, Turn, sse};
    let server = FakeServer::start(vec![sse(Turn::text("Seen the notes."))]).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/notes.txt"), "the content CONTENT-93b2 here\n").unwrap();
    std::fs::write(ws.join("other.rs"), "fn main() {}\n").unwrap();
    let tmux = loopback_app(dir.path(), &ws, &server.url);
    wait_async(&tmux, "the app to open", |s| s.contains("Enter send")).await;
    tmux.type_text("summarise @");
    wait_async(&tmux, "the file list", |s| {
        s.contains("Files") && s.contains("docs/notes.txt")
    })
    .await;
    tmux.type_text("notes");
    wait_async(&tmux, "the filtered list", |s| {
        s.contains("docs/notes.txt") && !s.contains("other.rs")
    })
    .await;
    tmux.key("Tab");
    wait_async(&tmux, "the path in the input", |s| {
        s.contains("summarise @docs/notes.txt") && !s.contains("Tab inserts")
    })
    .await;
    tmux.key("Enter");
    wait_async(&tmux, "the reply", |s| s.contains("Seen the notes.")).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].body.to_string();
    assert!(sent.contains("summarise @docs/notes.txt"), "{sent}");
    assert!(
        sent.contains("CONTENT-93b2"),
        "the file's content was attached: {sent}"
    );
    tmux.quit_and_wait(true);
}

/// The app at 120x40 talking to the loopback server at `url`.
fn loopback_app(dir: &Path, ws: &Path, url: &str) -> Tmux {
    let config = dir.join("config.toml");
    std::fs::write(&config, "").unwrap();
    let config_s = config.display().to_string();
    Tmux::start_with_env(
        120,
        40,
        dir,
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_MODEL", "claude-test"),
            ("WAYPOINT_CONFIG", config_s.as_str()),
        ],
        &[Path::new("--workspace"), ws],
    )
}

#[test]
fn ctrl_g_edits_in_the_editor_and_ctrl_y_copies_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    // An "editor" that appends to the message it is given.
    let editor = dir.path().join("editor.sh");
    crate::support::write_program(
        &editor,
        b"#!/bin/sh\nprintf ' and more from the editor' >> \"$1\"\n",
    );
    let editor_s = editor.display().to_string();
    let (tmux, _ws) = scenario_app_with_env(
        dir.path(),
        &bash_scenario(&[]),
        "ask",
        (120, 40),
        &[("VISUAL", editor_s.as_str())],
    );
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("typed here");
    tmux.key("C-g");
    tmux.wait_for("the edited message back in the app", |s| {
        s.contains("typed here and more from the editor") && s.contains("Enter send")
    });
    tmux.key("Enter");
    tmux.wait_for("the reply", |s| s.contains("Scenario finished."));
    tmux.key("C-y");
    tmux.wait_for("the copy notice", |s| s.contains("Copied 1 line"));
    let start = Instant::now();
    loop {
        let buffer = tmux.run(&["show-buffer"]);
        if String::from_utf8_lossy(&buffer.stdout).contains("Scenario finished.") {
            break;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "the reply did not reach tmux's clipboard: {:?}",
            String::from_utf8_lossy(&buffer.stderr)
        );
        std::thread::sleep(POLL);
    }
    tmux.quit_and_wait(true);
}

#[test]
fn a_missing_editor_says_so_and_keeps_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let (tmux, _ws) = scenario_app_with_env(
        dir.path(),
        &bash_scenario(&[]),
        "ask",
        (120, 40),
        &[("VISUAL", "/nonexistent/editor")],
    );
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("keep me");
    tmux.key("C-g");
    let screen = tmux.wait_for("the editor's failure", |s| {
        s.contains("The editor failed") && s.contains("Enter send")
    });
    assert!(screen.contains("keep me"), "{screen}");
    assert!(screen.contains("/nonexistent/editor"), "{screen}");
    // The first Ctrl+C clears the kept message.
    tmux.key("C-c");
    tmux.wait_for("the input cleared", |s| !s.contains("keep me"));
    tmux.quit_and_wait(true);
}

/// A task that keeps a command running long enough for the user to change
/// the plan; the scripted model takes the user's item into its next plans.
const PLAN_EDIT_SCENARIO: &str = r#"{
  "description": "TUI plan edit end-to-end: /plan add while a command runs.",
  "turns": [
    {"text": "Planning.", "tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Write code", "status": "in_progress", "activeForm": "Writing code"},
        {"content": "Run tests", "status": "pending", "activeForm": "Running tests"}
      ]}},
      {"name": "bash", "input": {"command": "sleep 4; echo written"}}
    ]},
    {"text": "Noted your item.", "tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Write code", "status": "completed", "activeForm": "Writing code"},
        {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"},
        {"content": "Update the README", "status": "pending", "activeForm": "Updating the README"}
      ]}},
      {"name": "bash", "input": {"command": "sleep 1.2; echo tested"}}
    ]},
    {"tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Write code", "status": "completed", "activeForm": "Writing code"},
        {"content": "Run tests", "status": "completed", "activeForm": "Running tests"},
        {"content": "Update the README", "status": "in_progress", "activeForm": "Updating the README"}
      ]}},
      {"name": "bash", "input": {"command": "echo readme"}}
    ]},
    {"tool_calls": [
      {"name": "todo_write", "input": {"todos": [
        {"content": "Write code", "status": "completed", "activeForm": "Writing code"},
        {"content": "Run tests", "status": "completed", "activeForm": "Running tests"},
        {"content": "Update the README", "status": "completed", "activeForm": "Updating the README"}
      ]}}
    ]},
    {"text": "All done."}
  ]
}"#;

#[test]
fn a_plan_item_added_with_slash_plan_mid_run_reaches_the_model_and_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let (tmux, _ws) = scenario_app(dir.path(), PLAN_EDIT_SCENARIO, "yolo", (120, 40));
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("do the task");
    tmux.key("Enter");
    tmux.wait_for("the first command running", |s| {
        s.lines()
            .any(|l| l.contains("bash sleep 4; echo written") && !l.contains('✔'))
    });
    tmux.type_text("/plan add Update the README");
    tmux.key("Enter");
    // At once, while the command still runs: the user's item in the plan.
    let screen = tmux.wait_for("the user's item in the plan", |s| {
        s.contains("[ ] Update the README")
    });
    assert!(!screen.contains("Noted your item."), "{screen}");
    tmux.wait_for("the finished plan", |s| {
        s.contains("All done.") && s.contains("3/3")
    });
    tmux.quit_and_wait(true);
    drop(tmux);

    // What the model was sent: the note, once, right after the command's
    // result (the transcript holds the conversation as the model got it).
    let sessions = dir.path().join("home/sessions");
    let transcript = std::fs::read_dir(&sessions)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let notes: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "user")
        .filter_map(|r| r["text"].as_str())
        .filter(|t| t.contains("The user changed the plan"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("added \"Update the README\" at the end")
            && notes[0].contains("[ ] Update the README"),
        "{}",
        notes[0]
    );
    let note_at = records
        .iter()
        .position(|r| r["type"] == "user" && r["text"].as_str() == Some(notes[0]))
        .unwrap();
    assert_eq!(
        records[note_at - 1]["envelope"]["type"],
        "tool_call_end",
        "after the result"
    );
    assert!(
        records
            .iter()
            .any(|r| r["envelope"]["type"] == "plan_updated" && r["envelope"]["author"] == "user"),
        "the user's revision is recorded"
    );

    // The export lists time and tool calls for every item.
    let id = transcript
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    std::fs::write(dir.path().join("none.toml"), "").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args(["export", &id])
        .env("WAYPOINT_HOME", dir.path().join("home"))
        .env("WAYPOINT_CONFIG", dir.path().join("none.toml"))
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{md}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (item, calls) in [
        ("Write code", "2"),
        ("Run tests", "2"),
        ("Update the README", "2"),
    ] {
        let row = md
            .lines()
            .find(|l| l.contains(&format!("| {item} |")))
            .unwrap_or_else(|| panic!("no row for {item}:\n{md}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[3], "completed", "{row}");
        assert!(cells[7].ends_with('s'), "{row}");
        assert_eq!(cells[8], calls, "{row}");
    }
    let row = |item: &str| {
        md.lines()
            .find(|l| l.contains(&format!("| {item} |")))
            .unwrap()
            .split('|')
            .map(str::trim)
            .nth(7)
            .unwrap()
            .to_string()
    };
    assert_ne!(row("Write code"), "0s", "{md}");
    assert_ne!(row("Run tests"), "0s", "{md}");
    assert!(
        md.contains("user: added \"Update the README\" at the end"),
        "{md}"
    );
}

/// Esc to leave a view never kills a build: while a command runs, Esc
/// leaves a past plan revision, then the item filter, then folds an
/// expanded output and lets the selected call go, and the command lives
/// through all four; then Ctrl+C (not a second Esc) interrupts it.
#[test]
fn esc_leaves_views_without_killing_the_command_and_ctrl_c_interrupts() {
    let dir = tempfile::tempdir().unwrap();
    let todos = |active: &str| {
        serde_json::json!({"todos": [
            {"content": "Build it", "activeForm": "Building it", "status": active},
            {"content": "Ship it", "activeForm": "Shipping it", "status": "pending"}
        ]})
    };
    let scenario = serde_json::json!({"turns": [
        {"text": "Planning.", "tool_calls": [
            {"name": "todo_write", "input": todos("pending")},
            {"name": "todo_write", "input": todos("in_progress")},
            {"name": "bash", "input": {"command": "echo $$ > build.pid; sleep 60"}}
        ]},
        {"text": "Scenario finished."}
    ]})
    .to_string();
    let (tmux, ws) = scenario_app(dir.path(), &scenario, "yolo", (120, 40));
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("build it");
    tmux.key("Enter");
    let start = Instant::now();
    let pid = loop {
        if let Some(pid) = read_pid(&ws.join("build.pid")).filter(|&p| alive(p)) {
            break pid;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "no build; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(POLL);
    };
    let still_running = |after: &str| {
        // Give a wrongly sent interrupt time to land.
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            alive(pid),
            "Esc {after} killed the build; screen:\n{}",
            tmux.screen()
        );
        assert!(
            !status_line(&tmux.screen()).contains("interrupted"),
            "{after}"
        );
    };
    // The plan pane (Tab: conversation, then plan): a past revision, then
    // an item selected (the tools show its calls).
    tmux.key("Tab");
    tmux.key("Tab");
    tmux.key("[");
    tmux.wait_for("a past revision", |s| {
        s.contains("Plan history") && s.contains("rev 2/2")
    });
    tmux.key("Escape");
    tmux.wait_for("the live plan", |s| !s.contains("Plan history"));
    still_running("leaving plan history");
    tmux.key("Down");
    tmux.wait_for("the item's calls", |s| s.contains("Tools · item"));
    tmux.key("Escape");
    tmux.wait_for("every call again", |s| !s.contains("Tools · item"));
    still_running("clearing the item filter");
    // The tools pane: a call's output expanded, then folded, then let go.
    tmux.key("Tab");
    tmux.key("Up");
    tmux.key("Enter");
    tmux.wait_for("the call expanded", |s| s.contains("Enter folds"));
    tmux.key("Escape");
    still_running("folding an output");
    tmux.key("Escape");
    still_running("leaving the selected call");
    // Ctrl+C interrupts: the build's process group is killed.
    tmux.key("C-c");
    tmux.wait_for("the interrupted turn", |s| {
        status_line(s).contains("interrupted")
    });
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the build survived Ctrl+C"
        );
        std::thread::sleep(POLL);
    }
    tmux.quit_and_wait(true);
}
