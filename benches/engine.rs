//! Engine benchmarks (criterion): the plan store, the SSE decoder, a scripted
//! 50-turn session through the real agent loop, the Anthropic client
//! against an in-process loopback server for the 6-turn task of
//! `examples/loopback_anthropic.rs`, and configuration loading (the file
//! `benches/config.toml`). Sized to finish in about two minutes on a 2-core
//! machine: `cargo bench --bench engine`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use waypoint::agent::{Agent, AgentConfig};
use waypoint::config::{self, Inputs, Layer, ProviderKind, Source};
use waypoint::llm::anthropic::{AnthropicClient, AnthropicConfig, request_body};
use waypoint::llm::retry::RetryPolicy;
use waypoint::llm::scripted::{Scenario, ScriptedCall, ScriptedClient, ScriptedTurn};
use waypoint::llm::sse::SseDecoder;
use waypoint::llm::{ContentBlock, Message, ModelClient, ModelRequest, Role};
use waypoint::todo::TodoManager;
use waypoint::tools::{self, Workspace};

#[allow(dead_code)]
#[path = "../examples/loopback_anthropic.rs"]
mod loopback;
#[path = "support/task.rs"]
mod task;

// ---------------------------------------------------------------- plan

/// A plan of `n` items with item `active` in progress, those before it completed.
fn plan_json(n: usize, active: usize) -> Value {
    let todos: Vec<Value> = (0..n)
        .map(|i| {
            let status = match i.cmp(&active) {
                std::cmp::Ordering::Less => "completed",
                std::cmp::Ordering::Equal => "in_progress",
                std::cmp::Ordering::Greater => "pending",
            };
            json!({
                "content": format!("Implement step {i} of the feature"),
                "status": status,
                "activeForm": format!("Implementing step {i} of the feature"),
            })
        })
        .collect();
    Value::Array(todos)
}

/// The same plan as a Python literal string (single quotes), as some models send it.
fn plan_python(n: usize, active: usize) -> Value {
    let items: Vec<String> = (0..n)
        .map(|i| {
            let status = match i.cmp(&active) {
                std::cmp::Ordering::Less => "completed",
                std::cmp::Ordering::Equal => "in_progress",
                std::cmp::Ordering::Greater => "pending",
            };
            format!(
                "{{'content': 'Implement step {i} of the feature', 'status': '{status}', 'activeForm': 'Implementing step {i} of the feature'}}"
            )
        })
        .collect();
    Value::String(format!("[{}]", items.join(", ")))
}

fn bench_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in [10usize, 20] {
        let variants: Vec<Value> = (0..n).map(|a| plan_json(n, a)).collect();
        group.bench_with_input(BenchmarkId::new("update_render_json", n), &n, |b, _| {
            let mut plan = TodoManager::new();
            let mut k = 0;
            b.iter(|| {
                let diff = plan.update(&variants[k % variants.len()]).unwrap();
                k += 1;
                black_box(diff);
                black_box(plan.render())
            });
        });
        let py: Vec<Value> = (0..n).map(|a| plan_python(n, a)).collect();
        group.bench_with_input(BenchmarkId::new("update_render_pylit", n), &n, |b, _| {
            let mut plan = TodoManager::new();
            let mut k = 0;
            b.iter(|| {
                let diff = plan.update(&py[k % py.len()]).unwrap();
                k += 1;
                black_box(diff);
                black_box(plan.render())
            });
        });
    }
    group.finish();
}

// ---------------------------------------------------------------- SSE

fn sse_event(out: &mut String, data: Value) {
    let name = data["type"].as_str().unwrap_or("").to_string();
    out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
}

