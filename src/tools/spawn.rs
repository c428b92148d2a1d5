//! Starting a command without copying Waypoint's memory. `fork` copies the
//! page tables of the whole process and makes every page copy-on-write
//! until the child execs, so a command costs more the longer the session
//! has grown; here the child is made with `clone(CLONE_VM | CLONE_VFORK)`
//! (what `posix_spawn` does inside glibc), sharing the parent's memory on a
//! stack of its own while the parent thread waits, until it execs.
//!
//! Invariants: everything the child needs (the program's path, argv, envp,
//! the directory, the pipes) is made in the parent before the clone; the
//! child makes raw syscalls only (no allocation, no lock, no parent signal
//! handler can run in it: every signal is blocked across the clone and the
//! child sets every caught one back to its default before it unblocks
//! them); a failure in the child (the setup, `chdir`, `execve`) is written
//! to memory the parent reads after it resumes, and the child is reaped.
//! The child's exit is awaited on a pidfd (Linux 5.3+), or polled where
//! there is none; a [`Child`] dropped before it was reaped is killed and
//! left to the sweep's reaper.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use crate::safety::child::{BlockedSignals, Stack, default_signals};

/// How often a child is polled for its exit where there is no pidfd.
const POLL_EVERY: Duration = Duration::from_millis(5);

/// What to run: a program found on `PATH`, its arguments, the directory
/// and the environment (Waypoint's own, with changes).
#[derive(Debug)]
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    set: Vec<(OsString, OsString)>,
    /// Inherited variables left out when this says so.
    hidden: Option<fn(&OsStr) -> bool>,
    /// Inherited variables left out by name.
    removed: Vec<OsString>,
    /// Stdin is a pipe the parent writes (else `/dev/null`).
    piped_stdin: bool,
    /// Namespaces the child is cloned into (`CLONE_NEW*`).
    namespaces: i32,
}

impl Command {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: None,
            set: Vec::new(),
            hidden: None,
            removed: Vec::new(),
            piped_stdin: false,
            namespaces: 0,
        }
    }

    /// The child starts in new namespaces (`CLONE_NEW*` flags); in a new
    /// PID namespace it is its first process.
    pub fn namespaces(&mut self, flags: i32) -> &mut Self {
        self.namespaces = flags;
        self
    }

    /// Leaves the inherited variable `name` out.
    pub fn env_remove(&mut self, name: impl AsRef<OsStr>) -> &mut Self {
        self.removed.push(name.as_ref().to_owned());
        self
    }

    /// Stdin becomes a pipe, written through [`Child::stdin`].
    pub fn piped_stdin(&mut self) -> &mut Self {
        self.piped_stdin = true;
        self
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        let name = name.as_ref().to_owned();
        self.set.retain(|(n, _)| *n != name);
        self.set.push((name, value.as_ref().to_owned()));
        self
    }

    /// Leaves out every inherited variable whose name `hide` picks (what
    /// [`Self::env`] sets is always passed).
    pub fn env_remove_if(&mut self, hide: fn(&OsStr) -> bool) -> &mut Self {
        self.hidden = Some(hide);
        self
    }

    /// The environment the child gets: ours, less what is hidden, with
    /// what was set.
    fn environment(&self) -> Vec<(OsString, OsString)> {
        let hidden = |n: &OsStr| {
            self.hidden.is_some_and(|hide| hide(n)) || self.removed.iter().any(|r| r == n)
        };
        let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(n, _)| !hidden(n) && !self.set.iter().any(|(s, _)| s == n))
            .collect();
        vars.extend(self.set.iter().cloned());
        vars
    }

    /// Starts the command with stdin on `/dev/null` (or a pipe, see
    /// [`Command::piped_stdin`]) and stdout and stderr on pipes. `setup` runs in the child after the pipes and the directory
    /// are in place and before `execve`: it may make raw syscalls only.
    pub fn spawn(&self, setup: &(dyn Fn() -> io::Result<()> + Sync)) -> io::Result<Child> {
        let vars = self.environment();
        let path = vars
            .iter()
            .find(|(n, _)| n == "PATH")
            .map(|(_, v)| v.as_os_str());
        let program = find_program(&self.program, path)?;
        let prepared = Prepared::new(
            program,
            &self.program,
            &self.args,
            &vars,
            self.cwd.as_deref(),
            self.piped_stdin,
        )?;
        if self.namespaces & libc::CLONE_NEWPID != 0 {
            parent_pidfd();
        }
        let pid = prepared.clone_child(setup, self.namespaces)?;
        let Prepared {
            out, err, input, ..
        } = prepared;
        Child::started(pid, out.read, err.read, input.map(|p| p.write))
    }
}

