//! MCP through the engine: the published `server-everything`, configured
//! as a user configures it, started in the background; a scripted model on
//! a loopback Anthropic server calls its tools by their `mcp__` names and
//! the next request carries each result; approvals and rules gate its
//! tools; a server that never gets ready delays nothing. Skipped (with a
//! note) where the server is not installed, failed under `.ci/run`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;
use crate::support;

use std::collections::BTreeMap;

use engine_support::{Rig, assert_completed, tool_ends, tool_names};
use loopback::{Answer, ClientOpts, ProviderWire, Recorded};
use serde_json::json;
use waypoint::agent::AgentConfig;
use waypoint::events::{ApprovalMode, Decision, Event, McpStatus, Op, ToolStatus};
use waypoint::mcp::McpServerConfig;

type Wire = common::Anthropic;

fn everything() -> Option<BTreeMap<String, McpServerConfig>> {
    let program = support::mcp::reference_server("mcp-server-everything")?;
    let config = McpServerConfig {
        command: Some(program.to_string_lossy().into_owned()),
        ..McpServerConfig::default()
    };
    Some(BTreeMap::from([("everything".to_string(), config)]))
}

/// An engine's settings in approval `mode` with `servers`.
fn with_servers(mode: ApprovalMode, servers: &BTreeMap<String, McpServerConfig>) -> AgentConfig {
    let mut config = AgentConfig {
        approval: mode,
        ..AgentConfig::default()
    };
    config.tools.mcp.servers = servers.clone();
    config
}

/// A rig whose engine has `servers`, once every one of them is ready.
async fn ready_rig(replies: Vec<loopback::Reply>, config: AgentConfig) -> Rig<Wire> {
    let servers = config.tools.mcp.servers.len();
    let mut rig = Rig::<Wire>::with(replies, config, ClientOpts::default()).await;
    for _ in 0..servers {
        let events = rig
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
                events.last(),
                Some(Event::McpServer {
                    status: McpStatus::Ready { .. },
                    ..
                })
            ),
            "{events:?}"
        );
    }
    rig
}

