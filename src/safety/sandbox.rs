//! The sandbox `bash` runs in: Linux Landlock, applied by `waypoint sandbox
//! -- CMD` to itself right before it becomes CMD (so nothing is done after
//! `fork` in a threaded process). Writes go only to the workspace, the
//! system temp folder, the build caches (`~/.cargo`, `~/.cache`), the
//! configured `sandbox.writable` folders and `/dev` (for `/dev/null`);
//! reads and execution go everywhere; TCP is refused when `network` is off
//! and the kernel's Landlock can say so (ABI 4+). Invariant: a sandbox that
//! cannot be applied fully is an error before CMD runs, never a command
//! run with less protection than it was promised.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

/// The Landlock ABI this crate version asks for (it degrades to the kernel's).
const ABI_WANTED: ABI = ABI::V6;

/// What a sandboxed command may touch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sandbox {
    /// Folders (and files) it may write under; reads go everywhere.
    pub writable: Vec<PathBuf>,
    /// TCP connections and listening sockets are allowed.
    pub network: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("this kernel has no Landlock (Linux 5.13+ with Landlock enabled is needed)")]
    Unsupported,
    #[error("the kernel's Landlock (ABI {0}) cannot turn the network off (ABI 4+ is needed)")]
    NoNetworkRules(i32),
    #[error("the sandbox could not be applied: {0}")]
    Landlock(String),
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

impl Sandbox {
    /// The sandbox for a workspace: it, the temp folder, the build caches
    /// and `extra` are writable.
    pub fn for_workspace(root: &Path, extra: &[PathBuf], network: bool) -> Self {
        let mut writable = vec![
            root.to_path_buf(),
            std::env::temp_dir(),
            PathBuf::from("/dev"),
        ];
        if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
            writable.push(home.join(".cargo"));
            writable.push(home.join(".cache"));
        }
        if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
            writable.push(PathBuf::from(cargo_home));
        }
        writable.extend(extra.iter().cloned());
        Self { writable, network }
    }

    /// The arguments of `waypoint sandbox` that set this sandbox up, before `--`.
    pub fn args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from("sandbox")];
        for dir in &self.writable {
            args.push("--write".into());
            args.push(dir.clone().into_os_string());
        }
        if !self.network {
            args.push("--no-network".into());
        }
        args
    }

    /// Restricts this thread (and what it runs) for good. Call it in a
    /// process about to `exec` the command, before any other thread exists.
    pub fn enforce(&self) -> Result<(), SandboxError> {
        let abi = landlock_abi().ok_or(SandboxError::Unsupported)?;
        if !self.network && abi < 4 {
            return Err(SandboxError::NoNetworkRules(abi));
        }
        let ll = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(ABI_WANTED))
            .map_err(ll)?;
        if !self.network {
            ruleset = ruleset
                .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
                .map_err(ll)?;
        }
        // Folders that do not exist (no ~/.cargo) are skipped.
        let writable: Vec<&PathBuf> = self.writable.iter().filter(|p| p.exists()).collect();
        let status = ruleset
            .create()
            .map_err(ll)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))
            .map_err(ll)?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(ABI_WANTED)))
            .map_err(ll)?
            .restrict_self()
            .map_err(ll)?;
        match status.ruleset {
            RulesetStatus::NotEnforced => Err(SandboxError::Unsupported),
            // Partly: an older ABI lacks rights such as truncate or ioctl,
            // which it then leaves unrestricted; writes are still confined.
            RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
        }
    }
}

/// What a sandboxed `bash` result says the sandbox stopped, if anything:
/// for a command that failed (its `[exit code: N]` is not 0), the first
/// line naming a refused permission.
pub fn blocked(output: &str) -> Option<&str> {
    let (_, code) = output.trim_end().rsplit_once("[exit code: ")?;
    if code.trim_end_matches(']') == "0" {
        return None;
    }
    output.lines().map(str::trim).find(|l| {
        l.contains("Permission denied")
            || l.contains("Operation not permitted")
            || l.contains("Read-only file system")
    })
}

/// How `bash` starts a sandboxed command: `exe sandbox --write … -- bash -c CMD`
/// (`exe` is the `waypoint` binary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxLaunch {
    pub exe: PathBuf,
    pub sandbox: Sandbox,
}
