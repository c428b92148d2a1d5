//! Subagents through the engine: a scripted model on a loopback Anthropic
//! server, whose requests are told apart by their first user message (a
//! child's names its task). The parent plans three items and starts two
//! explore children on item 2 in one reply; each child plans and reads;
//! the parent's next request holds both answers. Also: the children
//! overlap in time, a child over its token budget stops and says so, a
//! child whose requests fail returns an error and the parent goes on, an
//! interrupt kills the children's commands, and the item the children
//! work for refuses completion while they run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::loopback;
use crate::support;
use crate::tui_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Turn, sse};
use loopback::{ClientOpts, FakeServer, ProviderWire, Recorded, Reply, plan};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use waypoint::agent::{Agent, AgentConfig, AgentHandle};
use waypoint::events::{ApprovalMode, Envelope, Event, Op, ThreadId, ToolStatus};
use waypoint::todo::PlanEdit;

type Wire = common::Anthropic;

/// Who sent a request: `"A"` or `"B"` for the child whose task names it,
/// else the parent (`"P"`).
fn sender(r: &Recorded) -> &'static str {
    let first = &r.messages()[0]["content"];
    let text = match first {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.contains("Task: Find A") {
        "A"
    } else if text.contains("Task: Find B") {
        "B"
    } else {
        "P"
    }
}

/// A server that plays each sender's own script, in order (a 500 once
/// a script has run out).
async fn scripted(scripts: HashMap<&'static str, Vec<Reply>>) -> FakeServer<Wire> {
    let seen: Mutex<HashMap<&'static str, usize>> = Mutex::new(HashMap::new());
    FakeServer::responding(Arc::new(move |r: &Recorded| {
        let who = sender(r);
        let mut seen = seen.lock().unwrap();
        let n = seen.entry(who).or_default();
        let reply = scripts.get(who).and_then(|s| s.get(*n)).cloned();
        *n += 1;
        reply.unwrap_or(Reply::Status {
            code: 500,
            headers: vec![],
            body: r#"{"type":"error","error":{"type":"api_error","message":"script ran out"}}"#
                .into(),
        })
    }))
    .await
}

/// `reply` after a model's pause: long enough for two children's
/// requests to overlap if, and only if, they run at the same time.
fn late(reply: Reply) -> Reply {
    Reply::Late {
        delay: Duration::from_millis(250),
        reply: Box::new(reply),
    }
}

fn task(description: &str, agent: &str) -> Value {
    json!({"description": description, "prompt": format!("Look in the workspace and report on {description}."), "agent": agent})
}

/// A child's script: plan, read its file, finish the plan, report.
fn child(name: &str) -> Vec<Reply> {
    let file = format!("{}.txt", name.to_lowercase());
    vec![
        late(sse(Turn::tool(
            "todo_write",
            plan(&[
                (&format!("Look for {name}"), "in_progress"),
                (&format!("Report {name}"), "pending"),
            ]),
        ))),
        late(sse(Turn::tool("read_file", json!({"path": file})))),
        late(sse(Turn::tool(
            "todo_write",
            plan(&[
                (&format!("Look for {name}"), "completed"),
                (&format!("Report {name}"), "completed"),
            ]),
        ))),
        late(sse(Turn::text(&format!(
            "Report {name}: {file} line 1 holds it."
        )))),
    ]
}

/// A child's script whose request `step` takes `ms` to be answered.
fn slowed(name: &str, step: usize, ms: u64) -> Vec<Reply> {
    let mut script = child(name);
    script[step] = Reply::Late {
        delay: Duration::from_millis(ms),
        reply: Box::new(script[step].clone()),
    };
    script
}

const ITEMS: [&str; 3] = ["Read the layout", "Explore the code", "Write the summary"];

fn parent_plan(statuses: [&str; 3]) -> Value {
    plan(&[
        (ITEMS[0], statuses[0]),
        (ITEMS[1], statuses[1]),
        (ITEMS[2], statuses[2]),
    ])
}

