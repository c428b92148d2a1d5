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
