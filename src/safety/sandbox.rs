//! The sandbox `bash` runs in: Linux Landlock plus a seccomp filter,
//! prepared in the parent ([`Sandbox::prepare`]) and applied in the child
//! between `fork` and `exec` with raw syscalls only ([`Confinement::apply`]),
//! so no binary is re-launched from disk for a command.
//!
//! Writes go only to the workspace, the system temp folder, cargo's
//! download caches (`registry`, `git` and its lock files, never `bin` or
//! `config.toml`), the configured `sandbox.writable` folders and five device
//! files (`/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`,
//! `/dev/urandom`). A writable candidate holding a folder on `PATH` is left
//! out (what runs later must not be writable). Device nodes cannot be made
//! anywhere; ioctls on devices (ABI 5+) and signals and abstract Unix sockets
//! reaching outside the sandbox (ABI 6+) are refused; reads and execution go
//! everywhere. With `network` off, TCP bind/connect are refused by Landlock
//! (ABI 4+) and seccomp refuses every socket but Unix ones and plain TCP (so
//! no UDP, MPTCP, SCTP, raw, packet, netlink or vsock) and io_uring.
//! Around that, the command gets a separate world ([`super::world`]):
//! namespaces of its own with a private `/tmp`, a `/dev` without
//! terminals, its own `/proc` and no capability. Where the kernel refuses
//! user namespaces, the sandbox says so ([`Confinement::gaps`]) and keeps
//! the confinement above.
//! Invariant: a sandbox that cannot be applied fully is an error before the
//! command runs, never a command run with less protection than promised.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::world::{Places, World};

/// The Landlock ABI this crate version asks for (it degrades to the kernel's).
const ABI_WANTED: ABI = ABI::V7;

/// The device files a command may write (`/dev` itself is not writable).
pub const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What of cargo's home a build needs to write: the download caches and
/// the lock files beside them. Never `bin` (on `PATH`) nor `config.toml`.
const CARGO_CACHES: &[&str] = &["registry", "git"];
const CARGO_LOCKS: &[&str] = &[".package-cache", ".package-cache-mutate", ".global-cache"];

/// What a sandboxed command may touch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sandbox {
    /// Folders (and files) it may write under; reads go everywhere.
    pub writable: Vec<PathBuf>,
    /// Candidates left out, with why (a folder on `PATH` lies beneath them).
    pub left_out: Vec<(PathBuf, String)>,
    /// TCP connections and listening sockets are allowed.
    pub network: bool,
    /// The separate world's places; `None`: Landlock and seccomp only.
    pub world: Option<Places>,
    /// Socket variables (`SSH_AUTH_SOCK`, …) the config lets through.
    pub sockets: Vec<String>,
    /// The confinement, prepared once for the session.
    pub prepared: Prepared,
    /// Plan mode's ([`Sandbox::read_only`]), prepared once too.
    pub prepared_read_only: Prepared,
    /// The last narrowed one ([`Sandbox::narrowed`]), kept while it fits.
    pub prepared_narrowed: Narrowings,
    /// Nothing of the user's is writable (plan mode): not even the
    /// world's private temp folder when the workspace comes back into it.
    pub nothing_writable: bool,
    /// Narrowed to a plan item's files ([`Sandbox::narrowed`]): the
    /// world's private temp folder holding the workspace is not writable.
    pub narrowed: bool,
}

/// A confinement prepared once and shared by every command of a session
/// (the error, when it could not be, as its message).
#[derive(Clone, Default)]
pub struct Prepared(Arc<OnceLock<Result<Arc<Confinement>, String>>>);

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Prepared(yes)"
        } else {
            "Prepared(not yet)"
        })
    }
}

impl Prepared {
    /// The confinement, prepared by `prepare` at the first call.
    pub(super) fn get_or_prepare(
        &self,
        prepare: impl FnOnce() -> Result<Confinement, SandboxError>,
    ) -> Result<Arc<Confinement>, String> {
        self.0
            .get_or_init(|| prepare().map(Arc::new).map_err(|e| e.to_string()))
            .clone()
    }
}

