//! [`Root::replace`]: the atomic write. Invariant: the target's folder is
//! held as an fd from the moment it is found to the rename, so a folder
//! swapped for a symlink meanwhile changes nothing; the temporary file is
//! created `O_EXCL | O_NOFOLLOW` in that folder and removed on any failure.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};

use super::walk::Parent;
use super::{BENEATH, NO_OPENAT2, Root, checked, kind_check, sys};

/// How [`Root::replace`] writes.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// Make missing folders on the way.
    pub create_parents: bool,
    /// Name prefix of the temporary file (`.waypoint-`).
    pub temp_prefix: &'static str,
    /// The permission bits to give the file (a restore's); `None` keeps
    /// an existing file's, and a new one gets 0666 minus the umask.
    pub mode: Option<u32>,
}

/// Temporary names tried before giving up (each is random).
const TEMP_TRIES: usize = 8;

/// Removes the file (or symlink: never followed) `rel`; false when there
/// was none.
pub(super) fn remove(root: &Root, rel: &Path) -> io::Result<bool> {
    let rel = checked(rel)?;
    if rel.as_os_str().is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is the root folder",
        ));
    }
    let (Some(name), dir_rel) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it names no file",
        ));
    };
    let dir = match root.open_beneath(dir_rel, OFlags::PATH | OFlags::DIRECTORY) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    match sys::lstatat(dir.as_fd(), name) {
        Ok(st) if sys::file_type(&st) == FileType::Directory => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a folder",
        )),
        Ok(_) => sys::unlinkat(dir.as_fd(), name).map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The target of the symlink `rel` (the link itself, never followed);
/// `None` when `rel` is not a symlink (or there is nothing there).
pub(super) fn read_link(root: &Root, rel: &Path) -> io::Result<Option<Vec<u8>>> {
    let rel = checked(rel)?;
    let (Some(name), dir_rel) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
        return Ok(None);
    };
    let dir = match root.open_beneath(dir_rel, OFlags::PATH | OFlags::DIRECTORY) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match sys::lstatat(dir.as_fd(), name) {
        Ok(st) if sys::file_type(&st) == FileType::Symlink => {
            use std::os::unix::ffi::OsStringExt;
            sys::readlinkat(dir.as_fd(), name).map(|t| Some(t.into_vec()))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Makes `rel` a symlink to `target` (missing folders made), replacing a
/// file or link there; a folder there is refused.
pub(super) fn symlink(root: &Root, rel: &Path, target: &OsStr) -> io::Result<()> {
    let rel = checked(rel)?;
    let (Some(name), dir_rel) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it names no file",
        ));
    };
    // The folders on the way are made (the walk never leaves the root);
    // the last name itself is never followed.
    if !dir_rel.as_os_str().is_empty() {
        root.walk(&dir_rel.join("_"), true)?;
    }
    let dir = root.open_beneath(dir_rel, OFlags::PATH | OFlags::DIRECTORY)?;
    match sys::lstatat(dir.as_fd(), name) {
        Ok(st) if sys::file_type(&st) == FileType::Directory => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a folder",
            ));
        }
        Ok(_) => sys::unlinkat(dir.as_fd(), name)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    sys::symlinkat(target, dir.as_fd(), name)
}

pub(super) fn replace(
    root: &Root,
    rel: &Path,
    bytes: &[u8],
    options: &WriteOptions,
) -> io::Result<bool> {
    let (parent, existing) = target(root, rel, options.create_parents)?;
    write_in(parent.fd(root), &parent.name, bytes, existing, options)?;
    Ok(existing.is_some())
}

/// What [`replace`] checks, without writing: the folders made (when
/// `create_parents`), the file there a regular one or none. Whether one is.
pub(super) fn prepare(root: &Root, rel: &Path, create_parents: bool) -> io::Result<bool> {
    Ok(target(root, rel, create_parents)?.1.is_some())
}

