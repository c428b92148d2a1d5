//! Plan mode (issue 45, part 1): the harness, not the prompt, keeps
//! anything from changing. Through the engine on a scripted model: reads
//! and the plan run; `write_file` and `edit_file` are refused; a command
//! runs in the sandbox with nothing writable (the workspace, the temp
//! folder and `sandbox.writable` folders stay as they were), is asked
//! where there is no sandbox and refused headless; an MCP tool runs only
//! when its server marks it read-only; only `explore` subagents run. And
//! through the real binary, headless with `--approval plan`. Each refusal
//! tells the model it is in plan mode and to propose the plan instead, and
//! so does a note when the user switches into plan mode (or out of it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use scripted_support::{Recording, plan, scenario, stop, tool_results};
use serde_json::{Value, json};
use waypoint::agent::{Agent, AgentConfig, FixedClient, SessionSetup};
use waypoint::events::{ApprovalMode, ApprovalReason, Decision, Event, Op};
use waypoint::llm::{BoxFuture, ModelClient};
use waypoint::safety::{Sandbox, landlock_abi};
use waypoint::tools::{
    Access, Origin, Tool, ToolCtx, ToolOutput, ToolRegistry, ToolSpec, ToolSummary, Workspace,
};

/// What every plan-mode refusal begins with.
const PLAN_MODE: &str = "Refused: Waypoint is in plan mode (read-only)";

/// Plan mode, with the sandbox (writing `extra` too in other modes) where
/// the kernel has Landlock and `sandbox` is asked for.
fn config(ws: &Path, extra: &[&Path], sandbox: bool) -> AgentConfig {
    let mut config = AgentConfig {
        approval: ApprovalMode::Plan,
        nag_every: 0,
        ..AgentConfig::default()
    };
    if sandbox && landlock_abi().is_some() {
        let extra: Vec<_> = extra.iter().map(|p| p.to_path_buf()).collect();
        config.tools.sandbox = Some(Sandbox::for_workspace(ws, &extra, true));
    }
    config
}

/// An MCP server's tool, read-only as its server says or not; `ran` is
/// set when it runs.
struct McpTool {
    name: &'static str,
    read_only: bool,
    ran: Arc<AtomicBool>,
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        let access = if self.read_only {
            Access::Read
        } else {
            Access::External
        };
        ToolSpec {
            origin: Origin::Mcp {
                server: "deploys".into(),
            },
            ..ToolSpec::builtin(
                self.name,
                "A server's tool.",
                json!({"type": "object"}),
                access,
            )
        }
    }
    fn summarize(&self, _input: &Value) -> ToolSummary {
        ToolSummary::default()
    }
    fn run<'a>(&'a self, _input: &'a Value, _ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        self.ran.store(true, Ordering::SeqCst);
        Box::pin(async { ToolOutput::ok("ran") })
    }
}

/// One turn of `turns` (the first makes the calls) on an engine with
/// `config` and the standard tools plus `extra`; every approval request
/// answered with `answer`. The events (of every thread) and the results
/// the model read after the calls.
async fn run(
    ws: &Path,
    config: AgentConfig,
    extra: Vec<Arc<dyn Tool>>,
    turns: Value,
    answer: Decision,
) -> (Vec<Event>, Vec<(String, String)>) {
    let client: Arc<Recording> = scenario(turns);
    let model: Arc<dyn ModelClient> = client.clone();
    let mut tools = ToolRegistry::builder().standard();
    for tool in extra {
        tools = tools.with(tool);
    }
    let mut h = Agent::builder(model.clone(), Workspace::new(ws).unwrap())
        .factory(Arc::new(FixedClient(model)))
        .config(config)
        .tools(tools.build())
        .session(SessionSetup::Off)
        .spawn()
        .unwrap();
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let mut events = Vec::new();
    loop {
        let envelope = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("an event within 30 s")
            .expect("engine alive");
        let root = envelope.thread.is_root();
        let event = envelope.event;
        if let Event::ApprovalRequested { id, .. } = &event {
            let decision = answer.clone();
            h.ops
                .send(Op::Approve {
                    id: id.clone(),
                    decision,
                })
                .unwrap();
        }
        let end = root && scripted_support::turn_end(&event);
        events.push(event);
        if end {
            break;
        }
    }
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    // The root's request after the calls: the last one holding results.
    let results = requests
        .iter()
        .rev()
        .map(|r| tool_results(r))
        .find(|r| !r.is_empty())
        .unwrap_or_default();
    (events, results)
}