/// Two sandboxes are the same by what they allow, whatever was prepared.
impl PartialEq for Prepared {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Prepared {}

/// The last narrowed confinement prepared, by its writable set: an item's
/// commands share it until the set changes (a declared file made, the
/// next item).
#[derive(Clone, Default)]
pub struct Narrowings(pub(super) Arc<Mutex<Option<Last>>>);

/// A narrowed writable set and its confinement.
type Last = (Vec<PathBuf>, Arc<Confinement>);

impl std::fmt::Debug for Narrowings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Narrowings")
    }
}

/// Two sandboxes are the same by what they allow, whatever was prepared.
impl PartialEq for Narrowings {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Narrowings {}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("this kernel has no Landlock (Linux 5.13+ with Landlock enabled is needed)")]
    Unsupported,
    #[error("the kernel's Landlock (ABI {0}) cannot turn the network off (ABI 4+ is needed)")]
    NoNetworkRules(i32),
    #[error("the sandbox could not be prepared: {0}")]
    Landlock(String),
    #[error("the seccomp filter could not be built: {0}")]
    Seccomp(String),
    #[error("seccomp filters are not supported on this architecture")]
    NoSeccompArch,
}

/// The kernel's Landlock ABI version, if it has Landlock enabled.
pub fn landlock_abi() -> Option<i32> {
    // SAFETY: the documented version query: no pointer is read (NULL, size 0).
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    (v > 0).then(|| i32::try_from(v).unwrap_or(i32::MAX))
}

/// Where the sandbox's defaults come from: the process environment in
/// [`Sandbox::for_workspace`], given explicitly in tests.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub home: Option<PathBuf>,
    pub cargo_home: Option<PathBuf>,
    pub path: Option<OsString>,
    pub temp: PathBuf,
}

impl Origin {
    /// This process's `HOME`, `CARGO_HOME`, `PATH` and temp folder.
    pub fn from_env() -> Self {
        Self {
            home: std::env::var_os("HOME").map(PathBuf::from),
            cargo_home: std::env::var_os("CARGO_HOME").map(PathBuf::from),
            path: std::env::var_os("PATH"),
            temp: std::env::temp_dir(),
        }
    }
}

impl Sandbox {
    /// The sandbox for a workspace, from this process's environment.
    pub fn for_workspace(root: &Path, extra: &[PathBuf], network: bool) -> Self {
        Self::from_origin(root, extra, network, &Origin::from_env())
    }

    /// The sandbox for a workspace: it, the temp folder, cargo's caches,
    /// the device files and `extra` are writable, less any candidate (but
    /// the workspace) that holds a folder on `PATH`.
    pub fn from_origin(root: &Path, extra: &[PathBuf], network: bool, origin: &Origin) -> Self {
        let mut candidates = vec![origin.temp.clone()];
        let cargo_home = origin
            .cargo_home
            .clone()
            .or_else(|| origin.home.as_ref().map(|h| h.join(".cargo")));
        if let Some(cargo) = cargo_home.filter(|c| c.is_dir()) {
            for cache in CARGO_CACHES {
                let dir = cargo.join(cache);
                // Made here so the first download need not create it in
                // cargo's home, which stays read-only.
                let _ = std::fs::create_dir(&dir);
                candidates.push(dir);
            }
            candidates.extend(CARGO_LOCKS.iter().map(|lock| cargo.join(lock)));
        }
        candidates.extend(extra.iter().cloned());
        let on_path: Vec<PathBuf> = origin
            .path
            .as_deref()
            .map(|p| {
                std::env::split_paths(p)
                    .filter(|d| d.is_absolute())
                    .collect()
            })
            .unwrap_or_default();
        let mut writable = vec![root.to_path_buf()];
        let mut left_out = Vec::new();
        for dir in candidates {
            let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            let holds = on_path.iter().find(|p| {
                let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                p.starts_with(&real) || p.starts_with(&dir)
            });
            match holds {
                Some(p) => left_out.push((
                    dir,
                    format!(
                        "{} is on PATH: what runs later is never writable",
                        p.display()
                    ),
                )),
                None if !writable.contains(&dir) => writable.push(dir),
                None => {}
            }
        }
        let env = |name: &str| std::env::var(name).ok();
        let world = Places::for_world(root, &writable[1..], &origin.temp, &env, &[]);
        writable.extend(DEVICE_FILES.iter().map(PathBuf::from));
        Self {
            writable,
            left_out,
            network,
            world: Some(world),
            sockets: Vec::new(),
            prepared: Prepared::default(),
            prepared_read_only: Prepared::default(),
            prepared_narrowed: Default::default(),
            nothing_writable: false,
            narrowed: false,
        }
    }

