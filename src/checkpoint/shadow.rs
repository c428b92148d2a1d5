//! The shadow repository: a git repository of Waypoint's own (its own
//! `GIT_DIR` and, per session, its own index, under Waypoint's data
//! folder) that snapshots the work tree so changes made by commands can be
//! undone too. Invariants: every git run here names the shadow's
//! `GIT_DIR`, `GIT_INDEX_FILE` and work tree explicitly, with the user's
//! `GIT_*` variables and global and system config left out, so nothing of
//! the user's repository (`.git`, index, HEAD, refs, stash) is ever
//! written; contents are stored byte for byte (no filters, line-ending
//! or encoding conversions: `info/attributes` turns them off); untracked
//! files over the size cap are left out and listed.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::StoreError;

pub use crate::events::checkpoint::Entry;

/// How long one of the checkpoints' git commands may take (a first
/// snapshot of a large repository takes seconds) before it is stopped.
const GIT_LIMIT: Duration = Duration::from_secs(120);

/// The prefix of a shadow repository blob's reference.
pub const GIT: &str = "git:";

/// Untracked files larger than this are not snapshotted (listed instead).
pub const DEFAULT_CAP: u64 = 10 * 1024 * 1024;

impl Entry {
    pub fn is_file(&self) -> bool {
        self.mode & 0o170000 == 0o100000
    }

    /// A symlink (its blob is the link's target).
    pub fn is_link(&self) -> bool {
        self.mode & 0o170000 == 0o120000
    }
}

/// A path that differs between two snapshots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delta {
    pub path: String,
    pub from: Option<Entry>,
    pub to: Option<Entry>,
}

/// A snapshot taken: its tree, and the untracked files left out for their size.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub tree: String,
    pub skipped: Vec<(String, u64)>,
}

/// The shadow repository of one work tree, as one session uses it.
#[derive(Debug)]
pub struct Shadow {
    git_dir: PathBuf,
    work_tree: PathBuf,
    index: PathBuf,
    excludes: PathBuf,
    session: String,
    cap: u64,
    /// The user's own ignore files (their repository's `info/exclude`
    /// and their global excludes file), read into the session's excludes.
    user_excludes: Vec<u8>,
    skipped: Mutex<BTreeMap<String, u64>>,
}

impl Shadow {
    /// The shadow of `work_tree` under `data` for `session`; `None` when
    /// the work tree is not in a git repository (or git is missing).
    pub fn open(
        data: &Path,
        work_tree: &Path,
        session: &str,
        cap: u64,
    ) -> Result<Option<Shadow>, StoreError> {
        let Some(user_git_dir) = user_repository(work_tree) else {
            return Ok(None);
        };
        let key = hex(&Sha256::digest(work_tree.as_os_str().as_bytes()));
        let git_dir = data.join(format!("{}.git", &key[..16]));
        let shadow = Shadow {
            index: git_dir.join(format!("index-{session}")),
            excludes: git_dir.join(format!("exclude-{session}")),
            git_dir,
            work_tree: work_tree.to_path_buf(),
            session: session.to_string(),
            cap,
            user_excludes: user_excludes(&user_git_dir),
            skipped: Mutex::new(BTreeMap::new()),
        };
        shadow.init()?;
        Ok(Some(shadow))
    }

    /// The untracked files left out for their size (a poisoned lock's
    /// data is plain and stays usable).
    fn skipped(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        self.skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    fn init(&self) -> Result<(), StoreError> {
        let context = |source| StoreError::Prepare {
            dir: self.git_dir.clone(),
            source,
        };
        if !self.git_dir.join("HEAD").exists() {
            std::fs::create_dir_all(&self.git_dir).map_err(context)?;
            let mut cmd = crate::programs::git().map_err(StoreError::NoGit)?;
            cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(["init", "-q", "--bare"])
                .arg(&self.git_dir)
                .current_dir(&self.git_dir);
            let out =
                crate::programs::output_within(&mut cmd, None, GIT_LIMIT).map_err(|source| {
                    StoreError::Run {
                        what: "init for checkpoints".into(),
                        source,
                    }
                })?;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(StoreError::InitFailed(err.trim().to_string()));
            }
            for (key, value) in [
                ("core.bare", "false"),
                ("gc.auto", "0"),
                ("core.autocrlf", "false"),
                ("core.safecrlf", "false"),
                ("core.looseCompression", "1"),
                ("core.untrackedCache", "true"),
                ("core.fsmonitor", "false"),
                ("core.symlinks", "true"),
                ("core.filemode", "true"),
            ] {
                self.run(&["config", key, value], None)?;
            }
            let info = self.git_dir.join("info");
            std::fs::create_dir_all(&info).map_err(context)?;
            std::fs::write(
                info.join("attributes"),
                "* -text -filter -ident -working-tree-encoding\n",
            )
            .map_err(context)?;
        }
        // A new session's index starts as a copy of the newest one of the
        // workspace: a cache of what each file hashed to, so its first
        // snapshot re-reads only what changed (not the whole tree).
        if !self.index.exists()
            && let Some(newest) = newest_index(&self.git_dir)
        {
            let _ = std::fs::copy(newest, &self.index);
        }
        // A snapshot cut off (kill -9) leaves its lock; this session's
        // index is only ever used by this session's one process.
        let _ = std::fs::remove_file(self.index.with_extension("lock"));
        let lock = PathBuf::from(format!("{}.lock", self.index.display()));
        let _ = std::fs::remove_file(lock);
        self.write_excludes()
    }