/// The parent: plan, start two explore tasks on item 2, finish.
fn parent(tasks: Turn) -> Vec<Reply> {
    vec![
        sse(Turn::tool(
            "todo_write",
            parent_plan(["in_progress", "pending", "pending"]),
        )),
        sse(Turn {
            tools: std::iter::once((
                "todo_write".to_string(),
                parent_plan(["completed", "in_progress", "pending"]),
            ))
            .chain(tasks.tools)
            .collect(),
            ..Turn::default()
        }),
        sse(Turn::tool(
            "todo_write",
            parent_plan(["completed", "completed", "in_progress"]),
        )),
        sse(Turn::tool(
            "todo_write",
            parent_plan(["completed", "completed", "completed"]),
        )),
        sse(Turn::text("All done.")),
    ]
}

/// Two explore tasks (sent after the plan moves to item 2).
fn two_tasks() -> Turn {
    Turn::default()
        .with_tool("task", task("Find A", "explore"))
        .with_tool("task", task("Find B", "explore"))
}

struct Run {
    server: FakeServer<Wire>,
    handle: AgentHandle,
    _dir: tempfile::TempDir,
}

impl Run {
    fn submit(&self, text: &str) {
        self.handle
            .ops
            .send(Op::Submit { text: text.into() })
            .unwrap();
    }
}

async fn start(scripts: HashMap<&'static str, Vec<Reply>>, config: AgentConfig) -> Run {
    let server = scripted(scripts).await;
    let (dir, workspace) = support::workspace::Fixture::new().into_parts();
    std::fs::write(dir.path().join("a.txt"), "A is here\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "B is here\n").unwrap();
    let client = Wire::client(&server.url, &ClientOpts::default());
    let handle = Agent::builder(client, workspace)
        .config(config)
        .spawn()
        .expect("engine");
    Run {
        server,
        handle,
        _dir: dir,
    }
}

/// Every envelope until the root thread's turn ends.
async fn root_turn(events: &mut UnboundedReceiver<Envelope>) -> Vec<Envelope> {
    let mut out = Vec::new();
    loop {
        let envelope = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("engine went quiet for 30 s")
            .expect("engine stopped");
        let end = envelope.thread.is_root()
            && matches!(
                envelope.event,
                Event::TurnComplete { .. } | Event::TurnAborted { .. }
            );
        out.push(envelope);
        if end {
            return out;
        }
    }
}

fn of(envelopes: &[Envelope], thread: ThreadId) -> Vec<&Event> {
    envelopes
        .iter()
        .filter(|e| e.thread == thread)
        .map(|e| &e.event)
        .collect()
}

/// The tool results the parent's `n`th request carried back.
fn results_in(server: &FakeServer<Wire>, n: usize) -> Vec<String> {
    let parent: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| sender(r) == "P")
        .collect();
    parent[n]
        .last_tool_results()
        .iter()
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn explore_scripts() -> HashMap<&'static str, Vec<Reply>> {
    HashMap::from([
        ("P", parent(two_tasks())),
        ("A", child("A")),
        ("B", child("B")),
    ])
}

/// Children A and B each made their four requests, and the spans of
/// their requests overlap (they ran at the same time).
fn assert_children_overlap(requests: &[Recorded]) {
    let span = |who: &str| {
        let times: Vec<Instant> = requests
            .iter()
            .filter(|r| sender(r) == who)
            .map(|r| r.at)
            .collect();
        assert_eq!(times.len(), 4, "{who} made its four requests");
        (*times.iter().min().unwrap(), *times.iter().max().unwrap())
    };
    let (a, b) = (span("A"), span("B"));
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "the children's requests overlap: A {a:?}, B {b:?}"
    );
}

