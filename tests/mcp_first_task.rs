//! MCP tools in the task given at start: `waypoint -p TASK` (the real
//! binary on a loopback model) waits for the configured servers still
//! starting before its first request, says so on stderr, and its first
//! request carries their tools; a server that fails or outlasts its
//! startup timeout does not hold the task. Mid-turn, a server that becomes
//! ready joins at the next model request, its tools after those already
//! sent. In the app, Esc and Ctrl+C skip the wait instead of interrupting.
//! The slow server is the published reference server behind a shell that
//! sleeps first (outside the task's workspace); skipped (with a note) where
//! it is not installed, failed under `.ci/run`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::engine_support;
use crate::loopback;
use crate::support;
use crate::tui_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::{Anthropic, Turn, sse};
use engine_support::{Rig, assert_completed, tool_ends, tool_names};
use loopback::{Answer, ClientOpts, FakeServer, ProviderWire, Recorded};
use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use waypoint::agent::AgentConfig;
use waypoint::events::{Event, McpAction, McpStatus, McpWait, Op, ToolStatus};
use waypoint::mcp::McpServerConfig;
use waypoint::tui::state::Activity;
use waypoint::tui::update::{self, Effect};

/// The reference server behind `bash`, which sleeps `secs` first (before
/// it can answer `initialize`).
fn late_everything(secs: f64) -> Option<(String, Vec<String>)> {
    let program = support::mcp::reference_server("mcp-server-everything")?;
    let script = format!("sleep {secs}; exec {:?}", program.to_string_lossy());
    Some(("bash".into(), vec!["-c".into(), script]))
}