    fn write_excludes(&self) -> Result<(), StoreError> {
        let mut text = self.user_excludes.clone();
        text.extend_from_slice(b"\n# untracked files over the size cap\n");
        for path in self.skipped().keys() {
            text.extend_from_slice(&ignore_line(path));
            text.push(b'\n');
        }
        std::fs::write(&self.excludes, text).map_err(StoreError::Excludes)
    }

    /// A git command on the shadow repository, the user's environment
    /// for git left out.
    fn command(&self) -> Result<Command, StoreError> {
        let mut cmd = crate::programs::git().map_err(StoreError::NoGit)?;
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .arg("-c")
            .arg(OsString::from(format!(
                "core.excludesFile={}",
                self.excludes.display()
            )))
            .current_dir(&self.work_tree);
        Ok(cmd)
    }

    /// Runs git with `args` (and `input` on its standard input); its
    /// standard output, or its error as one line.
    fn run(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, StoreError> {
        let mut cmd = self.command()?;
        cmd.args(args);
        let what = args.first().copied().unwrap_or("git");
        let out = crate::programs::output_within(&mut cmd, input, GIT_LIMIT).map_err(|source| {
            StoreError::Run {
                what: format!("{what} for a checkpoint"),
                source,
            }
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let line = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(StoreError::GitFailed {
                what: what.to_string(),
                line: line.to_string(),
            });
        }
        Ok(out.stdout)
    }

    /// Snapshots the work tree and keeps the tree under a ref of this
    /// session (`name`), so it outlives any clean-up of the repository.
    pub fn snapshot(&self, name: &str) -> Result<Snapshot, StoreError> {
        let untracked = self.run(&["ls-files", "-z", "-o", "--exclude-standard"], None)?;
        let mut grew = false;
        for path in untracked.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let full = self
                .work_tree
                .join(Path::new(std::ffi::OsStr::from_bytes(path)));
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            if meta.is_file() && meta.len() > self.cap {
                let path = String::from_utf8_lossy(path).into_owned();
                self.skipped().insert(path, meta.len());
                grew = true;
            }
        }
        if grew {
            self.write_excludes()?;
        }
        // Unreadable files and ones git cannot hold (FIFOs, sockets) are
        // left out; the tree is written all the same.
        let _ = self.run(&["add", "-A", "--ignore-errors", "--", "."], None);
        let tree = String::from_utf8_lossy(&self.run(&["write-tree"], None)?)
            .trim()
            .to_string();
        if tree.len() < 40 {
            return Err(StoreError::NoTree);
        }
        let name = format!("refs/waypoint/{}/{name}", self.session);
        self.run(&["update-ref", &name, &tree], None)?;
        let skipped = self
            .skipped()
            .iter()
            .map(|(p, s)| (p.clone(), *s))
            .collect();
        Ok(Snapshot { tree, skipped })
    }

    /// The paths that differ from the tree `from` to the tree `to`.
    pub fn diff(&self, from: &str, to: &str) -> Result<Vec<Delta>, StoreError> {
        let args = [
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--no-abbrev",
            "--raw",
            from,
            to,
        ];
        parse_raw(&self.run(&args, None)?)
    }

    /// The bytes of a `git:HEX` reference.
    pub fn read(&self, reference: &str) -> Result<Vec<u8>, StoreError> {
        let oid = reference
            .strip_prefix(GIT)
            .filter(|h| h.len() >= 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| StoreError::NotASnapshot(reference.to_string()))?;
        self.run(&["cat-file", "blob", oid], None)
    }

    /// Removes `session`'s refs and index from the shadow repositories
    /// under `data`, then the objects no ref reaches any more (a shadow
    /// repository left with no session is removed whole).
    pub fn forget(data: &Path, session: &str) {
        let Ok(entries) = std::fs::read_dir(data) else {
            return;
        };
        for dir in entries.flatten().map(|e| e.path()) {
            if dir.extension().is_none_or(|e| e != "git") {
                continue;
            }
            let index = dir.join(format!("index-{session}"));
            let refs = dir.join("refs/waypoint").join(session);
            if !index.exists() && !refs.exists() {
                continue;
            }
            let _ = std::fs::remove_file(&index);
            let _ = std::fs::remove_file(dir.join(format!("exclude-{session}")));
            let _ = std::fs::remove_dir_all(&refs);
            let sessions = std::fs::read_dir(dir.join("refs/waypoint"))
                .map(|d| d.flatten().count())
                .unwrap_or(0);
            if sessions == 0 {
                let _ = std::fs::remove_dir_all(&dir);
            } else {
                if let Ok(mut cmd) = crate::programs::git() {
                    cmd.env("GIT_DIR", &dir)
                        .env("GIT_CONFIG_GLOBAL", "/dev/null")
                        .args(["prune", "--expire=now"])
                        .current_dir(&dir);
                    let _ = crate::programs::output_within(&mut cmd, None, GIT_LIMIT);
                }
            }
        }
    }
}

/// The most recently written session index in `git_dir`.
fn newest_index(git_dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(git_dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("index-") && !name.ends_with(".lock")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, path)| path)
}

