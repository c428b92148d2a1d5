//! `waypoint --approval yolo acp` with `acp_terminal = "editor"`, driven
//! over stdio by a client written here: when the client offers terminals
//! (`clientCapabilities.terminal`), the model's `bash` call runs in one of
//! the client's (`terminal/create` with `bash -c`, its output read, the
//! terminal released) and the call shows it; when it does not, the
//! command runs in Waypoint's own runner and no `terminal/*` request comes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

use crate::cli_support::waypoint;
use crate::support::sandbox::outside_hidden;

/// The client's side of one `waypoint acp`.
struct Client {
    /// `None` once closed (Waypoint then stops).
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    /// The `terminal/*` requests Waypoint made, by method, with their params.
    terminal: Vec<(String, Value)>,
    /// The `tool_call_update`s the client was sent.
    updates: Vec<Value>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Reads until the answer to request `id`, answering Waypoint's
    /// requests as an editor with terminals does.
    async fn answer_of(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("a message within 30 s")
                .unwrap()
                .expect("waypoint still talking");
            let message: Value = serde_json::from_str(&line).unwrap();
            let method = message["method"].as_str().unwrap_or_default().to_string();
            if method.starts_with("terminal/") {
                self.terminal
                    .push((method.clone(), message["params"].clone()));
                let result = match method.as_str() {
                    "terminal/create" => json!({"terminalId": "term-1"}),
                    "terminal/output" => json!({
                        "output": "printed in the editor\n",
                        "truncated": false,
                        "exitStatus": {"exitCode": 0}
                    }),
                    "terminal/wait_for_exit" => json!({"exitStatus": {"exitCode": 0}}),
                    _ => json!({}),
                };
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                self.send(answer).await;
            } else if method == "session/update" {
                let update = &message["params"]["update"];
                if update["sessionUpdate"] == "tool_call_update" {
                    self.updates.push(update.clone());
                }
            } else if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }
}

/// Runs one prompt whose model calls `bash` once, the client offering
/// terminals or not; the client's record of it.
async fn prompt_with(terminals: bool) -> Client {
    let dir = outside_hidden("acp-terminal");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let scenario = dir.path().join("scenario.json");
    let turns = json!({"turns": [
        {"tool_calls": [{"name": "bash", "input": {"command": "echo run-by-waypoint"}}]},
        {"text": "Done."}
    ]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "acp_terminal = \"editor\"\n").unwrap();
    let mut cmd = waypoint(dir.path());
    cmd.env("WAYPOINT_CONFIG", &config)
        .arg("--scenario")
        .arg(&scenario)
        .args(["--approval", "yolo", "acp"])
        .current_dir(&ws)
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut client = Client {
        stdin: child.stdin.take(),
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
        terminal: Vec::new(),
        updates: Vec::new(),
    };
    let caps =
        json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": terminals});
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": caps}}))
        .await;
    client.answer_of(1).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": ws, "mcpServers": []}}))
        .await;
    let started = client.answer_of(2).await;
    let session = started["result"]["sessionId"].clone();
    assert!(session.is_string(), "{started}");
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "run it"}]}}),
        )
        .await;
    let ended = client.answer_of(3).await;
    assert_eq!(ended["result"]["stopReason"], "end_turn", "{ended}");
    drop(client.stdin.take());
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert_cwd(&client, &ws);
    client
}

/// Every `terminal/create` ran in the workspace.
fn assert_cwd(client: &Client, ws: &Path) {
    for (method, params) in &client.terminal {
        if method == "terminal/create" {
            let cwd = params["cwd"].as_str().unwrap();
            assert_eq!(
                Path::new(cwd).canonicalize().unwrap(),
                ws.canonicalize().unwrap()
            );
        }
    }
}

fn shows_terminal(update: &Value) -> bool {
    update["content"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "terminal" && c["terminalId"] == "term-1")
    })
}

#[tokio::test]
async fn a_client_offering_terminals_runs_the_command_in_one() {
    let client = prompt_with(true).await;
    let methods: Vec<&str> = client.terminal.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods.first(), Some(&"terminal/create"), "{methods:?}");
    assert_eq!(methods.last(), Some(&"terminal/release"), "{methods:?}");
    assert!(!methods.contains(&"terminal/kill"), "{methods:?}");
    let created = &client.terminal[0].1;
    assert_eq!(created["command"], "bash");
    assert_eq!(created["args"], json!(["-c", "echo run-by-waypoint"]));
    // The call shows the terminal as soon as it exists, and at its end.
    assert!(
        client.updates.iter().any(shows_terminal),
        "{:?}",
        client.updates
    );
    let last = client.updates.last().unwrap();
    assert_eq!(last["status"], "completed", "{last}");
    assert!(shows_terminal(last), "{last}");
    let text = serde_json::to_string(&client.updates).unwrap();
    assert!(!text.contains("run-by-waypoint\\n"), "not run by Waypoint");
}

#[tokio::test]
async fn a_client_without_terminals_gets_waypoints_runner() {
    let client = prompt_with(false).await;
    assert!(client.terminal.is_empty(), "{:?}", client.terminal);
    let text = serde_json::to_string(&client.updates).unwrap();
    assert!(text.contains("run-by-waypoint"), "{text}");
    assert!(!client.updates.iter().any(shows_terminal));
}
