//! Confined file access: every file Waypoint opens on the model's or the
//! repository's behalf is opened relative to a folder fd ([`Root`]), never
//! by a path checked first and opened after (a symlink swapped in between
//! would win that race). Invariants:
//!
//! - Nothing outside the root is ever opened, read, created or replaced:
//!   paths resolve with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`,
//!   or, where that refuses a path that is still inside (an absolute link to
//!   a place under the root) or the kernel has no `openat2`, with a walk of
//!   one `O_NOFOLLOW` name at a time ([`walk`]). Symlinks that stay inside
//!   are followed; one that leads out is an error.
//! - Files are opened `O_NONBLOCK | O_NOCTTY` and checked with `fstat`
//!   before a byte is read: a FIFO, device or socket is refused, so opening
//!   never hangs and never reads without end.
//! - Writes are atomic: a temporary file in the target's folder (held as
//!   an fd), synced, then `renameat` over the target.

mod sys;
mod walk;
mod write;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

pub use write::WriteOptions;

/// How `openat2` resolves: never above the root, never through a
/// `/proc`-style magic link.
const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// Set once `openat2` returned `ENOSYS`: the kernel has none.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// A folder every access goes through, held as an `O_PATH` fd.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// The folder's canonical path: absolute symlink targets under it are
    /// taken as inside, and messages name it.
    path: PathBuf,
    /// `false`: always walk name by name, as on a kernel without `openat2`.
    openat2: bool,
}

/// One entry of a folder listed by [`Root::read_dir`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: OsString,
    /// A folder, or a symlink to a folder under the root.
    pub is_dir: bool,
}

impl Root {
    /// Opens the folder `path` (made canonical).
    pub fn new(path: &Path) -> io::Result<Root> {
        Self::open(path, true)
    }

    /// The same root, but every path walked one `O_NOFOLLOW` name at a
    /// time, as on kernels without `openat2` (tests use it to check that
    /// fallback).
    pub fn without_openat2(path: &Path) -> io::Result<Root> {
        Self::open(path, false)
    }

    fn open(path: &Path, openat2: bool) -> io::Result<Root> {
        let path = path.canonicalize()?;
        let fd = sys::openat(
            rustix::fs::CWD,
            path.as_os_str(),
            OFlags::PATH | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display())))?;
        Ok(Root { fd, path, openat2 })
    }

    /// The root's canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the regular file `rel` for reading. A folder is an
    /// `IsADirectory` error, a FIFO, device or socket an `InvalidInput`
    /// one ([`not_regular`]).
    pub fn open_file(&self, rel: &Path) -> io::Result<File> {
        let fd = self.open_beneath(rel, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)?;
        // O_NONBLOCK stays set: it means nothing to a regular file.
        regular(File::from(fd))
    }

    /// What `rel` is (a symlink under the root followed).
    pub fn metadata(&self, rel: &Path) -> io::Result<std::fs::Metadata> {
        File::from(self.open_beneath(rel, OFlags::PATH)?).metadata()
    }

    /// The entries of the folder `rel`, unsorted.
    pub fn read_dir(&self, rel: &Path) -> io::Result<Vec<DirEntry>> {
        let fd = self.open_beneath(
            rel,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::NOCTTY,
        )?;
        let entries = sys::read_dir(fd)?;
        Ok(entries
            .into_iter()
            .map(|e| {
                let is_dir = match e.file_type {
                    FileType::Directory => true,
                    FileType::Symlink | FileType::Unknown => {
                        self.metadata(&rel.join(&e.name)).is_ok_and(|m| m.is_dir())
                    }
                    _ => false,
                };
                DirEntry {
                    name: e.name,
                    is_dir,
                }
            })
            .collect())
    }

    /// Replaces (or creates) the file `rel` with `bytes`, atomically; a
    /// symlink there is written through to its target under the root.
    /// Returns whether the file existed (its permissions are kept).
    pub fn replace(&self, rel: &Path, bytes: &[u8], options: &WriteOptions) -> io::Result<bool> {
        write::replace(self, rel, bytes, options)
    }

    /// Checks that `rel` could be [`Root::replace`]d, writing nothing
    /// (but the missing folders, with `create_parents`): the same
    /// errors. Returns whether the file exists.
    pub fn prepare(&self, rel: &Path, create_parents: bool) -> io::Result<bool> {
        write::prepare(self, rel, create_parents)
    }

    /// Removes the file or symlink `rel` (a link is removed, never
    /// followed); false when there was none.
    pub fn remove(&self, rel: &Path) -> io::Result<bool> {
        write::remove(self, rel)
    }

    /// The target of the symlink `rel` (never followed); `None` when it
    /// is not one.
    pub fn read_link(&self, rel: &Path) -> io::Result<Option<Vec<u8>>> {
        write::read_link(self, rel)
    }

    /// Makes `rel` a symlink to `target` (what was a file or link there
    /// goes; a folder is refused).
    pub fn symlink(&self, rel: &Path, target: &OsStr) -> io::Result<()> {
        write::symlink(self, rel, target)
    }

    /// Whether `openat2` is to be tried.
    fn fast(&self) -> bool {
        self.openat2 && !NO_OPENAT2.load(Ordering::Relaxed)
    }

    /// Opens `rel` with `flags`: `openat2` beneath the root, or the walk
    /// where that refuses (a link it cannot judge) or does not exist.
    fn open_beneath(&self, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
        let rel = checked(rel)?;
        if self.fast() {
            let name: &OsStr = if rel.as_os_str().is_empty() {
                OsStr::new(".")
            } else {
                rel.as_os_str()
            };
            match sys::openat2(self.fd.as_fd(), name, flags, Mode::empty(), BENEATH) {
                Ok(fd) => return Ok(fd),
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                }
                // A link leading out (or absolute), too many links, or a
                // rename racing `..`: the walk tells which, and says why.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EXDEV | libc::ELOOP | libc::EAGAIN)
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        let parent = self.walk(&rel, false)?;
        // The walk followed every link: one here now was swapped in since.
        sys::openat(
            parent.fd(self),
            &parent.name,
            flags | OFlags::NOFOLLOW,
            Mode::empty(),
        )
    }
}