/// What a contained child does first, between clone and exec, with raw
/// syscalls only: a new session and process group that it leads, with no
/// controlling terminal (`/dev/tty` cannot be opened); `death_signal` when
/// Waypoint dies (kill -9 included); and if Waypoint (`parent`) died
/// already, before that took effect, it never starts.
pub fn own_session(parent: i32, death_signal: Signal) -> io::Result<()> {
    // rustix's raw syscalls: no allocation, no lock, errno untouched.
    rustix::process::setsid()?;
    rustix::process::set_parent_process_death_signal(Some(death_signal))?;
    match Pid::as_raw(rustix::process::getppid()) {
        ppid if ppid == parent => Ok(()),
        // The first process of a new PID namespace: its parent is outside
        // and seen through the pidfd taken before the clone.
        0 if parent_alive() => Ok(()),
        _ => Err(io::Error::from_raw_os_error(libc::ESRCH)),
    }
}

/// A pidfd of this process, opened once (before the first clone into a
/// new PID namespace) and read by such children.
static PARENT_PIDFD: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();

fn parent_pidfd() {
    let me = rustix::process::getpid();
    PARENT_PIDFD.get_or_init(|| pidfd_open(me).ok().flatten());
}

/// Whether this process's parent (Waypoint) still runs, by its pidfd
/// (readable once it exited). Raw syscalls only.
fn parent_alive() -> bool {
    let Some(Some(fd)) = PARENT_PIDFD.get() else {
        // No pidfd on this kernel: the death signal alone.
        return true;
    };
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let mut poll = [PollFd::new(fd, PollFlags::IN)];
    matches!(rustix::event::poll(&mut poll, Some(&now)), Ok(0))
}

/// The program to run: `name` itself when it names a path, else the first
/// executable file called `name` in a folder of `path`.
fn find_program(name: &OsStr, path: Option<&OsStr>) -> io::Result<CString> {
    let not_found = || {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("`{}` was not found on PATH", name.to_string_lossy()),
        )
    };
    if name.as_bytes().contains(&b'/') {
        return cstring(name.to_owned());
    }
    let path = path.ok_or_else(not_found)?;
    for dir in std::env::split_paths(path) {
        let candidate = dir.join(name);
        if crate::programs::is_executable(&candidate) {
            return cstring(candidate.into_os_string());
        }
    }
    Err(not_found())
}

fn cstring(s: OsString) -> io::Result<CString> {
    CString::new(s.into_vec()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL byte in the command, its arguments or its environment",
        )
    })
}

/// The two ends of a pipe.
struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    fn new() -> io::Result<Self> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok(Self { read, write })
    }
}

/// Everything the child reads, made before the clone.
struct Prepared {
    program: CString,
    /// Kept alive for the pointers in `argv` and `envp`.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    cwd: Option<CString>,
    null: OwnedFd,
    input: Option<Pipe>,
    out: Pipe,
    err: Pipe,
}