/// A ~100 KB Anthropic stream: long text in word-sized deltas, then a tool
/// call whose input arrives in 30-char pieces.
fn big_stream() -> String {
    let mut out = String::new();
    sse_event(
        &mut out,
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1000,"output_tokens":1}}}),
    );
    sse_event(
        &mut out,
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    let words = [
        "The ", "plan ", "has ", "three ", "steps; ", "I'll ", "start ", "with ", "the ",
        "parser, ", "then ", "the ", "tests ", "— ", "naïve ", "first. ",
    ];
    let mut w = 0;
    while out.len() < 70_000 {
        sse_event(
            &mut out,
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":words[w % words.len()]}}),
        );
        w += 1;
        if w % 40 == 0 {
            sse_event(&mut out, json!({"type":"ping"}));
        }
    }
    sse_event(&mut out, json!({"type":"content_block_stop","index":0}));
    sse_event(
        &mut out,
        json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}}),
    );
    let content: String = (0..400)
        .map(|i| format!("fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    let input = json!({"path": "src/gen.rs", "content": content}).to_string();
    let chars: Vec<char> = input.chars().collect();
    for piece in chars.chunks(30) {
        if out.len() >= 100_000 {
            break;
        }
        let s: String = piece.iter().collect();
        sse_event(
            &mut out,
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":s}}),
        );
    }
    sse_event(&mut out, json!({"type":"content_block_stop","index":1}));
    sse_event(
        &mut out,
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5000}}),
    );
    sse_event(&mut out, json!({"type":"message_stop"}));
    out
}

fn decode_in_chunks(bytes: &[u8], chunk: usize) -> usize {
    let mut decoder = SseDecoder::new();
    let mut events = 0;
    let mut data = 0;
    for piece in bytes.chunks(chunk) {
        for ev in decoder.feed(piece) {
            events += 1;
            data += ev.data.len();
        }
    }
    black_box(data);
    events
}

fn bench_sse(c: &mut Criterion) {
    let stream = big_stream();
    let bytes = stream.as_bytes();
    let expected = stream.matches("\n\n").count();
    assert_eq!(decode_in_chunks(bytes, bytes.len()), expected);
    assert_eq!(decode_in_chunks(bytes, 7), expected);
    let mut group = c.benchmark_group("sse_decode");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(bytes.len() as u64));
    for chunk in [1024usize, 7] {
        group.bench_with_input(BenchmarkId::new("chunk_bytes", chunk), &chunk, |b, &n| {
            b.iter(|| decode_in_chunks(black_box(bytes), n))
        });
    }
    group.finish();
}

// ---------------------------------------------------------------- scripted session

fn call(name: &str, input: Value) -> ScriptedCall {
    ScriptedCall {
        name: name.into(),
        input,
    }
}

fn turn_with(text: &str, calls: Vec<ScriptedCall>) -> ScriptedTurn {
    ScriptedTurn {
        text: text.into(),
        tool_calls: calls,
        delay_ms: 0,
    }
}

/// 50 assistant turns: a 10-item plan advanced every 5 turns, and for each
/// of 10 modules a write, a read, an edit and a glob; then a final answer.
/// No bash (process spawn would dominate). Every call succeeds and the
/// session is idempotent, so the workspace can be reused. With `checks`,
/// every item carries the check `true`, run as each item completes (what
/// evidence per item costs).
fn fifty_turn_scenario(checks: bool) -> Scenario {
    let todos = |active: usize| -> Value {
        let mut v = plan_json(10, active);
        if checks && let Some(items) = v.as_array_mut() {
            for item in items {
                item["check"] = json!("true");
            }
        }
        json!({ "todos": v })
    };
    let mut turns = Vec::new();
    for m in 0..10usize {
        let path = format!("src/module_{m}.rs");
        let body: String = (0..60)
            .map(|i| format!("pub fn item_{m}_{i}(x: u32) -> u32 {{ x + {i} }}\n"))
            .collect();
        turns.push(turn_with(
            &format!("Step {m}: updating the plan before the module."),
            vec![call("todo_write", todos(m))],
        ));
        turns.push(turn_with(
            "Writing the module.",
            vec![call("write_file", json!({"path": path, "content": body}))],
        ));
        turns.push(turn_with(
            "",
            vec![call(
                "read_file",
                json!({"path": path, "offset": 1, "limit": 80}),
            )],
        ));
        turns.push(turn_with(
            "Fixing the first function.",
            vec![call(
                "edit_file",
                json!({"path": path, "old_text": format!("item_{m}_0(x: u32) -> u32 {{ x + 0 }}"),
                       "new_text": format!("item_{m}_0(x: u32) -> u32 {{ x }}")}),
            )],
        ));
        turns.push(turn_with(
            "",
            vec![call("glob", json!({"pattern": "src/**/*.rs"}))],
        ));
    }
    // 50 tool turns so far; replace the last glob by the closing plan + the answer.
    turns.pop();
    turns.push(turn_with(
        "",
        vec![call("todo_write", todos(10))], // active == 10: everything completed
    ));
    turns.push(turn_with(
        "All ten modules are written, checked and fixed; the plan is complete.",
        vec![],
    ));
    assert_eq!(turns.len(), 51);
    // Keep it at 50 assistant turns: merge the first two plan+write turns.
    let first = turns.remove(1);
    turns[0].tool_calls.extend(first.tool_calls);
    assert_eq!(turns.len(), 50);
    Scenario {
        description: "50-turn benchmark session".into(),
        chunk_delay_ms: 0,
        turns,
        subagents: BTreeMap::new(),
    }
}