/// The user's own file at `path`, symlinks followed, opened without
/// blocking and refused unless it is a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let fd = sys::openat(
        rustix::fs::CWD,
        path.as_os_str(),
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    regular(File::from(fd))
}

/// The regular file `rel` beneath `root` as UTF-8 text, at most `cap`
/// bytes: `None` when there is none; an error for a link that leads out,
/// a FIFO or device, a file larger than `cap` or one not UTF-8.
pub fn read_text(root: &Root, rel: &Path, cap: usize) -> io::Result<Option<String>> {
    let mut file = match root.open_file(rel) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let (bytes, cut) = read_capped(&mut file, cap)?;
    if cut {
        return Err(io::Error::other(format!(
            "it is larger than {} KiB",
            cap / 1024
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| io::Error::other("it is not UTF-8"))
}

/// At most `cap` bytes of `file`, and whether there was more.
pub fn read_capped(file: &mut File, cap: usize) -> io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    let cut = bytes.len() > cap;
    bytes.truncate(cap);
    Ok((bytes, cut))
}

/// What the file was when `e` is [`Root::open_file`]'s (or
/// [`Root::replace`]'s) refusal of a FIFO, device or socket: `a FIFO`.
pub fn not_regular(e: &io::Error) -> Option<&'static str> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<NotRegular>())
        .map(|n| n.0)
}

/// A file that is neither regular nor a folder.
#[derive(Debug)]
struct NotRegular(&'static str);

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "it is {}, not a regular file", self.0)
    }
}

impl std::error::Error for NotRegular {}

/// `file` if it is a regular file (checked on the open fd).
fn regular(file: File) -> io::Result<File> {
    let st = sys::fstat(file.as_fd())?;
    kind_check(sys::file_type(&st))?;
    Ok(file)
}

/// `Ok` for a regular file; the refusal for anything else.
fn kind_check(kind: FileType) -> io::Result<()> {
    let kind = match kind {
        FileType::RegularFile => return Ok(()),
        FileType::Directory => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        FileType::Symlink => "a symlink",
        FileType::Unknown => "a special file",
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegular(kind),
    ))
}

/// `rel` if it is relative and free of `..` (`.` components dropped).
fn checked(rel: &Path) -> io::Result<PathBuf> {
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("`{}` is not a plain relative path", rel.display()),
                ));
            }
        }
    }
    Ok(out)
}

/// `path` without `.` parts and with each `..` taking away the part before
/// it: a reading of the words, not of the disk (a link is not followed).
pub fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
