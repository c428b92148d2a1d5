//! The separate world a sandboxed command runs in (Linux namespaces): a
//! user namespace of its own (the same uid and gid, no capability left
//! once it is set up), a mount namespace with a private `/tmp`, `/var/tmp`,
//! `$TMPDIR` and runtime folder, a `/dev` holding only `null`, `zero`,
//! `full`, `random`, `urandom` and a private `shm` (no terminal), the
//! user's daemons' sockets masked, and a fresh `/proc` for a PID namespace
//! of its own (no other process, so no other process's environment); an
//! IPC namespace, and with the network off a network namespace with only
//! loopback.
//!
//! Everything is planned once per session in the parent ([`World::plan`]:
//! paths as C strings) and carried out in the child between clone and exec
//! with raw syscalls only ([`World::enter`]). What comes back into a
//! hidden place (the workspace in `/tmp`, the device files) is first taken
//! as a detached copy of its mount (`open_tree`), then placed
//! (`move_mount`): a mount of the user's namespace cannot be bound into
//! the new one, and the copies are made before anything is hidden.

mod enter;

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The device files the world's `/dev` holds (bound from the real ones).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Sockets of well-known daemons that run code or sign for whoever
/// connects; masked (a `/dev/null` bound over them) when they exist
/// outside a hidden folder.
const DAEMON_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/run/dbus/system_bus_socket",
    "/run/systemd/private",
    "/run/snapd.socket",
];

/// Variables that point a command at a socket of the user's session
/// (terminal multiplexer, agent, bus, container daemon): left out of a
/// sandboxed command's environment unless the config names them.
pub const SOCKET_VARS: &[&str] = &[
    "TMUX",
    "TMUX_PANE",
    "STY",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "PULSE_SERVER",
];

/// One step of building the world, all its paths made in the parent.
#[derive(Debug)]
enum Step {
    /// A fresh tmpfs at a path, with its options (`mode=1777`).
    Tmpfs {
        at: CString,
        options: &'static CStr,
    },
    /// A folder (it may be there already).
    Mkdir(CString),
    /// An empty file to bind a file over (it may be there already).
    Touch(CString),
    /// Takes a detached copy of the mount at a path into a slot.
    Take {
        from: CString,
        slot: usize,
    },
    /// Places the copy in a slot over a path.
    Place {
        slot: usize,
        to: CString,
    },
    Symlink {
        target: &'static CStr,
        at: CString,
    },
    /// A mount made read-only (what was placed beneath it stays as it is).
    ReadOnly(CString),
    /// The fresh `/proc` of the command's PID namespace.
    Proc,
    /// Loopback up in the fresh network namespace.
    Loopback,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |c: &CStr| c.to_string_lossy().into_owned();
        match self {
            Self::Tmpfs { at, .. } => write!(f, "mounting a private tmpfs on {}", s(at)),
            Self::Mkdir(p) => write!(f, "making {}", s(p)),
            Self::Touch(p) => write!(f, "making {}", s(p)),
            Self::Take { from, .. } => write!(f, "copying the mount of {}", s(from)),
            Self::Place { to, .. } => write!(f, "bind-mounting {}", s(to)),
            Self::Symlink { at, .. } => write!(f, "linking {}", s(at)),
            Self::ReadOnly(at) => write!(f, "making {} read-only", s(at)),
            Self::Proc => f.write_str("mounting a fresh /proc"),
            Self::Loopback => f.write_str("bringing loopback up"),
        }
    }
}

/// What the world is made of, read from this process at plan time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Places {
    /// The workspace (the command's folder) and the other writable
    /// folders and files, canonical.
    pub writable: Vec<PathBuf>,
    /// Folders replaced by a private tmpfs: the temp folders and the
    /// user's runtime folder.
    pub hidden: Vec<PathBuf>,
    /// `$TMPDIR` when it lies beneath a hidden folder: made again there.
    pub temp: Option<PathBuf>,
    /// Sockets masked.
    pub sockets: Vec<PathBuf>,
}