impl Prepared {
    fn new(
        program: CString,
        name: &OsStr,
        args: &[OsString],
        vars: &[(OsString, OsString)],
        cwd: Option<&Path>,
        piped_stdin: bool,
    ) -> io::Result<Self> {
        let mut strings = Vec::with_capacity(1 + args.len() + vars.len());
        strings.push(cstring(name.to_owned())?);
        for a in args {
            strings.push(cstring(a.clone())?);
        }
        let argc = strings.len();
        for (n, v) in vars {
            let mut pair = n.clone();
            pair.push("=");
            pair.push(v);
            strings.push(cstring(pair)?);
        }
        let ptrs = |s: &[CString]| {
            s.iter()
                .map(|c| c.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let (argv, envp) = (ptrs(&strings[..argc]), ptrs(&strings[argc..]));
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")?
            .into();
        Ok(Self {
            program,
            argv,
            envp,
            _strings: strings,
            cwd: cwd.map(|c| cstring(c.as_os_str().to_owned())).transpose()?,
            null,
            input: piped_stdin.then(Pipe::new).transpose()?,
            out: Pipe::new()?,
            err: Pipe::new()?,
        })
    }

    /// Clones the child and waits for it to exec (or fail); its pid.
    fn clone_child(
        &self,
        setup: &(dyn Fn() -> io::Result<()> + Sync),
        namespaces: i32,
    ) -> io::Result<Pid> {
        let stack = Stack::new()?;
        let args = ChildArgs {
            prepared: self,
            setup,
            errno: AtomicI32::new(0),
        };
        let blocked = BlockedSignals::all()?;
        // SAFETY: `child_main` runs on `stack` (ours, big enough, its top
        // 16-byte aligned) sharing our memory; CLONE_VFORK suspends this
        // thread until the child execs or exits, so `args` and `stack` stay
        // alive for as long as it uses them. SIGCHLD is its exit signal.
        let pid = unsafe {
            libc::clone(
                child_main,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | namespaces,
                std::ptr::from_ref(&args).cast_mut().cast(),
            )
        };
        let clone_error = io::Error::last_os_error();
        drop(blocked);
        if pid == -1 {
            return Err(clone_error);
        }
        let Some(pid) = Pid::from_raw(pid) else {
            return Err(clone_error);
        };
        match args.errno.load(Ordering::Acquire) {
            0 => Ok(pid),
            errno => {
                // It exited without exec: reap it now.
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
                Err(io::Error::from_raw_os_error(errno))
            }
        }
    }
}

/// What the child gets: the prepared strings and fds, the caller's setup,
/// and where it writes the errno of what failed.
struct ChildArgs<'a> {
    prepared: &'a Prepared,
    setup: &'a (dyn Fn() -> io::Result<()> + Sync),
    errno: AtomicI32,
}

/// The child, between clone and exec: signals back to their defaults, the
/// standard streams, the directory, the caller's setup, an empty signal
/// mask, exec. Raw syscalls only.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildArgs` the parent passed to clone, alive
    // (the parent is suspended) until this execs or exits.
    let args = unsafe { &*arg.cast::<ChildArgs<'_>>() };
    let fail = |errno: i32| -> libc::c_int {
        args.errno.store(errno.max(1), Ordering::Release);
        // SAFETY: _exit never returns and touches no shared state.
        unsafe { libc::_exit(127) }
    };
    let last = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL)
    };
    let p = args.prepared;
    // SAFETY (the block): raw syscalls on fds and memory prepared by the
    // parent, which stay valid while it is suspended.
    unsafe {
        default_signals();
        for (from, to) in [
            (p.input.as_ref().map_or(&p.null, |i| &i.read).as_raw_fd(), 0),
            (p.out.write.as_raw_fd(), 1),
            (p.err.write.as_raw_fd(), 2),
        ] {
            // dup2 onto itself keeps close-on-exec: clear it instead.
            let rc = if from == to {
                libc::fcntl(to, libc::F_SETFD, 0)
            } else {
                libc::dup2(from, to)
            };
            if rc == -1 {
                return fail(last());
            }
        }
        if let Some(cwd) = &p.cwd
            && libc::chdir(cwd.as_ptr()) == -1
        {
            return fail(last());
        }
        if let Err(e) = (args.setup)() {
            return fail(e.raw_os_error().unwrap_or(libc::EINVAL));
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::execve(p.program.as_ptr(), p.argv.as_ptr(), p.envp.as_ptr());
    }
    fail(last())
}

/// A started command: its pid, its output pipes, and its exit, awaited on
/// a pidfd where the kernel has them.
#[derive(Debug)]
pub struct Child {
    pid: Pid,
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
    pub stdin: Option<pipe::Sender>,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
}

impl Child {
    fn started(pid: Pid, out: OwnedFd, err: OwnedFd, input: Option<OwnedFd>) -> io::Result<Self> {
        let mut child = Self {
            pid,
            pidfd: None,
            status: None,
            stdin: None,
            stdout: None,
            stderr: None,
        };
        // From here a failure drops `child`, which kills and reaps it.
        child.pidfd = match pidfd_open(pid)? {
            // SAFETY: the pidfd is owned by the AsyncFd, so it stays open
            // and the same for as long as the AsyncFd lives.
            Some(fd) => Some(unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?),
            None => None,
        };
        child.stdin = input.map(pipe::Sender::from_owned_fd).transpose()?;
        child.stdout = Some(pipe::Receiver::from_owned_fd(out)?);
        child.stderr = Some(pipe::Receiver::from_owned_fd(err)?);
        Ok(child)
    }

    pub fn id(&self) -> i32 {
        self.pid.as_raw_nonzero().get()
    }

    /// Waits for the child to exit and reaps it (again: its status).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match &self.pidfd {
                Some(fd) => fd.readable().await?.clear_ready(),
                None => tokio::time::sleep(POLL_EVERY).await,
            }
        }
    }

    /// The exit status if the child has exited (it is then reaped).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        match rustix::process::waitpid(Some(self.pid), WaitOptions::NOHANG)? {
            None => Ok(None),
            Some((_, raw)) => {
                let status = ExitStatus::from_raw(raw.as_raw());
                self.status = Some(status);
                Ok(Some(status))
            }
        }
    }
}

