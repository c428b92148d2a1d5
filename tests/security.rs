//! The security promises of the README's "Security model", each checked
//! against the real thing: the API key cannot be read back from the
//! process by the agent's own commands, no key follows a redirect, and an
//! error body is read only up to a bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Anthropic, Turn, sse};
use loopback::{ClientOpts, FakeServer, ProviderWire};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::process::Command;
use waypoint::llm::{LlmError, ModelRequest};

const SECRET: &str = "sk-test-SECRET";

/// The binary (see `cli_support`), working in `dir`.
fn waypoint(dir: &std::path::Path) -> Command {
    let mut cmd = cli_support::waypoint(dir);
    cmd.arg("--workspace").arg(dir);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_commands_cannot_read_the_key_back_from_the_process() {
    let command = r"tr '\0' '\n' < /proc/$PPID/environ; echo CMDLINE; tr '\0' ' ' < /proc/$PPID/cmdline; echo; echo MEM; grep -c sk-test-SECRET /proc/$PPID/environ";
    let server = FakeServer::<Anthropic>::start(vec![
        sse(Turn::tool("bash", json!({ "command": command }))),
        sse(Turn::text("done")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        waypoint(dir.path())
            .args(["-p", "look around"])
            // Unsandboxed: in the sandbox's world Waypoint is not even
            // visible (tests/sandbox_world.rs); here its zeroed
            // environment is what keeps the key.
            .env("WAYPOINT_APPROVAL", "yolo")
            .env("ANTHROPIC_API_KEY", SECRET)
            .env("ANTHROPIC_BASE_URL", &server.url)
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{stderr}");
    // The client still works: both requests carry the key.
    for r in &reqs {
        assert_eq!(r.header("x-api-key"), Some(SECRET));
    }
    let results = reqs[1].last_tool_results();
    let result = results[0]["content"].as_str().unwrap_or_default();
    assert!(!result.contains(SECRET), "the key leaked: {result}");
    // The command did run and read the environment (as root it can; as
    // another user the non-dumpable process refuses).
    assert!(
        result.contains("ANTHROPIC_BASE_URL=") || result.contains("Permission denied"),
        "{result}"
    );
    assert!(result.contains("CMDLINE"), "{result}");
}

/// Answers every connection with `307` to `location`, counting them.
async fn redirecting_server(location: String) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let location = location.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 65536];
                let _ = sock.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (url, hits)
}

async fn redirect_is_refused<W: ProviderWire>(path: &str) {
    // The second server would answer well, and records what it is sent.
    let target = FakeServer::<W>::start(vec![W::text("hello")]).await;
    let location = format!("{}{path}", target.url);
    let (url, hits) = redirecting_server(location.clone()).await;
    let client = W::client(&format!("{url}{}", W::BASE_PATH), &ClientOpts::default());
    let request = ModelRequest {
        system: "s",
        messages: &[waypoint::llm::Message {
            role: waypoint::llm::Role::User,
            content: vec![waypoint::llm::ContentBlock::Text { text: "hi".into() }],
        }],
        tools: &[],
        max_tokens: 16,
        conversation: None,
        session: None,
    };
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        client.stream(&request, &mut |_| {}),
    )
    .await
    .unwrap();
    assert!(
        target.requests().is_empty(),
        "the redirect was followed: {:?}",
        target.requests()
    );
    let err = result.expect_err("a redirect is an error");
    let text = err.to_string();
    assert!(
        text.contains("redirected to") && text.contains(&location) && text.contains("base_url"),
        "{text}"
    );
    assert!(matches!(err, LlmError::Http { status: 307, .. }), "{err:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1, "a redirect is not retried");
}

#[tokio::test]
async fn anthropic_key_does_not_follow_a_redirect() {
    redirect_is_refused::<Anthropic>("/v1/messages").await;
}

#[tokio::test]
async fn openai_key_does_not_follow_a_redirect() {
    redirect_is_refused::<common::openai::OpenAi>("/chat/completions").await;
}

#[tokio::test]
async fn responses_key_does_not_follow_a_redirect() {
    redirect_is_refused::<common::responses::Responses>("/responses").await;
}

/// Answers every connection with `status` and a JSON error followed by
/// `total` bytes of padding, written lazily until the client hangs up.
async fn huge_error_server(status: u16, total: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 65536];
                let _ = sock.read(&mut buf).await;
                let json = r#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#;
                let head = format!(
                    "HTTP/1.1 {status} Oops\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                    json.len() + total
                );
                if sock.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let pad = vec![b' '; 64 * 1024];
                let mut sent = 0;
                while sent < total {
                    let n = pad.len().min(total - sent);
                    if sock.write_all(&pad[..n]).await.is_err() {
                        return;
                    }
                    sent += n;
                }
            });
        }
    });
    url
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_error_body_is_read_only_up_to_a_bound() {
    if vm_hwm_kb(std::process::id()).is_none() {
        eprintln!("skipped: /proc/PID/status has no VmHWM here, so peak memory cannot be measured");
        return;
    }
    let url = huge_error_server(500, 100 * 1024 * 1024).await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = waypoint(dir.path())
        .args(["-p", "hi", "--max-retries", "1", "--retry-base-ms", "10"])
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = tokio::spawn(async move {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s).await;
        s
    });
    let start = Instant::now();
    let mut peak_kb = 0;
    let status = loop {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waypoint did not finish"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let err = reader.await.unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("HTTP 500") && err.contains("boom"), "{err}");
    assert!(
        peak_kb < 50 * 1024,
        "peak RSS {} MB reading a 100 MB error body",
        peak_kb / 1024
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_listening_is_one_clear_line_after_quick_retries() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        waypoint(dir.path())
            .args(["-p", "hi"])
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", &url)
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    let took = start.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "nothing is listening at {url}; is the server running?"
        )),
        "{err}"
    );
    assert_eq!(err.matches("nothing is listening").count(), 1, "{err}");
    assert!(!err.contains("error sending request"), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
}