fn asked(events: &[Event]) -> Vec<(String, ApprovalReason)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequested { name, reason, .. } => Some((name.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plan_mode_refuses_every_change_and_lets_reads_and_the_plan_run() {
    let ws = support::sandbox::outside_hidden("plan-ws-");
    let extra = support::sandbox::outside_hidden("plan-extra-");
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let sandbox = landlock_abi().is_some();
    let calls = json!([
        {"name": "read_file", "input": {"path": "a.txt"}},
        {"name": "glob", "input": {"pattern": "*.txt"}},
        {"name": "todo_write", "input": plan(&[("Read the code", "in_progress"), ("Propose", "pending")])},
        {"name": "write_file", "input": {"path": "b.txt", "content": "new\n"}},
        {"name": "edit_file", "input": {"path": "a.txt", "old_text": "one", "new_text": "two"}},
        {"name": "bash", "input": {"command": "echo x > c.txt"}},
        {"name": "bash", "input": {"command": format!("echo x > {}/d.txt", extra.path().display())}},
        {"name": "bash", "input": {"command": "cat a.txt"}}
    ]);
    let turns = json!([{ "tool_calls": calls }, {"text": "Here is the plan."}]);
    let config = config(ws.path(), &[extra.path()], true);
    let refuse = Decision::Refuse {
        reason: Some("not in this test".into()),
    };
    let (events, results) = run(ws.path(), config, Vec::new(), turns, refuse).await;
    assert_eq!(results.len(), 8, "{results:#?}");
    let out = |i: usize| results[i].1.as_str();
    // Reads and the plan run.
    assert!(out(0).contains("one"), "{}", out(0));
    assert!(out(1).contains("a.txt"), "{}", out(1));
    assert!(!out(2).starts_with("Refused"), "{}", out(2));
    // File changes are refused by the gate, with what to do instead.
    for i in [3, 4] {
        assert!(out(i).starts_with(PLAN_MODE), "{}", out(i));
        assert!(
            out(i).contains("propose the plan with todo_write"),
            "{}",
            out(i)
        );
    }
    if sandbox {
        // Commands run, confined: nothing asked, a read works, writes fail
        // and the model is told why.
        assert!(asked(&events).is_empty(), "{:?}", asked(&events));
        for i in [5, 6] {
            assert!(out(i).contains(PLAN_MODE), "{}", out(i));
            assert!(!out(i).contains("blocked by the sandbox"), "{}", out(i));
        }
        assert!(out(7).starts_with("one"), "{}", out(7));
    } else {
        eprintln!("no Landlock: plan mode asks before commands here");
        assert_eq!(asked(&events).len(), 3, "{:?}", asked(&events));
    }
    // Nothing changed.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "one\n"
    );
    for file in ["b.txt", "c.txt"] {
        assert!(!ws.path().join(file).exists(), "{file}");
    }
    assert!(!extra.path().join("d.txt").exists());
}

#[tokio::test]
async fn a_workspace_in_the_temp_folder_is_not_written_through_the_private_tmp() {
    if !support::sandbox::world("plan mode in a workspace under /tmp") {
        return;
    }
    // Under /tmp: the sandbox's world brings it back into its own /tmp.
    let ws = tempfile::tempdir().unwrap();
    let calls = json!([
        {"name": "bash", "input": {"command": "echo x > c.txt"}},
        {"name": "bash", "input": {"command": format!("echo x > {}/d.txt", ws.path().display())}}
    ]);
    let turns = json!([{ "tool_calls": calls }, {"text": "done"}]);
    let config = config(ws.path(), &[], true);
    let (events, results) = run(
        ws.path(),
        config,
        Vec::new(),
        turns,
        Decision::Refuse { reason: None },
    )
    .await;
    assert!(asked(&events).is_empty());
    for (_, out) in &results {
        assert!(out.contains(PLAN_MODE), "{out}");
    }
    assert!(!ws.path().join("c.txt").exists());
    assert!(!ws.path().join("d.txt").exists());
}

#[tokio::test]
async fn without_a_sandbox_a_command_is_asked_in_the_app_and_refused_headless() {
    let ws = support::sandbox::outside_hidden("plan-nosandbox-");
    let calls = json!([{"name": "bash", "input": {"command": "echo x > c.txt"}}]);
    let turns = || json!([{ "tool_calls": calls }, {"text": "done"}]);
    // The app: the user is asked whether to run it unconfined.
    let (events, results) = run(
        ws.path(),
        config(ws.path(), &[], false),
        Vec::new(),
        turns(),
        Decision::Refuse { reason: None },
    )
    .await;
    match asked(&events).as_slice() {
        [(name, ApprovalReason::Tool { question })] => {
            assert_eq!(name, "bash");
            assert!(question.contains("plan mode"), "{question}");
        }
        other => panic!("one question about bash: {other:?}"),
    }
    assert!(
        results[0].1.starts_with("Refused by the user"),
        "{results:?}"
    );
    // Headless: nobody to ask, refused with plan mode's reason.
    let mut headless = config(ws.path(), &[], false);
    headless.tools.bash.unattended = true;
    let (events, results) = run(ws.path(), headless, Vec::new(), turns(), Decision::Once).await;
    assert!(asked(&events).is_empty(), "{:?}", asked(&events));
    assert!(results[0].1.starts_with(PLAN_MODE), "{results:?}");
    assert!(!ws.path().join("c.txt").exists());
}

#[tokio::test]
async fn a_hooks_allow_does_not_run_a_command_unconfined_without_asking() {
    use waypoint::hooks::{Hook, HookEvent, HookOrigin, HookSet, Matcher};
    let ws = support::sandbox::outside_hidden("plan-hook-");
    let event = HookEvent::PreToolUse;
    let allow = r#"cat > /dev/null; printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#;
    let hooks = HookSet::new(vec![Hook {
        event,
        matcher: Matcher::new("bash", event.subject()).unwrap(),
        command: allow.into(),
        timeout: Duration::from_secs(10),
        origin: HookOrigin::Config("config.toml".into()),
    }]);
    let mut config = config(ws.path(), &[], false);
    config.tools.hooks = Arc::new(hooks);
    let calls = json!([{"name": "bash", "input": {"command": "echo x > c.txt"}}]);
    let turns = json!([{ "tool_calls": calls }, {"text": "done"}]);
    let refuse = Decision::Refuse { reason: None };
    let (events, results) = run(ws.path(), config, Vec::new(), turns, refuse).await;
    assert!(
        matches!(asked(&events).as_slice(), [(_, ApprovalReason::Tool { question })] if question.contains("plan mode")),
        "{:?}",
        asked(&events)
    );
    assert!(
        results[0].1.starts_with("Refused by the user"),
        "{results:?}"
    );
    assert!(!ws.path().join("c.txt").exists());
}

#[tokio::test]
async fn an_mcp_tool_runs_only_when_its_server_marks_it_read_only() {
    let ws = support::sandbox::outside_hidden("plan-mcp-");
    let lookup = Arc::new(AtomicBool::new(false));
    let deploy = Arc::new(AtomicBool::new(false));
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(McpTool {
            name: "mcp__deploys__status",
            read_only: true,
            ran: lookup.clone(),
        }),
        Arc::new(McpTool {
            name: "mcp__deploys__deploy",
            read_only: false,
            ran: deploy.clone(),
        }),
    ];
    let calls = json!([
        {"name": "mcp__deploys__status", "input": {}},
        {"name": "mcp__deploys__deploy", "input": {}}
    ]);
    let turns = json!([{ "tool_calls": calls }, {"text": "done"}]);
    // An ask rule naming it asks in other modes; here it is refused all the
    // same (were it asked, the user's yes would run it).
    let mut config = config(ws.path(), &[], true);
    config.tools.rules.ask = vec!["mcp__deploys__deploy".into()];
    let (events, results) = run(ws.path(), config, tools, turns, Decision::Once).await;
    assert!(asked(&events).is_empty(), "{:?}", asked(&events));
    assert_eq!(results[0].1, "ran");
    assert!(results[1].1.starts_with(PLAN_MODE), "{}", results[1].1);
    assert!(results[1].1.contains("readOnlyHint"), "{}", results[1].1);
    assert!(lookup.load(Ordering::SeqCst));
    assert!(!deploy.load(Ordering::SeqCst), "the refused tool never ran");
}

