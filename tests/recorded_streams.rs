//! Real providers' Chat Completions streams, recorded by other projects and
//! kept in `tests/fixtures/streams/` (their sources in `SOURCES.md`),
//! replayed through the real engine and client against a loopback server:
//! whole, a byte at a time, and in odd chunks. Each must give its calls
//! (ids, names, arguments) in order without a retry, and the next request
//! must carry them back answered. The expected calls were read from the
//! recordings by an independent reader, not by Waypoint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::engine_support;
use crate::loopback;

use common::openai::*;
use engine_support::*;
use serde_json::{Value, json};
use waypoint::events::Event;

type Rig = engine_support::Rig<OpenAi>;

/// One recording and what it holds.
struct Recording {
    file: &'static str,
    /// The model the request named.
    model: &'static str,
    body: &'static str,
    /// The calls: id, name, arguments.
    calls: &'static [(&'static str, &'static str, &'static str)],
    /// The reply's visible text (trimmed), shown as it streams.
    text: &'static str,
    /// Whether the reply carries reasoning (shown, and sent back).
    reasons: bool,
}

macro_rules! recording {
    ($file:literal, $model:literal, $calls:expr, $text:expr, $reasons:expr) => {
        Recording {
            file: $file,
            model: $model,
            body: include_str!(concat!("fixtures/streams/", $file)),
            calls: $calls,
            text: $text,
            reasons: $reasons,
        }
    };
}

const ADD_MUL: &str = r#"{"a":2,"b":3}"#;
const ADD_MUL_SPACED: &str = r#"{"a": 2, "b": 3}"#;
const FLORENCE: &str = r#"{"location":"Florence, Italy"}"#;

