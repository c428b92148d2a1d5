//! Git repositories and file trees as the checkpoint tests make and
//! compare them: `git` run in a folder (a name and email given, no
//! global config needed), and every file under a folder read back.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Runs `git args` in `dir`; fails the test when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// Every file under `dir` (recursively, `.git` left out with
/// `skip_git`), by path: its bytes and mode.
pub fn tree_of(dir: &Path, skip_git: bool) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if skip_git && rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(rel, (bytes, meta.permissions().mode()));
            }
        }
    }
    out
}
