//! Prompt caching, end to end: a long scripted session against the loopback
//! servers of both wires, then the bill computed from the RECORDED requests
//! under each provider's published caching rules. Invariant checked: nothing
//! before a request's newest message differs from the previous request (with
//! the `cache_control` markers taken out), so every request can read what
//! the previous one cached.
//!
//! Run with `--nocapture` to see the figures (BENCHMARKS.md quotes them).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use engine_support::{Rig, assert_completed};
use loopback::{Answer, ClientOpts, ProviderWire, Recorded};
use serde_json::{Value, json};
use waypoint::agent::AgentConfig;

/// Tool rounds per user message, and user messages.
const ROUNDS: usize = 20;
const USER_TURNS: usize = 2;

/// Tokens estimated as bytes / 4.
fn tokens(bytes: usize) -> u64 {
    (bytes / 4) as u64
}

/// A deterministic text file of about `size` bytes, in lines of code-like words.
fn file_text(seed: usize, size: usize) -> String {
    let words = [
        "let", "value", "match", "Some", "None", "return", "self", "config", "fn", "struct",
        "impl", "pub", "use", "mut", "await", "Result", "error", "into", "iter", "map",
    ];
    let mut out = String::new();
    let mut x = seed as u64 * 2_654_435_761 + 1;
    while out.len() < size {
        let mut line = String::from("    ");
        for _ in 0..8 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            line.push_str(words[(x >> 33) as usize % words.len()]);
            line.push(' ');
        }
        line.push('\n');
        out.push_str(&line);
    }
    out.truncate(size);
    out
}

/// Runs the session: each user message gets `ROUNDS` tool rounds (reads of
/// files of 0.5–6 KB, and now and then a `bash` `cat`), then an answer.
async fn session<W: ProviderWire>() -> Vec<Recorded> {
    session_scaled::<W>(1).await
}

/// [`session`] with files `scale` times larger.
async fn session_scaled<W: ProviderWire>(scale: usize) -> Vec<Recorded> {
    let mut replies = Vec::new();
    for t in 0..USER_TURNS {
        for r in 0..ROUNDS {
            let i = t * ROUNDS + r;
            let file = format!("src/f{i}.rs");
            let answer = if i % 5 == 4 {
                Answer::tool("bash", json!({"command": format!("cat {file}")}))
            } else {
                Answer::tool("read_file", json!({"path": file}))
            };
            replies.push(W::reply(answer.with_text(&format!("Looking at f{i}."))));
        }
        replies.push(W::text(&format!("Done with part {t}.")));
    }
    // A window no request comes near: nothing is compacted.
    let config = AgentConfig {
        context_window: Some(100_000_000),
        ..AgentConfig::default()
    };
    let mut rig = Rig::<W>::with(replies, config, ClientOpts::default()).await;
    std::fs::create_dir_all(rig.dir.path().join("src")).unwrap();
    for i in 0..USER_TURNS * ROUNDS {
        let size = (512 + (i * 1_373) % (6_144 - 512)) * scale;
        std::fs::write(
            rig.dir.path().join(format!("src/f{i}.rs")),
            file_text(i, size),
        )
        .unwrap();
    }
    for t in 0..USER_TURNS {
        rig.submit(&format!("Review part {t} of the code."));
        let events = rig.turn_events().await;
        assert_completed(&events);
    }
    let requests = rig.server.requests();
    assert_eq!(requests.len(), USER_TURNS * (ROUNDS + 1));
    requests
}

/// `v` without any `cache_control` key.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// Asserts that each request repeats the previous one (markers stripped)
/// up to and including its newest message: system, tools and messages.
fn assert_prefix_stable(requests: &[Recorded], system_key: Option<&str>) {
    for pair in requests.windows(2) {
        let (before, after) = (strip(&pair[0].body), strip(&pair[1].body));
        if let Some(key) = system_key {
            assert_eq!(before[key], after[key], "the system prompt changed");
        }
        assert_eq!(before["tools"], after["tools"], "the tools changed");
        // Chat messages, or the Responses wire's input items.
        let list = |b: &'_ Value| -> Vec<Value> {
            let key = if b.get("input").is_some() {
                "input"
            } else {
                "messages"
            };
            b[key].as_array().unwrap().clone()
        };
        let (old, new) = (list(&before), list(&after));
        assert!(new.len() > old.len());
        for (i, (a, b)) in old.iter().zip(&new).enumerate() {
            assert_eq!(
                serde_json::to_string(a).unwrap(),
                serde_json::to_string(b).unwrap(),
                "message {i} changed between requests"
            );
        }
    }
}

