//! The per-component walk: resolves a relative path under a [`Root`] one
//! name at a time, each opened with `O_NOFOLLOW` relative to the folder fd
//! before it, every symlink read with `readlinkat` and resolved by hand.
//! It serves kernels without `openat2`, and the cases `openat2` refuses
//! that are still inside: an absolute link whose target lies under the
//! root, and a link as the last name of a path being written (written
//! through to its target, dangling or not). Invariant: `..` never reaches
//! the kernel (it pops a folder this walk holds), and a link whose target
//! leaves the root is an error, never followed.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, Stat};

use super::{Root, sys};

/// Symlinks followed in one walk, at most (the kernel's own limit).
const MAX_LINKS: u32 = 40;
/// Steps of one walk, at most: a folder removed as fast as it is created
/// cannot keep the walk going forever.
const MAX_STEPS: u32 = 4096;

/// Where a walk ended: the folder holding the last name, and that name
/// (`.` when the path is the folder itself). `dir` is `None` for the root.
pub(super) struct Parent {
    pub dir: Option<OwnedFd>,
    pub name: OsString,
}

impl Parent {
    pub fn fd<'a>(&'a self, root: &'a Root) -> BorrowedFd<'a> {
        self.dir.as_ref().map_or(root.fd.as_fd(), AsFd::as_fd)
    }
}

impl Root {
    /// Resolves `rel` down to its last name, following every symlink on
    /// the way (the last one too) while it stays under the root. The last
    /// name need not exist; with `create`, missing folders before it are
    /// made.
    pub(super) fn walk(&self, rel: &Path, create: bool) -> io::Result<Parent> {
        let mut todo: VecDeque<OsString> = rel
            .components()
            .map(|c| c.as_os_str().to_os_string())
            .collect();
        // The folders held below the root, and their names (for messages).
        let mut stack: Vec<OwnedFd> = Vec::new();
        let mut names: Vec<OsString> = Vec::new();
        let mut links = 0u32;
        let mut steps = 0u32;
        while let Some(comp) = todo.pop_front() {
            steps += 1;
            if steps > MAX_STEPS {
                return Err(io::Error::other(format!(
                    "`{}` kept changing while it was resolved",
                    rel.display()
                )));
            }
            if comp == "." || comp.is_empty() {
                continue;
            }
            if comp == ".." {
                if stack.pop().is_none() {
                    return Err(self.escape(rel, None));
                }
                names.pop();
                continue;
            }
            let dir = stack.last().map_or(self.fd.as_fd(), AsFd::as_fd);
            if todo.is_empty() {
                match sys::lstatat(dir, &comp) {
                    Ok(st) if is_link(&st) => {
                        let target = sys::readlinkat(dir, &comp)?;
                        let link = shown(&names, &comp);
                        self.splice(&link, &target, &mut todo, &mut stack, &mut names)?;
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(too_many_links(rel));
                        }
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                return Ok(Parent {
                    dir: stack.pop(),
                    name: comp,
                });
            }
            let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY;
            match sys::openat(dir, &comp, flags, Mode::empty()) {
                Ok(fd) => {
                    stack.push(fd);
                    names.push(comp);
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP)) => {
                    // A symlink, or a file where a folder should be.
                    let target = match sys::readlinkat(dir, &comp) {
                        Ok(t) => t,
                        Err(r) if r.raw_os_error() == Some(libc::EINVAL) => {
                            let at = shown(&names, &comp);
                            return Err(not_a_folder(&at, create));
                        }
                        Err(r) => return Err(r),
                    };
                    let link = shown(&names, &comp);
                    self.splice(&link, &target, &mut todo, &mut stack, &mut names)?;
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(too_many_links(rel));
                    }
                }
                Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                    match sys::mkdirat(dir, &comp) {
                        Ok(()) => {}
                        Err(m) if m.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(m) => {
                            let at = shown(&names, &comp).display().to_string();
                            return Err(io::Error::new(
                                m.kind(),
                                format!("cannot create the folder `{at}`: {m}"),
                            ));
                        }
                    }
                    // Opened (no-follow) on the next step.
                    todo.push_front(comp);
                }
                Err(e) => return Err(e),
            }
        }
        // The path ended on `.` or `..`: the folder itself.
        Ok(Parent {
            dir: stack.pop(),
            name: OsString::from("."),
        })
    }

    /// Puts a link's target in front of what is left to walk: a relative
    /// target from the link's folder, an absolute one from the root when
    /// it lies under the root (else the walk stops: it leads outside).
    fn splice(
        &self,
        link: &Path,
        target: &OsStr,
        todo: &mut VecDeque<OsString>,
        stack: &mut Vec<OwnedFd>,
        names: &mut Vec<OsString>,
    ) -> io::Result<()> {
        let target_path = Path::new(target);
        let rest: PathBuf = if target_path.is_absolute() {
            let Ok(inner) = target_path.strip_prefix(&self.path) else {
                return Err(self.escape(link, Some(target_path)));
            };
            stack.clear();
            names.clear();
            inner.to_path_buf()
        } else {
            target_path.to_path_buf()
        };
        // `..` may only climb folders this walk holds.
        let mut depth = stack.len();
        for c in rest.components() {
            match c {
                Component::ParentDir if depth == 0 => {
                    return Err(self.escape(link, Some(target_path)));
                }
                Component::ParentDir => depth -= 1,
                Component::Normal(_) => depth += 1,
                _ => {}
            }
        }
        for c in rest.components().rev() {
            todo.push_front(c.as_os_str().to_os_string());
        }
        Ok(())
    }

    /// The error for a path that leads out of the root.
    pub(super) fn escape(&self, link: &Path, target: Option<&Path>) -> io::Error {
        let msg = match target {
            Some(t) => format!(
                "the symlink `{}` leads outside {} (to {})",
                link.display(),
                self.path.display(),
                t.display()
            ),
            None => format!("`{}` leads outside {}", link.display(), self.path.display()),
        };
        io::Error::new(io::ErrorKind::PermissionDenied, msg)
    }
}

fn is_link(st: &Stat) -> bool {
    sys::file_type(st) == FileType::Symlink
}

/// `names/comp`, for messages.
fn shown(names: &[OsString], comp: &OsStr) -> PathBuf {
    let mut p: PathBuf = names.iter().collect();
    p.push(comp);
    p
}

/// The error for a name on the way that is a file, not a folder.
fn not_a_folder(at: &Path, creating: bool) -> io::Error {
    let msg = if creating {
        format!(
            "cannot create the folder `{}`: a file is in the way",
            at.display()
        )
    } else {
        format!("`{}` is a file, not a folder", at.display())
    };
    io::Error::new(io::ErrorKind::NotADirectory, msg)
}

fn too_many_links(rel: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("`{}`: too many levels of symbolic links", rel.display()),
    )
}
