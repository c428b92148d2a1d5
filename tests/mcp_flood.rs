//! A server that floods `notifications/tools/list_changed` (a review saw
//! 200,000 notices make 91,208 `tools/list` requests and 1.3 GB of
//! memory): the notices are coalesced, one re-list in flight and at most
//! one more after it, and the list kept is the server's last. The server
//! is `tests/fixtures/mcp/flood-server.cjs`, plain Node.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use waypoint::events::McpStatus;
use waypoint::mcp::{McpServerConfig, Servers, Settings};

const NOTICES: usize = 20_000;

/// Waits up to `limit` for `seen` to hold a `Ready` with `tools` tools.
async fn ready_with(seen: &Mutex<Vec<McpStatus>>, tools: usize, limit: Duration) {
    let began = Instant::now();
    loop {
        {
            let seen = seen.lock().unwrap();
            if seen
                .iter()
                .any(|s| matches!(s, McpStatus::Ready { tools: t, .. } if *t == tools))
            {
                return;
            }
            assert!(
                began.elapsed() < limit,
                "no Ready with {tools} tools in {limit:?}: {seen:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn number_in(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_list_changed_notices_is_listed_again_a_few_times_not_once_each() {
    let Some(node) = support::mcp::node() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (pid_file, count_file) = (dir.path().join("pid"), dir.path().join("lists"));
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/flood-server.cjs");
    let env = [
        ("WAYPOINT_TEST_FLOOD", NOTICES.to_string()),
        ("WAYPOINT_TEST_PID_FILE", pid_file.display().to_string()),
        ("WAYPOINT_TEST_COUNT_FILE", count_file.display().to_string()),
    ];
    let config = McpServerConfig {
        command: Some(node),
        args: vec![script.display().to_string()],
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        ..McpServerConfig::default()
    };
    let mut settings = Settings::default();
    settings.servers.insert("flood".into(), config);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let servers = Servers::start(
        &settings,
        dir.path().to_path_buf(),
        Arc::new(move |name: &str, status: McpStatus| {
            if name == "flood" {
                sink.lock().unwrap().push(status);
            }
        }),
    );
    ready_with(&seen, 1, Duration::from_secs(30)).await;
    assert_eq!(number_in(&count_file), 1, "the start's own tools/list");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill has no memory-safety preconditions; the pid is the
    // server this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGUSR2) }, 0);
    ready_with(&seen, 3, Duration::from_secs(60)).await;
    // Anything still coming would come now.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let relists = number_in(&count_file) - 1;
    eprintln!("{NOTICES} notices: {relists} tools/list requests");
    assert!(
        (1..=3).contains(&relists),
        "{NOTICES} notices made {relists} tools/list requests"
    );
    let last = seen.lock().unwrap().last().cloned();
    assert!(
        matches!(last, Some(McpStatus::Ready { tools: 3, .. })),
        "the last list is the server's last: {last:?}"
    );
    drop(servers);
}