/// One Anthropic request as the cache sees it: its blocks in prefix order
/// (tools, system, then every message's content blocks), each as a hash
/// of the prefix up to it and the prefix's estimated tokens, and the
/// positions of its breakpoints.
struct Blocks {
    prefix_hashes: Vec<u64>,
    prefix_tokens: Vec<u64>,
    breakpoints: Vec<usize>,
}

fn anthropic_blocks(body: &Value) -> Blocks {
    let mut blocks: Vec<&Value> = Vec::new();
    let mut roles: Vec<&str> = Vec::new();
    for t in body["tools"].as_array().unwrap() {
        blocks.push(t);
        roles.push("tools");
    }
    for s in body["system"].as_array().into_iter().flatten() {
        blocks.push(s);
        roles.push("system");
    }
    for m in body["messages"].as_array().unwrap() {
        for b in m["content"].as_array().unwrap() {
            blocks.push(b);
            roles.push(m["role"].as_str().unwrap());
        }
    }
    let mut out = Blocks {
        prefix_hashes: Vec::new(),
        prefix_tokens: Vec::new(),
        breakpoints: Vec::new(),
    };
    let (mut hasher, mut bytes) = (DefaultHasher::new(), 0);
    for (i, (b, role)) in blocks.iter().zip(&roles).enumerate() {
        if b.get("cache_control").is_some() {
            out.breakpoints.push(i);
        }
        let text = serde_json::to_string(&strip(b)).unwrap();
        bytes += text.len();
        (role, &text).hash(&mut hasher);
        out.prefix_hashes.push(hasher.finish());
        out.prefix_tokens.push(tokens(bytes));
    }
    out
}

/// Billed input over uncached input, in full-price tokens.
struct Bill {
    uncached: u64,
    billed: f64,
}

impl Bill {
    fn share(&self) -> f64 {
        self.billed / self.uncached as f64
    }
}

/// Anthropic's published rules: a breakpoint caches the prefix up to it
/// (written at 1.25x); a request reads the longest cached prefix found at
/// a breakpoint or up to 20 blocks before it (0.1x); nothing under 1,024
/// tokens is cached; the rest is billed at the input price.
fn anthropic_bill(requests: &[Recorded]) -> Bill {
    const MIN: u64 = 1_024;
    const LOOKBACK: usize = 20;
    let mut cache: HashSet<u64> = HashSet::new();
    let mut bill = Bill {
        uncached: 0,
        billed: 0.0,
    };
    for req in requests {
        let b = anthropic_blocks(&req.body);
        let total = *b.prefix_tokens.last().unwrap();
        let mut read = 0;
        for &bp in &b.breakpoints {
            let hit = (bp.saturating_sub(LOOKBACK)..=bp)
                .rev()
                .find(|&p| cache.contains(&b.prefix_hashes[p]));
            if let Some(p) = hit {
                read = read.max(b.prefix_tokens[p]);
            }
        }
        let last = b.breakpoints.iter().copied().max();
        let cached_to = last.map_or(0, |p| b.prefix_tokens[p]);
        let write = if cached_to >= MIN {
            cached_to.saturating_sub(read)
        } else {
            0
        };
        for &bp in &b.breakpoints {
            if b.prefix_tokens[bp] >= MIN {
                cache.insert(b.prefix_hashes[bp]);
            }
        }
        let full = total - read - write;
        bill.uncached += total;
        bill.billed += full as f64 + 1.25 * write as f64 + 0.1 * read as f64;
    }
    bill
}