/// The tool results the request `r` carries in its last message.
fn results(r: &Recorded) -> Vec<(String, bool)> {
    let messages = r.body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            (
                b["content"].as_str().unwrap_or_default().to_string(),
                b["is_error"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_model_calls_mcp_tools_and_the_next_request_carries_each_result() {
    let Some(servers) = everything() else {
        return;
    };
    let replies = vec![
        Wire::reply(Answer::tool(
            "mcp__everything__echo",
            json!({"message": "hello mcp"}),
        )),
        Wire::reply(Answer::tool(
            "mcp__everything__get-sum",
            json!({"a": 2, "b": 40}),
        )),
        Wire::reply(Answer::tool(
            "mcp__everything__get-sum",
            json!({"a": "two"}),
        )),
        Wire::reply(Answer::tool("mcp__everything__get-tiny-image", json!({}))),
        Wire::text("Done."),
    ];
    let mut config = AgentConfig::default();
    config.tools.mcp.servers = servers.clone();
    let mut rig = ready_rig(replies, config).await;
    rig.submit("Use the MCP tools.");
    let events = rig.turn_events().await;
    assert_completed(&events);
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 4, "{ends:?}");
    assert_eq!(ends[0].1, ToolStatus::Ok, "{ends:?}");
    assert_eq!(ends[2].1, ToolStatus::Error, "{ends:?}");

    let requests = rig.server.requests();
    assert_eq!(requests.len(), 5);
    // The server's tools come after the built-in ones (the cache of the
    // earlier ones survives).
    let names = tool_names(&requests[0]);
    let first_mcp = names.iter().position(|n| n.starts_with("mcp__")).unwrap();
    assert!(names[..first_mcp].contains(&"todo_write".to_string()));
    assert!(
        names[first_mcp..]
            .iter()
            .all(|n| n.starts_with("mcp__everything__")),
        "{names:?}"
    );
    assert!(names.contains(&"mcp__everything__echo".to_string()));

    let echo = results(&requests[1]);
    assert!(echo[0].0.contains("hello mcp") && !echo[0].1, "{echo:?}");
    let sum = results(&requests[2]);
    assert!(sum[0].0.contains("42") && !sum[0].1, "{sum:?}");
    let refused = results(&requests[3]);
    assert!(refused[0].1, "an error result: {refused:?}");
    let image = results(&requests[4]);
    assert!(
        image[0].0.contains("png") && image[0].0.contains("it follows the results"),
        "{image:?}"
    );
    // The picture itself, after the result, as an Anthropic image block.
    let messages = requests[4].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(last[1]["type"], "image", "{last:?}");
    assert_eq!(last[1]["source"]["media_type"], "image/png");
    assert!(
        last[1]["source"]["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("iVBOR"))
    );
}

#[tokio::test]
async fn ask_mode_asks_for_a_tool_that_may_change_things_and_rules_decide_first() {
    let Some(servers) = everything() else {
        return;
    };
    // `toggle-simulated-logging` does not say it only reads: ask mode asks;
    // `echo` does: it runs without asking.
    let toggle = "mcp__everything__toggle-simulated-logging";
    let replies = vec![
        Wire::reply(Answer::tool(toggle, json!({}))),
        Wire::reply(Answer::tool(
            "mcp__everything__echo",
            json!({"message": "read"}),
        )),
        Wire::reply(Answer::tool(toggle, json!({}))),
        Wire::text("Done."),
    ];
    let config = with_servers(ApprovalMode::Ask, &servers);
    let mut rig = ready_rig(replies, config).await;
    rig.submit("Toggle it.");
    let events = rig
        .until(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    let Some(Event::ApprovalRequested {
        id, name, summary, ..
    }) = events.last()
    else {
        panic!("no approval asked: {events:?}");
    };
    assert_eq!(name, toggle);
    // The user sees the server, the tool and the arguments; the call's
    // begin (recorded) does not carry them twice.
    assert_eq!(
        summary.detail,
        waypoint::events::ToolDetail::Call {
            server: "everything".into(),
            tool: "toggle-simulated-logging".into(),
            args: "{}".into(),
        }
    );
    let begun = events.iter().find_map(|e| match e {
        Event::ToolCallBegin { summary, .. } => Some(summary.detail.clone()),
        _ => None,
    });
    assert!(
        matches!(&begun, Some(waypoint::events::ToolDetail::Call { args, .. }) if args.is_empty()),
        "{begun:?}"
    );
    rig.handle
        .ops
        .send(Op::Approve {
            id: id.clone(),
            decision: Decision::Always,
        })
        .unwrap();
    let events = rig.turn_events().await;
    assert_completed(&events);
    // "Always" covered the second call of the same tool; echo never asked.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. })),
        "{events:?}"
    );
    assert_eq!(tool_ends(&events).len(), 3);

    // A deny rule naming the server's tools refuses them in every mode.
    let replies = vec![
        Wire::reply(Answer::tool(
            "mcp__everything__echo",
            json!({"message": "no"}),
        )),
        Wire::text("Understood."),
    ];
    let mut config = with_servers(ApprovalMode::Yolo, &servers);
    config.tools.rules.deny = vec!["mcp__everything__*".into()];
    let mut rig = ready_rig(replies, config).await;
    rig.submit("Echo.");
    let events = rig.turn_events().await;
    let ends = tool_ends(&events);
    assert_eq!(ends[0].1, ToolStatus::Error, "{ends:?}");
    assert!(
        ends[0]
            .2
            .contains("Blocked by a deny rule: mcp__everything__*"),
        "{ends:?}"
    );

    // An allow rule lets a tool that may change things run without asking;
    // read-only mode refuses it.
    let replies = vec![
        Wire::reply(Answer::tool(toggle, json!({}))),
        Wire::text("ok"),
    ];
    let mut config = with_servers(ApprovalMode::Ask, &servers);
    config.tools.rules.allow = vec![toggle.into()];
    let mut rig = ready_rig(replies, config).await;
    rig.submit("Toggle.");
    let events = rig.turn_events().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    assert_eq!(tool_ends(&events)[0].1, ToolStatus::Ok);

    let replies = vec![
        Wire::reply(Answer::tool(toggle, json!({}))),
        Wire::text("ok"),
    ];
    let config = with_servers(ApprovalMode::ReadOnly, &servers);
    let mut rig = ready_rig(replies, config).await;
    rig.submit("Toggle.");
    let events = rig.turn_events().await;
    let ends = tool_ends(&events);
    assert!(ends[0].2.contains("read-only mode"), "{ends:?}");
}

#[tokio::test]
async fn a_server_that_is_never_ready_delays_nothing_and_one_that_fails_says_why() {
    // One server that never answers `initialize`, one that exits at once.
    let marker = format!("waypoint-mcp-silent-{}", std::process::id());
    let silent = McpServerConfig {
        command: Some("bash".into()),
        args: vec!["-c".into(), format!("exec -a {marker} sleep 30")],
        startup_timeout_sec: Some(0.5),
        ..McpServerConfig::default()
    };
    let broken = McpServerConfig {
        command: Some("bash".into()),
        args: vec!["-c".into(), "echo 'missing token' >&2; exit 1".into()],
        ..McpServerConfig::default()
    };
    let mut config = AgentConfig::default();
    config.tools.mcp.servers =
        BTreeMap::from([("silent".into(), silent), ("broken".into(), broken)]);
    let replies = vec![Wire::text("Hello."), Wire::text("Again.")];
    let mut rig = Rig::<Wire>::with(replies, config, ClientOpts::default()).await;
    // The first turn runs at once: nothing waits for the servers.
    rig.submit("Hi.");
    let events = rig.turn_events().await;
    assert_completed(&events);
    let names = tool_names(&rig.server.requests()[0]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    // The broken one fails with its stderr; the silent one is slow, not failed.
    let mut seen: Vec<(String, McpStatus)> = events
        .iter()
        .filter_map(|e| match e {
            Event::McpServer { name, status } => Some((name.clone(), status.clone())),
            _ => None,
        })
        .collect();
    while !seen
        .iter()
        .any(|(n, s)| n == "broken" && matches!(s, McpStatus::Failed { .. }))
        || !seen
            .iter()
            .any(|(n, s)| n == "silent" && matches!(s, McpStatus::Slow { .. }))
    {
        let more = rig.until(|e| matches!(e, Event::McpServer { .. })).await;
        if let Some(Event::McpServer { name, status }) = more.last() {
            seen.push((name.clone(), status.clone()));
        }
    }
    let failed = seen
        .iter()
        .find_map(|(n, s)| match s {
            McpStatus::Failed { error, stderr } if n == "broken" => Some((error, stderr)),
            _ => None,
        })
        .unwrap();
    assert!(failed.0.contains("did not initialize"), "{failed:?}");
    assert!(failed.1.contains("missing token"), "{failed:?}");
    assert!(
        !seen
            .iter()
            .any(|(n, s)| n == "silent" && matches!(s, McpStatus::Failed { .. }))
    );
    // And the session goes on.
    rig.submit("Again?");
    assert_completed(&rig.turn_events().await);
    // The engine ends while the silent server is still starting: the
    // server is stopped, not left behind.
    assert!(
        support::proc::named_alive(&marker),
        "the silent server runs until the engine ends"
    );
    rig.handle.ops.send(Op::Quit).unwrap();
    (&mut rig.handle.task).await.unwrap();
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        !support::proc::named_alive(&marker)
    });
    assert!(gone, "{marker} outlived the engine");
}
