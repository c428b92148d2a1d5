//! What a sandboxed command's output says the sandbox stopped: a refused
//! permission naming a path outside what commands may write, that the
//! user could write outside the sandbox (so running it outside would
//! help).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::Sandbox;

/// The refusals a sandboxed command's output reports, whatever its exit
/// code: the first line that says a permission was refused (`EACCES`,
/// `EPERM`, `EROFS`) and names an absolute path the sandbox does not let
/// commands write but the user could write outside it. A line naming no
/// such path (a program printing the words, a refusal inside the
/// workspace, a file the user cannot write anyway or a read-only file
/// system) is not a block: running it outside would not help.
pub fn blocked<'a>(output: &'a str, sandbox: &Sandbox) -> Option<&'a str> {
    blocked_by(output, sandbox, &user_could_write)
}

/// [`blocked`], with what the user could write outside the sandbox.
fn blocked_by<'a>(
    output: &'a str,
    sandbox: &Sandbox,
    could_write: &dyn Fn(&Path) -> bool,
) -> Option<&'a str> {
    output.lines().map(str::trim).find(|line| {
        let refused = line.contains("Permission denied")
            || line.contains("Operation not permitted")
            || line.contains("Read-only file system");
        refused
            && paths_in(line).any(|p| {
                let p = Path::new(p);
                let real = real_or_parent(p);
                !sandbox.allows_write(p) && !sandbox.allows_write(&real) && could_write(&real)
            })
    })
}

/// Whether this process (the user, outside the sandbox) may write `path`,
/// or make it in its nearest existing folder (`access(2)`: permissions,
/// read-only file systems, immutable files).
pub(super) fn user_could_write(path: &Path) -> bool {
    let existing = path.ancestors().find(|p| p.symlink_metadata().is_ok());
    let Some(existing) = existing else {
        return false;
    };
    // A path with a NUL byte is an error here: false.
    rustix::fs::access(existing, rustix::fs::Access::WRITE_OK).is_ok()
}

/// The absolute paths a message line names (`'/etc/x'`, `/etc/x:`, …).
fn paths_in(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '‘' | '’'))
        .map(|w| w.trim_end_matches([':', ',', ';', ')', ']']))
        .filter(|w| w.starts_with('/') && w.len() > 1)
}

/// `p` with its longest existing ancestor's symlinks resolved (so `/tmp`
/// given as a link to `/private/tmp` is still recognised as writable).
pub(super) fn real_or_parent(p: &Path) -> PathBuf {
    let mut tail: Vec<&OsStr> = Vec::new();
    let mut cur = p;
    loop {
        if let Ok(real) = cur.canonicalize() {
            let mut out = real;
            out.extend(tail.iter().rev());
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name);
                cur = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_a_refusal_naming_a_path_outside() {
        let s = Sandbox {
            writable: vec![PathBuf::from("/work/ws"), PathBuf::from("/tmp")],
            network: true,
            ..Sandbox::default()
        };
        let real = "touch: cannot touch '/etc/x': Permission denied\n[exit code: 1]";
        assert_eq!(
            blocked_by(real, &s, &|_| true),
            Some("touch: cannot touch '/etc/x': Permission denied")
        );
        // Exit code 0 does not hide it.
        let hidden = "bash: line 1: /etc/y: Permission denied\n[exit code: 0]";
        assert!(blocked_by(hidden, &s, &|_| true).is_some());
        let py = "PermissionError: [Errno 13] Permission denied: '/root/.bashrc'";
        assert!(blocked_by(py, &s, &|_| true).is_some());
        // Words alone, or a refusal inside what is writable, are not.
        assert_eq!(
            blocked_by("Permission denied\n[exit code: 1]", &s, &|_| true),
            None
        );
        assert_eq!(
            blocked_by("cat: /work/ws/secret: Permission denied", &s, &|_| true),
            None
        );
        assert_eq!(
            blocked_by("rm: /tmp/x: Operation not permitted", &s, &|_| true),
            None
        );
        assert_eq!(
            blocked_by("wrote /etc/x fine\n[exit code: 0]", &s, &|_| true),
            None
        );
    }

    #[test]
    fn a_refusal_the_user_would_meet_outside_too_is_not_a_block() {
        let s = Sandbox {
            writable: vec![PathBuf::from("/work/ws")],
            ..Sandbox::default()
        };
        let line = "cat: /root/secret: Permission denied";
        let no_one = |_: &Path| false;
        let user = |_: &Path| true;
        assert_eq!(blocked_by(line, &s, &no_one), None);
        assert_eq!(blocked_by(line, &s, &user), Some(line));
        let ro = "touch: cannot touch '/usr/x': Read-only file system";
        assert_eq!(blocked_by(ro, &s, &no_one), None);
        // This process can write its own temp folder: a refusal there is
        // the sandbox's.
        let dir = tempfile::tempdir().unwrap();
        assert!(user_could_write(&dir.path().join("new/file")));
    }
}