    /// This sandbox letting the socket variables `names` (and their
    /// sockets) through to commands.
    pub fn with_sockets(mut self, names: &[String]) -> Self {
        if let Some(world) = self.world.as_mut() {
            world.allow(names, &|name| std::env::var(name).ok());
        }
        self.sockets = names.to_vec();
        self
    }

    /// The session's confinement, prepared at its first use.
    pub fn confinement(&self) -> Result<Arc<Confinement>, String> {
        self.prepared.get_or_prepare(|| self.prepare())
    }

    /// Whether `path` (absolute) lies in what the sandbox lets commands write.
    pub fn allows_write(&self, path: &Path) -> bool {
        self.writable.iter().any(|w| path.starts_with(w))
    }

    /// One paragraph for the model and `waypoint sandbox`: what is allowed.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = self
            .writable
            .iter()
            .filter(|p| !p.starts_with("/dev"))
            .map(|p| p.display().to_string())
            .collect();
        let world = match (&self.world, self.prepared.0.get()) {
            (None, _) | (_, Some(Err(_))) => "",
            (Some(_), Some(Ok(c))) if c.gaps().is_some() => "",
            (Some(_), _) => {
                " Each command has a world of its own: a private /tmp (empty at each command), \
                 no terminal, no other process and no capability."
            }
        };
        format!(
            "Commands run in a sandbox: they may read and run anything, but write only under {} \
             (and /dev/null); writes elsewhere fail with \"Permission denied\". The network is {}.{world}",
            shown.join(", "),
            if self.network {
                "on"
            } else {
                "off (only Unix sockets; TCP connects fail)"
            }
        )
    }

    /// The separate world, tried once in a child; the reason when the
    /// kernel refuses it.
    fn world(&self) -> Result<Option<World>, String> {
        let Some(places) = &self.world else {
            return Ok(None);
        };
        let world = World::plan(places, self.network).map_err(|e| e.to_string())?;
        match super::child::trial(world.clone_flags(), &|| world.enter()) {
            Ok(()) => Ok(Some(world)),
            Err(e) => Err(match e.raw_os_error() {
                Some(errno) => world.failure(errno),
                None => e.to_string(),
            }),
        }
    }

    /// The Landlock ruleset, seccomp filter and separate world for the
    /// session's commands, made in the parent (it allocates and opens
    /// files); [`Confinement::enter`] puts them on each child.
    pub fn prepare(&self) -> Result<Confinement, SandboxError> {
        let abi = landlock_abi().ok_or(SandboxError::Unsupported)?;
        let (world, gaps) = match self.world() {
            Ok(world) => (world, None),
            Err(why) => (
                None,
                Some(format!(
                    "no separate world for commands ({why}): they still see the real /tmp, \
                     the terminals in /dev, other processes and the sockets of the user's session"
                )),
            ),
        };
        if !self.network && abi < 4 {
            return Err(SandboxError::NoNetworkRules(abi));
        }
        let ll = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
        let all = AccessFs::from_all(ABI_WANTED);
        // No device node may be made anywhere, even in a writable folder.
        let write = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
        let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(ll)?
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(ll)?;
        if !self.network {
            ruleset = ruleset
                .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
                .map_err(ll)?;
        }
        // What does not exist (no ~/.cargo) is skipped.
        let (devices, mut folders): (Vec<&PathBuf>, Vec<&PathBuf>) = self
            .writable
            .iter()
            .filter(|p| p.exists())
            .partition(|p| p.starts_with("/dev"));
        // In the world, the session's own folders stand for the temp
        // folders and /dev/shm.
        if let Some(world) = &world {
            folders.extend(self.private_writable(world));
        }
        let created = ruleset
            .create()
            .map_err(ll)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))
            .map_err(ll)?
            .add_rules(path_beneath_rules(folders, write))
            .map_err(ll)?
            .add_rules(path_beneath_rules(devices, device))
            .map_err(ll)?;
        let ruleset: Option<OwnedFd> = created.into();
        let ruleset = ruleset.ok_or(SandboxError::Unsupported)?;
        Ok(Confinement {
            ruleset,
            filter: seccomp_filter(self.network)?,
            world,
            gaps,
            sockets: self.sockets.clone(),
        })
    }
}

