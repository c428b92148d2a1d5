//! `bash` through an editor's terminal (an ACP client's `terminal/*` with
//! `acp_terminal = "editor"`), driven by the engine with a scripted model:
//! in yolo mode the command runs in the editor's terminal, named by its
//! call, its output streamed as the call's live output and returned to
//! the model with its exit code, and the terminal released; a background
//! job stays Waypoint's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use scripted_support::{scenario, start_with, stop, tool_results, turn_end};
use serde_json::json;
use waypoint::agent::{AgentConfig, SessionSetup};
use waypoint::events::{ApprovalMode, Event, Op};
use waypoint::session::SessionStore;
use waypoint::tools::editor::{EditorTerminal, TerminalExit, TerminalOutput, TerminalRun};

/// A terminal that prints `lines` one per read, then exits 2.
#[derive(Debug, Default)]
struct Terminal {
    lines: Mutex<Vec<String>>,
    printed: Mutex<String>,
    calls: Mutex<Vec<String>>,
}

impl Terminal {
    fn log(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
}

impl EditorTerminal for Terminal {
    fn create<'a>(&'a self, run: TerminalRun<'a>) -> BoxFuture<'a, Result<String, String>> {
        let (thread, id) = run.call.unwrap();
        self.log(format!("create `{}` for {thread}/{id}", run.command));
        Box::pin(async { Ok("t1".to_string()) })
    }
    fn output<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<TerminalOutput, String>> {
        let mut printed = self.printed.lock().unwrap();
        let mut lines = self.lines.lock().unwrap();
        if !lines.is_empty() {
            printed.push_str(&lines.remove(0));
        }
        let exit = lines.is_empty().then_some(TerminalExit {
            code: Some(2),
            signal: None,
        });
        let out = TerminalOutput {
            output: printed.clone(),
            truncated: false,
            exit,
        };
        Box::pin(async move { Ok(out) })
    }
    fn wait<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<TerminalExit, String>> {
        Box::pin(async { Err("not here".to_string()) })
    }
    fn kill<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.log("kill".to_string());
        Box::pin(async { Ok(()) })
    }
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.log(format!("release {id}"));
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn an_approved_command_runs_in_the_editors_terminal() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let terminal = Arc::new(Terminal::default());
    *terminal.lines.lock().unwrap() = vec!["one\n".into(), "two\n".into()];
    let mut config = AgentConfig {
        approval: ApprovalMode::Yolo,
        ..AgentConfig::default()
    };
    config.tools.bash.editor = Some(terminal.clone());
    let model = scenario(json!([
        {"tool_calls": [{"name": "bash", "input": {"command": "make check"}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo job", "run_in_background": true}}]},
        {"text": "Done."}
    ]));
    let mut h = start_with(model.clone(), ws.path(), config, SessionSetup::New(store));
    h.ops
        .send(Op::Submit {
            text: "check".into(),
        })
        .unwrap();
    let mut live = String::new();
    let mut first_call = None;
    loop {
        let envelope = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match &envelope.event {
            Event::ToolCallBegin { id, .. } if first_call.is_none() => {
                first_call = Some(id.clone());
            }
            Event::ToolCallOutputDelta { chunk, .. } => live.push_str(chunk),
            e if envelope.thread.is_root() && turn_end(e) => break,
            _ => {}
        }
    }
    assert_eq!(live, "one\ntwo\n", "streamed as the call's live output");
    let results: Vec<String> = {
        let requests = model.requests.lock().unwrap();
        tool_results(requests.last().unwrap())
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    };
    assert_eq!(results[0], "one\ntwo\n[exit code: 2]");
    assert!(
        results[1].starts_with("Started background job"),
        "{results:?}"
    );
    let calls = terminal.calls.lock().unwrap().clone();
    let call = first_call.unwrap();
    assert_eq!(
        calls,
        [
            format!("create `make check` for 0/{call}"),
            "release t1".into()
        ],
        "the job never reached the editor"
    );
    stop(h).await;
}
