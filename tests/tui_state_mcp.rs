//! MCP servers in the TUI: the status line, notices, `/mcp` and its
//! actions, and how an MCP call is named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::events::{Event, Op};
use waypoint::tui::update::{self, Effect};

/// MCP servers as the TUI shows them: `mcp 1/2` on the status line while
/// one is not ready, a notice when one is ready or fails (with its
/// stderr), and `/mcp` listing each with its tools and their token cost.
#[test]
fn mcp_servers_show_on_the_status_line_in_notices_and_in_slash_mcp() {
    use waypoint::events::McpStatus;
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    let server = |name: &str, status: McpStatus| Event::McpServer {
        name: name.into(),
        status,
    };
    update::on_event(&mut a, server("everything", McpStatus::Starting), now);
    update::on_event(&mut a, server("github", McpStatus::Starting), now);
    assert!(screen_text(&mut a, 120, 20, now).contains("mcp 0/2"));
    update::on_event(
        &mut a,
        server(
            "everything",
            McpStatus::Ready {
                tools: 13,
                schema_tokens: 2_400,
            },
        ),
        now,
    );
    update::on_event(
        &mut a,
        server(
            "github",
            McpStatus::Failed {
                error: "did not initialize".into(),
                stderr: "GITHUB_TOKEN is not set".into(),
            },
        ),
        now,
    );
    // A ready server that lists its tools again (a `list_changed`) is not
    // said ready a second time; a changed list is said as such.
    let relisted = |tools: usize| {
        server(
            "everything",
            McpStatus::Ready {
                tools,
                schema_tokens: 2_400,
            },
        )
    };
    update::on_event(&mut a, relisted(13), now);
    let shown = screen_text(&mut a, 120, 20, now);
    assert!(shown.contains("mcp 1/2"), "{shown}");
    let told: Vec<String> = notices(&a).into_iter().map(String::from).collect();
    let readies = told
        .iter()
        .filter(|n| n.contains("MCP server everything ready"))
        .count();
    assert_eq!(readies, 1, "{told:#?}");
    assert!(
        told.iter()
            .any(|n| n.contains("MCP server everything ready: 13 tools"))
    );
    update::on_event(&mut a, relisted(14), now);
    let changed = notices(&a);
    assert!(
        changed.contains(&"MCP server everything now offers 14 tools."),
        "{changed:#?}"
    );
    update::on_event(&mut a, relisted(13), now);
    assert!(told.iter().any(|n| {
        n.contains("github failed: did not initialize (stderr: GITHUB_TOKEN is not set)")
    }));
    type_text(&mut a, "/mcp", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    let listed = notices(&a).last().cloned().unwrap_or_default();
    assert!(
        listed.contains("everything · ready · 13 tools · ~2.4k tokens per request"),
        "{listed}"
    );
    assert!(
        listed.contains("github · failed: did not initialize"),
        "{listed}"
    );
    // Once every server is ready the status line says nothing of them.
    update::on_event(
        &mut a,
        server(
            "github",
            McpStatus::Ready {
                tools: 2,
                schema_tokens: 300,
            },
        ),
        now,
    );
    assert!(!screen_text(&mut a, 120, 20, now).contains("mcp "));
}

/// `/mcp ACTION` sends the action to the engine; a project server waiting
/// for approval is a warning that says how to approve it, and `/mcp` says
/// what it would run and which mode the tools are sent in.
#[test]
fn slash_mcp_actions_go_to_the_engine_and_a_waiting_project_server_says_how_to_approve() {
    use waypoint::events::{McpAction, McpStatus};
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::McpServer {
            name: "db".into(),
            status: McpStatus::NeedsApproval {
                command: "npx -y my-db-server".into(),
            },
        },
        now,
    );
    assert!(notices(&a).iter().any(|n| n.contains(
        "This project's .mcp.json declares the MCP server db (npx -y my-db-server). It was not started: type /mcp approve"
    )));
    assert!(screen_text(&mut a, 120, 20, now).contains("mcp 0/1"));
    update::on_event(
        &mut a,
        Event::McpTools {
            offered: 3,
            deferred: 410,
            tokens: 90_000,
            budget: 20_000,
        },
        now,
    );
    type_text(&mut a, "/mcp", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    let listed = notices(&a).last().cloned().unwrap_or_default();
    assert!(
        listed.contains(
            "db · not started: this project's .mcp.json runs `npx -y my-db-server` (/mcp approve)"
        ),
        "{listed}"
    );
    assert!(listed.contains("Search mode: the MCP tools' definitions (~90.0k tokens) are over the budget (~20.0k tokens"), "{listed}");
    for (typed, action) in [
        ("/mcp approve", McpAction::Approve),
        (
            "/mcp reconnect db",
            McpAction::Reconnect { name: "db".into() },
        ),
        ("/mcp enable db", McpAction::Enable { name: "db".into() }),
        ("/mcp disable db", McpAction::Disable { name: "db".into() }),
    ] {
        type_text(&mut a, typed, now);
        assert_eq!(
            update::on_key(&mut a, key(KeyCode::Enter), now),
            vec![Effect::Send(Op::Mcp { action })],
            "{typed}"
        );
    }
    type_text(&mut a, "/mcp reconnect", now);
    assert_eq!(update::on_key(&mut a, key(KeyCode::Enter), now), vec![]);
    assert!(
        notices(&a)
            .last()
            .is_some_and(|n| n.starts_with("Usage: /mcp"))
    );
}

/// An MCP call's cell and trace entry name it by its server and tool, not
/// by the `mcp__` name the model used, and show its arguments.
#[test]
fn an_mcp_call_is_named_by_its_server_and_tool() {
    use waypoint::events::{ToolDetail, ToolSummary};
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::ToolCallBegin {
            id: "t1".into(),
            name: "mcp__everything__get-sum".into(),
            summary: ToolSummary {
                line: r#"{"a":19,"b":23}"#.into(),
                detail: ToolDetail::Call {
                    server: "everything".into(),
                    tool: "get-sum".into(),
                    args: String::new(),
                },
            },
            input: serde_json::json!({"a": 19, "b": 23}),
            plan_item_id: None,
            plan_item: None,
        },
        now,
    );
    let shown = screen_text(&mut a, 120, 30, now);
    assert!(
        shown.contains(r#"everything · get-sum {"a":19,"b":23}"#),
        "{shown}"
    );
    assert!(!shown.contains("mcp__everything__get-sum"), "{shown}");
}