/// A prepared sandbox: the Landlock ruleset's fd, the seccomp program and
/// the separate world (or why there is none).
#[derive(Debug)]
pub struct Confinement {
    ruleset: OwnedFd,
    filter: BpfProgram,
    world: Option<World>,
    gaps: Option<String>,
    sockets: Vec<String>,
}

impl Confinement {
    /// Why commands get no separate world here, and what they still see.
    pub fn gaps(&self) -> Option<&str> {
        self.gaps.as_deref()
    }

    /// The namespaces a command's child is cloned into (0: none).
    pub fn clone_flags(&self) -> i32 {
        self.world.as_ref().map_or(0, World::clone_flags)
    }

    /// Whether a sandboxed command's environment leaves `name` out: a
    /// variable naming a socket of the user's session, unless allowed.
    pub fn hides_var(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        super::world::SOCKET_VARS.contains(&name.as_ref())
            && !self.sockets.iter().any(|s| *s == name)
    }

    /// Confines a child cloned with [`Self::clone_flags`]: its world, then
    /// [`Self::apply`]. Raw syscalls only (between clone and exec).
    pub fn enter(&self) -> std::io::Result<()> {
        if let Some(world) = &self.world {
            world.enter()?;
        }
        self.apply()
    }

    /// Confines the calling thread for good: no new privileges, the
    /// Landlock domain, then the seccomp filter. Only raw syscalls (no
    /// allocation, no lock), so it may run between `fork` and `exec`.
    pub fn apply(&self) -> std::io::Result<()> {
        // rustix's raw prctl: no allocation, no lock, errno untouched.
        rustix::thread::set_no_new_privs(true)?;
        // SAFETY: a ruleset fd we own, flags 0.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        seccompiler::apply_filter(&self.filter).map_err(|e| match e {
            seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => io,
            _ => std::io::Error::from_raw_os_error(libc::EINVAL),
        })
    }
}

#[cfg(target_arch = "x86_64")]
const ARCH: Option<TargetArch> = Some(TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<TargetArch> = Some(TargetArch::aarch64);
#[cfg(target_arch = "riscv64")]
const ARCH: Option<TargetArch> = Some(TargetArch::riscv64);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const ARCH: Option<TargetArch> = None;

/// The seccomp program: always refuses injecting input into a terminal
/// (`TIOCSTI`, `TIOCLINUX`); with the network off, also every socket but
/// Unix ones and plain TCP (which Landlock confines), and io_uring (which
/// could open sockets past the filter). Refused calls fail with `EACCES`.
fn seccomp_filter(network: bool) -> Result<BpfProgram, SandboxError> {
    let arch = ARCH.ok_or(SandboxError::NoSeccompArch)?;
    let sc = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let cond = |arg: u8, op: Op, value: u64| SeccompCondition::new(arg, Len::Dword, op, value);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let ioctls = [libc::TIOCSTI, libc::TIOCLINUX]
        .into_iter()
        .map(|req| SeccompRule::new(vec![cond(1, Op::Eq, req).map_err(sc)?]).map_err(sc))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctls);
    // What only reaches into the kernel: loading programs and modules,
    // reading other processes' events, replacing the kernel.
    for call in [
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
    ] {
        rules.insert(call, Vec::new());
    }
    if !network {
        let mut socket = Vec::new();
        let unix = libc::AF_UNIX as u64;
        let inet = [libc::AF_INET as u64, libc::AF_INET6 as u64];
        // Domains other than Unix and IP: below, between and above them.
        socket.push(SeccompRule::new(vec![cond(0, Op::Lt, unix).map_err(sc)?]).map_err(sc)?);
        socket.push(
            SeccompRule::new(vec![
                cond(0, Op::Gt, inet[0]).map_err(sc)?,
                cond(0, Op::Lt, inet[1]).map_err(sc)?,
            ])
            .map_err(sc)?,
        );
        socket.push(SeccompRule::new(vec![cond(0, Op::Gt, inet[1]).map_err(sc)?]).map_err(sc)?);
        for domain in inet {
            // IP sockets but plain TCP: another type (the low 4 bits; the
            // rest are SOCK_NONBLOCK/SOCK_CLOEXEC) …
            for kind in 0..16u64 {
                if kind == libc::SOCK_STREAM as u64 {
                    continue;
                }
                socket.push(
                    SeccompRule::new(vec![
                        cond(0, Op::Eq, domain).map_err(sc)?,
                        cond(1, Op::MaskedEq(0xf), kind).map_err(sc)?,
                    ])
                    .map_err(sc)?,
                );
            }
            // … or another protocol than TCP (MPTCP is 262, SCTP 132).
            socket.push(
                SeccompRule::new(vec![
                    cond(0, Op::Eq, domain).map_err(sc)?,
                    cond(2, Op::Ne, 0).map_err(sc)?,
                    cond(2, Op::Ne, libc::IPPROTO_TCP as u64).map_err(sc)?,
                ])
                .map_err(sc)?,
            );
        }
        rules.insert(libc::SYS_socket, socket);
        for call in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            rules.insert(call, Vec::new());
        }
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(sc)?;
    let program: BpfProgram = filter.try_into().map_err(sc)?;
    Ok(x32_guard(arch, program))
}

