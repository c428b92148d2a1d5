//! Thin, safe wrappers over the `*at` system calls the confined file
//! access needs. Invariant: every call takes a directory fd and a single
//! name or a relative path, every fd it returns is close-on-exec and owned,
//! and no wrapper follows a symlink unless its flags say so.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// `s` as a C string; a NUL byte is an invalid name.
fn cstr(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the name `{}` contains a NUL byte", s.to_string_lossy()),
        )
    })
}

/// The fd a successful call returned, or the error `errno` holds.
fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::other("fd out of range"))?;
    // SAFETY: the kernel just returned this fd, and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `openat2(dir, path, flags, resolve)`; `ENOSYS` where the kernel lacks it.
pub fn openat2(
    dir: BorrowedFd<'_>,
    path: &OsStr,
    flags: libc::c_int,
    mode: libc::mode_t,
    resolve: u64,
) -> io::Result<OwnedFd> {
    let path = cstr(path)?;
    // SAFETY: `open_how` is plain integers; all zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    if flags & libc::O_CREAT != 0 {
        how.mode = u64::from(mode);
    }
    how.resolve = resolve;
    // SAFETY: `path` is a valid C string and `how` a valid `open_how` of
    // the size passed; the kernel reads both and writes nothing.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    owned(fd)
}

/// `openat(dir, name, flags)`, close-on-exec.
pub fn openat(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let name = cstr(name)?;
    // SAFETY: `name` is a valid C string; `mode` is read only with O_CREAT.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    };
    owned(libc::c_long::from(fd))
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the entry itself, a link
/// not followed. An empty name is the directory itself.
pub fn lstatat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<libc::stat> {
    let flags = if name.is_empty() {
        libc::AT_EMPTY_PATH
    } else {
        libc::AT_SYMLINK_NOFOLLOW
    };
    let name = cstr(name)?;
    // SAFETY: a zeroed `stat` is a valid value for the kernel to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is a valid C string and `st` a valid out-pointer.
    check(unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, flags) })?;
    Ok(st)
}

/// `fstat(fd)`.
pub fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    lstatat(fd, OsStr::new(""))
}

/// The target of the symlink `name` in `dir`; `EINVAL` if it is no link.
pub fn readlinkat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OsString> {
    let name = cstr(name)?;
    let mut buf = vec![0u8; 256];
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes.
        let n = unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
        if n < buf.len() {
            buf.truncate(n);
            return Ok(OsString::from_vec(buf));
        }
        if buf.len() >= 64 * 1024 {
            return Err(io::Error::other("symlink target is too long"));
        }
        buf.resize(buf.len() * 4, 0);
    }
}

/// `mkdirat(dir, name, 0777)` (the umask applies).
pub fn mkdirat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = cstr(name)?;
    // SAFETY: `name` is a valid C string.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) })
}

/// `renameat(dir, from, dir, to)`: replaces `to` (a symlink there is
/// replaced, not followed).
pub fn renameat(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (cstr(from)?, cstr(to)?);
    // SAFETY: both names are valid C strings.
    check(unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) })
}

/// `unlinkat(dir, name, 0)`.
pub fn unlinkat(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = cstr(name)?;
    // SAFETY: `name` is a valid C string.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) })
}

/// `symlinkat(target, dir, name)`.
pub fn symlinkat(target: &OsStr, dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let (target, name) = (cstr(target)?, cstr(name)?);
    // SAFETY: both are valid C strings.
    check(unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) })
}

/// `fchmod(fd, mode)`.
pub fn fchmod(fd: BorrowedFd<'_>, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: plain syscall on a valid fd.
    check(unsafe { libc::fchmod(fd.as_raw_fd(), mode) })
}

/// One entry of a directory listing: its name and `d_type`.
pub struct RawEntry {
    pub name: OsString,
    pub d_type: u8,
}

/// The entries of the directory `dir` (opened for reading), `.` and `..`
/// left out. The fd is consumed.
pub fn read_dir(dir: OwnedFd) -> io::Result<Vec<RawEntry>> {
    use std::os::fd::IntoRawFd;
    let raw = dir.into_raw_fd();
    // SAFETY: `raw` is an fd we own; on success the DIR stream owns it.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so the fd is still ours to close.
        drop(unsafe { OwnedFd::from_raw_fd(raw) });
        return Err(e);
    }
    let mut out = Vec::new();
    let result = loop {
        // SAFETY: errno is thread-local; it is reset so that end of stream
        // (NULL with errno 0) can be told from a failure.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `stream` is a valid, open DIR stream.
        let entry = unsafe { libc::readdir64(stream) };
        if entry.is_null() {
            let e = io::Error::last_os_error();
            break if e.raw_os_error() == Some(0) {
                Ok(())
            } else {
                Err(e)
            };
        }
        // SAFETY: readdir returned a valid entry whose `d_name` is a
        // NUL-terminated string, alive until the next readdir call.
        let (name, d_type) = unsafe {
            let e = &*entry;
            (
                std::ffi::CStr::from_ptr(e.d_name.as_ptr())
                    .to_bytes()
                    .to_vec(),
                e.d_type,
            )
        };
        if name != b"." && name != b".." {
            out.push(RawEntry {
                name: OsString::from_vec(name),
                d_type,
            });
        }
    };
    // SAFETY: `stream` is valid and closed exactly once (with its fd).
    unsafe { libc::closedir(stream) };
    result.map(|()| out)
}
