//! Process containment for the `bash` tool: finds, kills and reaps every
//! process a call left behind, even those that left its process group
//! (`set -m` job control) or its session (`setsid`, daemons).
//!
//! Each call is marked with a token in its environment
//! (`WAYPOINT_TOOL_CALL=<token>`), which every descendant inherits, and runs
//! in a session of its own. The waypoint process is a child subreaper, so an
//! orphan of a call is re-parented to us rather than to init.
//!
//! Invariant: [`Sweep::run`] only ever signals processes that carry the
//! call's token, or that are our descendants in the call's session; and it
//! only reaps (`waitpid` on one pid, never `-1`) processes it killed itself
//! or zombies of that session re-parented to us, never the call's own shell
//! (tokio owns and reaps it). So unrelated children of the waypoint process
//! (another test's command, a child tokio or std waits for) are untouched.
//! A process that both clears its environment and leaves the session (e.g.
//! `setsid env -i …`) escapes the sweep; everything else dies with its call.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions};

/// The environment variable holding a call's token.
pub const CALL_VAR: &str = "WAYPOINT_TOOL_CALL";

/// The environment variable holding the recorded session's id.
pub const SESSION_VAR: &str = "WAYPOINT_SESSION";

/// Rounds of scan-and-kill; a process forking while we scan is caught by
/// the next round.
const MAX_ROUNDS: usize = 20;

/// How long [`Sweep::run_and_reap`] waits for killed processes to die.
const REAP_PATIENCE: Duration = Duration::from_millis(500);

/// Killed pids that were not dead yet when last checked, reaped by a later sweep.
static UNREAPED: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Leaves the killed child `pid` to be reaped by a later sweep (it was not
/// dead yet when its owner let go of it).
pub fn reap_later(pid: i32) {
    if let Ok(mut v) = UNREAPED.lock() {
        v.push(pid);
    }
}

/// We are a child subreaper: every process a call left behind is still one
/// of our descendants, so a sweep need not read the whole of `/proc`.
static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process a child subreaper, once: orphans of our commands are
/// re-parented to us, where a sweep finds and reaps them. Failure (not
/// Linux, or an old kernel) only means orphans go to init; the token still
/// finds them.
pub fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Any pid: the flag is "not zero".
        let rc = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        SUBREAPER.store(rc.is_ok(), Ordering::Relaxed);
        if let Err(e) = rc {
            tracing::warn!(
                error = %std::io::Error::from(e),
                "cannot become a child subreaper; orphaned commands are found by their token only"
            );
        }
    });
}

/// What identifies one call's processes.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Unique per call within this machine: our pid, a counter and the time.
    pub token: String,
    /// The session the call's shell leads (its pid), once it started.
    pub session: Option<i32>,
    /// The call's shell, which its [`Child`](super::spawn::Child) reaps:
    /// never waited for here.
    pub shell: Option<i32>,
}