/// Runs one task from Submit to TurnComplete; returns (tool calls, tool errors).
async fn run_session(client: Arc<dyn ModelClient>, workspace: Workspace) -> (usize, usize) {
    let handle = Agent::builder(client, workspace).spawn().unwrap();
    task::run_task(handle, "Write the ten modules and keep the plan current.").await
}

fn current_thread_runtime() -> Runtime {
    // The same flavour the binary uses.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn bench_scripted_session(c: &mut Criterion) {
    let rt = current_thread_runtime();
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let scenario = fifty_turn_scenario(false);
    let checked = fifty_turn_scenario(true);
    let (calls, errors) = rt.block_on(run_session(
        Arc::new(ScriptedClient::new(scenario.clone())),
        workspace.clone(),
    ));
    assert_eq!((calls, errors), (50, 0), "every scripted call must succeed");

    // The same on tmpfs, where fsync is free: what is left is the engine.
    let shm = std::path::Path::new("/dev/shm");
    let shm_dir = shm
        .is_dir()
        .then(|| tempfile::tempdir_in(shm).ok())
        .flatten();
    let shm_workspace = shm_dir.as_ref().map(|d| Workspace::new(d.path()).unwrap());

    let mut group = c.benchmark_group("session");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    group.bench_function("scripted_50_turns", |b| {
        b.iter(|| {
            let client: Arc<dyn ModelClient> = Arc::new(ScriptedClient::new(scenario.clone()));
            rt.block_on(run_session(client, workspace.clone()))
        })
    });
    group.bench_function("scripted_50_turns_10_checks", |b| {
        b.iter(|| {
            let client: Arc<dyn ModelClient> = Arc::new(ScriptedClient::new(checked.clone()));
            rt.block_on(run_session(client, workspace.clone()))
        })
    });
    if let Some(ws) = &shm_workspace {
        group.bench_function("scripted_50_turns_tmpfs", |b| {
            b.iter(|| {
                let client: Arc<dyn ModelClient> = Arc::new(ScriptedClient::new(scenario.clone()));
                rt.block_on(run_session(client, ws.clone()))
            })
        });
    }
    group.finish();
}

// ---------------------------------------------------------------- request building

/// A conversation as it stands at the end of the 50-turn session: 101
/// messages, the tool inputs carrying file bodies, the results file listings.
fn long_conversation() -> Vec<Message> {
    let scenario = fifty_turn_scenario(false);
    let mut messages = vec![Message {
        role: Role::User,
        content: vec![ContentBlock::Text {
            text: "Write the ten modules and keep the plan current.".into(),
        }],
    }];
    for (t, turn) in scenario.turns.iter().enumerate() {
        let mut content = Vec::new();
        if !turn.text.is_empty() {
            content.push(ContentBlock::Text {
                text: turn.text.clone(),
            });
        }
        let mut results = Vec::new();
        for (n, call) in turn.tool_calls.iter().enumerate() {
            let id = format!("toolu_{t}_{n}");
            content.push(ContentBlock::ToolUse {
                id: id.clone(),
                name: call.name.clone(),
                input: (&call.input).into(),
            });
            let output = match call.name.as_str() {
                "read_file" => (1..=60)
                    .map(|i| format!("{i:>6}\tpub fn item_{t}_{i}(x: u32) -> u32 {{ x + {i} }}\n"))
                    .collect(),
                "glob" => (0..10).map(|m| format!("src/module_{m}.rs\n")).collect(),
                _ => "ok".to_string(),
            };
            results.push(ContentBlock::ToolResult {
                tool_use_id: id,
                content: output.into(),
                is_error: false,
            });
        }
        messages.push(Message {
            role: Role::Assistant,
            content,
        });
        if !results.is_empty() {
            messages.push(Message {
                role: Role::User,
                content: results,
            });
        }
    }
    messages
}