/// A hook on calls no longer makes them run one at a time: with a
/// `PreToolUse` hook on `task`, the two children of one reply still run
/// at the same time, and the hook saw both calls before they ran.
#[tokio::test]
async fn two_children_run_together_while_a_pre_tool_use_hook_sees_both() {
    use waypoint::hooks::{Hook, HookEvent, HookOrigin, HookSet, Matcher};
    use waypoint::tools::ToolConfig;
    let logs = support::sandbox::outside_hidden("hooked-parallel");
    let log = logs.path().join("pre.log");
    let event = HookEvent::PreToolUse;
    let hooks = HookSet::new(vec![Hook {
        event,
        matcher: Matcher::new("task", event.subject()).unwrap(),
        command: format!("cat >> '{0}'; echo >> '{0}'", log.display()),
        timeout: Duration::from_secs(10),
        origin: HookOrigin::Config("config.toml".into()),
    }]);
    let config = AgentConfig {
        tools: ToolConfig {
            hooks: Arc::new(hooks),
            ..ToolConfig::default()
        },
        ..AgentConfig::default()
    };
    let mut run = start(explore_scripts(), config).await;
    run.submit("Explore A and B");
    let envelopes = root_turn(&mut run.handle.events).await;
    let root = of(&envelopes, ThreadId::ROOT);
    assert!(
        matches!(root.last(), Some(Event::TurnComplete { .. })),
        "{root:?}"
    );
    let results = results_in(&run.server, 2);
    assert!(results[1].starts_with("Report A: "), "{}", results[1]);
    assert!(results[2].starts_with("Report B: "), "{}", results[2]);

    // The hook saw each task call once, with its input.
    let seen = std::fs::read_to_string(&log).unwrap();
    let seen: Vec<Value> = seen
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let descriptions: Vec<&str> = seen
        .iter()
        .filter_map(|v| v["tool_input"]["description"].as_str())
        .collect();
    assert_eq!(descriptions, ["Find A", "Find B"], "{seen:?}");

    // Both ran at the same time: the children's requests overlap.
    assert_children_overlap(&run.server.requests());
}

#[tokio::test]
async fn two_explore_children_plan_run_together_and_report_to_the_parent() {
    let mut run = start(explore_scripts(), AgentConfig::default()).await;
    run.submit("Explore A and B");
    let envelopes = root_turn(&mut run.handle.events).await;
    let root = of(&envelopes, ThreadId::ROOT);
    assert!(
        matches!(root.last(), Some(Event::TurnComplete { .. })),
        "{root:?}"
    );

    // Both answers, each with its account, in the parent's next request.
    let results = results_in(&run.server, 2);
    assert_eq!(results.len(), 3, "todo_write and two tasks: {results:?}");
    assert!(
        results[1].starts_with("Report A: a.txt line 1 holds it.\n\n[subagent: 3 tool calls · "),
        "{}",
        results[1]
    );
    assert!(
        results[2].starts_with("Report B: b.txt line 1 holds it.\n\n[subagent: 3 tool calls · "),
        "{}",
        results[2]
    );

    // The children ran at the same time: their requests overlap.
    let requests = run.server.requests();
    assert_children_overlap(&requests);
    // An explore child is offered only reading tools and its plan.
    let a_request = requests.iter().find(|r| sender(r) == "A").unwrap();
    let mut offered: Vec<&str> = a_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    offered.sort_unstable();
    assert_eq!(
        offered,
        ["glob", "grep", "read_file", "todo_read", "todo_write"]
    );
    // It never sees the parent's conversation.
    assert!(!a_request.body.to_string().contains("Explore A and B"));

    // Each child is a thread of its own, addressed to the call that started it.
    let calls: Vec<String> = root
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallBegin { id, name, .. } if name == "task" => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    for (n, call) in calls.iter().enumerate() {
        let thread = envelopes
            .iter()
            .find(|e| e.parent_call.as_deref() == Some(call))
            .map(|e| e.thread)
            .expect("the child's events");
        assert!(!thread.is_root());
        let child = of(&envelopes, thread);
        let plans: Vec<usize> = child
            .iter()
            .filter_map(|e| match e {
                Event::PlanUpdated { items, .. } => Some(items.len()),
                _ => None,
            })
            .collect();
        assert_eq!(plans, [2, 2], "child {n} planned twice");
        assert!(
            matches!(child.last(), Some(Event::TurnComplete { .. })),
            "{child:?}"
        );
        assert!(root.iter().any(|e| matches!(e, Event::TaskDone { id, child, tool_calls: 3, .. } if id == call && *child == thread)));
    }

    // The ledger: item 2 is charged with the parent's requests made while
    // it was in progress and every request of both children.
    let stats = root
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::PlanStats { items, .. } => Some(items.clone()),
            _ => None,
        })
        .expect("plan stats");
    let item2 = stats.iter().find(|s| s.content == ITEMS[1]).unwrap();
    let per_request = 100;
    // The parent's third request (made while item 2 was in progress) and
    // the children's eight.
    assert_eq!(item2.input_tokens, 9 * per_request, "{item2:?}");
    // The parent's todo_write and two tasks, and the children's six calls.
    assert_eq!(item2.tool_calls, 9, "{item2:?}");
}