/// The user's repository's git folder, when `work_tree` is in one: the
/// nearest `.git` folder above it, or the folder a `.git` file names
/// (`gitdir: …`, a worktree's). Found by reading, not by running git, so
/// nothing of the repository's config (an include of a FIFO or of
/// `/dev/tty`) is read.
fn user_repository(work_tree: &Path) -> Option<PathBuf> {
    for dir in work_tree.ancestors() {
        let dot = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot) else {
            continue;
        };
        if meta.is_dir() {
            return dot
                .join("HEAD")
                .is_file()
                .then(|| dot.canonicalize().ok())?;
        }
        if meta.is_file() && meta.len() < 4096 {
            let text = std::fs::read_to_string(&dot).ok()?;
            let named = text.trim().strip_prefix("gitdir:")?.trim();
            return dir.join(named).canonicalize().ok().filter(|p| p.is_dir());
        }
        return None;
    }
    None
}

/// The user's ignore rules that live outside the work tree: the
/// repository's `info/exclude` and the global excludes file.
fn user_excludes(git_dir: &Path) -> Vec<u8> {
    let mut text = std::fs::read(git_dir.join("info/exclude")).unwrap_or_default();
    // The user's own global config only (no repository's, none of the
    // system's), read from outside the work tree.
    let global = crate::programs::git()
        .ok()
        .and_then(|mut cmd| {
            cmd.args(["config", "--global", "--path", "--get", "core.excludesFile"])
                .current_dir("/");
            crate::programs::output_within(&mut cmd, None, Duration::from_secs(5)).ok()
        })
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .or_else(|| {
            let base = std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
            Some(base.join("git/ignore"))
        });
    if let Some(bytes) = global.and_then(|p| std::fs::read(p).ok()) {
        text.push(b'\n');
        text.extend_from_slice(&bytes);
    }
    text
}

/// `path` as an ignore rule matching only itself (anchored, its special
/// characters escaped).
fn ignore_line(path: &str) -> Vec<u8> {
    let mut line = vec![b'/'];
    for &b in path.as_bytes() {
        if matches!(b, b'\\' | b'*' | b'?' | b'[' | b'!' | b'#' | b' ') {
            line.push(b'\\');
        }
        line.push(b);
    }
    line
}

/// Reads `diff-tree -z --raw` output.
fn parse_raw(out: &[u8]) -> Result<Vec<Delta>, StoreError> {
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    let mut deltas = Vec::new();
    while let Some(meta) = fields.next() {
        let meta = String::from_utf8_lossy(meta);
        let path = fields.next().ok_or(StoreError::NoPath)?;
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [mode_a, mode_b, oid_a, oid_b, _status] = parts[..] else {
            return Err(StoreError::Unreadable(meta.into_owned()));
        };
        let entry = |mode: &str, oid: &str| -> Option<Entry> {
            let mode = u32::from_str_radix(mode, 8).ok().filter(|&m| m != 0)?;
            Some(Entry {
                blob: format!("{GIT}{oid}"),
                mode,
            })
        };
        deltas.push(Delta {
            path: String::from_utf8_lossy(path).into_owned(),
            from: entry(mode_a, oid_a),
            to: entry(mode_b, oid_b),
        });
    }
    Ok(deltas)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
