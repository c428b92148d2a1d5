//! A long session's cost per round: 2,010 tool rounds driven through the
//! real engine and the real Anthropic client against a loopback server in
//! this process, each round a `read_file` (or, with `--tool bash`, a `bash`
//! command) whose output is 1 KB. At each request the server notes the
//! process's CPU time (user + system, every thread) less its own thread's,
//! so a round's figure is what Waypoint spent between two requests:
//! reading the reply's stream, running the tool, and building and sending
//! the next request. Printed: the mean of rounds 11–30 ("round 20"),
//! 191–210 and 1,991–2,010, their ratio, and the resident memory against
//! the conversation's bytes (the last request's body).
//!
//! With `--tui`, every event also goes to the TUI's state (as the
//! interactive app applies it) and a 120x40 frame is drawn every 20
//! events, so the memory figure is the interactive app's.
//!
//! With `--wire chat` or `--wire responses` the session speaks Chat
//! Completions or the Responses API (a reasoning model's replies: 1 KB of
//! encrypted reasoning per reply, sent back in every later request).
//!
//! `cargo bench --bench long_session [-- --tool bash] [--rounds N] [--tui] [--wire W]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use waypoint::agent::{Agent, AgentConfig};
use waypoint::llm::ModelClient;
use waypoint::llm::anthropic::{AnthropicClient, AnthropicConfig};
use waypoint::llm::openai::{OpenAiClient, OpenAiConfig};
use waypoint::llm::responses::ResponsesClient;
use waypoint::llm::retry::RetryPolicy;
use waypoint::tools::Workspace;

#[path = "support/task.rs"]
mod task;

/// What the server saw at one request.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// The process's CPU less the server thread's, in nanoseconds: all of
    /// it (exact), in user space and in the kernel (tick-sampled).
    cpu_ns: u64,
    user_ns: u64,
    sys_ns: u64,
    body_bytes: usize,
    rss_kib: u64,
}

/// A CPU-time clock (`CLOCK_PROCESS_CPUTIME_ID` or
/// `CLOCK_THREAD_CPUTIME_ID`), in ns.
fn clock_ns(clock: libc::clockid_t) -> u64 {
    // SAFETY: an all-zero timespec is valid to be overwritten.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid out-pointer.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The CPU one thread spends writing `bytes` to a loopback TCP socket read
/// by another thread (the median of `times` writes), in ms: the part of a
/// request's cost that is the size of the body, whoever sends it.
fn transport_floor(bytes: usize, times: usize) -> f64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let total = bytes * times;
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut got = 0;
        while got < total {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
    });
    let mut out = TcpStream::connect(addr).unwrap();
    out.set_nodelay(true).unwrap();
    let body = vec![b'x'; bytes];
    let mut spent: Vec<u64> = (0..times)
        .map(|_| {
            let start = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
            out.write_all(&body).unwrap();
            clock_ns(libc::CLOCK_THREAD_CPUTIME_ID) - start
        })
        .collect();
    reader.join().unwrap();
    spent.sort_unstable();
    spent[spent.len() / 2] as f64 / 1e6
}

/// User and system CPU of the process or of the calling thread, in ns.
fn cpu(who: libc::c_int) -> (u64, u64) {
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid out-pointer for the call.
    unsafe { libc::getrusage(who, &mut usage) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    (ns(usage.ru_utime), ns(usage.ru_stime))
}

/// A line of `/proc/self/status`, in KiB.
fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The wire a session speaks.
#[derive(Clone, Copy, PartialEq)]
enum WireFormat {
    Anthropic,
    Chat,
    Responses,
}

/// The stream of reply `n` on `wire`: a short text and one call, or (the
/// last) a closing text.
fn reply(n: usize, last: bool, tool: &str, wire: WireFormat) -> String {
    let text = if last {
        "All rounds are done."
    } else {
        "Reading the next part of the file. "
    };
    let input = match tool {
        "bash" => json!({"command": "cat part.txt"}),
        _ => json!({"path": "part.txt"}),
    };
    let call = (!last).then_some((tool, input));
    match wire {
        WireFormat::Anthropic => anthropic_reply(n, text, call),
        WireFormat::Chat => chat_reply(n, text, call),
        WireFormat::Responses => responses_reply(n, text, call),
    }
}

/// Chat Completions chunks: the text in words, the call whole, the finish,
/// usage and `[DONE]`.
fn chat_reply(n: usize, text: &str, call: Option<(&str, serde_json::Value)>) -> String {
    let mut out = String::new();
    let mut chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let c = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk",
            "model": "gpt-bench", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        out.push_str(&format!("data: {c}\n\n"));
    };
    chunk(json!({"role": "assistant", "content": ""}), None);
    for piece in text.split_inclusive(' ') {
        chunk(json!({"content": piece}), None);
    }
    let finish = match &call {
        Some((name, input)) => {
            chunk(
                json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}}]}),
                None,
            );
            "tool_calls"
        }
        None => "stop",
    };
    chunk(json!({}), Some(finish));
    let usage = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 1100, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 1000}}});
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