#[tokio::test]
async fn only_explore_subagents_run_in_plan_mode() {
    let ws = support::sandbox::outside_hidden("plan-task-");
    let task = |agent: &str| json!({"name": "task", "input": {"description": "Look around", "prompt": "Find the entry point.", "agent": agent}});
    // The general task is refused before it starts; the explore one's
    // child answers from the second turn.
    let turns = json!([
        {"tool_calls": [task("general"), task("explore")]},
        {"text": "The entry point is main.rs."},
        {"text": "done"}
    ]);
    let (_, results) = run(
        ws.path(),
        config(ws.path(), &[], true),
        Vec::new(),
        turns,
        Decision::Once,
    )
    .await;
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(results[0].1.starts_with(PLAN_MODE), "{}", results[0].1);
    assert!(results[0].1.contains("explore"), "{}", results[0].1);
    assert!(
        results[1].1.contains("The entry point is main.rs."),
        "{}",
        results[1].1
    );
}

#[test]
fn the_binary_in_plan_mode_refuses_writes_edits_and_writing_commands() {
    let home = support::sandbox::outside_hidden("plan-home-");
    let ws = support::sandbox::outside_hidden("plan-bin-ws-");
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let calls = json!([
        {"name": "write_file", "input": {"path": "b.txt", "content": "new\n"}},
        {"name": "edit_file", "input": {"path": "a.txt", "old_text": "one", "new_text": "two"}},
        {"name": "bash", "input": {"command": "echo x > f"}}
    ]);
    let scenario = home.path().join("scenario.json");
    let turns =
        json!({"turns": [{"text": "Looking.", "tool_calls": calls}, {"text": "The plan."}]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let args = [
        "-p",
        "plan it",
        "--approval",
        "plan",
        "--output-format",
        "jsonl",
    ];
    let mut args = args.to_vec();
    args.extend(["--scenario", scenario.to_str().unwrap()]);
    let out = support::run_waypoint(home.path(), ws.path(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ends: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_call_end")
        .map(|e| {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            (name, e["output"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    let names: Vec<&str> = ends.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["write_file", "edit_file", "bash"], "{stdout}");
    for (name, output) in &ends {
        assert!(output.contains(PLAN_MODE), "{name}: {output}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!ws.path().join("b.txt").exists());
    assert!(!ws.path().join("f").exists());
}

#[tokio::test]
async fn the_model_is_told_when_the_user_enters_and_leaves_plan_mode() {
    let ws = support::sandbox::outside_hidden("plan-switch-");
    let client = scenario(json!([{"text": "one"}, {"text": "two"}, {"text": "three"}]));
    let mut config = config(ws.path(), &[], false);
    config.approval = ApprovalMode::Ask;
    let mut h = scripted_support::start_with(client.clone(), ws.path(), config, SessionSetup::Off);
    for (mode, text) in [
        (Some(ApprovalMode::Plan), "plan it"),
        (Some(ApprovalMode::Ask), "go ahead"),
        (None, "and more"),
    ] {
        if let Some(mode) = mode {
            h.ops.send(Op::SetApproval { mode }).unwrap();
        }
        h.ops.send(Op::Submit { text: text.into() }).unwrap();
        scripted_support::until(&mut h.events, scripted_support::turn_end).await;
    }
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    let said = |i: usize| format!("{:?}", requests[i]);
    assert!(
        said(0).contains("switched Waypoint to plan mode"),
        "{}",
        said(0)
    );
    assert!(said(0).contains("propose the plan with todo_write"));
    assert!(
        said(1).contains("left plan mode: the approval mode is now ask"),
        "{}",
        said(1)
    );
    // Told once each.
    assert_eq!(
        said(2).matches("plan mode").count(),
        said(1).matches("plan mode").count()
    );
}