fn bench_request(c: &mut Criterion) {
    let messages = long_conversation();
    let system = AgentConfig::default().system_prompt;
    let tool_defs = tools::definitions();
    let request = ModelRequest {
        system: &system,
        messages: &messages,
        tools: &tool_defs,
        max_tokens: 8192,
        conversation: None,
        session: None,
    };
    let size = request_body("claude-sonnet-4-5", &request).unwrap().len();
    let mut group = c.benchmark_group("request_round_50");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Bytes(size as u64));
    // The Anthropic body of the last request of a 50-turn session, as bytes.
    group.bench_function("anthropic_body", |b| {
        b.iter(|| request_body("claude-sonnet-4-5", black_box(&request)).unwrap())
    });
    group.finish();
}

// ---------------------------------------------------------------- Anthropic over loopback

fn anthropic_client(url: &str) -> AnthropicClient {
    AnthropicClient::new(AnthropicConfig {
        api_key: "dummy".into(),
        base_url: url.into(),
        model: "claude-sonnet-4-5".into(),
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        idle_timeout: Duration::from_secs(10),
    })
    .unwrap()
}

fn bench_anthropic_loopback(c: &mut Criterion) {
    let (listener, url) = loopback::bind(0).unwrap();
    let stats = Arc::new(loopback::Stats::default());
    // Lives as long as the bench process; never exits on its own here.
    std::thread::spawn(move || loopback::serve(listener, loopback::Options::default(), stats));
    let rt = current_thread_runtime();
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let (calls, errors) = rt.block_on(run_session(
        Arc::new(anthropic_client(&url)),
        workspace.clone(),
    ));
    assert_eq!((calls, errors), (5, 0), "the 6-turn task must run cleanly");
    assert!(dir.path().join("hello.txt").is_file());

    let mut group = c.benchmark_group("anthropic_loopback");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    group.bench_function("client_new", |b| {
        b.iter(|| black_box(anthropic_client(&url)))
    });
    group.bench_function("six_turn_task", |b| {
        b.iter(|| {
            let client: Arc<dyn ModelClient> = Arc::new(anthropic_client(&url));
            rt.block_on(run_session(client, workspace.clone()))
        })
    });
    group.finish();
}

// ---------------------------------------------------------------- config

/// A realistic config file: top-level settings, two profiles, a prices table.
const CONFIG_TOML: &str = include_str!("config.toml");

/// What `main` does before anything else: find the file, read it, resolve
/// flags + env + profile + file into the settings.
fn load_config(
    env: &dyn Fn(&str) -> Option<String>,
    profile: Option<&str>,
) -> Result<config::Settings, config::ConfigError> {
    let path = config::config_path(env);
    let file = match &path {
        Some(p) => config::read_file(p)?.map(|text| (p.clone(), text)),
        None => None,
    };
    config::resolve(Inputs {
        flags: Layer::default(),
        profile: profile.map(str::to_string),
        env,
        file,
    })
}