#[tokio::test]
async fn a_child_over_its_token_budget_stops_and_says_so() {
    let mut config = AgentConfig::default();
    // Each request costs 142 tokens: the second one reaches the limit.
    config.tools.task.max_tokens = 200;
    let mut run = start(explore_scripts(), config).await;
    run.submit("Explore");
    let envelopes = root_turn(&mut run.handle.events).await;
    assert!(matches!(
        of(&envelopes, ThreadId::ROOT).last(),
        Some(Event::TurnComplete { .. })
    ));
    let results = results_in(&run.server, 2);
    for result in &results[1..] {
        assert!(
            result.contains("[subagent stopped: it reached its token limit (284 of 200, [task] max_tokens); the above is what it had."),
            "{result}"
        );
    }
    let a_requests = run
        .server
        .requests()
        .iter()
        .filter(|r| sender(r) == "A")
        .count();
    assert_eq!(a_requests, 2, "the child stopped at its limit");
}

#[tokio::test]
async fn a_child_at_its_request_limit_names_the_config_key_not_the_flag() {
    let mut config = AgentConfig::default();
    // One request each: the children stop before their second.
    config.tools.task.max_turns = 1;
    let mut run = start(explore_scripts(), config).await;
    run.submit("Explore");
    let envelopes = root_turn(&mut run.handle.events).await;
    assert!(matches!(
        of(&envelopes, ThreadId::ROOT).last(),
        Some(Event::TurnComplete { .. })
    ));
    let results = results_in(&run.server, 2);
    for result in &results[1..] {
        assert!(
            result.contains("[subagent stopped: it reached its request limit (1, [task] max_turns); the above is what it had."),
            "{result}"
        );
        assert!(!result.contains("--max-turns"), "{result}");
        assert!(!result.contains("resume to go on"), "{result}");
    }
}

#[tokio::test]
async fn a_child_whose_requests_fail_returns_an_error_and_the_parent_goes_on() {
    let failing = vec![Reply::Status {
        code: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad child request"}}"#.into(),
    }];
    let scripts = HashMap::from([
        ("P", parent(two_tasks())),
        ("A", failing),
        ("B", child("B")),
    ]);
    let mut run = start(scripts, AgentConfig::default()).await;
    run.submit("Explore");
    let envelopes = root_turn(&mut run.handle.events).await;
    let root = of(&envelopes, ThreadId::ROOT);
    assert!(
        matches!(root.last(), Some(Event::TurnComplete { .. })),
        "the parent finished: {root:?}"
    );
    let ends: Vec<ToolStatus> = root
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { name, status, .. } if name == "task" => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [ToolStatus::Error, ToolStatus::Ok]);
    let results = results_in(&run.server, 2);
    assert!(
        results[1].starts_with("Error: the subagent failed: "),
        "{}",
        results[1]
    );
    assert!(results[1].contains("bad child request"), "{}", results[1]);
    assert!(results[2].starts_with("Report B"), "{}", results[2]);
}

#[tokio::test]
async fn the_item_children_work_for_refuses_completion_while_they_run() {
    // The children take their time; meanwhile the user ticks item 2.
    let scripts = HashMap::from([
        ("P", parent(two_tasks())),
        ("A", slowed("A", 0, 1500)),
        ("B", slowed("B", 0, 1500)),
    ]);
    let mut run = start(scripts, AgentConfig::default()).await;
    run.submit("Explore");
    // Wait until both children have started.
    let mut seen = Vec::new();
    while seen
        .iter()
        .filter(|e: &&Envelope| !e.thread.is_root() && matches!(e.event, Event::TurnStarted { .. }))
        .count()
        < 2
    {
        seen.push(run.handle.events.recv().await.expect("engine"));
    }
    let edit = PlanEdit::Status {
        n: 2,
        status: waypoint::todo::TodoStatus::Completed,
    };
    run.handle
        .ops
        .send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit,
        })
        .unwrap();
    let rest = root_turn(&mut run.handle.events).await;
    let refusal = rest
        .iter()
        .find_map(|e| match &e.event {
            Event::Error { message, .. } if message.contains("cannot be completed") => {
                Some(message.clone())
            }
            _ => None,
        })
        .expect("the edit was refused");
    assert_eq!(
        refusal,
        "The plan was not changed: item 2 (\"Explore the code\") cannot be completed while 2 subagents started for it still run; complete it once they have returned."
    );
}