impl Sweep {
    /// A fresh token for a new call.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        Self {
            token: format!(
                "{}-{}-{nanos}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            session: None,
            shell: None,
        }
    }

    /// Kills every process of the call that is still alive and reaps what
    /// is already dead; returns the pids it killed. Synchronous and quick
    /// (a scan of `/proc`), so it also runs from `Drop`.
    pub fn run(&self) -> Vec<i32> {
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        let needle = format!("{CALL_VAR}={}", self.token);
        let mut killed = Vec::new();
        let mut table = HashMap::new();
        for _ in 0..MAX_ROUNDS {
            table = scan();
            let mut found = 0;
            for (&pid, info) in &table {
                if pid == me || Some(pid) == self.shell || info.zombie {
                    continue;
                }
                let in_session =
                    self.session.is_some_and(|s| s == info.sid) && descends_from(&table, pid, me);
                if in_session || has_token(pid, &needle) {
                    kill(pid);
                    killed.push(pid);
                    found += 1;
                }
            }
            if found == 0 {
                break;
            }
        }
        // Zombies of the session re-parented to us (e.g. `(cmd &)` that
        // finished on its own; the last scan, which found nothing left to
        // kill, shows them) and whatever we killed.
        let mut reap: HashSet<i32> = killed.iter().copied().collect();
        if let Some(session) = self.session {
            for (&pid, info) in &table {
                if info.zombie && info.ppid == me && info.sid == session {
                    reap.insert(pid);
                }
            }
        }
        if let Some(shell) = self.shell {
            reap.remove(&shell);
        }
        let mut pending = UNREAPED
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        pending.extend(reap);
        let left: Vec<i32> = pending.into_iter().filter(|&pid| !try_reap(pid)).collect();
        if let Ok(mut v) = UNREAPED.lock() {
            v.extend(left);
        }
        killed
    }

    /// [`Sweep::run`], then waits (briefly, without blocking the thread)
    /// for the killed processes to die and reaps them.
    pub async fn run_and_reap(&self) {
        let killed = self.run();
        if killed.is_empty() {
            return;
        }
        let start = std::time::Instant::now();
        while start.elapsed() < REAP_PATIENCE {
            let pending: Vec<i32> = UNREAPED.lock().map(|v| v.clone()).unwrap_or_default();
            let left: Vec<i32> = pending.into_iter().filter(|&pid| !try_reap(pid)).collect();
            let done = left.iter().all(|pid| !killed.contains(pid));
            if let Ok(mut v) = UNREAPED.lock() {
                *v = left;
            }
            if done {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Default for Sweep {
    fn default() -> Self {
        Self::new()
    }
}

/// Ends what a run of `session` that is gone (killed, crashed) left
/// running: every process carrying the session's id whose call token names
/// a Waypoint process that no longer exists. Returns each as `` `sleep 60`
/// (pid 123) ``. A process of a live Waypoint is never touched.
pub fn end_leftovers(session: &str) -> Vec<String> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let needle = format!("{SESSION_VAR}={session}");
    let mut ended = Vec::new();
    let mut seen = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let mut found = 0;
        for (pid, info) in scan_all() {
            if pid == me || info.zombie || seen.contains(&pid) || !has_token(pid, &needle) {
                continue;
            }
            let owner = call_owner(pid);
            if owner
                .is_some_and(|o| o == me || std::path::Path::new(&format!("/proc/{o}")).exists())
            {
                continue;
            }
            // Named before it is killed (a dead process has no command line).
            let named = format!("`{}` (pid {pid})", command_line(pid));
            kill(pid);
            seen.insert(pid);
            found += 1;
            ended.push(named);
        }
        if found == 0 {
            break;
        }
    }
    ended
}

/// The Waypoint pid a process's call token names (`PID-N-NANOS`).
fn call_owner(pid: i32) -> Option<i32> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{CALL_VAR}=");
    environ
        .split(|&b| b == 0)
        .find_map(|var| var.strip_prefix(prefix.as_bytes()))
        .and_then(|token| std::str::from_utf8(token).ok())
        .and_then(|token| token.split('-').next())
        .and_then(|p| p.parse().ok())
}

/// A process's command line, one clean line of at most 60 characters.
fn command_line(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let line = crate::text::clean_line(&words.join(" ")).into_owned();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line
    }
}

/// Reaps `pid` if it is our child and dead; true when there is nothing
/// left to wait for (reaped, or not our child at all).
fn try_reap(pid: i32) -> bool {
    let Some(pid) = positive(pid) else {
        return true;
    };
    // None: our child, still running. An error: not our child (ECHILD) or gone.
    !matches!(
        rustix::process::waitpid(Some(pid), WaitOptions::NOHANG),
        Ok(None)
    )
}