/// OpenAI's automatic prefix caching: the longest common prefix with any
/// earlier request, in 128-token steps from 1,024 tokens, billed at 0.5x.
fn openai_bill(requests: &[Recorded]) -> Bill {
    let mut seen: Vec<String> = Vec::new();
    let mut bill = Bill {
        uncached: 0,
        billed: 0.0,
    };
    for req in requests {
        let mut text = serde_json::to_string(&req.body["tools"]).unwrap();
        for m in req.messages() {
            text.push_str(&serde_json::to_string(m).unwrap());
        }
        let total = tokens(text.len());
        let common = seen
            .iter()
            .map(|old| {
                old.bytes()
                    .zip(text.bytes())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        let common = tokens(common);
        let cached = if common >= 1_024 {
            common / 128 * 128
        } else {
            0
        };
        bill.uncached += total;
        bill.billed += (total - cached) as f64 + 0.5 * cached as f64;
        seen.push(text);
    }
    bill
}

/// A conversation past the size at which the client seals its kept bytes
/// into shared parts (256 KiB): each request still goes out whole, with its
/// length, and repeats the previous one.
async fn a_long_conversation_goes_out_in_parts<W: ProviderWire>(system_key: Option<&str>) {
    let requests = session_scaled::<W>(4).await;
    assert_prefix_stable(&requests, system_key);
    for r in &requests {
        assert_eq!(
            r.header("content-length"),
            Some(r.raw_len.to_string().as_str())
        );
        assert_eq!(r.header("transfer-encoding"), None);
    }
    let last = requests.last().map_or(0, |r| r.raw_len);
    assert!(last > 300 * 1024, "the conversation reached {last} bytes");
}

#[tokio::test]
async fn anthropic_a_long_conversation_goes_out_in_parts() {
    a_long_conversation_goes_out_in_parts::<common::Anthropic>(Some("system")).await;
}

#[tokio::test]
async fn openai_a_long_conversation_goes_out_in_parts() {
    a_long_conversation_goes_out_in_parts::<common::openai::OpenAi>(None).await;
}

#[tokio::test]
async fn responses_a_long_conversation_goes_out_in_parts() {
    a_long_conversation_goes_out_in_parts::<common::responses::Responses>(Some("instructions"))
        .await;
}

#[tokio::test]
async fn anthropic_requests_keep_their_prefix_and_cache_most_of_the_input() {
    let requests = session::<common::Anthropic>().await;
    assert_prefix_stable(&requests, Some("system"));
    for req in &requests {
        let body = &req.body;
        let marks = body.to_string().matches("\"cache_control\"").count();
        assert!((1..=4).contains(&marks), "{marks} breakpoints");
        assert_eq!(
            body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        let newest = req.messages().last().unwrap();
        let last_block = newest["content"].as_array().unwrap().last().unwrap();
        assert_eq!(last_block["cache_control"], json!({"type": "ephemeral"}));
    }
    // The tools really read the files: every result is 0.5–6 KB and no error.
    let results: Vec<&Value> = requests
        .last()
        .unwrap()
        .messages()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), USER_TURNS * ROUNDS);
    for r in results {
        let len = r["content"].as_str().unwrap().len();
        assert!(
            r.get("is_error").is_none() && (500..=8_000).contains(&len),
            "{len}"
        );
    }
    let bill = anthropic_bill(&requests);
    println!(
        "anthropic: {} requests, {} input tokens uncached, billed as {:.0} ({:.1}%)",
        requests.len(),
        bill.uncached,
        bill.billed,
        bill.share() * 100.0
    );
    assert!(bill.share() <= 0.16, "billed {:.1}%", bill.share() * 100.0);
}

#[tokio::test]
async fn openai_requests_keep_their_prefix_for_automatic_caching() {
    let requests = session::<common::openai::OpenAi>().await;
    assert_prefix_stable(&requests, None);
    // Not OpenAI's own API: no `prompt_cache_key`.
    assert!(
        requests
            .iter()
            .all(|r| r.body.get("prompt_cache_key").is_none())
    );
    let bill = openai_bill(&requests);
    println!(
        "openai: {} requests, {} input tokens uncached, billed as {:.0} ({:.1}%)",
        requests.len(),
        bill.uncached,
        bill.billed,
        bill.share() * 100.0
    );
    assert!(bill.share() <= 0.6, "billed {:.1}%", bill.share() * 100.0);
}