/// A config file in `home` with `servers` (name, `[mcp_servers.NAME]` body).
fn config_file(home: &Path, servers: &[(&str, String)]) -> std::path::PathBuf {
    let mut text = String::new();
    for (name, body) in servers {
        text.push_str(&format!("[mcp_servers.{name}]\n{body}\n"));
    }
    let path = home.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn server_body((command, args): &(String, Vec<String>)) -> String {
    format!("command = {command:?}\nargs = {args:?}\n")
}

/// How many replies the request follows.
fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

/// A model that adds with `tool` when its request offers it, else says
/// it cannot; then reads the result.
async fn adder(tool: &'static str) -> FakeServer<Anthropic> {
    let responder = Arc::new(move |r: &Recorded| match step(r) {
        0 if tool_names(r).iter().any(|n| n == tool) => {
            sse(Turn::tool(tool, json!({"a": 19, "b": 23})))
        }
        0 => sse(Turn::text(
            "There is no get-sum tool, so I added by hand: 42.",
        )),
        _ => sse(Turn::text("19 + 23 = 42.")),
    });
    FakeServer::<Anthropic>::responding(responder).await
}

/// Runs `waypoint -p TASK` with `config` on `server`: exit code, stderr.
async fn run_p(
    server: &FakeServer<Anthropic>,
    config: &Path,
    home: &Path,
    ws: &Path,
) -> (i32, String) {
    let mut cmd = cli_support::on_loopback(home, ws, &server.url, Anthropic::MODEL);
    cmd.env("WAYPOINT_CONFIG", config)
        .args(["-p", "add 19 and 23 with get-sum"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    eprintln!("stdout:\n{out}\nstderr:\n{err}");
    (code, err)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_p_task_waits_for_a_server_that_needs_1_5_s_and_calls_its_tool() {
    let Some(slow) = late_everything(1.5) else {
        return;
    };
    let home = support::sandbox::outside_hidden("mcp-first-home-");
    let ws = support::sandbox::outside_hidden("mcp-first-ws-");
    let config = config_file(home.path(), &[("slow", server_body(&slow))]);
    let server = adder("mcp__slow__get-sum").await;
    let (code, err) = run_p(&server, &config, home.path(), ws.path()).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("waypoint: waiting for MCP servers: slow…"),
        "{err}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    // The first request already carries the server's tools.
    let names = tool_names(&requests[0]);
    assert!(
        names.contains(&"mcp__slow__get-sum".to_string()),
        "{names:?}"
    );
    let results = requests[1].last_tool_results();
    assert_ne!(results[0]["is_error"], json!(true), "{results:?}");
    assert!(
        results[0]["content"].to_string().contains("42"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_ends_for_a_server_that_fails_or_outlasts_its_startup_timeout() {
    let Some(slow) = late_everything(1.5) else {
        return;
    };
    let home = support::sandbox::outside_hidden("mcp-first-home-");
    let ws = support::sandbox::outside_hidden("mcp-first-ws-");
    let broken =
        "command = \"bash\"\nargs = [\"-c\", \"sleep 0.2; echo 'no token set' >&2; exit 1\"]\n";
    // Never answers; its startup timeout (1 s) ends its part of the wait.
    let silent =
        "command = \"bash\"\nargs = [\"-c\", \"exec sleep 60\"]\nstartup_timeout_sec = 1.0\n";
    let config = config_file(
        home.path(),
        &[
            ("broken", broken.to_string()),
            ("silent", silent.to_string()),
            ("slow", server_body(&slow)),
        ],
    );
    let server = adder("mcp__slow__get-sum").await;
    let started = std::time::Instant::now();
    let (code, err) = run_p(&server, &config, home.path(), ws.path()).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.contains("waypoint: waiting for MCP servers: broken, silent, slow…"),
        "{err}"
    );
    assert!(err.contains("MCP server broken failed"), "{err}");
    assert!(
        err.contains("the task starts without MCP servers still starting: silent"),
        "{err}"
    );
    assert!(
        err.contains("the task starts without MCP servers that failed: broken"),
        "{err}"
    );
    // It waited for the slow one (ready within its timeout), not for the
    // other two.
    let requests = server.requests();
    let names = tool_names(&requests[0]);
    assert!(
        names.contains(&"mcp__slow__get-sum".to_string()),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("mcp__silent__") || n.starts_with("mcp__broken__")),
        "{names:?}"
    );
    assert!(
        requests[1].last_tool_results()[0]["content"]
            .to_string()
            .contains("42")
    );
}

#[tokio::test]
async fn a_server_ready_mid_turn_joins_at_the_next_request_after_the_tools_sent() {
    type Wire = Anthropic;
    let Some((command, args)) = late_everything(1.5) else {
        return;
    };
    let mut config = AgentConfig::default();
    config.tools.mcp.servers = BTreeMap::from([(
        "late".to_string(),
        McpServerConfig {
            command: Some(command),
            args,
            ..McpServerConfig::default()
        },
    )]);
    let gate = support::sandbox::outside_hidden("mcp-first-gate-");
    let go = gate.path().join("go");
    // The first call lasts until the test has seen the server ready.
    let wait = format!("while [ ! -e {go:?} ]; do sleep 0.05; done; echo went");
    let replies = vec![
        Wire::reply(Answer::tool("bash", json!({"command": wait}))),
        Wire::reply(Answer::tool(
            "mcp__late__get-sum",
            json!({"a": 19, "b": 23}),
        )),
        Wire::text("42."),
    ];
    let mut rig = Rig::<Wire>::with(replies, config, ClientOpts::default()).await;
    rig.submit("Add 19 and 23.");
    let seen = rig
        .until(|e| {
            matches!(
                e,
                Event::McpServer {
                    status: McpStatus::Ready { .. } | McpStatus::Failed { .. },
                    ..
                }
            )
        })
        .await;
    assert!(
        matches!(
            seen.last(),
            Some(Event::McpServer {
                status: McpStatus::Ready { .. },
                ..
            })
        ),
        "{seen:?}"
    );
    std::fs::write(&go, "").unwrap();
    let events = rig.turn_events().await;
    assert_completed(&events);
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert_eq!(ends[1].1, ToolStatus::Ok, "{ends:?}");
    assert!(ends[1].2.contains("42"), "{ends:?}");
    let requests = rig.server.requests();
    assert_eq!(requests.len(), 3);
    let first = tool_names(&requests[0]);
    let second = tool_names(&requests[1]);
    assert!(!first.iter().any(|n| n.starts_with("mcp__")), "{first:?}");
    // The tools already sent come first, in their order; the server's
    // after them.
    assert_eq!(second[..first.len()], first[..], "{second:?}");
    let joined = &second[first.len()..];
    assert!(!joined.is_empty(), "{second:?}");
    assert!(
        joined.iter().all(|n| n.starts_with("mcp__late__")),
        "{joined:?}"
    );
    assert!(
        joined.contains(&"mcp__late__get-sum".to_string()),
        "{joined:?}"
    );
    // And they stay where they are for the rest of the turn.
    assert_eq!(tool_names(&requests[2]), second);
}

#[test]
fn in_the_app_esc_and_ctrl_c_skip_the_wait_instead_of_interrupting() {
    use tui_support::{Clock, app, ctrl, key};
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(
        &mut a,
        Event::McpWait {
            wait: McpWait::Waiting {
                names: vec!["slow".into()],
            },
        },
        clock.at(0.2),
    );
    assert_eq!(*a.status.turn.activity(), Activity::McpWait);
    assert!(
        a.root
            .conversation
            .entries
            .iter()
            .any(|e| e.text().contains("Waiting for MCP servers: slow…")),
        "the wait is said in the conversation"
    );
    let skip = vec![Effect::Send(Op::Mcp {
        action: McpAction::SkipWait,
    })];
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), clock.at(0.3)),
        skip
    );
    // The task goes on: a second Esc interrupts it, as always.
    assert_eq!(
        update::on_key(&mut a, key(KeyCode::Esc), clock.at(0.4)),
        vec![Effect::Send(Op::Interrupt)]
    );
    update::on_event(
        &mut a,
        Event::McpWait {
            wait: McpWait::Over {
                skipped: true,
                failed: Vec::new(),
                starting: vec!["slow".into()],
            },
        },
        clock.at(0.5),
    );
    assert!(
        a.root.conversation.entries.iter().any(|e| e
            .text()
            .contains("without MCP servers slow (still starting")),
        "what the task starts without is said"
    );

    // Ctrl+C skips it too (and does not arm quitting).
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(1.0));
    update::on_event(
        &mut a,
        Event::McpWait {
            wait: McpWait::Waiting {
                names: vec!["slow".into()],
            },
        },
        clock.at(1.1),
    );
    assert_eq!(update::on_key(&mut a, ctrl('c'), clock.at(1.2)), skip);
    assert!(!a.status.ui.quit_armed(clock.at(1.3)));
}

/// The app in tmux with a first task (`waypoint "TASK"`), on `server`, with
/// the config file `config`, in the folder `dir`.
fn app_with_task(dir: &Path, config: &Path, server: &FakeServer<Anthropic>) -> support::tmux::Tmux {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let config = config.to_string_lossy().into_owned();
    support::tmux::Tmux::start_with_env(
        120,
        40,
        dir,
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", server.url.as_str()),
            ("ANTHROPIC_MODEL", Anthropic::MODEL),
            ("WAYPOINT_CONFIG", config.as_str()),
            ("WAYPOINT_APPROVAL", "yolo"),
        ],
        &[
            Path::new("--workspace"),
            &ws,
            Path::new("add 19 and 23 with get-sum"),
        ],
    )
}