/// SIGKILL to the process `pid` (one pid, never a group).
fn kill(pid: i32) {
    if let Some(pid) = positive(pid) {
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
}

/// `raw` as a process id: `None` for 0 and negative numbers (which would
/// address groups or every process).
fn positive(raw: i32) -> Option<Pid> {
    if raw > 0 { Pid::from_raw(raw) } else { None }
}

struct ProcInfo {
    ppid: i32,
    sid: i32,
    zombie: bool,
}

/// The processes a sweep looks at, with their parent, session and whether
/// they are zombies: our descendants when we are a subreaper (found through
/// `/proc/PID/task/*/children`, a few reads instead of one per process on
/// the machine), else every process in `/proc`.
fn scan() -> HashMap<i32, ProcInfo> {
    if SUBREAPER.load(Ordering::Relaxed)
        && let Ok(me) = i32::try_from(std::process::id())
        && let Some(table) = scan_descendants(me)
    {
        return table;
    }
    scan_all()
}

/// Our descendants, breadth first; `None` when the kernel does not list
/// children (no `CONFIG_PROC_CHILDREN`).
fn scan_descendants(me: i32) -> Option<HashMap<i32, ProcInfo>> {
    let mut table = HashMap::new();
    let mut queue = vec![me];
    let mut first = true;
    while let Some(pid) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = match std::fs::read_to_string(task.path().join("children")) {
                Ok(text) => text,
                Err(_) if first => return None,
                Err(_) => continue,
            };
            first = false;
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
            {
                if table.contains_key(&child) || child == me {
                    continue;
                }
                if let Some(info) = read_stat(child) {
                    table.insert(child, info);
                    queue.push(child);
                }
            }
        }
    }
    Some(table)
}

/// Every process in `/proc`.
fn scan_all() -> HashMap<i32, ProcInfo> {
    let mut table = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return table;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(info) = read_stat(pid) {
            table.insert(pid, info);
        }
    }
    table
}

/// Parses `/proc/PID/stat`: "pid (comm) S ppid pgrp session …"; the comm
/// may hold spaces and parentheses, so fields are counted after the last ')'.
fn read_stat(pid: i32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let _pgrp = fields.next()?;
    let sid = fields.next()?.parse().ok()?;
    Some(ProcInfo {
        ppid,
        sid,
        zombie: matches!(state, "Z" | "X" | "x"),
    })
}

/// Whether `pid` is a descendant of `ancestor` (bounded against loops in a
/// table read while processes come and go).
fn descends_from(table: &HashMap<i32, ProcInfo>, mut pid: i32, ancestor: i32) -> bool {
    for _ in 0..table.len() {
        match table.get(&pid) {
            Some(info) if info.ppid == ancestor => return true,
            Some(info) if info.ppid > 1 => pid = info.ppid,
            _ => return false,
        }
    }
    false
}

/// Whether the environment `pid` started with holds `needle` (`NAME=value`).
fn has_token(pid: i32, needle: &str) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environ
        .split(|&b| b == 0)
        .any(|var| var == needle.as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_follow_the_last_parenthesis() {
        let me = i32::try_from(std::process::id()).unwrap();
        let info = read_stat(me).unwrap();
        assert!(!info.zombie);
        assert_eq!(info.ppid, Pid::as_raw(rustix::process::getppid()));
        // Not rustix's getsid: it panics when the session's leader lives
        // outside our pid namespace (getsid answers 0 there, as in CI).
        // SAFETY: getsid(0) reads the caller's session id and touches no memory.
        let sid = unsafe { libc::getsid(0) };
        assert_eq!(info.sid, sid);
    }

    #[test]
    fn the_descendant_scan_finds_a_grandchild() {
        // The test process need not be a subreaper: a child of ours and its
        // own child are our descendants either way.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        let me = i32::try_from(std::process::id()).unwrap();
        // Where the kernel lists children, the walk must find both.
        let listed = std::path::Path::new(&format!("/proc/{me}/task/{me}/children")).exists();
        match scan_descendants(me) {
            Some(table) => {
                assert!(table.contains_key(&(child.id() as i32)));
                assert!(table.contains_key(&grandchild), "{grandchild} is found");
                assert!(descends_from(&table, grandchild, me));
            }
            None => assert!(!listed, "the kernel lists children, yet the walk gave up"),
        }
        kill(grandchild);
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn tokens_are_unique() {
        assert_ne!(Sweep::new().token, Sweep::new().token);
    }

    #[test]
    fn a_sweep_without_processes_kills_nothing() {
        assert!(Sweep::new().run().is_empty());
    }
}