impl Places {
    /// The places for a workspace: the temp folders and runtime folder
    /// hidden unless the workspace lies in one of them or holds one, the
    /// sockets of `env` (and the daemons') masked unless `allowed`.
    pub fn for_world(
        workspace: &Path,
        writable: &[PathBuf],
        temp: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        allowed: &[&str],
    ) -> Self {
        let real = |p: &Path| p.canonicalize().ok();
        let ws = real(workspace).unwrap_or_else(|| workspace.to_path_buf());
        let mut hidden: Vec<PathBuf> = Vec::new();
        let runtime = env("XDG_RUNTIME_DIR").map(PathBuf::from).or_else(|| {
            let uid = rustix::process::getuid().as_raw();
            Some(PathBuf::from(format!("/run/user/{uid}")))
        });
        let candidates = [
            Some(PathBuf::from("/tmp")),
            Some(PathBuf::from("/var/tmp")),
            Some(temp.to_path_buf()),
            runtime,
        ];
        for dir in candidates.into_iter().flatten().filter_map(|d| real(&d)) {
            // The workspace in a temp folder comes back into the private
            // one; a temp folder that is the workspace or lies in it stays.
            if dir == Path::new("/") || dir.starts_with(&ws) || !dir.is_dir() {
                continue;
            }
            if !hidden.iter().any(|h| dir.starts_with(h)) {
                hidden.retain(|h| !h.starts_with(&dir));
                hidden.push(dir);
            }
        }
        let writable: Vec<PathBuf> = std::iter::once(ws)
            .chain(writable.iter().filter_map(|w| real(w)))
            .collect();
        let temp = real(temp).filter(|t| hidden.iter().any(|h| t.starts_with(h) && t != h));
        let mut sockets: Vec<PathBuf> = Vec::new();
        let from_env = [
            "TMUX",
            "SSH_AUTH_SOCK",
            "DBUS_SESSION_BUS_ADDRESS",
            "DOCKER_HOST",
        ]
        .into_iter()
        .filter(|var| !allowed.iter().any(|a| a == var))
        .filter_map(|var| socket_of(var, &env(var)?));
        let daemons = DAEMON_SOCKETS.iter().map(PathBuf::from);
        for sock in from_env.chain(daemons) {
            let Some(sock) = real(&sock) else { continue };
            let is_socket = std::fs::metadata(&sock).is_ok_and(|m| m.file_type().is_socket());
            let seen = hidden
                .iter()
                .chain(writable.iter())
                .any(|h| sock.starts_with(h));
            if is_socket && !seen && !sockets.contains(&sock) {
                sockets.push(sock);
            }
        }
        Self {
            writable,
            hidden,
            temp,
            sockets,
        }
    }
}

/// The socket a session variable names: `TMUX` is `socket,pid,session`,
/// the bus and Docker addresses are URLs, `SSH_AUTH_SOCK` a path.
fn socket_of(var: &str, value: &str) -> Option<PathBuf> {
    let path = match var {
        "TMUX" => value.split(',').next(),
        "DBUS_SESSION_BUS_ADDRESS" => value
            .split([';', ','])
            .find_map(|part| part.strip_prefix("unix:path=")),
        "DOCKER_HOST" => value.strip_prefix("unix://"),
        _ => Some(value),
    }?;
    Some(PathBuf::from(path))
}

impl Places {
    /// Lets the sockets the variables `names` point at through (unmasked).
    pub fn allow(&mut self, names: &[String], env: &dyn Fn(&str) -> Option<String>) {
        let allowed: Vec<PathBuf> = names
            .iter()
            .filter_map(|var| socket_of(var, &env(var)?))
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        self.sockets.retain(|s| !allowed.contains(s));
    }
}

/// A planned world: the clone flags, the id maps, the steps, the fds
/// they bind from, and where the command starts.
#[derive(Debug)]
pub struct World {
    flags: i32,
    uid_map: CString,
    gid_map: CString,
    steps: Vec<Step>,
    /// The session's own folder, holding what stands for the hidden ones.
    _folder: tempfile::TempDir,
    /// Its folders placed over `/tmp`, … and `/dev/shm`: writable.
    private: Vec<PathBuf>,
    cwd: CString,
    last_cap: u32,
    /// The step that failed, for the parent to name (shared memory: the
    /// child runs on the parent's).
    failed: AtomicUsize,
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
}

/// How many mounts a world brings back at most (the child keeps their
/// copies in an array on its stack).
const SLOTS: usize = 64;

/// The copies to take first and the steps after them, as planned.
#[derive(Default)]
struct Plan {
    takes: Vec<Step>,
    steps: Vec<Step>,
}

impl Plan {
    /// Brings the mount at `from` back over `to` (made first, a folder or
    /// an empty file as `from` is).
    fn bring(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let slot = self.takes.len();
        if slot >= SLOTS {
            return Err(io::Error::other(format!(
                "more than {SLOTS} places to bring into the sandbox"
            )));
        }
        self.takes.push(Step::Take {
            from: cstr(from)?,
            slot,
        });
        self.steps.push(if from.is_dir() {
            Step::Mkdir(cstr(to)?)
        } else {
            Step::Touch(cstr(to)?)
        });
        self.steps.push(Step::Place {
            slot,
            to: cstr(to)?,
        });
        Ok(())
    }
}

/// A folder of the session's own, as open as a temp folder (its parent
/// is the user's alone).
fn private_folder(parent: &Path, name: &str) -> io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = parent.join(name);
    std::fs::create_dir(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777))?;
    Ok(dir)
}

