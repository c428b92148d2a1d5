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

/// A pid no process has (above any `pid_max`): what a process that is
/// gone is given, harmless to signal.
const NO_PROCESS: i32 = i32::MAX;

/// The pid this process sees for `inner`, a pid written by a process
/// working in `cwd`: a sandboxed command has a PID namespace of its own,
/// so its pids are found by their innermost id (`NSpid`) and folder; a
/// process of this namespace is `inner` itself, when it works in `cwd`.
/// A process found neither way is gone ([`NO_PROCESS`]).
pub fn outer_pid(inner: i32, cwd: &Path) -> i32 {
    let found = live_where(|_, _| true).into_iter().find(|pid| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let nested = status
            .lines()
            .find_map(|l| l.strip_prefix("NSpid:"))
            .map(|ids| ids.split_whitespace().collect::<Vec<_>>())
            .is_some_and(|ids| ids.len() > 1 && ids.last() == Some(&inner.to_string().as_str()));
        nested && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == cwd)
    });
    let here = || std::fs::read_link(format!("/proc/{inner}/cwd")).is_ok_and(|c| c == cwd);
    found.unwrap_or(if here() { inner } else { NO_PROCESS })
}

/// Polls up to `patience` for a complete pid in `file` (written in the
/// file's folder), as this process sees it ([`outer_pid`]).
pub async fn wait_for_pid(file: &Path, patience: Duration) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = read_pid(file) {
            return match file.parent() {
                Some(dir) => outer_pid(pid, dir),
                None => pid,
            };
        }
        assert!(
            start.elapsed() < patience,
            "`{}` was never written",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
