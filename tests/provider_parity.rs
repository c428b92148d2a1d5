//! Provider parity: one scripted task played through the Anthropic, the
//! Chat Completions and the Responses wires, each against its own loopback server and
//! temp workspace. Invariant: the engine sees the same thing either way —
//! the same plan states, tool calls, tool outputs and files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;

use std::collections::BTreeMap;
use std::path::Path;

use engine_support::{Rig, plan_states, streamed_text, tool_ends};
use loopback::{Answer, ClientOpts, ProviderWire, Wire, plan};
use serde_json::{Value, json};
use waypoint::agent::AgentConfig;
use waypoint::events::{Event, ToolStatus};

/// One model turn: optional text, then tool calls.
struct Step {
    text: &'static str,
    calls: Vec<(&'static str, Value)>,
}

fn script() -> Vec<Step> {
    vec![
        Step {
            text: "I'll plan first.",
            calls: vec![(
                "todo_write",
                plan(&[
                    ("Write the greeting", "in_progress"),
                    ("List the files", "pending"),
                    ("Report", "pending"),
                ]),
            )],
        },
        Step {
            text: "",
            calls: vec![(
                "write_file",
                json!({"path": "src/hello.sh", "content": "#!/bin/sh\necho \"héllo 😀\"\n"}),
            )],
        },
        Step {
            text: "",
            calls: vec![(
                "todo_write",
                plan(&[
                    ("Write the greeting", "completed"),
                    ("List the files", "in_progress"),
                    ("Report", "pending"),
                ]),
            )],
        },
        Step {
            text: "",
            calls: vec![("bash", json!({"command": "ls"}))],
        },
        Step {
            text: "",
            calls: vec![(
                "todo_write",
                plan(&[
                    ("Write the greeting", "completed"),
                    ("List the files", "completed"),
                    ("Report", "completed"),
                ]),
            )],
        },
        Step {
            text: "Done: src/hello.sh greets.",
            calls: vec![],
        },
    ]
}

/// What the engine made of the task.
#[derive(Debug, PartialEq)]
struct Outcome {
    plans: Vec<Vec<(String, String)>>,
    calls: Vec<(String, ToolStatus, String)>,
    files: BTreeMap<String, String>,
    text: String,
    end: String,
}

fn files_under(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// Plays the task on `r` and reads what the engine made of it.
async fn play<W: Wire>(r: &mut Rig<W>) -> Outcome {
    r.submit("Write a greeting script and list the files.");
    let events = r.turn_events().await;
    let end = match events.last() {
        Some(Event::TurnComplete {
            stop_reason,
            open_items,
            ..
        }) => format!("{stop_reason}, {open_items} open"),
        Some(Event::TurnAborted { message, .. }) => panic!("aborted: {message}"),
        other => unreachable!("a turn ends complete or aborted, not with {other:?}"),
    };
    let mut files = BTreeMap::new();
    files_under(r.dir.path(), r.dir.path(), &mut files);
    Outcome {
        plans: plan_states(&events),
        calls: tool_ends(&events),
        files,
        text: streamed_text(&events),
        end,
    }
}

/// Plays the task through wire `W` with a client built with `opts`; every
/// request must be valid for that API.
async fn via<W: ProviderWire>(opts: ClientOpts) -> Outcome {
    let replies = script()
        .into_iter()
        .map(|step| {
            let mut answer = Answer::text(step.text);
            for (name, input) in step.calls {
                answer = answer.with_tool(name, input);
            }
            W::split(answer.pieces(7, false), vec![3, 5, 8])
        })
        .collect();
    let mut r = Rig::<W>::with(replies, AgentConfig::default(), opts).await;
    let outcome = play(&mut r).await;
    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 6);
    for q in &reqs {
        W::assert_valid(&q.body);
    }
    outcome
}

async fn via_anthropic() -> Outcome {
    via::<common::Anthropic>(ClientOpts {
        key: Some("k"),
        model: Some("claude-test"),
        max_retries: 1,
        ..ClientOpts::default()
    })
    .await
}

/// A local server without a key, as ollama or llama.cpp serve.
async fn via_openai() -> Outcome {
    via::<common::openai::OpenAi>(ClientOpts {
        key: None,
        model: Some("qwen-test"),
        max_retries: 1,
        ..ClientOpts::default()
    })
    .await
}

/// OpenAI's Responses API, a codex model (reasoning asked for and sent back).
async fn via_responses() -> Outcome {
    via::<common::responses::Responses>(ClientOpts {
        key: Some("k"),
        model: Some("codex-test"),
        max_retries: 1,
        ..ClientOpts::default()
    })
    .await
}

#[tokio::test]
async fn the_same_task_gives_the_same_result_through_every_wire() {
    let anthropic = via_anthropic().await;
    let openai = via_openai().await;
    let responses = via_responses().await;

    let names: Vec<&str> = anthropic.calls.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "todo_write",
            "write_file",
            "todo_write",
            "bash",
            "todo_write"
        ]
    );
    assert!(
        anthropic.calls.iter().all(|(_, s, _)| *s == ToolStatus::Ok),
        "{:?}",
        anthropic.calls
    );
    assert_eq!(anthropic.plans.len(), 3);
    assert!(
        anthropic.plans[2]
            .iter()
            .all(|(_, status)| status == "completed")
    );
    assert_eq!(
        anthropic.files.get("src/hello.sh").map(String::as_str),
        Some("#!/bin/sh\necho \"héllo 😀\"\n")
    );
    assert!(
        anthropic.calls[3].2.contains("src"),
        "{:?}",
        anthropic.calls
    );
    assert_eq!(anthropic.end, "end_turn, 0 open");

    assert_eq!(openai.plans, anthropic.plans, "plan states");
    let openai_names: Vec<&str> = openai.calls.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(openai_names, names, "tool calls");
    assert_eq!(openai.calls, anthropic.calls, "tool statuses and outputs");
    assert_eq!(openai.files, anthropic.files, "files");
    assert_eq!(openai.text, anthropic.text);
    assert_eq!(openai, anthropic);
    assert_eq!(responses, anthropic, "the Responses wire");
}