#[tokio::test]
async fn an_interrupt_kills_both_childrens_commands() {
    let dir_marker = "37.125";
    let sleeper = |name: &str| {
        vec![
            sse(Turn::tool(
                "bash",
                json!({"command": format!("sleep {dir_marker} && echo {name}")}),
            )),
            sse(Turn::text("never")),
        ]
    };
    let tasks = Turn::default()
        .with_tool("task", task("Find A", "general"))
        .with_tool("task", task("Find B", "general"));
    let scripts = HashMap::from([
        ("P", parent(tasks)),
        ("A", sleeper("A")),
        ("B", sleeper("B")),
    ]);
    let config = AgentConfig {
        approval: ApprovalMode::Yolo,
        ..AgentConfig::default()
    };
    let mut run = start(scripts, config).await;
    run.submit("Go");
    // Until a child's command runs (the other's waits its turn to run one).
    loop {
        let e = run.handle.events.recv().await.expect("engine");
        if !e.thread.is_root()
            && matches!(&e.event, Event::ToolCallBegin { name, .. } if name == "bash")
        {
            break;
        }
    }
    let running = || {
        std::process::Command::new("pgrep")
            .args(["-f", dir_marker])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
            .unwrap_or(0)
    };
    // The call began; its command is started a moment later.
    let deadline = Instant::now() + Duration::from_secs(10);
    while running() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(running() >= 1, "a child's command runs");
    run.handle.ops.send(Op::Interrupt).unwrap();
    let rest = root_turn(&mut run.handle.events).await;
    let root = of(&rest, ThreadId::ROOT);
    assert!(
        matches!(root.last(), Some(Event::TurnAborted { .. })),
        "{root:?}"
    );
    let task_ends: Vec<(&str, ToolStatus)> = root
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd {
                name,
                status,
                output,
                ..
            } if name == "task" => Some((output.as_str(), *status)),
            _ => None,
        })
        .collect();
    assert_eq!(task_ends.len(), 2, "{task_ends:?}");
    for (output, status) in &task_ends {
        assert_eq!(*status, ToolStatus::Interrupted, "{output}");
        assert!(
            output.contains("The subagent was interrupted by the user"),
            "{output}"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while running() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(running(), 0, "no command is left running");
}

#[tokio::test]
async fn the_nested_plan_shows_both_children_on_screen() {
    // Each child's second request takes its time: the screen is taken
    // while both have planned and wait for their model.
    let scripts = HashMap::from([
        ("P", parent(two_tasks())),
        ("A", slowed("A", 1, 1500)),
        ("B", slowed("B", 1, 1500)),
    ]);
    let mut run = start(scripts, AgentConfig::default()).await;
    let clock = tui_support::Clock::new();
    let mut app = tui_support::app(&clock);
    app.status.engine.arrived();
    run.submit("Explore A and B");
    let mut asking = std::collections::HashSet::new();
    while asking.len() < 2 {
        let mut envelope = run.handle.events.recv().await.expect("engine");
        if !envelope.thread.is_root() && matches!(envelope.event, Event::RoundStarted { round: 2 })
        {
            asking.insert(envelope.thread);
        }
        // The screen shows each call's real duration: fixed here, as a
        // busy machine may take a millisecond more.
        if let Event::ToolCallEnd { duration_ms, .. } = &mut envelope.event {
            *duration_ms = 0;
        }
        waypoint::tui::update::on_envelope(&mut app, envelope, clock.at(1.0));
    }
    let now = clock.at(5.0);
    for (w, h) in [(80, 24), (120, 40)] {
        let terminal = tui_support::screen(&mut app, w, h, now);
        insta::assert_snapshot!(format!("two_children_nested_{w}x{h}"), terminal.backend());
    }
    let text = tui_support::screen_text(&mut app, 80, 24, now);
    // Each task's cell says what its subagent ran last.
    assert_eq!(text.matches("→ todo_write 2 items").count(), 2, "{text}");
    assert!(
        text.contains("↳ explore · Find A · 0/2 · thinking · 0:04 · 142 tok"),
        "{text}"
    );
    assert!(
        text.contains("↳ explore · Find B · 0/2 · thinking · 0:04 · 142 tok"),
        "{text}"
    );
    // The rest of the turn: the children finish, the parent moves on and
    // the nested plans leave with the item they worked for.
    for envelope in root_turn(&mut run.handle.events).await {
        waypoint::tui::update::on_envelope(&mut app, envelope, clock.at(9.0));
    }
    let text = tui_support::screen_text(&mut app, 120, 40, clock.at(10.0));
    assert!(!text.contains("↳ explore"), "{text}");
    assert!(text.contains("[x] Write the summary"), "{text}");
    // Selecting the item they worked for shows each child's account.
    app.root.plan.view.selected = Some("2".into());
    app.root.sync_plan();
    let text = tui_support::screen_text(&mut app, 80, 24, clock.at(10.0));
    assert!(
        text.contains("↳ explore · Find A · 2/2 · done · 0:08 · 568 tok"),
        "{text}"
    );
    app.root.plan.view.selected = None;
    app.root.sync_plan();
    // /cost lists each child, its requests counted in the totals.
    tui_support::type_text(&mut app, "/cost", clock.at(10.0));
    let _ = waypoint::tui::update::on_key(
        &mut app,
        tui_support::key(ratatui::crossterm::event::KeyCode::Enter),
        clock.at(10.0),
    );
    let text = tui_support::screen_text(&mut app, 120, 40, clock.at(10.0));
    assert!(text.contains("Tokens so far: ↑1300 in"), "{text}");
    assert!(text.contains("Subagents (counted above):"), "{text}");
    assert!(
        text.contains("explore · Find A: 3 tool calls · 568 tok"),
        "{text}"
    );
    // The task's entry in the Tools pane expands to its subagent's calls.
    let at = app
        .root
        .trace
        .entries
        .iter()
        .position(|t| t.summary.line == "explore · Find A")
        .unwrap();
    app.focus = waypoint::tui::state::Focus::Trace;
    app.root.trace.selected = Some(at);
    app.root.trace.expanded = true;
    let text = tui_support::screen_text(&mut app, 120, 40, clock.at(10.0));
    assert!(text.contains("subagent (thread 1): 3 calls"), "{text}");
    assert!(text.contains("✔ read_file a.txt · "), "{text}");
    assert!(text.contains("Report A: a.txt line 1 holds it."), "{text}");
}

#[tokio::test]
async fn in_ask_mode_a_wide_fan_out_is_put_to_the_user_first() {
    let mut config = AgentConfig {
        approval: ApprovalMode::Ask,
        ..AgentConfig::default()
    };
    config.tools.task.ask_above = 1;
    let mut run = start(explore_scripts(), config).await;
    run.submit("Explore");
    let question = loop {
        let e = run.handle.events.recv().await.expect("engine");
        if let Event::ApprovalRequested { id, reason, .. } = e.event {
            break (id, reason);
        }
    };
    let waypoint::events::ApprovalReason::Tool { question: words } = &question.1 else {
        panic!("{question:?}");
    };
    assert_eq!(
        words,
        "Start 2 subagents at once? (more than [task] ask_above = 1; each spends tokens of its own)"
    );
    run.handle
        .ops
        .send(Op::Approve {
            id: question.0,
            decision: waypoint::events::Decision::Refuse {
                reason: Some("not now".into()),
            },
        })
        .unwrap();
    let rest = root_turn(&mut run.handle.events).await;
    assert!(matches!(
        of(&rest, ThreadId::ROOT).last(),
        Some(Event::TurnComplete { .. })
    ));
    assert!(rest.iter().all(|e| e.thread.is_root()), "no child started");
    let results = results_in(&run.server, 2);
    for result in &results[1..] {
        assert!(result.contains("not now"), "{result}");
    }
}

#[tokio::test]
async fn a_background_task_reports_later_and_its_item_waits_for_it() {
    let background = json!({"description": "Find A", "prompt": "Look for A.", "agent": "explore", "background": true});
    let scripts = HashMap::from([
        (
            "P",
            vec![
                sse(Turn::tool(
                    "todo_write",
                    parent_plan(["in_progress", "pending", "pending"]),
                )),
                sse(Turn::tool(
                    "todo_write",
                    parent_plan(["completed", "in_progress", "pending"]),
                )
                .with_tool("task", background)),
                // While the child runs: completing its item is refused.
                sse(Turn::tool(
                    "todo_write",
                    parent_plan(["completed", "completed", "pending"]),
                )),
                sse(Turn::text("Waiting for the helper.")),
                sse(Turn::tool(
                    "todo_write",
                    parent_plan(["completed", "completed", "completed"]),
                )),
                sse(Turn::text("All done.")),
            ],
        ),
        ("A", child("A")),
    ]);
    let mut run = start(scripts, AgentConfig::default()).await;
    run.submit("Explore");
    let envelopes = root_turn(&mut run.handle.events).await;
    let root = of(&envelopes, ThreadId::ROOT);
    assert!(
        matches!(root.last(), Some(Event::TurnComplete { open_items: 0, .. })),
        "{root:?}"
    );
    // The call answered at once; the parent went on while the child ran.
    let started = &results_in(&run.server, 2)[1];
    assert!(
        started.starts_with("Started in the background (thread 1)."),
        "{started}"
    );
    let refused = &results_in(&run.server, 3)[0];
    assert!(
        refused.contains("item 2 (\"Explore the code\") cannot be completed while 1 subagent started for it still runs"),
        "{refused}"
    );
    // The parent's turn waited for the report, which came as a message.
    let parent: Vec<Recorded> = run
        .server
        .requests()
        .into_iter()
        .filter(|r| sender(r) == "P")
        .collect();
    assert_eq!(parent.len(), 6);
    let note = parent[4].messages().last().unwrap().to_string();
    assert!(
        note.contains("finished:]\\nReport A: a.txt line 1 holds it."),
        "{note}"
    );
    let child_last = run
        .server
        .requests()
        .iter()
        .filter(|r| sender(r) == "A")
        .map(|r| r.at)
        .max()
        .unwrap();
    assert!(
        parent[2].at < child_last,
        "the parent made a request while the child ran"
    );
    // What the child spent is charged to the item it worked for.
    assert!(root.iter().any(
        |e| matches!(e, Event::TaskDone { item: Some(item), tool_calls: 3, .. } if item == "2")
    ));
}

#[tokio::test]
async fn a_general_childs_command_is_put_to_the_user_and_the_answer_reaches_it() {
    let asking = |name: &str| {
        vec![
            sse(Turn::tool(
                "bash",
                json!({"command": format!("echo {name} > {}.out", name.to_lowercase())}),
            )),
            sse(Turn::text(&format!("Report {name}: wrote it."))),
        ]
    };
    let tasks = Turn::default()
        .with_tool("task", task("Find A", "general"))
        .with_tool("task", task("Find B", "general"));
    let scripts = HashMap::from([("P", parent(tasks)), ("A", asking("A")), ("B", asking("B"))]);
    let config = AgentConfig {
        approval: ApprovalMode::Ask,
        ..AgentConfig::default()
    };
    let mut run = start(scripts, config).await;
    run.submit("Write both");
    let mut answered = Vec::new();
    let clock = tui_support::Clock::new();
    let mut app = tui_support::app(&clock);
    while answered.len() < 2 {
        let e = run.handle.events.recv().await.expect("engine");
        waypoint::tui::update::on_envelope(&mut app, e.clone(), clock.at(1.0));
        if let Event::ApprovalRequested { id, .. } = &e.event {
            assert!(!e.thread.is_root(), "a child asks: {e:?}");
            if answered.is_empty() {
                // The prompt says whose command it is.
                let text = tui_support::screen_text(&mut app, 120, 40, clock.at(1.0));
                assert!(text.contains("For the subagent general · Find "), "{text}");
                assert!(text.contains("Run this command?"), "{text}");
            }
            // A's command is allowed, B's refused.
            let decision = if answered.is_empty() {
                waypoint::events::Decision::Once
            } else {
                waypoint::events::Decision::Refuse {
                    reason: Some("not B".into()),
                }
            };
            run.handle
                .ops
                .send(Op::Approve {
                    id: id.clone(),
                    decision,
                })
                .unwrap();
            answered.push(e.thread);
            let _ = app.overlays.approvals.pop();
        }
    }
    let rest = root_turn(&mut run.handle.events).await;
    assert!(matches!(
        of(&rest, ThreadId::ROOT).last(),
        Some(Event::TurnComplete { .. })
    ));
    assert_ne!(
        answered[0], answered[1],
        "each child asked for its own command"
    );
    let outs: Vec<bool> = ["a.out", "b.out"]
        .iter()
        .map(|f| run._dir.path().join(f).exists())
        .collect();
    assert_eq!(
        outs.iter().filter(|x| **x).count(),
        1,
        "one command ran, one was refused: {outs:?}"
    );
    let results = results_in(&run.server, 2);
    assert!(
        results[1..].iter().all(|r| r.starts_with("Report ")),
        "{results:?}"
    );
}

/// The user edits a subagent's plan while it works: the edit is a user
/// revision sent from the child's thread, the child's model hears of it at
/// its next step, and once the child has ended an edit addressed to it is
/// refused.
#[tokio::test]
async fn the_user_edits_a_working_childs_plan_and_the_child_hears_of_it() {
    // Child A's second request waits, so the edit lands while it works.
    let scripts = HashMap::from([
        ("P", parent(two_tasks())),
        ("A", slowed("A", 1, 1500)),
        ("B", child("B")),
    ]);
    let mut run = start(scripts, AgentConfig::default()).await;
    run.submit("Explore");
    let mut seen: Vec<Envelope> = Vec::new();
    let a = loop {
        let envelope = tokio::time::timeout(Duration::from_secs(30), run.handle.events.recv())
            .await
            .expect("engine went quiet")
            .expect("engine stopped");
        let thread = envelope.thread;
        let a_planned = matches!(&envelope.event,
            Event::PlanUpdated { items, .. } if items.iter().any(|i| i.content == "Look for A"));
        seen.push(envelope);
        if a_planned && !thread.is_root() {
            break thread;
        }
    };
    run.handle
        .ops
        .send(Op::EditPlan {
            thread: a,
            edit: PlanEdit::parse_command("add Double-check A").unwrap(),
        })
        .unwrap();
    let rest = root_turn(&mut run.handle.events).await;
    let by_user = rest.iter().find(|e| {
        matches!(&e.event, Event::PlanUpdated { author: waypoint::todo::Author::User, items, .. }
            if items.iter().any(|i| i.content == "Double-check A"))
    });
    let by_user = by_user.unwrap_or_else(|| panic!("no user revision of A's plan: {rest:?}"));
    assert_eq!(by_user.thread, a, "the revision comes from A's thread");
    let root_plan = rest.iter().any(|e| {
        e.thread.is_root()
            && matches!(&e.event, Event::PlanUpdated { items, .. }
                if items.iter().any(|i| i.content == "Double-check A"))
    });
    assert!(!root_plan, "the root plan was not touched");
    // A's third request (after its read) tells its model.
    let a_requests: Vec<Recorded> = run
        .server
        .requests()
        .into_iter()
        .filter(|r| sender(r) == "A")
        .collect();
    let told = a_requests[2].messages().last().unwrap().to_string();
    assert!(
        told.contains("The user changed the plan") && told.contains("Double-check A"),
        "{told}"
    );
    // A has ended: an edit addressed to it is refused.
    run.handle
        .ops
        .send(Op::EditPlan {
            thread: a,
            edit: PlanEdit::Clear,
        })
        .unwrap();
    let refused = loop {
        let envelope = tokio::time::timeout(Duration::from_secs(10), run.handle.events.recv())
            .await
            .expect("no answer to the edit")
            .expect("engine stopped");
        if let Event::Error { message, .. } = envelope.event {
            break message;
        }
    };
    assert_eq!(
        refused,
        format!("The plan was not changed: no agent {a} is at work.")
    );
}
