//! The shell a command runs in, shared by the `bash` tool, background
//! jobs and hooks: `bash -c` started contained (a session of its own with
//! no terminal, dying with Waypoint, tagged for the sweep, without API
//! keys, confined when asked), and the guard that kills its group and
//! whatever left it.

use super::ToolEnv;
use super::procs::{self, Sweep};
use super::spawn::{self, Child};
use crate::safety::Confinement;

/// Variables never passed to the command, besides any `*_API_KEY`.
const SECRET_VARS: &[&str] = &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

/// Whether the variable `name` holds a secret the command must not see.
pub fn is_secret(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    SECRET_VARS.contains(&name.as_str()) || name.ends_with("_API_KEY")
}

/// `bash -c command` in the workspace, started without copying our
/// memory ([`spawn`]): in a session of its own with no controlling
/// terminal, dying with Waypoint, tagged with the call's `token` for the
/// sweep, without any API key in its environment, and confined when
/// `confinement` is given.
pub fn spawn_shell(
    command: &str,
    env: &ToolEnv<'_>,
    token: &str,
    confinement: Option<&Confinement>,
) -> std::io::Result<Child> {
    // By its absolute path, found outside the workspace (`programs`).
    let bash = crate::programs::get()
        .bash()
        .map_err(std::io::Error::other)?;
    let mut cmd = spawn::Command::new(bash);
    if let Some(session) = &env.config.session {
        cmd.env(procs::SESSION_VAR, session);
    }
    // Waypoint's pid, for the child to check it is still there.
    let parent = i32::try_from(std::process::id()).unwrap_or(0);
    cmd.arg("-c")
        .arg(command)
        .current_dir(env.workspace.root())
        .env(procs::CALL_VAR, token);
    cmd.env_remove_if(is_secret);
    confine(&mut cmd, confinement);
    // Runs in the child before exec and only makes raw syscalls (setsid(2),
    // then the world, prctl, landlock_restrict_self and seccomp in
    // `Confinement::enter`).
    cmd.spawn(&move || {
        // The shell leads its own session and dies with Waypoint.
        spawn::own_session(parent, rustix::process::Signal::KILL)?;
        match confinement {
            Some(c) => c.enter(),
            None => Ok(()),
        }
    })
}

/// A sandboxed command's start: cloned into its world's namespaces, the
/// variables naming the user's session sockets left out. The child then
/// calls [`Confinement::enter`].
pub fn confine(cmd: &mut spawn::Command, confinement: Option<&Confinement>) {
    let Some(c) = confinement else {
        return;
    };
    cmd.namespaces(c.clone_flags());
    for name in crate::safety::SOCKET_VARS {
        if c.hides_var(std::ffi::OsStr::new(name)) {
            cmd.env_remove(name);
        }
    }
}

/// Sends SIGKILL to the process group, then to every process of the call
/// that left it, when asked or when dropped (e.g. the tool future is
/// aborted), so no descendant outlives the call.
pub struct GroupGuard {
    pgid: Option<i32>,
    sweep: Sweep,
    /// The call's end was swept already; the drop has nothing left to do.
    swept: bool,
}

impl GroupGuard {
    /// Guards the group `pgid` leads (a child made with
    /// [`spawn::own_session`]) and what `sweep` finds of it.
    pub fn new(pgid: Option<i32>, sweep: Sweep) -> Self {
        Self {
            pgid,
            sweep,
            swept: false,
        }
    }

    pub fn kill_group(&mut self) {
        // The process group the shell leads (setsid).
        if let Some(pgid) = self.pgid.take().filter(|&g| g > 0)
            && let Some(pgid) = rustix::process::Pid::from_raw(pgid)
        {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }

    /// Kills and reaps what left the group; the drop then has nothing to do.
    pub async fn sweep(&mut self) {
        self.sweep.run_and_reap().await;
        self.swept = true;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_group();
        // Dropped part-way (interrupt, timeout): what the call left is swept here.
        if !self.swept {
            self.sweep.run();
        }
    }
}

/// What a running command moving to the background takes along: its
/// pipes, the output read of them so far, and bytes of a character not
/// yet whole.
pub struct Handover {
    pub out: Option<tokio::net::unix::pipe::Receiver>,
    pub err: Option<tokio::net::unix::pipe::Receiver>,
    pub shown: String,
    pub pending: Vec<u8>,
}