fn recordings() -> Vec<Recording> {
    vec![
        recording!(
            "vercel_gemini3_parallel_calls.sse",
            "google/gemini-3-pro-preview",
            &[
                ("WQuZA7oD8t6sGOrb", "add", ADD_MUL),
                ("pJnoRXDGFYDYCXIg", "multiply", ADD_MUL)
            ],
            "",
            false
        ),
        recording!(
            "deepseek_v4_hyper_parallel_calls.sse",
            "deepseek-v4-pro-0813",
            &[
                ("call_67389dea0febe22c", "glob", r#"{"pattern":"**/*.go"}"#),
                (
                    "call_9b9d9dc30e777faf",
                    "ls",
                    r#"{"path":"/tmp/crush-test/TestCoderAgent/deepseek-v4/parallel_tool_calls"}"#
                )
            ],
            "",
            true
        ),
        recording!(
            "groq_kimi_k2_parallel_calls.sse",
            "moonshotai/kimi-k2-instruct-0905",
            &[
                ("functions.add:0", "add", ADD_MUL),
                ("functions.multiply:1", "multiply", ADD_MUL)
            ],
            "I'll perform both addition and multiplication on the numbers 2 and 3 for you.",
            false
        ),
        recording!(
            "huggingface_kimi_k2_parallel_calls.sse",
            "moonshotai/Kimi-K2-Instruct-0905:groq",
            &[
                ("functions.add:0", "add", ADD_MUL),
                ("functions.multiply:1", "multiply", ADD_MUL)
            ],
            "I'll add and multiply the numbers 2 and 3 for you.",
            false
        ),
        recording!(
            "avian_kimi_parallel_calls.sse",
            "moonshotai/kimi-k2.5",
            &[
                ("functions.add:0", "add", ADD_MUL_SPACED),
                ("functions.multiply:1", "multiply", ADD_MUL_SPACED)
            ],
            "I'll add and multiply 2 and 3 for you at the same time.",
            true
        ),
        recording!(
            "xai_grok4_fast_parallel_calls.sse",
            "grok-4-fast",
            &[
                ("call_55070233", "add", ADD_MUL),
                ("call_12016531", "multiply", ADD_MUL)
            ],
            "",
            false
        ),
        recording!(
            "zai_glm47_flash_parallel_calls.sse",
            "glm-4.7-flash",
            &[
                ("call_4f8cb52342424eb9bbc1b20e", "add", ADD_MUL),
                ("call_0d06add371834452b339ffdb", "multiply", ADD_MUL)
            ],
            "I'll both add and multiply the numbers 2 and 3 for you.",
            true
        ),
        recording!(
            "llamacpp_gpt_oss_tool_call.sse",
            "openai/gpt-oss-20b",
            &[("g2KOIWzn722hzEaZQmNVP4roUPEiYafL", "weather", FLORENCE)],
            "",
            true
        ),
        recording!(
            "llamacpp_gpt_oss_thinking.sse",
            "openai/gpt-oss-20b",
            &[("1wNpqrejg1FCTjf6xq8JRCGKgWZO74AL", "weather", FLORENCE)],
            "",
            true
        ),
        recording!(
            "xai_grok3_mini_thinking.sse",
            "grok-3-mini",
            &[("call_45048949", "weather", FLORENCE)],
            "",
            true
        ),
        recording!(
            "openrouter_gemini_parallel_calls.sse",
            "google/gemini-3.1-flash-lite-preview",
            &[
                ("tool_add_kZJN6iFNozVOBiXBMA2Y", "add", ADD_MUL),
                ("tool_multiply_7Pq02EcannPbKks8kXlA", "multiply", ADD_MUL)
            ],
            "",
            false
        ),
        recording!(
            "openrouter_glm_parallel_calls.sse",
            "z-ai/glm-5-turbo",
            &[
                ("call_4024c8ddae6a485b91233297", "add", ADD_MUL),
                ("call_4a36f30b6fd64c6d8e320712", "multiply", ADD_MUL)
            ],
            "Sure! Let me add and multiply 2 and 3 for you right away.",
            true
        ),
        recording!(
            "openrouter_grok_parallel_calls.sse",
            "x-ai/grok-4.1-fast",
            &[
                ("call_67055809", "add", ADD_MUL),
                ("call_54693838", "multiply", ADD_MUL)
            ],
            "",
            true
        ),
        recording!(
            "openrouter_kimi_parallel_calls.sse",
            "moonshotai/kimi-k2.5",
            &[
                ("functions.add:0", "add", ADD_MUL_SPACED),
                ("functions.multiply:1", "multiply", ADD_MUL_SPACED)
            ],
            "",
            true
        ),
        recording!(
            "vercel_claude_sonnet4_parallel_calls.sse",
            "anthropic/claude-sonnet-4",
            &[
                ("toolu_01QU6XHH6Ct5srCeCZJztb1y", "add", ADD_MUL_SPACED),
                ("toolu_01Efj1TvKTdgHLoko7KWUMVE", "multiply", ADD_MUL_SPACED)
            ],
            "I'll add and multiply the numbers 2 and 3 for you.",
            false
        ),
        recording!(
            "ollama_qwen_parallel_calls.sse",
            "qwen2.5-coder:7b-instruct-q8_0",
            &[
                ("call_wteop8bt", "run_command", r#"{"command":"ls"}"#),
                ("call_rk2xye1l", "run_command", r#"{"command":"ls -l"}"#)
            ],
            "",
            false
        ),
        recording!(
            "azure_gpt5_mini_tool_call.sse",
            "gpt-5-mini",
            &[("call_tWA8BJziGlCyhQEXhEHn6eXK", "weather", FLORENCE)],
            "",
            false
        ),
        recording!(
            "azure_o4_mini_tool_call.sse",
            "o4-mini",
            &[("call_n1TZAnAlhuLNeb1FaV1XCDuD", "weather", FLORENCE)],
            "",
            false
        ),
        recording!(
            "cerebras_qwen3_coder_parallel_calls.sse",
            "qwen-3-coder-480b",
            &[
                ("ab8048658", "add", ADD_MUL_SPACED),
                ("b249e0b3f", "multiply", ADD_MUL_SPACED)
            ],
            "",
            false
        ),
        recording!(
            "vercel_gpt5_parallel_calls.sse",
            "openai/gpt-5",
            &[
                ("call_NKBrzaRfgcLAkvIldhIYsqtH", "add", ADD_MUL),
                ("call_RjOUujdrBGigQL7C1p7IpWtJ", "multiply", ADD_MUL)
            ],
            "",
            false
        ),
    ]
}

/// Plays `rec` in chunks of `sizes` and checks the turn and the request
/// after it.
async fn replay(rec: &Recording, sizes: Vec<usize>) {
    let what = format!("{} in chunks of {sizes:?}", rec.file);
    let mut r = Rig::default_with(vec![
        loopback::Reply::stream(rec.body.to_string(), sizes),
        chat(Turn::text("Done.")),
    ])
    .await;
    r.submit("Add and multiply the number 2 and 3");
    let events = r.turn_events().await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { .. })),
        "{what}: the turn completes: {:?}",
        retry_reasons(&events)
    );
    assert_eq!(
        count(&events, |e| matches!(e, Event::Retrying { .. })),
        0,
        "{what}: no retry: {:?}",
        retry_reasons(&events)
    );
    let text = streamed_text(&events);
    assert_eq!(
        text.trim().strip_suffix("Done.").map(str::trim),
        Some(rec.text),
        "{what}"
    );
    assert_eq!(
        !streamed_reasoning(&events).is_empty(),
        rec.reasons,
        "{what}: reasoning shown"
    );
    check_the_request_after(rec, &r.server.requests(), &what);
}

