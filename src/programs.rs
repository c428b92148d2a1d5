//! The programs Waypoint runs itself: `git` (checkpoints, undo's merge),
//! `bash` (commands, jobs, hooks) and `tmux` (which terminal runs it). Each is found once, on the `PATH`
//! entries outside the workspace and the temp folders (an entry that is
//! relative, or lies in either, or a program whose real file does, is
//! passed over), and run by its absolute path: a command that writes
//! `bin/git` into the workspace never gets it run by Waypoint.
//!
//! Waypoint's own git also runs with no terminal (a session of its own,
//! stdin on `/dev/null`), without the system's config and with a time
//! limit ([`output_within`]), so a repository's config cannot make it
//! read the user's typing or hang.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The programs found, and what was passed over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Programs {
    pub git: Option<PathBuf>,
    pub bash: Option<PathBuf>,
    /// Asked, inside tmux, which terminal runs it (for notifications).
    pub tmux: Option<PathBuf>,
    /// `PATH` entries passed over, with why.
    pub passed_over: Vec<(PathBuf, &'static str)>,
}

static TRUSTED: OnceLock<Programs> = OnceLock::new();

/// Finds the programs for a session in `workspace` (the first call wins:
/// a process works in one workspace).
pub fn trust(workspace: &Path) -> &'static Programs {
    TRUSTED.get_or_init(|| Programs::resolve(std::env::var_os("PATH").as_deref(), workspace))
}

/// The programs found by [`trust`], or else found now with the current
/// folder as the workspace.
pub fn get() -> &'static Programs {
    match TRUSTED.get() {
        Some(p) => p,
        None => trust(&std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))),
    }
}

/// The folders nothing Waypoint runs may come from: the workspace and
/// the temp folders (anyone's commands can write them).
fn untrusted(workspace: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![
        workspace.to_path_buf(),
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    let real: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    dirs.extend(real);
    dirs
}

impl Programs {
    /// Finds `git`, `bash` and `tmux` on `path`, passing over what lies in the
    /// workspace or a temp folder.
    pub fn resolve(path: Option<&OsStr>, workspace: &Path) -> Self {
        let bad = untrusted(workspace);
        let mut out = Self::default();
        let entries: Vec<PathBuf> = path
            .map(|p| std::env::split_paths(p).collect())
            .unwrap_or_default();
        let mut trusted = Vec::new();
        for entry in entries {
            let why = if entry.as_os_str().is_empty() || entry.is_relative() {
                Some("a relative PATH entry (it names a folder of the current one)")
            } else {
                let real = entry.canonicalize().unwrap_or_else(|_| entry.clone());
                bad.iter()
                    .any(|b| entry.starts_with(b) || real.starts_with(b))
                    .then_some("in the workspace or a temp folder")
            };
            match why {
                Some(why) => out.passed_over.push((entry, why)),
                None => trusted.push(entry),
            }
        }
        let find = |name: &str| {
            trusted.iter().map(|d| d.join(name)).find(|p| {
                let real = p.canonicalize().unwrap_or_else(|_| p.clone());
                is_executable(p) && !bad.iter().any(|b| real.starts_with(b))
            })
        };
        out.git = find("git");
        out.bash = find("bash");
        out.tmux = find("tmux");
        out
    }

    /// `git`'s absolute path, or why there is none.
    pub fn git(&self) -> Result<&Path, String> {
        self.git.as_deref().ok_or_else(|| {
            "git was not found on PATH outside the workspace and the temp folders".to_string()
        })
    }

    /// `bash`'s absolute path, or why there is none.
    pub fn bash(&self) -> Result<&Path, String> {
        self.bash.as_deref().ok_or_else(|| {
            "bash was not found on PATH outside the workspace and the temp folders".to_string()
        })
    }
}

/// Whether `path` is a file someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Waypoint's own `git`: by its trusted path, the user's `GIT_*`
/// variables left out (they would point it at the user's repository,
/// index or config), no system config, no prompt, stdin on `/dev/null`
/// and in a session of its own, so no config can make it read the
/// terminal.
pub fn git() -> Result<Command, String> {
    let mut cmd = Command::new(get().git()?);
    for (key, _) in std::env::vars_os() {
        if key.as_encoded_bytes().starts_with(b"GIT_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    // SAFETY: setsid(2) is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(cmd)
}

/// Runs `cmd` (`input` on its stdin) and collects its output, killing it
/// at `limit`: then an error that says so.
pub fn output_within(
    cmd: &mut Command,
    input: Option<&[u8]>,
    limit: Duration,
) -> std::io::Result<Output> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn()?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(bytes);
    }
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "it did not finish within {} s and was stopped",
                    limit.as_secs()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_git_in_the_workspace_or_a_relative_entry_is_passed_over() {
        let ws = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let bin = ws.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for name in ["git", "bash"] {
            let planted = bin.join(name);
            std::fs::write(&planted, "#!/bin/sh\ntouch /tmp/planted\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::env::join_paths([
            bin.clone(),
            PathBuf::from("bin"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin"),
        ])
        .unwrap();
        let found = Programs::resolve(Some(&path), ws.path());
        let git = found.git().unwrap();
        assert!(!git.starts_with(ws.path()), "{git:?}");
        assert!(!found.bash().unwrap().starts_with(ws.path()));
        assert_eq!(found.passed_over.len(), 2, "{:?}", found.passed_over);
        let none = Programs::resolve(Some(bin.as_os_str()), ws.path());
        assert!(none.git().is_err());
    }

    #[test]
    fn a_command_past_its_limit_is_stopped() {
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        let start = Instant::now();
        let e = output_within(&mut cmd, None, Duration::from_millis(100)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        assert!(start.elapsed() < Duration::from_secs(2));
        let mut echo = Command::new("cat");
        let out = output_within(&mut echo, Some(b"hi"), Duration::from_secs(5)).unwrap();
        assert_eq!(out.stdout, b"hi");
    }
}
