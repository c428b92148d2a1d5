//! Running one hook: `bash -c COMMAND` in the workspace, the event's JSON
//! on stdin, contained like the `bash` tool (a session of its own with
//! no terminal, dying with Waypoint, no API key in its environment,
//! confined between fork and exec when a confinement is given), with
//! `WAYPOINT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` set to the workspace.
//! Invariant: when [`run`] returns, the hook's whole group and whatever
//! left it have been killed, whether it ended, timed out or was
//! interrupted; at most [`CAP`] bytes of each stream are kept.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::procs::{self, Sweep};
use super::shell::{GroupGuard, is_secret};
use super::spawn;
use crate::hooks::run::{Ended, HookRun};
use crate::safety::Confinement;

/// The most of stdout and of stderr kept.
pub const CAP: usize = 256 * 1024;

/// How long the pipes may stay open after the hook ended (a child that
/// left its group holds them until the sweep kills it).
const DRAIN: Duration = Duration::from_secs(2);

/// Where and how hooks run.
pub struct Place<'a> {
    pub root: &'a Path,
    /// The recorded session's id, marked on the hook's processes.
    pub session: Option<&'a str>,
    /// The sandbox's, in auto mode.
    pub confinement: Option<&'a Confinement>,
    pub cancel: &'a CancellationToken,
}

/// Runs `command` with `payload` on its stdin, for at most `timeout`.
pub async fn run(command: &str, payload: &[u8], timeout: Duration, place: &Place<'_>) -> HookRun {
    let started = Instant::now();
    let done = |ended, stdout: Vec<u8>, stderr: Vec<u8>| HookRun {
        command: command.to_string(),
        ended,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        duration: started.elapsed(),
    };
    if place.cancel.is_cancelled() {
        return done(Ended::Cancelled, Vec::new(), Vec::new());
    }
    procs::become_subreaper();
    let sweep = Sweep::new();
    let mut child = match spawn_hook(command, place, &sweep.token) {
        Ok(child) => child,
        Err(e) => return done(Ended::Failed(e.to_string()), Vec::new(), Vec::new()),
    };
    let mut group = GroupGuard::new(
        Some(child.id()),
        Sweep {
            session: Some(child.id()),
            shell: Some(child.id()),
            ..sweep
        },
    );
    let stdin = child.stdin.take();
    let payload = payload.to_vec();
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its stdin is not an error.
            let _ = stdin.write_all(&payload).await;
        }
    });
    let out = tokio::spawn(read_capped(child.stdout.take()));
    let err = tokio::spawn(read_capped(child.stderr.take()));
    let ended = tokio::select! {
        status = child.wait() => match status {
            Ok(st) => {
                use std::os::unix::process::ExitStatusExt;
                match (st.code(), st.signal()) {
                    (Some(code), _) => Ended::Exited(code),
                    (None, Some(sig)) => Ended::Signal(sig),
                    (None, None) => Ended::Failed("no exit status".into()),
                }
            }
            Err(e) => Ended::Failed(format!("waiting for it failed: {e}")),
        },
        () = tokio::time::sleep(timeout) => Ended::TimedOut,
        () = place.cancel.cancelled() => Ended::Cancelled,
    };
    group.kill_group();
    if !matches!(ended, Ended::Exited(_) | Ended::Signal(_)) {
        let _ = child.wait().await;
    }
    group.sweep().await;
    writer.abort();
    let take = |h: tokio::task::JoinHandle<Vec<u8>>| async move {
        tokio::time::timeout(DRAIN, h)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    };
    let (stdout, stderr) = tokio::join!(take(out), take(err));
    done(ended, stdout, stderr)
}

/// `bash -c command` in the workspace, as a contained child.
fn spawn_hook(command: &str, place: &Place<'_>, token: &str) -> std::io::Result<spawn::Child> {
    // By its absolute path, found outside the workspace (`programs`).
    let bash = crate::programs::get()
        .bash()
        .map_err(std::io::Error::other)?;
    let mut cmd = spawn::Command::new(bash);
    cmd.arg("-c")
        .arg(command)
        .current_dir(place.root)
        .env(procs::CALL_VAR, token)
        .env("WAYPOINT_PROJECT_DIR", place.root)
        .env("CLAUDE_PROJECT_DIR", place.root)
        .piped_stdin();
    if let Some(session) = place.session {
        cmd.env(procs::SESSION_VAR, session);
    }
    cmd.env_remove_if(is_secret);
    let confinement = place.confinement;
    super::shell::confine(&mut cmd, confinement);
    let parent = i32::try_from(std::process::id()).unwrap_or(0);
    cmd.spawn(&move || {
        spawn::own_session(parent, rustix::process::Signal::KILL)?;
        match confinement {
            Some(c) => c.enter(),
            None => Ok(()),
        }
    })
}

/// Everything `pipe` gives until it closes, the first [`CAP`] bytes kept.
async fn read_capped(pipe: Option<tokio::net::unix::pipe::Receiver>) -> Vec<u8> {
    let Some(mut pipe) = pipe else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place<'a>(root: &'a Path, cancel: &'a CancellationToken) -> Place<'a> {
        Place {
            root,
            session: None,
            confinement: None,
            cancel,
        }
    }

    #[tokio::test]
    async fn a_hook_reads_its_payload_and_its_streams_are_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let run = run(
            "cat; echo; echo \"$CLAUDE_PROJECT_DIR\" >&2; exit 3",
            b"{\"a\":1}",
            Duration::from_secs(10),
            &place(dir.path(), &cancel),
        )
        .await;
        assert_eq!(run.ended, Ended::Exited(3));
        assert_eq!(run.stdout, "{\"a\":1}\n");
        assert_eq!(run.stderr.trim(), dir.path().display().to_string());
    }

    #[tokio::test]
    async fn a_hook_past_its_timeout_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let pid_file = dir.path().join("pid");
        let command = format!(
            "setsid sleep 30 & echo $! > {}; sleep 30",
            pid_file.display()
        );
        let started = Instant::now();
        let run = run(
            &command,
            b"",
            Duration::from_millis(300),
            &place(dir.path(), &cancel),
        )
        .await;
        assert_eq!(run.ended, Ended::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Signal 0 only checks the pid.
        let pid = rustix::process::Pid::from_raw(pid).unwrap();
        let alive = rustix::process::test_kill_process(pid).is_ok();
        assert!(!alive, "the escaped sleep was swept");
        assert!(run.describe_failure().contains("timed out"));
    }
}