/// Responses events as a reasoning model sends them: a reasoning item
/// (summary streamed, about 1 KB of encrypted content, as gpt-5's are),
/// the text, the call, `response.completed` with usage.
fn responses_reply(n: usize, text: &str, call: Option<(&str, serde_json::Value)>) -> String {
    let mut out = String::new();
    let mut ev = |data: serde_json::Value| {
        let name = data["type"].as_str().unwrap_or("").to_string();
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(
        json!({"type": "response.created", "response": {"id": format!("resp_{n}"), "status": "in_progress"}}),
    );
    let rs = format!("rs_{n}");
    let summary = "Reading the next part.";
    let encrypted: String = (0..1024)
        .map(|i| (b'A' + ((i * 7 + n) % 26) as u8) as char)
        .collect();
    ev(
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": rs, "type": "reasoning", "summary": []}}),
    );
    ev(
        json!({"type": "response.reasoning_summary_text.delta", "item_id": rs, "output_index": 0, "summary_index": 0, "delta": summary}),
    );
    ev(
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": rs, "type": "reasoning",
        "encrypted_content": encrypted, "summary": [{"type": "summary_text", "text": summary}]}}),
    );
    let msg = format!("msg_{n}");
    ev(
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": msg, "type": "message", "role": "assistant", "content": []}}),
    );
    for piece in text.split_inclusive(' ') {
        ev(
            json!({"type": "response.output_text.delta", "item_id": msg, "output_index": 1, "content_index": 0, "delta": piece}),
        );
    }
    ev(
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"id": msg, "type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
    );
    if let Some((name, input)) = call {
        let (fc, args) = (format!("fc_{n}"), input.to_string());
        ev(
            json!({"type": "response.output_item.added", "output_index": 2, "item": {"id": fc, "type": "function_call",
            "call_id": format!("call_{n}"), "name": name, "arguments": ""}}),
        );
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": fc, "output_index": 2, "delta": args}),
        );
        ev(
            json!({"type": "response.function_call_arguments.done", "item_id": fc, "output_index": 2, "arguments": args}),
        );
        ev(
            json!({"type": "response.output_item.done", "output_index": 2, "item": {"id": fc, "type": "function_call",
            "call_id": format!("call_{n}"), "name": name, "arguments": args}}),
        );
    }
    ev(
        json!({"type": "response.completed", "response": {"id": format!("resp_{n}"), "status": "completed",
        "usage": {"input_tokens": 1100, "input_tokens_details": {"cached_tokens": 1000}, "output_tokens": 30}}}),
    );
    out
}

/// The Anthropic stream of reply `n`.
fn anthropic_reply(n: usize, text: &str, call: Option<(&str, serde_json::Value)>) -> String {
    let mut out = String::new();
    let mut ev = |data: serde_json::Value| {
        let name = data["type"].as_str().unwrap_or("").to_string();
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(json!({"type": "message_start", "message": {
        "id": format!("msg_{n}"), "type": "message", "role": "assistant",
        "model": "claude-bench", "content": [], "stop_reason": null,
        "usage": {"input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": 1}}}));
    ev(
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    for piece in text.split_inclusive(' ') {
        ev(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        );
    }
    ev(json!({"type": "content_block_stop", "index": 0}));
    let stop = if let Some((tool, input)) = call {
        ev(
            json!({"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": format!("toolu_{n}"), "name": tool, "input": {}}}),
        );
        ev(json!({"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": input.to_string()}}));
        ev(json!({"type": "content_block_stop", "index": 1}));
        "tool_use"
    } else {
        "end_turn"
    };
    ev(
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 30}}),
    );
    ev(json!({"type": "message_stop"}));
    out
}

