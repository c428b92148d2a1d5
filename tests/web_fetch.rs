//! `web_fetch` through the real binary on a loopback model, against a
//! web server the test starts on 127.0.0.1: a page allowed by
//! `web_allow` comes back as Markdown; a redirect from it to `localhost`
//! (not allowed) is refused at that hop; without `web_allow` the loopback
//! address is refused; in read-only mode the call is refused before any
//! request; a body past 5 MiB is cut and says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Anthropic, Turn, sse};
use loopback::{FakeServer, ProviderWire, Recorded};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PAGE: &str = "<html><head><title>T</title><script>evil()</script></head><body><h1>Release notes</h1><p>Version <b>2.0</b> is out. See <a href=\"https://example.com/changes\">the changes</a>.</p></body></html>";

/// A web server: `/page` (HTML), `/hop` (a redirect to `localhost`),
/// `/big` (6 MiB of text); it counts the requests it served.
async fn web() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let count = count.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                count.fetch_add(1, Ordering::SeqCst);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, kind, body, extra) = match path.as_str() {
                    "/page" => (
                        "200 OK",
                        "text/html; charset=utf-8",
                        PAGE.to_string(),
                        String::new(),
                    ),
                    "/hop" => (
                        "302 Found",
                        "text/plain",
                        String::new(),
                        format!("Location: http://localhost:{port}/page\r\n"),
                    ),
                    "/big" => (
                        "200 OK",
                        "text/plain",
                        "x".repeat(6 * 1024 * 1024),
                        String::new(),
                    ),
                    _ => ("404 Not Found", "text/plain", "no".into(), String::new()),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), served)
}

fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

/// Runs one headless task whose model fetches each of `urls` in turn;
/// the results the model read, in order.
async fn fetched(config: &str, approval: &str, urls: Vec<String>) -> Vec<(bool, String)> {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    let n = urls.len();
    let server = FakeServer::<Anthropic>::responding(Arc::new(move |r: &Recorded| {
        match urls.get(step(r)) {
            Some(url) => sse(Turn::tool("web_fetch", json!({"url": url}))),
            None => sse(Turn::text("Read them.")),
        }
    }))
    .await;
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, Anthropic::MODEL);
    cmd.env("WAYPOINT_CONFIG", home.path().join("config.toml"))
        .env("WAYPOINT_APPROVAL", approval)
        .args(["-p", "read the release notes"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let requests = server.requests();
    (1..=n)
        .map(|i| {
            let result = &requests[i].last_tool_results()[0];
            (result["is_error"] == true, result["content"].to_string())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_page_reads_as_markdown_and_each_hop_is_checked() {
    let (base, served) = web().await;
    let results = fetched(
        "web_allow = [\"127.0.0.1\"]\n",
        "yolo",
        vec![
            format!("{base}/page"),
            format!("{base}/hop"),
            format!("{base}/big"),
        ],
    )
    .await;
    let (error, page) = &results[0];
    assert!(!error, "{page}");
    assert!(page.contains("# Release notes"), "{page}");
    assert!(page.contains("Version **2.0** is out."), "{page}");
    assert!(
        page.contains("[the changes](https://example.com/changes)"),
        "{page}"
    );
    assert!(!page.contains("evil()"), "{page}");
    let (error, hop) = &results[1];
    assert!(error, "{hop}");
    assert!(hop.contains("localhost is at"), "{hop}");
    let (error, big) = &results[2];
    assert!(!error);
    assert!(
        big.contains("[cut: only the first 5 MiB were read]"),
        "{}",
        &big[big.len() - 200..]
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        3,
        "the refused hop was never requested"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_is_refused_without_web_allow_and_read_only_refuses_the_call() {
    let (base, served) = web().await;
    let results = fetched(
        "",
        "yolo",
        vec![format!("{base}/page"), "file:///etc/passwd".into()],
    )
    .await;
    assert!(
        results[0].0 && results[0].1.contains("non-public address"),
        "{:?}",
        results[0]
    );
    assert!(
        results[1].0 && results[1].1.contains("read_file"),
        "{:?}",
        results[1]
    );
    let results = fetched(
        "web_allow = [\"127.0.0.1\"]\n",
        "read-only",
        vec![format!("{base}/page")],
    )
    .await;
    assert!(results[0].1.contains("read-only mode"), "{:?}", results[0]);
    assert_eq!(served.load(Ordering::SeqCst), 0, "nothing was requested");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_network_switched_off_refuses_it() {
    if waypoint::safety::landlock_abi().is_none() {
        eprintln!("skipped: without Landlock there is no sandbox whose network could be off");
        return;
    }
    let (base, served) = web().await;
    let config = "web_allow = [\"127.0.0.1\"]\n[sandbox]\nnetwork = false\n";
    let results = fetched(config, "yolo", vec![format!("{base}/page")]).await;
    assert!(
        results[0].0 && results[0].1.contains("network is off"),
        "{:?}",
        results[0]
    );
    assert_eq!(served.load(Ordering::SeqCst), 0);
}
