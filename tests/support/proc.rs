//! Whether a process the tests started still runs, and waiting for it to go.
//! Linux only: it reads `/proc`, as the tests that kill process groups do.

use std::path::Path;
use std::time::{Duration, Instant};

/// True while `pid` is a live process. A zombie (or a dead task) counts as
/// gone: it was killed and only waits for a parent to reap it, and nothing
/// reaps orphans where PID 1 of a container does not.
pub fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "pid (comm) S ...": the state follows the last ')'.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z' | 'X' | 'x') | None)
}

/// The live processes (see [`alive`]) whose `/proc` entries say `keep`
/// of their `stat` line and command line.
fn live_where(keep: impl Fn(&str, &[u8]) -> bool) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            keep(&stat, &cmdline) && alive(pid)
        })
        .collect()
}

/// The live members of process group `group`.
pub fn group_members(group: i32) -> Vec<i32> {
    live_where(|stat, _| {
        // "pid (comm) state ppid pgrp …"
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .is_some_and(|pgrp| pgrp == group.to_string())
    })
}

/// The live processes whose environment holds `var=value` (a mark a test
/// gave what it started, inherited by their children).
pub fn with_env(var: &str, value: &str) -> Vec<i32> {
    let needle = format!("{var}={value}");
    live_where(|_, _| true)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

/// Whether a live process's command line starts with `name`.
pub fn named_alive(name: &str) -> bool {
    !live_where(|_, cmdline| cmdline.starts_with(name.as_bytes())).is_empty()
}

/// The pid written in `file`, once the whole line is there.
pub fn read_pid(file: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(file).ok()?;
    if !text.ends_with('\n') {
        return None;
    }
    text.trim().parse().ok()
}

/// Polls up to `patience` for `pid` to disappear; true once it has.
pub async fn gone_within(pid: i32, patience: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !alive(pid) {
            return true;
        }
        if start.elapsed() >= patience {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls up to `patience` for a complete pid in `file`.
pub async fn wait_for_pid(file: &Path, patience: Duration) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = read_pid(file) {
            return pid;
        }
        assert!(
            start.elapsed() < patience,
            "`{}` was never written",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