/// The request after the recorded reply: it carries the reply's calls
/// back, in order, each answered.
fn check_the_request_after(rec: &Recording, reqs: &[loopback::Recorded], what: &str) {
    assert_eq!(
        reqs.len(),
        2,
        "{what}: one request for the calls, one after"
    );
    for req in reqs {
        assert_eq!(
            req.path, "/v1/chat/completions",
            "{what}: the Chat Completions wire"
        );
    }
    assert_valid_chat_request(&reqs[1].body);
    let assistant = reqs[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .expect("the assistant message");
    let sent: Vec<(String, String, Value)> = assistant["tool_calls"]
        .as_array()
        .expect("tool_calls")
        .iter()
        .map(|c| {
            let args = c["function"]["arguments"].as_str().expect("arguments");
            (
                c["id"].as_str().expect("id").to_string(),
                c["function"]["name"].as_str().expect("name").to_string(),
                serde_json::from_str(args).expect("arguments are JSON"),
            )
        })
        .collect();
    let expected: Vec<(String, String, Value)> = rec
        .calls
        .iter()
        .map(|(id, name, args)| {
            (
                id.to_string(),
                name.to_string(),
                serde_json::from_str(args).expect("expected arguments"),
            )
        })
        .collect();
    assert_eq!(sent, expected, "{what}: the calls go back in order");
    let answered: Vec<Value> = reqs[1]
        .last_tool_messages()
        .iter()
        .map(|m| m["tool_call_id"].clone())
        .collect();
    let ids: Vec<Value> = rec.calls.iter().map(|(id, _, _)| json!(id)).collect();
    assert_eq!(answered, ids, "{what}: every call answered in order");
}

/// Every recording, sent whole.
#[tokio::test]
async fn every_recording_whole() {
    for rec in recordings() {
        replay(&rec, vec![]).await;
    }
}

/// Every recording, a byte at a time.
#[tokio::test]
async fn every_recording_a_byte_at_a_time() {
    for rec in recordings() {
        replay(&rec, vec![1]).await;
    }
}

/// Every recording, in chunks that split events, lines and characters at
/// odd places.
#[tokio::test]
async fn every_recording_in_odd_chunks() {
    for rec in recordings() {
        replay(&rec, vec![7, 1, 13, 2, 61]).await;
    }
}

/// Through the binary, under the model name each recording was made with
/// (the wire is chosen by that name): `gemini-3-pro-preview` and
/// `deepseek-v4-pro` are served on Chat Completions, and each task ends
/// with its calls answered and no retry.
#[tokio::test]
async fn every_recording_through_the_binary_under_its_model_name() {
    for rec in recordings() {
        let what = format!("{} as `{}`", rec.file, rec.model);
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let server = FakeServer::start(vec![
            loopback::Reply::stream(rec.body.to_string(), vec![]),
            chat(Turn::text("Done.")),
        ])
        .await;
        let mut cmd =
            cli_support::on_loopback_openai(home.path(), ws.path(), &server.url, rec.model);
        cmd.args([
            "--max-retries",
            "0",
            "-p",
            "Add and multiply the number 2 and 3",
        ]);
        let (code, out, err) = cli_support::output(&mut cmd).await;
        assert_eq!(code, 0, "{what}: {err}");
        assert!(out.contains("Done."), "{what}: {out}");
        assert!(!err.contains("retry"), "{what}: {err}");
        check_the_request_after(&rec, &server.requests(), &what);
    }
}