/// The folder `rel` is to be written in and the mode of the file there
/// (`None`: none), refused unless that is a regular file.
fn target(root: &Root, rel: &Path, create_parents: bool) -> io::Result<(Parent, Option<u32>)> {
    let rel = checked(rel)?;
    if rel.as_os_str().is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is the root folder",
        ));
    }
    let (parent, existing) = match fast_parent(root, &rel)? {
        Some(found) => found,
        None => {
            let parent = root.walk(&rel, create_parents)?;
            let existing = existing(parent.fd(root), &parent.name)?;
            (parent, existing)
        }
    };
    if let Some(mode) = existing {
        kind_check(FileType::from_raw_mode(mode))?;
    }
    Ok((parent, existing))
}

/// The target's folder by one `openat2`, and the mode of what is there;
/// `None` when the walk must decide (a link as the last name, a folder
/// missing, a link `openat2` refused, no `openat2`).
fn fast_parent(root: &Root, rel: &Path) -> io::Result<Option<(Parent, Option<u32>)>> {
    if !root.fast() {
        return Ok(None);
    }
    let (Some(dir_rel), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Ok(None);
    };
    let dir = if dir_rel.as_os_str().is_empty() {
        None
    } else {
        let flags = OFlags::PATH | OFlags::DIRECTORY;
        let path = dir_rel.as_os_str();
        match sys::openat2(root.fd.as_fd(), path, flags, Mode::empty(), BENEATH) {
            Ok(fd) => Some(fd),
            Err(e) => {
                if e.raw_os_error() == Some(libc::ENOSYS) {
                    NO_OPENAT2.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                return Ok(None);
            }
        }
    };
    let parent = Parent {
        dir,
        name: name.to_os_string(),
    };
    match sys::lstatat(parent.fd(root), name) {
        Ok(st) if sys::file_type(&st) == FileType::Symlink => Ok(None),
        Ok(st) => Ok(Some((parent, Some(st.st_mode)))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Some((parent, None))),
        Err(e) => Err(e),
    }
}

/// The mode of `name` in `dir`, `None` if there is none. A symlink there
/// now was swapped in after the walk followed it: refused.
fn existing(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<u32>> {
    match sys::lstatat(dir, name) {
        Ok(st) if sys::file_type(&st) == FileType::Symlink => Err(io::Error::other(
            "it was replaced by a symlink while it was being written",
        )),
        Ok(st) => Ok(Some(st.st_mode)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `bytes` to a fresh temporary file in `dir`, syncs it, and
/// renames it over `name`; the temporary file is removed on failure.
pub(super) fn write_in(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    bytes: &[u8],
    existing: Option<u32>,
    options: &WriteOptions,
) -> io::Result<()> {
    let context = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    let mut created = None;
    for _ in 0..TEMP_TRIES {
        let tmp = OsString::from(format!(
            "{}{}.tmp",
            options.temp_prefix,
            uuid::Uuid::new_v4().simple()
        ));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        // New files get the usual 0666 minus the umask.
        match sys::openat(dir, &tmp, flags, Mode::from_bits_retain(0o666)) {
            Ok(fd) => {
                created = Some((tmp, std::fs::File::from(fd)));
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(context("creating a temporary file", e)),
        }
    }
    let Some((tmp, mut file)) = created else {
        return Err(io::Error::other(
            "creating a temporary file: every name tried was taken",
        ));
    };
    let written = (|| {
        file.write_all(bytes).map_err(|e| context("writing", e))?;
        if let Some(mode) = options.mode.or(existing) {
            sys::fchmod(file.as_fd(), mode).map_err(|e| context("keeping the permissions", e))?;
        }
        file.sync_all().map_err(|e| context("syncing", e))?;
        drop(file);
        sys::renameat(dir, &tmp, name).map_err(|e| context("renaming into place", e))
    })();
    if written.is_err() {
        let _ = sys::unlinkat(dir, &tmp);
    }
    written
}