fn bench_config(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, CONFIG_TOML).unwrap();
    // A typical environment: a key, one override, and the usual unrelated variables.
    let vars: BTreeMap<&str, String> = [
        ("HOME", "/home/dev".to_string()),
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("TERM", "xterm-256color".to_string()),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-0123456789abcdef".to_string(),
        ),
        ("WAYPOINT_MAX_TURNS", "60".to_string()),
        ("WAYPOINT_CONFIG", path.display().to_string()),
    ]
    .into_iter()
    .collect();
    let env = |k: &str| vars.get(k).cloned();
    let file = (path.clone(), CONFIG_TOML.to_string());
    let resolve = |file: Option<(PathBuf, String)>, profile: Option<&str>| {
        config::resolve(Inputs {
            flags: Layer::default(),
            profile: profile.map(str::to_string),
            env: &env,
            file,
        })
        .unwrap()
    };

    let s = resolve(Some(file.clone()), None);
    assert_eq!(s.model.value, "claude-sonnet-4-5");
    assert_eq!(s.model.source, Source::File(path.clone()));
    assert_eq!(s.max_turns.value, 60);
    assert_eq!(s.stream_idle_timeout.value, 90);
    assert_eq!(s.profiles, ["fast", "local"]);
    assert_eq!(s.prices.len(), 4);
    assert!(s.api_key.is_some());
    let s = resolve(Some(file.clone()), Some("local"));
    assert_eq!(s.provider.value, ProviderKind::Openai);
    assert_eq!(s.base_url.source, Source::Profile("local".into()));
    let s = load_config(&env, None).unwrap();
    assert_eq!(s.file.as_deref(), Some(path.as_path()));
    assert_eq!(s.max_tokens.value, 8192);

    let mut group = c.benchmark_group("config");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    // Defaults + env only: what is left without a file.
    group.bench_function("resolve_no_file", |b| {
        b.iter(|| black_box(resolve(None, None)))
    });
    // Parsing the TOML text and layering it (the text is copied outside the timing).
    group.bench_function("resolve_file", |b| {
        b.iter_batched(
            || Some(file.clone()),
            |f| black_box(resolve(f, None)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("resolve_file_profile", |b| {
        b.iter_batched(
            || Some(file.clone()),
            |f| black_box(resolve(f, Some("local"))),
            BatchSize::SmallInput,
        )
    });
    // open + read + close of the 1 KB file (page cache).
    group.bench_function("read_file", |b| {
        b.iter(|| black_box(config::read_file(black_box(&path)).unwrap()))
    });
    // All of it, as `main` does it: config_path + read_file + resolve.
    group.bench_function("load_total", |b| {
        b.iter(|| black_box(load_config(&env, None).unwrap()))
    });
    group.finish();
}

// ---------------------------------------------------------------- compaction

/// A conversation of about `tokens` tokens (bytes/4): rounds of a bash call
/// and its 2 KB output.
fn conversation_of_tokens(tokens: usize) -> Vec<Message> {
    let mut messages = vec![Message {
        role: Role::User,
        content: vec![ContentBlock::Text {
            text: "Do the long task.".into(),
        }],
    }];
    let mut i = 0;
    while waypoint::agent::compact::messages_bytes(&messages) / 4 < tokens {
        messages.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Text {
                    text: format!("Running step {i}."),
                },
                ContentBlock::ToolUse {
                    id: format!("t{i}"),
                    name: "bash".into(),
                    input: json!({"command": format!("cargo test step_{i}")}).into(),
                },
            ],
        });
        messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("t{i}"),
                content: format!("line of test output {i}\n").repeat(80).into(),
                is_error: false,
            }],
        });
        i += 1;
    }
    messages
}

/// Compaction's own CPU cost on a 150k-token conversation (the model's
/// summary excluded): the estimate, the rebuild, and the fallback trimming.
fn bench_compaction(c: &mut Criterion) {
    use waypoint::agent::compact::{drop_old_outputs, messages_bytes, rebuild};
    use waypoint::chat::Conversation;
    let messages = conversation_of_tokens(150_000);
    let mut plan = TodoManager::new();
    plan.update(&plan_json(12, 5)).unwrap();
    let summary = "The work so far: decisions, files, commands. ".repeat(100);
    let mut group = c.benchmark_group("compaction");
    group.bench_function("rebuild_150k", |b| {
        b.iter(|| {
            let bytes = messages_bytes(&messages);
            let out = rebuild(&messages, Some(&summary), &plan.render(), 40_000);
            let conv = Conversation::from_messages(out);
            black_box((bytes, conv.validate().is_ok()))
        })
    });
    group.bench_function("fallback_150k", |b| {
        b.iter_batched(
            || messages.clone(),
            |mut m| {
                drop_old_outputs(&mut m, 100_000);
                let conv = Conversation::from_messages(m);
                black_box(conv.validate().is_ok())
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_compaction,
    bench_plan,
    bench_sse,
    bench_scripted_session,
    bench_request,
    bench_anthropic_loopback,
    bench_config
);
criterion_main!(benches);
