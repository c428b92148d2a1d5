//! Thin wrappers over the `*at` system calls the confined file access
//! needs (rustix's, no `unsafe` here). Invariant: every call takes a
//! directory fd and a single name or a relative path, every fd it returns
//! is close-on-exec and owned, and no wrapper follows a symlink unless its
//! flags say so.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};

/// `s` as a C string; a NUL byte is an invalid name.
fn cstr(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the name `{}` contains a NUL byte", s.to_string_lossy()),
        )
    })
}

/// `openat2(dir, path, flags, resolve)`; `ENOSYS` where the kernel lacks it.
pub fn openat2(
    dir: BorrowedFd<'_>,
    path: &OsStr,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> io::Result<OwnedFd> {
    let path = cstr(path)?;
    // The kernel refuses a mode without O_CREAT.
    let mode = if flags.contains(OFlags::CREATE) {
        mode
    } else {
        Mode::empty()
    };
    Ok(rustix::fs::openat2(
        dir,
        path.as_c_str(),
        flags | OFlags::CLOEXEC,
        mode,
        resolve,
    )?)
}

/// `openat(dir, name, flags)`, close-on-exec.
pub fn openat(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let name = cstr(name)?;
    Ok(rustix::fs::openat(
        dir,
        name.as_c_str(),
        flags | OFlags::CLOEXEC,
        mode,
    )?)
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the entry itself, a link
/// not followed. An empty name is the directory itself.
pub fn lstatat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Stat> {
    let flags = if name.is_empty() {
        AtFlags::EMPTY_PATH
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    let name = cstr(name)?;
    Ok(rustix::fs::statat(dir, name.as_c_str(), flags)?)
}

/// `fstat(fd)`.
pub fn fstat(fd: BorrowedFd<'_>) -> io::Result<Stat> {
    lstatat(fd, OsStr::new(""))
}

/// What the `st_mode` of a [`Stat`] says the entry is.
pub fn file_type(st: &Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

/// The target of the symlink `name` in `dir`; `EINVAL` if it is no link.
pub fn readlinkat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OsString> {
    let name = cstr(name)?;
    let target = rustix::fs::readlinkat(dir, name.as_c_str(), Vec::with_capacity(256))?;
    Ok(OsString::from_vec(target.into_bytes()))
}

/// `mkdirat(dir, name, 0777)` (the umask applies).
pub fn mkdirat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = cstr(name)?;
    Ok(rustix::fs::mkdirat(
        dir,
        name.as_c_str(),
        Mode::from_bits_retain(0o777),
    )?)
}

/// `renameat(dir, from, dir, to)`: replaces `to` (a symlink there is
/// replaced, not followed).
pub fn renameat(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (cstr(from)?, cstr(to)?);
    Ok(rustix::fs::renameat(
        dir,
        from.as_c_str(),
        dir,
        to.as_c_str(),
    )?)
}

/// `unlinkat(dir, name, 0)`.
pub fn unlinkat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = cstr(name)?;
    Ok(rustix::fs::unlinkat(
        dir,
        name.as_c_str(),
        AtFlags::empty(),
    )?)
}

/// `symlinkat(target, dir, name)`.
pub fn symlinkat(target: &OsStr, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let (target, name) = (cstr(target)?, cstr(name)?);
    Ok(rustix::fs::symlinkat(
        target.as_c_str(),
        dir,
        name.as_c_str(),
    )?)
}

/// `fchmod(fd, mode)`: the permission bits of `mode` (the file type's
/// bits left out).
pub fn fchmod(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    Ok(rustix::fs::fchmod(
        fd,
        Mode::from_bits_retain(mode & 0o7777),
    )?)
}

/// One entry of a directory listing: its name and type (`Unknown` where
/// the file system does not say).
pub struct RawEntry {
    pub name: OsString,
    pub file_type: FileType,
}

/// The entries of the directory `dir` (opened for reading), `.` and `..`
/// left out. The fd is consumed.
pub fn read_dir(dir: OwnedFd) -> io::Result<Vec<RawEntry>> {
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::new(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push(RawEntry {
                name: OsString::from_vec(name.to_vec()),
                file_type: entry.file_type(),
            });
        }
    }
    Ok(out)
}