/// The folders from beneath `top` down to `path`, each to be made.
fn mkdirs(top: &Path, path: &Path, steps: &mut Vec<Step>) -> io::Result<()> {
    let Ok(rest) = path.strip_prefix(top) else {
        return Ok(());
    };
    let mut at = top.to_path_buf();
    for part in rest.parent().into_iter().flat_map(Path::components) {
        at.push(part);
        steps.push(Step::Mkdir(cstr(&at)?));
    }
    Ok(())
}

impl World {
    /// Plans the world for `places`, with the network namespace when
    /// `network` is off.
    pub fn plan(places: &Places, network: bool) -> io::Result<Self> {
        let mut plan = Plan::default();
        let folder = tempfile::Builder::new()
            .prefix("waypoint-world-")
            .tempdir()?;
        let mut private = Vec::new();
        // What is hidden first, then what comes back into it.
        for (i, dir) in places.hidden.iter().enumerate() {
            let own = private_folder(folder.path(), &i.to_string())?;
            plan.bring(&own, dir)?;
            private.push(own);
            let mut back: Vec<&PathBuf> = Vec::new();
            for w in places
                .writable
                .iter()
                .filter(|w| w.starts_with(dir) && *w != dir)
            {
                if back.iter().any(|b| w.starts_with(b)) || !w.exists() {
                    continue;
                }
                back.push(w);
                mkdirs(dir, w, &mut plan.steps)?;
                plan.bring(w, w)?;
            }
            if let Some(temp) = places.temp.as_ref().filter(|t| t.starts_with(dir))
                && !back.iter().any(|b| temp.starts_with(b))
            {
                mkdirs(dir, temp, &mut plan.steps)?;
                plan.steps.push(Step::Mkdir(cstr(temp)?));
            }
        }
        for sock in &places.sockets {
            plan.bring(Path::new("/dev/null"), sock)?;
        }
        let shm = Path::new("/dev/shm");
        let shm = if shm.is_dir() {
            let own = private_folder(folder.path(), "shm")?;
            private.push(own.clone());
            Some(own)
        } else {
            None
        };
        Self::plan_dev(&mut plan, shm.as_deref())?;
        if !network {
            plan.steps.push(Step::Loopback);
        }
        plan.steps.push(Step::Proc);
        let mut steps = plan.takes;
        steps.append(&mut plan.steps);
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let map = |id: u32| CString::new(format!("{id} {id} 1"));
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
        flags |= libc::CLONE_NEWIPC;
        if !network {
            flags |= libc::CLONE_NEWNET;
        }
        let ws = places
            .writable
            .first()
            .map_or(Path::new("/"), PathBuf::as_path);
        Ok(Self {
            flags,
            uid_map: map(uid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?,
            gid_map: map(gid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?,
            steps,
            _folder: folder,
            private,
            cwd: cstr(ws)?,
            last_cap: enter::last_cap(),
            failed: AtomicUsize::new(usize::MAX),
        })
    }

    /// `/dev`: a tmpfs holding the device files, the usual links and the
    /// session's own `shm`.
    fn plan_dev(plan: &mut Plan, shm: Option<&Path>) -> io::Result<()> {
        plan.steps.push(Step::Tmpfs {
            at: c"/dev".into(),
            options: c"mode=755",
        });
        for dev in DEVICES {
            plan.bring(Path::new(dev), Path::new(dev))?;
        }
        let steps = &mut plan.steps;
        for (target, at) in [
            (c"/proc/self/fd", "/dev/fd"),
            (c"/proc/self/fd/0", "/dev/stdin"),
            (c"/proc/self/fd/1", "/dev/stdout"),
            (c"/proc/self/fd/2", "/dev/stderr"),
        ] {
            let at = CString::new(at).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            steps.push(Step::Symlink { target, at });
        }
        if let Some(shm) = shm {
            plan.bring(shm, Path::new("/dev/shm"))?;
        }
        // Nothing more is made in it: `> /dev/tty` fails as read-only.
        plan.steps.push(Step::ReadOnly(c"/dev".into()));
        Ok(())
    }

    /// The session's folders that stand for the temp folders and
    /// `/dev/shm` in the world: commands may write them.
    pub fn private_folders(&self) -> &[PathBuf] {
        &self.private
    }

    /// The namespaces the command is cloned into.
    pub fn clone_flags(&self) -> i32 {
        self.flags
    }

    /// What failed in the last child that could not enter, for a message.
    pub fn failure(&self, errno: i32) -> String {
        let err = io::Error::from_raw_os_error(errno);
        match self.failed.load(Ordering::Acquire) {
            0 => format!("writing the user namespace's id maps: {err}"),
            usize::MAX => format!("{err}"),
            n => match self.steps.get(n - 1) {
                Some(step) => format!("{step}: {err}"),
                None => format!("dropping the capabilities: {err}"),
            },
        }
    }

    /// Sets the world up in a child cloned with [`Self::clone_flags`]:
    /// the id maps, each step, every capability dropped (and kept from
    /// coming back on exec as root), then the workspace as its folder.
    /// Raw syscalls only: it runs between clone and exec.
    pub fn enter(&self) -> io::Result<()> {
        let fail = |at: usize| {
            self.failed.store(at, Ordering::Release);
            io::Error::last_os_error()
        };
        // SAFETY (the block): raw syscalls on C strings made in the parent.
        unsafe {
            enter::write_file(c"/proc/self/setgroups", b"deny").map_err(|_| fail(0))?;
            enter::write_file(c"/proc/self/uid_map", self.uid_map.as_bytes())
                .map_err(|_| fail(0))?;
            enter::write_file(c"/proc/self/gid_map", self.gid_map.as_bytes())
                .map_err(|_| fail(0))?;
            // Nothing mounted here reaches the user's mount namespace.
            let (none, no_data) = (std::ptr::null(), std::ptr::null());
            let private = libc::MS_REC | libc::MS_PRIVATE;
            if libc::mount(none, c"/".as_ptr(), none, private, no_data) != 0 {
                return Err(fail(0));
            }
            // The copies taken, on this child's stack.
            let mut slots = [-1; SLOTS];
            for (i, step) in self.steps.iter().enumerate() {
                enter::run_step(step, &mut slots).map_err(|_| fail(i + 1))?;
            }
            enter::drop_capabilities(self.last_cap).map_err(|_| fail(self.steps.len() + 1))?;
            if libc::chdir(self.cwd.as_ptr()) != 0 {
                return Err(fail(usize::MAX));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_workspace_in_tmp_comes_back_into_the_private_tmp() {
        let ws = tempfile::tempdir_in("/tmp").unwrap();
        let ws = ws.path().canonicalize().unwrap();
        let places = Places::for_world(&ws, &[], Path::new("/tmp"), &no_env, &[]);
        assert!(places.hidden.contains(&PathBuf::from("/tmp")), "{places:?}");
        let world = World::plan(&places, true).unwrap();
        let steps: Vec<String> = world.steps.iter().map(ToString::to_string).collect();
        let tmpfs = steps.iter().position(|s| s == "bind-mounting /tmp");
        let back = steps
            .iter()
            .position(|s| *s == format!("bind-mounting {}", ws.display()));
        assert!(tmpfs.is_some() && back > tmpfs, "{steps:#?}");
        assert_eq!(
            steps.last().unwrap(),
            "mounting a fresh /proc",
            "{steps:#?}"
        );
        assert_eq!(world.clone_flags() & libc::CLONE_NEWNET, 0);
        let off = World::plan(&places, false).unwrap();
        assert_ne!(off.clone_flags() & libc::CLONE_NEWNET, 0);
    }

    #[test]
    fn a_workspace_that_is_the_temp_folder_keeps_it() {
        let places = Places::for_world(Path::new("/tmp"), &[], Path::new("/tmp"), &no_env, &[]);
        assert!(
            !places.hidden.contains(&PathBuf::from("/tmp")),
            "{places:?}"
        );
    }

    #[test]
    fn the_sockets_named_in_the_environment_are_masked_unless_allowed() {
        // Outside every folder the world hides (a checkout may be in /tmp).
        let base = ["/dev/shm", env!("CARGO_MANIFEST_DIR")]
            .into_iter()
            .find(|b| {
                let hidden = ["/tmp", "/var/tmp"].iter().any(|h| b.starts_with(h));
                !hidden && tempfile::tempdir_in(b).is_ok()
            })
            .unwrap();
        let dir = tempfile::tempdir_in(base).unwrap();
        let sock = dir.path().join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let sock = sock.canonicalize().unwrap();
        let value = sock.display().to_string();
        let env = |name: &str| (name == "SSH_AUTH_SOCK").then(|| value.clone());
        let ws = Path::new("/nonexistent-ws");
        let masked = Places::for_world(ws, &[], Path::new("/tmp"), &env, &[]);
        assert!(masked.sockets.contains(&sock), "{masked:?}");
        let kept = Places::for_world(ws, &[], Path::new("/tmp"), &env, &["SSH_AUTH_SOCK"]);
        assert!(!kept.sockets.contains(&sock), "{kept:?}");
        let mut later = masked;
        later.allow(&["SSH_AUTH_SOCK".to_string()], &env);
        assert!(!later.sockets.contains(&sock), "{later:?}");
    }
}