impl Drop for Child {
    /// Killed if still running; reaped now if it is already dead, else by
    /// the next sweep.
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // Our unreaped child: its pid cannot have been reused.
        let _ = rustix::process::kill_process(self.pid, Signal::KILL);
        if !matches!(self.try_wait(), Ok(Some(_))) {
            super::procs::reap_later(self.id());
        }
    }
}

/// A pidfd for `pid`, `None` where the kernel has none (before 5.3).
fn pidfd_open(pid: Pid) -> io::Result<Option<OwnedFd>> {
    match rustix::process::pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOSYS) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn output(child: &mut Child) -> (String, String) {
        let (mut out, mut err) = (String::new(), String::new());
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .await
            .unwrap();
        (out, err)
    }

    #[tokio::test]
    async fn runs_with_args_dir_env_and_the_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg("pwd -P; echo \"$WP_SET|${HOME-unset}|${PATH:+path}\"; echo oops >&2; exit 7")
            .current_dir(dir.path())
            .env("WP_SET", "yes")
            // Every inherited variable but PATH is hidden; a set one is not.
            .env_remove_if(|n| n != "PATH");
        let mut child = cmd.spawn(&|| Ok(())).unwrap();
        let (out, err) = output(&mut child).await;
        let status = child.wait().await.unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(out, format!("{}\nyes|unset|path\n", root.display()));
        assert_eq!(err, "oops\n");
        assert_eq!(status.code(), Some(7));
        // Waiting again gives the same status.
        assert_eq!(child.wait().await.unwrap().code(), Some(7));
    }

    #[tokio::test]
    async fn stdin_is_null_and_sigpipe_is_the_default() {
        let mut cmd = Command::new("bash");
        // `yes` dies of SIGPIPE when `head` is done (ignored, it would loop
        // on EPIPE and print an error).
        cmd.arg("-c")
            .arg("cat; yes | head -n 2; echo \"${PIPESTATUS[0]}\"");
        let mut child = cmd.spawn(&|| Ok(())).unwrap();
        let (out, err) = output(&mut child).await;
        assert_eq!(out, "y\ny\n141\n");
        assert_eq!(err, "");
        assert!(child.wait().await.unwrap().success());
    }

    #[tokio::test]
    async fn a_piped_stdin_is_what_the_parent_writes_until_it_closes_it() {
        use tokio::io::AsyncWriteExt;
        let mut cmd = Command::new("bash");
        cmd.arg("-c").arg("tr a-z A-Z").piped_stdin();
        let mut child = cmd.spawn(&|| Ok(())).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"hello\n").await.unwrap();
        drop(stdin);
        let (out, _) = output(&mut child).await;
        assert_eq!(out, "HELLO\n");
        assert!(child.wait().await.unwrap().success());
    }

    #[tokio::test]
    async fn a_failing_setup_says_why_and_nothing_runs() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let mut cmd = Command::new("bash");
        cmd.arg("-c").arg(format!("touch {}", marker.display()));
        let err = cmd
            .spawn(&|| Err(io::Error::from_raw_os_error(libc::EPERM)))
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM));
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn a_missing_program_or_directory_is_an_error() {
        let err = Command::new("waypoint-no-such-program")
            .spawn(&|| Ok(()))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        assert!(
            err.to_string().contains("waypoint-no-such-program"),
            "{err}"
        );
        let err = Command::new("bash")
            .current_dir("/nonexistent/waypoint")
            .spawn(&|| Ok(()))
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
        let err = Command::new("bash")
            .arg("a\0b")
            .spawn(&|| Ok(()))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[tokio::test]
    async fn a_dropped_child_is_killed_and_reaped_by_the_sweep() {
        let child = Command::new("sleep").arg("30").spawn(&|| Ok(())).unwrap();
        let pid = child.id();
        drop(child);
        // Killed at once; reaped by the next sweep's pass over the queue.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            super::super::procs::Sweep::new().run();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            if stat.is_err() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{stat:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn the_parent_signal_mask_is_kept_and_the_child_starts_unmasked() {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg("grep -E '^Sig(Blk|Ign)' /proc/self/status");
        let before = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let mut child = cmd.spawn(&|| Ok(())).unwrap();
        let after = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let line = |s: &str, key: &str| s.lines().find(|l| l.starts_with(key)).unwrap().to_string();
        assert_eq!(line(&before, "SigBlk"), line(&after, "SigBlk"));
        let (out, _) = output(&mut child).await;
        assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
        child.wait().await.unwrap();
    }
}
