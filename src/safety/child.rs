//! Cloning a child that shares Waypoint's memory until it execs or exits
//! (`clone(CLONE_VM | CLONE_VFORK)`, as glibc's `posix_spawn` does): its
//! own stack, every signal blocked across the clone and set back to its
//! default in the child. The commands' spawner (`tools::spawn`) and the
//! sandbox's one trial of its world ([`trial`]) are built on it.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The child's own stack, while it runs until `execve`.
const STACK_SIZE: usize = 256 * 1024;

/// Every signal the parent catches goes back to its default (a handler of
/// the parent must never run in the child, on the parent's memory), and
/// SIGPIPE too (Rust ignores it; commands expect it), as std's spawn does.
///
/// # Safety
/// Only for the child between clone and exec.
pub unsafe fn default_signals() {
    for sig in 1..libc::SIGRTMAX() {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: sigaction with valid pointers; a signal number glibc
        // keeps for itself fails with EINVAL, which changes nothing.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            let caught = old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN;
            if caught || sig == libc::SIGPIPE {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

/// The child's stack: an anonymous mapping with a guard page at its low
/// end, unmapped when dropped.
pub struct Stack {
    base: *mut libc::c_void,
}

impl Stack {
    pub fn new() -> io::Result<Self> {
        // SAFETY: a fresh anonymous private mapping; no memory of ours.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STACK_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Self { base };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, page_size(), libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The top of the stack (it grows down), 16-byte aligned.
    pub fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is page aligned.
        unsafe { self.base.cast::<u8>().add(STACK_SIZE).cast() }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used (the child
        // has exec'd or exited when clone returns).
        unsafe { libc::munmap(self.base, STACK_SIZE) };
    }
}

fn page_size() -> usize {
    rustix::param::page_size()
}

/// Every signal blocked in this thread until dropped (then the old mask
/// is back), so no handler runs in the child before it resets them.
pub struct BlockedSignals {
    old: libc::sigset_t,
}

impl BlockedSignals {
    pub fn all() -> io::Result<Self> {
        // SAFETY: sigsets are plain data, filled by sigfillset and
        // pthread_sigmask through valid pointers.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let rc = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(Self { old })
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `all`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// Runs `body` in a child cloned into the namespaces `flags` (sharing our
/// memory until it exits, as [`Command::spawn`]'s children do until they
/// exec), for a trial of what commands will get: its error, if any.
pub fn trial(flags: i32, body: &(dyn Fn() -> io::Result<()> + Sync)) -> io::Result<()> {
    struct Trial<'a> {
        body: &'a (dyn Fn() -> io::Result<()> + Sync),
        errno: AtomicI32,
    }
    extern "C" fn trial_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the `Trial` the parent passed, alive while it waits.
        let t = unsafe { &*arg.cast::<Trial<'_>>() };
        // SAFETY: signals back to their defaults, in the child only.
        unsafe { default_signals() };
        if let Err(e) = (t.body)() {
            t.errno
                .store(e.raw_os_error().unwrap_or(libc::EINVAL), Ordering::Release);
        }
        // SAFETY: _exit never returns.
        unsafe { libc::_exit(0) }
    }
    let stack = Stack::new()?;
    let t = Trial {
        body,
        errno: AtomicI32::new(0),
    };
    let blocked = BlockedSignals::all()?;
    // SAFETY: as in `Prepared::clone_child`: the child runs on `stack`,
    // sharing our memory, while CLONE_VFORK suspends this thread.
    let pid = unsafe {
        libc::clone(
            trial_main,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | flags,
            std::ptr::from_ref(&t).cast_mut().cast(),
        )
    };
    let clone_error = io::Error::last_os_error();
    drop(blocked);
    if pid == -1 {
        return Err(clone_error);
    }
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
    }
    match t.errno.load(Ordering::Acquire) {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}
