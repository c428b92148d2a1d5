//! The world's side in the child, between clone and exec: each planned
//! step, the id maps, every capability dropped. Raw syscalls only.

use std::ffi::CStr;
use std::io;

use super::{SLOTS, Step};

/// The highest capability number this kernel knows.
pub(super) fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

/// Writes `data` to the file `path`. Raw syscalls only.
///
/// # Safety
/// Only makes syscalls on the given pointers.
pub(super) unsafe fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: a valid C string and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n != data.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;

/// One step, in the child, with the slots of the copies taken. Raw
/// syscalls only.
///
/// # Safety
/// Only for the child between clone and exec, in its own namespaces.
pub(super) unsafe fn run_step(step: &Step, slots: &mut [i32; SLOTS]) -> io::Result<()> {
    let ok = |rc: libc::c_int| {
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    let (none, no_data) = (std::ptr::null(), std::ptr::null());
    let quiet = libc::MS_NOSUID | libc::MS_NODEV;
    // SAFETY (the block): C strings made in the parent; plain syscalls.
    unsafe {
        match step {
            Step::Tmpfs { at, options } => ok(libc::mount(
                c"tmpfs".as_ptr(),
                at.as_ptr(),
                c"tmpfs".as_ptr(),
                quiet,
                options.as_ptr().cast(),
            )),
            Step::Mkdir(at) => {
                let rc = libc::mkdir(at.as_ptr(), 0o755);
                if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            }
            Step::Touch(at) => {
                // Whatever is there already (a socket to mask) will do.
                let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
                let fd = libc::open(at.as_ptr(), flags, 0o644);
                if fd < 0 {
                    let err = io::Error::last_os_error();
                    return match err.raw_os_error() {
                        Some(libc::EEXIST) => Ok(()),
                        _ => Err(err),
                    };
                }
                libc::close(fd);
                Ok(())
            }
            Step::Take { from, slot } => {
                let flags = OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint;
                let fd = libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, from.as_ptr(), flags);
                slots[*slot] = i32::try_from(fd).unwrap_or(-1);
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            }
            Step::Place { slot, to } => {
                let fd = slots[*slot];
                let rc = libc::syscall(
                    libc::SYS_move_mount,
                    fd,
                    c"".as_ptr(),
                    libc::AT_FDCWD,
                    to.as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH,
                );
                libc::close(fd);
                ok(i32::try_from(rc).unwrap_or(-1))
            }
            Step::Symlink { target, at } => ok(libc::symlink(target.as_ptr(), at.as_ptr())),
            Step::ReadOnly(at) => ok(libc::mount(
                none,
                at.as_ptr(),
                none,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | quiet,
                no_data,
            )),
            Step::Proc => ok(libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                quiet | libc::MS_NOEXEC,
                no_data,
            )),
            Step::Loopback => loopback_up(),
        }
    }
}

/// `ip link set lo up` with an ioctl. Raw syscalls only.
///
/// # Safety
/// Only makes syscalls on its own stack memory.
unsafe fn loopback_up() -> io::Result<()> {
    // SAFETY: a fresh socket and an ifreq on this stack.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
        if rc == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            rc = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
        }
        let err = io::Error::last_os_error();
        libc::close(fd);
        if rc != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// The capability header and data of `capset(2)` (version 3: two words).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

/// Every capability gone: root's exec gives none back (`SECBIT_NOROOT`),
/// the bounding set emptied, the ambient set cleared, then the effective,
/// permitted and inheritable sets. Raw syscalls only.
///
/// # Safety
/// Only for the child between clone and exec.
pub(super) unsafe fn drop_capabilities(last_cap: u32) -> io::Result<()> {
    let check = |rc: libc::c_int| {
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    // SAFETY (the block): prctl and capset with integers and stack memory.
    unsafe {
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        check(libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0))?;
        for cap in 0..=last_cap {
            if libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) != 0
                && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
            {
                return Err(io::Error::last_os_error());
            }
        }
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ))?;
        let header = CapHeader {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        let rc = libc::syscall(libc::SYS_capset, &header, data.as_ptr());
        check(i32::try_from(rc).unwrap_or(-1))?;
    }
    Ok(())
}
