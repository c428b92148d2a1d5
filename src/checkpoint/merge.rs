//! Undo's three-way merge of a file the model changed and the user
//! changed after it: git merge-file on three inputs written where no
//! command can reach them.

use std::path::{Path, PathBuf};

use super::error::RestoreError;

/// `current` with the change from `base` to `other` merged in (git
/// merge-file); `None` when they touch the same lines. The three inputs
/// are written into a fresh folder of Waypoint's own data folder (0700),
/// each made new (`O_EXCL`) and never through a link (`O_NOFOLLOW`), so
/// nothing planted by a command can redirect the model's text.
pub(super) fn merge(
    current: &[u8],
    base: &[u8],
    other: &[u8],
) -> Result<Option<Vec<u8>>, RestoreError> {
    let dir = merge_folder().map_err(RestoreError::Merge)?;
    merge_in(dir.path(), current, base, other)
}

/// [`merge`] with its inputs written into `dir`.
fn merge_in(
    dir: &Path,
    current: &[u8],
    base: &[u8],
    other: &[u8],
) -> Result<Option<Vec<u8>>, RestoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let put = |name: &str, bytes: &[u8]| -> Result<PathBuf, RestoreError> {
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|source| RestoreError::MergeInput {
                path: path.clone(),
                source,
            })?;
        std::io::Write::write_all(&mut file, bytes).map_err(RestoreError::Merge)?;
        Ok(path)
    };
    let (a, b, c) = (
        put("current", current)?,
        put("base", base)?,
        put("other", other)?,
    );
    let mut cmd = crate::programs::git().map_err(RestoreError::MergeNoGit)?;
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["merge-file", "-p", "--quiet"])
        .args([&a, &b, &c])
        .current_dir(dir);
    let limit = std::time::Duration::from_secs(30);
    let out = crate::programs::output_within(&mut cmd, None, limit).map_err(RestoreError::Merge)?;
    Ok(out.status.success().then_some(out.stdout))
}

/// A fresh folder for one merge under `$WAYPOINT_HOME/tmp` (else the
/// platform data folder's), which commands cannot write; the temp folder
/// where there is no data folder.
fn merge_folder() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::DirBuilderExt;
    let home = std::env::var_os("WAYPOINT_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            directories::ProjectDirs::from("", "", "waypoint").map(|d| d.data_dir().to_path_buf())
        });
    let builder = tempfile::Builder::new().prefix("merge-").to_owned();
    match home {
        Some(home) => {
            let base = home.join("tmp");
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&base)?;
            builder.tempdir_in(base)
        }
        None => builder.tempdir(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_merge_merges_lines_apart_and_refuses_lines_together() {
        let dir = tempfile::tempdir().unwrap();
        let base = b"a\nb\nc\n";
        let merged = merge_in(dir.path(), b"A\nb\nc\n", base, b"a\nb\nC\n").unwrap();
        assert_eq!(merged.as_deref(), Some(&b"A\nb\nC\n"[..]));
        let dir = tempfile::tempdir().unwrap();
        let clash = merge_in(dir.path(), b"X\nb\nc\n", base, b"Y\nb\nc\n").unwrap();
        assert_eq!(clash, None);
    }

    /// A watcher plants `base`, `current` and `other` as links to a victim
    /// in every merge folder it sees appear, as fast as it can, while
    /// merges run: none writes through a link.
    #[test]
    fn a_link_planted_in_a_merge_folder_never_gets_the_text() {
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        let parent = root.path().join("merges");
        std::fs::create_dir(&parent).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (parent, victim, stop) = (parent.clone(), victim.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for dir in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
                        for name in ["base", "current", "other"] {
                            let _ = std::os::unix::fs::symlink(&victim, dir.path().join(name));
                        }
                    }
                }
            })
        };
        let (mut merged, mut refused) = (0, 0);
        for _ in 0..300 {
            let dir = tempfile::Builder::new()
                .prefix("merge-")
                .tempdir_in(&parent)
                .unwrap();
            match merge_in(dir.path(), b"A\nb\nc\n", b"a\nb\nc\n", b"a\nb\nC\n") {
                Ok(Some(text)) => {
                    assert_eq!(text, b"A\nb\nC\n");
                    merged += 1;
                }
                Ok(None) => panic!("no clash was made"),
                Err(e) => {
                    assert!(e.to_string().contains("File exists"), "{e}");
                    refused += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        watcher.join().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(merged + refused, 300);
    }
}