fn wait_screen(tmux: &support::tmux::Tmux, what: &str, pred: impl Fn(&str) -> bool) -> String {
    tokio::task::block_in_place(|| tmux.wait_for(what, pred))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_with_a_first_task_waits_for_the_server_and_esc_starts_without_it() {
    let Some(slow) = late_everything(1.5) else {
        return;
    };
    // A server ready after 1.5 s: the task waits, then calls its tool.
    let dir = support::sandbox::outside_hidden("mcp-first-app-");
    let config = config_file(dir.path(), &[("slow", server_body(&slow))]);
    let server = adder("mcp__slow__get-sum").await;
    let tmux = app_with_task(dir.path(), &config, &server);
    wait_screen(&tmux, "the wait to be said", |s| {
        s.contains("Waiting for MCP servers: slow…")
    });
    wait_screen(&tmux, "the answer", |s| s.contains("19 + 23 = 42."));
    let names = tool_names(&server.requests()[0]);
    assert!(
        names.contains(&"mcp__slow__get-sum".to_string()),
        "{names:?}"
    );
    drop(tmux);

    // A server that would take a minute: Esc starts the task without it.
    let dir = support::sandbox::outside_hidden("mcp-first-app-");
    let never =
        "command = \"bash\"\nargs = [\"-c\", \"exec sleep 90\"]\nstartup_timeout_sec = 60.0\n";
    let config = config_file(dir.path(), &[("never", never.to_string())]);
    let server = adder("mcp__never__get-sum").await;
    let tmux = app_with_task(dir.path(), &config, &server);
    wait_screen(&tmux, "the wait to be said", |s| {
        s.contains("Waiting for MCP servers: never…")
    });
    assert!(server.requests().is_empty(), "no request while it waits");
    tmux.key("Escape");
    let screen = wait_screen(&tmux, "the task to start without it", |s| {
        s.contains("added by hand: 42.")
    });
    assert!(
        screen.contains("Skipped the wait; starting without MCP servers never"),
        "{screen}"
    );
    assert!(!screen.contains("Interrupted"), "{screen}");
    let names = tool_names(&server.requests()[0]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
}

#[tokio::test]
async fn the_engine_starts_a_skipped_wait_and_an_interrupt_ends_the_turn() {
    type Wire = Anthropic;
    let never = || McpServerConfig {
        command: Some("bash".into()),
        args: vec!["-c".into(), "exec sleep 90".into()],
        startup_timeout_sec: Some(60.0),
        ..McpServerConfig::default()
    };
    let mut config = AgentConfig::default();
    config.tools.mcp.servers = BTreeMap::from([("never".to_string(), never())]);
    config.tools.mcp.wait_at_start = true;
    // Skipped: the task starts at once, without the server.
    let mut rig = Rig::<Wire>::with(
        vec![Wire::text("Started.")],
        config.clone(),
        ClientOpts::default(),
    )
    .await;
    rig.submit("Go.");
    rig.until(|e| {
        matches!(
            e,
            Event::McpWait {
                wait: McpWait::Waiting { .. }
            }
        )
    })
    .await;
    assert!(
        rig.server.requests().is_empty(),
        "no request while it waits"
    );
    rig.handle
        .ops
        .send(Op::Mcp {
            action: McpAction::SkipWait,
        })
        .unwrap();
    let events = rig.turn_events().await;
    assert_completed(&events);
    let over = events.iter().find_map(|e| match e {
        Event::McpWait {
            wait: wait @ McpWait::Over { .. },
        } => Some(wait.clone()),
        _ => None,
    });
    assert_eq!(
        over,
        Some(McpWait::Over {
            skipped: true,
            failed: Vec::new(),
            starting: vec!["never".into()],
        })
    );
    assert_eq!(rig.server.requests().len(), 1);
    // Only the first turn waits.
    rig.server.push(Wire::text("Again."));
    rig.submit("Again.");
    let events = rig.turn_events().await;
    assert_completed(&events);
    assert!(
        !events.iter().any(|e| matches!(e, Event::McpWait { .. })),
        "{events:?}"
    );

    // Interrupted (Ctrl+C in headless mode): the turn ends, nothing is sent.
    let mut rig = Rig::<Wire>::with(
        vec![Wire::text("Never sent.")],
        config,
        ClientOpts::default(),
    )
    .await;
    rig.submit("Go.");
    rig.until(|e| {
        matches!(
            e,
            Event::McpWait {
                wait: McpWait::Waiting { .. }
            }
        )
    })
    .await;
    rig.handle.ops.send(Op::Interrupt).unwrap();
    let events = rig.turn_events().await;
    assert!(
        matches!(
            events.last(),
            Some(Event::TurnAborted { message, .. }) if message.contains("waiting for MCP servers")
        ),
        "{events:?}"
    );
    assert!(rig.server.requests().is_empty());
}