/// Serves one keep-alive connection: each request is read whole, sampled,
/// and answered with the next reply.
fn serve(
    stream: TcpStream,
    rounds: usize,
    tool: &str,
    wire: WireFormat,
    samples: &Mutex<Vec<Sample>>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let mut sink = vec![0u8; 1 << 16];
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.trim().eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut left = length;
        while left > 0 {
            let take = left.min(sink.len());
            let n = reader.read(&mut sink[..take])?;
            if n == 0 {
                return Ok(());
            }
            left -= n;
        }
        let mine = cpu(libc::RUSAGE_THREAD);
        let all = cpu(libc::RUSAGE_SELF);
        let exact = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
            .saturating_sub(clock_ns(libc::CLOCK_THREAD_CPUTIME_ID));
        let n = {
            let mut samples = samples.lock().unwrap();
            samples.push(Sample {
                cpu_ns: exact,
                user_ns: all.0.saturating_sub(mine.0),
                sys_ns: all.1.saturating_sub(mine.1),
                body_bytes: length,
                rss_kib: status_kib("VmRSS:"),
            });
            samples.len()
        };
        let body = reply(n, n > rounds, tool, wire);
        // One write, no Nagle: a stall here would be the server's, not ours.
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        writer.write_all(answer.as_bytes())?;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let tool = arg("--tool").unwrap_or_else(|| "read_file".into());
    let tui = args.iter().any(|a| a == "--tui");
    let rounds: usize = arg("--rounds").map_or(2_010, |r| r.parse().unwrap());
    let wire = match arg("--wire").as_deref() {
        None | Some("anthropic") => WireFormat::Anthropic,
        Some("chat") => WireFormat::Chat,
        Some("responses") => WireFormat::Responses,
        Some(other) => panic!("--wire anthropic|chat|responses, not {other}"),
    };
    assert!(rounds >= 30, "at least 30 rounds");

    let dir = tempfile::tempdir().unwrap();
    let part: String = (0..16)
        .map(|i| format!("{i:>3}: fn part_{i}(x: u32) -> u32 {{ x * {i} + 1 }} // pad pad pad\n"))
        .collect();
    std::fs::write(dir.path().join("part.txt"), &part[..1024.min(part.len())]).unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let samples = Arc::new(Mutex::new(Vec::<Sample>::new()));
    {
        let samples = samples.clone();
        let tool = tool.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = serve(stream, rounds, &tool, wire, &samples);
            }
        });
    }

    let retry = RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::default()
    };
    let openai = |model: &str| OpenAiConfig {
        api_key: Some("bench".into()),
        base_url: url.clone(),
        model: model.into(),
        retry: retry.clone(),
        idle_timeout: Duration::from_secs(30),
    };
    let client: Arc<dyn ModelClient> = match wire {
        WireFormat::Anthropic => Arc::new(
            AnthropicClient::new(AnthropicConfig {
                api_key: "bench".into(),
                base_url: url.clone(),
                model: "claude-bench".into(),
                retry: retry.clone(),
                idle_timeout: Duration::from_secs(30),
            })
            .unwrap(),
        ),
        WireFormat::Chat => Arc::new(OpenAiClient::new(openai("gpt-bench")).unwrap()),
        WireFormat::Responses => Arc::new(ResponsesClient::new(openai("gpt-5-codex")).unwrap()),
    };
    let config = AgentConfig {
        max_rounds: u32::try_from(rounds).unwrap() + 10,
        nag_every: 0,
        context_window: Some(1_000_000_000),
        ..AgentConfig::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rss_before = status_kib("VmRSS:");
    let (calls, errors) = rt.block_on(async {
        let handle = Agent::builder(client, Workspace::new(dir.path()).unwrap())
            .config(config)
            .spawn()
            .unwrap();
        if !tui {
            return task::run_task(handle, "Read the file again and again.").await;
        }
        let now = std::time::Instant::now();
        let mut app = waypoint::tui::state::App::new(
            "claude-bench",
            "/work/project",
            waypoint::tui::style::Palette::colored(),
            now,
        );
        let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
        let mut seen = 0usize;
        let done = task::run_task_with(handle, "Read the file again and again.", |event| {
            waypoint::tui::update::on_event(&mut app, event.clone(), now);
            seen += 1;
            if seen.is_multiple_of(20) {
                term.draw(|f| waypoint::tui::view::draw(f, &mut app, now))
                    .unwrap();
            }
        })
        .await;
        std::hint::black_box(&app);
        done
    });
    assert_eq!((calls, errors), (rounds, 0), "every round must run cleanly");

    let samples = samples.lock().unwrap().clone();
    assert_eq!(samples.len(), rounds + 1);
    // Round r (from 1) is what was spent between request r and r + 1.
    let delta = |f: fn(&Sample) -> u64| -> Vec<f64> {
        samples
            .windows(2)
            .map(|w| f(&w[1]).saturating_sub(f(&w[0])) as f64 / 1e6)
            .collect()
    };
    let (cpu, user, sys) = (
        delta(|s| s.cpu_ns),
        delta(|s| s.user_ns),
        delta(|s| s.sys_ns),
    );
    let window = |v: &[f64], round: usize| {
        let from = round.saturating_sub(9).max(1);
        let to = (round + 10).min(v.len());
        // The mean of the window: rusage ticks are coarse (a few µs to
        // a ms), a median of 20 of them would often be 0.
        v[from - 1..to].iter().sum::<f64>() / (to + 1 - from) as f64
    };
    let at = |round: usize| window(&cpu, round);
    println!(
        "long_session: {rounds} rounds of {tool} with 1 KB outputs, {} wire{}",
        match wire {
            WireFormat::Anthropic => "Anthropic",
            WireFormat::Chat => "Chat Completions",
            WireFormat::Responses => "Responses (reasoning items of 1 KB sent back)",
        },
        if tui {
            ", events applied to the TUI"
        } else {
            ""
        }
    );
    let marks: Vec<usize> = [20, 200, 2_000]
        .into_iter()
        .filter(|&r| r + 10 <= rounds)
        .collect();
    let floors: Vec<f64> = marks
        .iter()
        .map(|&r| transport_floor(samples[r].body_bytes, 101))
        .collect();
    for (&r, floor) in marks.iter().zip(&floors) {
        println!(
            "  round {r:>5}: {:>7.3} ms own CPU (about {:.3} user + {:.3} system; mean of rounds \
             {}-{}), request body {} bytes; sending that many bytes alone: {floor:.3} ms",
            at(r),
            window(&user, r),
            window(&sys, r),
            r - 9,
            r + 10,
            samples[r].body_bytes
        );
    }
    if let (Some(&last), Some(&floor_last), Some(&floor_first)) =
        (marks.last(), floors.last(), floors.first())
    {
        println!(
            "  round {last} / round 20: {:.2}x; with the sending of the body taken out: \
             {:.3} / {:.3} ms = {:.2}x",
            at(last) / at(20),
            at(last) - floor_last,
            at(20) - floor_first,
            (at(last) - floor_last) / (at(20) - floor_first)
        );
    }
    let last = samples[samples.len() - 1];
    let early = samples[20];
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "  memory: resident {:.1} MiB before the session, {:.1} MiB at request 20, {:.1} MiB at \
         the last (peak {:.1} MiB); the conversation on the wire: {:.2} MiB at the last request",
        mib(rss_before),
        mib(early.rss_kib),
        mib(last.rss_kib),
        mib(status_kib("VmHWM:")),
        last.body_bytes as f64 / 1048576.0,
    );
    // What each further byte of conversation costs in memory, once the
    // session's fixed costs (runtime, client, tool set) are paid.
    let grown = last.rss_kib.saturating_sub(early.rss_kib) as f64 * 1024.0;
    let added = last.body_bytes.saturating_sub(early.body_bytes) as f64;
    println!(
        "  memory per byte of conversation, request 20 to the last: {:.2}x \
         (resident +{:.1} MiB for +{:.1} MiB of conversation)",
        grown / added,
        grown / 1048576.0,
        added / 1048576.0
    );
}