/// On x86_64, the x32 ABI's syscalls carry the same audit architecture
/// with bit 30 set in their number, so they would miss every rule: refuse
/// them all first (`ENOSYS`).
fn x32_guard(arch: TargetArch, program: BpfProgram) -> BpfProgram {
    if arch != TargetArch::x86_64 {
        return program;
    }
    use seccompiler::sock_filter;
    const X32_BIT: u32 = 0x4000_0000;
    let ld_nr = sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: 0, // offsetof(seccomp_data, nr)
    };
    let is_x32 = sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
        jt: 0,
        jf: 1,
        k: X32_BIT,
    };
    let refuse = sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
    };
    // seccompiler's program starts by checking the architecture itself
    // (and kills a process calling with another one).
    let mut out = vec![ld_nr, is_x32, refuse];
    out.extend(program);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A home beside (not inside) the stand-in temp folder `/tmp/none`.
    fn origin(home: &Path, path: &str) -> Origin {
        Origin {
            home: Some(home.to_path_buf()),
            cargo_home: None,
            path: Some(path.into()),
            temp: PathBuf::from("/tmp/none"),
        }
    }

    #[test]
    fn the_default_set_is_narrow() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo/bin")).unwrap();
        let ws = Path::new("/work/ws");
        let s = Sandbox::from_origin(ws, &[], true, &origin(home.path(), "/usr/bin"));
        let cargo = home.path().join(".cargo");
        let mut want = vec![
            ws.to_path_buf(),
            PathBuf::from("/tmp/none"),
            cargo.join("registry"),
            cargo.join("git"),
        ];
        want.extend(CARGO_LOCKS.iter().map(|l| cargo.join(l)));
        want.extend(DEVICE_FILES.iter().map(PathBuf::from));
        assert_eq!(s.writable, want);
        assert!(!s.allows_write(&cargo.join("bin/waypoint")));
        assert!(!s.allows_write(&cargo.join("config.toml")));
        assert!(!s.allows_write(&home.path().join(".bashrc")));
        assert!(!s.allows_write(Path::new("/dev/sda")));
        assert!(s.allows_write(&cargo.join("registry/src/x")));
        assert!(cargo.join("registry").is_dir(), "made for the first build");
    }

    #[test]
    fn a_folder_on_path_is_never_writable() {
        let home = tempfile::tempdir().unwrap();
        let tools = home.path().join("tools");
        std::fs::create_dir_all(tools.join("bin")).unwrap();
        let path = format!("/usr/bin:{}", tools.join("bin").display());
        let s = Sandbox::from_origin(
            Path::new("/work/ws"),
            std::slice::from_ref(&tools),
            true,
            &origin(home.path(), &path),
        );
        assert!(!s.allows_write(&tools.join("bin/git")));
        assert_eq!(s.left_out.len(), 1, "{:?}", s.left_out);
        assert!(s.left_out[0].1.contains("is on PATH"), "{:?}", s.left_out);
    }

    #[test]
    fn the_filter_compiles_both_ways() {
        let on = seccomp_filter(true).unwrap();
        let off = seccomp_filter(false).unwrap();
        assert!(off.len() > on.len(), "{} vs {}", off.len(), on.len());
    }
}
