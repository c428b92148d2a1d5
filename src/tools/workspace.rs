//! Path confinement for the workspace tools. Invariants: every path
//! `resolve` returns lies inside the canonical workspace root, lexically and
//! after following every symlink that exists on the way (dangling ones
//! included); and the tools open nothing by that path: `resolve` only
//! explains a refusal, every open goes through [`Workspace::files`], the
//! root held as an fd ([`crate::fsx::Root`]), so a symlink swapped in after
//! the check cannot win.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::fsx::Root;

/// How many dangling symlinks `real_path` follows before giving up.
const MAX_LINK_DEPTH: u32 = 40;

#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    /// The root, opened once: every file access goes through it.
    files: Arc<Root>,
}

impl Workspace {
    /// Canonicalises `root`; fails if it is not an existing directory.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace root {} is not a directory", root.display()),
            ));
        }
        let files = Arc::new(Root::new(&root)?);
        Ok(Self { root, files })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as an fd: open, list and write through it.
    pub fn files(&self) -> &Arc<Root> {
        &self.files
    }

    /// A `resolve`d path relative to the root (empty for the root), as
    /// [`Workspace::files`] takes it.
    pub fn relative<'a>(&self, resolved: &'a Path) -> &'a Path {
        resolved.strip_prefix(&self.root).unwrap_or(resolved)
    }

    /// Resolves a model-given path inside the workspace, or explains why not.
    ///
    /// Relative paths are taken from the root; absolute paths must lie inside
    /// it. `..` may not climb above the root, and no existing symlink on the
    /// way may lead outside it. The returned path is absolute and free of `.`
    /// and `..` components.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        if path.trim().is_empty() {
            return Err("path is empty".to_string());
        }
        if path.contains('\0') {
            return Err(format!(
                "path `{}` contains a NUL byte",
                path.escape_debug()
            ));
        }
        // A path is one line: a line break could forge lines of the trace
        // and of what the model reads back.
        if path.chars().any(char::is_control) {
            return Err(format!(
                "path `{}` contains a line break or control character; paths must be one line",
                path.escape_debug()
            ));
        }
        let given = Path::new(path);
        let absolute = given.is_absolute();
        let joined = if absolute {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        let Some(normal) = normalize(&joined) else {
            return Err(format!(
                "path `{path}` escapes the workspace {}",
                self.root.display()
            ));
        };
        let lexically_inside = normal.starts_with(&self.root);
        if !lexically_inside && !absolute {
            return Err(format!(
                "path `{path}` escapes the workspace {}",
                self.root.display()
            ));
        }
        let real = real_path(&normal, MAX_LINK_DEPTH)
            .map_err(|e| format!("cannot resolve path `{path}`: {e}"))?;
        if !real.starts_with(&self.root) {
            return Err(if lexically_inside {
                format!(
                    "path `{path}` leads outside the workspace {} through a symlink (to {})",
                    self.root.display(),
                    real.display()
                )
            } else {
                format!(
                    "path `{path}` is outside the workspace {}",
                    self.root.display()
                )
            });
        }
        // An absolute path that only reaches the root through a symlink
        // (e.g. /tmp vs /private/tmp) is returned in its real form.
        Ok(if lexically_inside { normal } else { real })
    }

    /// Where the `resolve`d path `resolved` leads, every symlink followed
    /// (a dangling one to the target a write would create): the file
    /// itself, for those that name it by path (an editor).
    pub fn real(&self, resolved: &Path) -> Result<PathBuf, String> {
        let shown = self.display(resolved);
        let real = real_path(resolved, MAX_LINK_DEPTH)
            .map_err(|e| format!("cannot resolve path `{shown}`: {e}"))?;
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(format!(
                "path `{shown}` leads outside the workspace {}",
                self.root.display()
            ))
        }
    }

    /// `p` relative to the root, for messages (`.` for the root itself).
    pub fn display(&self, p: &Path) -> String {
        match p.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => p.to_string_lossy().into_owned(),
        }
    }
}

/// Removes `.` and `..` lexically. `None` if `..` climbs above the filesystem
/// root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir => out.push(comp),
            Component::CurDir => {}
            Component::ParentDir => {
                out.parent()?;
                out.pop();
            }
            Component::Normal(c) => out.push(c),
        }
    }
    Some(out)
}

/// The real location of an absolute, normalised `path`: the longest existing
/// ancestor is canonicalised (following symlinks, including dangling ones by
/// hand) and the missing tail is appended.
fn real_path(path: &Path, depth: u32) -> io::Result<PathBuf> {
    let mut existing = path;
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        match std::fs::symlink_metadata(existing) {
            Ok(meta) => {
                let base = if meta.file_type().is_symlink() && std::fs::metadata(existing).is_err()
                {
                    follow_dangling(existing, depth)?
                } else {
                    existing.canonicalize()?
                };
                let mut out = base;
                out.extend(missing.iter().rev());
                return Ok(out);
            }
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.kind() == io::ErrorKind::NotADirectory =>
            {
                match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        missing.push(name);
                        existing = parent;
                    }
                    _ => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Where a symlink whose target does not exist (yet) would lead.
fn follow_dangling(link: &Path, depth: u32) -> io::Result<PathBuf> {
    if depth == 0 {
        return Err(io::Error::other("too many levels of symbolic links"));
    }
    let target = std::fs::read_link(link)?;
    let parent = link.parent().unwrap_or(Path::new("/"));
    let joined = if target.is_absolute() {
        target
    } else {
        parent.canonicalize()?.join(target)
    };
    let normal = normalize(&joined)
        .ok_or_else(|| io::Error::other(format!("symlink {} is invalid", link.display())))?;
    real_path(&normal, depth - 1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
        let ws_dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = Workspace::new(ws_dir.path()).unwrap();
        (ws_dir, outside, ws)
    }

    #[test]
    fn relative_paths_resolve_under_the_root() {
        let (_d, _o, ws) = setup();
        assert_eq!(ws.resolve("a/b.txt").unwrap(), ws.root().join("a/b.txt"));
        assert_eq!(ws.resolve("./a/../c").unwrap(), ws.root().join("c"));
        assert_eq!(ws.resolve(".").unwrap(), ws.root());
    }

    #[test]
    fn a_path_is_one_line() {
        let (_d, _o, ws) = setup();
        for bad in ["a\nb.txt", "notes\r.md", "x\u{1b}[2J.rs"] {
            let err = ws.resolve(bad).unwrap_err();
            assert!(err.contains("line break or control character"), "{err}");
            assert!(!err.contains('\n') && !err.contains('\u{1b}'), "{err:?}");
        }
    }

    #[test]
    fn empty_path_is_refused() {
        let (_d, _o, ws) = setup();
        assert_eq!(ws.resolve("").unwrap_err(), "path is empty");
        assert_eq!(ws.resolve("  ").unwrap_err(), "path is empty");
    }

    #[test]
    fn dotdot_escape_is_refused_with_context() {
        let (_d, _o, ws) = setup();
        let err = ws.resolve("../x").unwrap_err();
        assert_eq!(
            err,
            format!("path `../x` escapes the workspace {}", ws.root().display())
        );
        assert!(
            ws.resolve("a/../../x")
                .unwrap_err()
                .contains("escapes the workspace")
        );
        assert!(ws.resolve("../../../../../../../../../../..").is_err());
    }

    #[test]
    fn absolute_inside_is_accepted_and_outside_refused() {
        let (_d, outside, ws) = setup();
        let inside = ws.root().join("new/file.rs");
        assert_eq!(ws.resolve(inside.to_str().unwrap()).unwrap(), inside);
        let out = outside.path().join("f");
        let err = ws.resolve(out.to_str().unwrap()).unwrap_err();
        assert!(err.contains("is outside the workspace"), "{err}");
        assert!(err.contains(out.to_str().unwrap()), "{err}");
        assert!(
            ws.resolve("/etc/passwd")
                .unwrap_err()
                .contains("outside the workspace")
        );
        // Absolute with `..` that climbs out of the root.
        let sneaky = format!("{}/../x", ws.root().display());
        assert!(ws.resolve(&sneaky).is_err());
    }

    #[test]
    fn symlinked_directory_leading_out_is_refused() {
        let (_d, outside, ws) = setup();
        symlink(outside.path(), ws.root().join("out")).unwrap();
        let err = ws.resolve("out/new.txt").unwrap_err();
        assert!(err.contains("through a symlink"), "{err}");
        assert!(err.contains("out/new.txt"), "{err}");
        assert!(ws.resolve("out/deep/er/new.txt").is_err());
        assert!(ws.resolve("out").is_err());
    }

    #[test]
    fn symlinked_file_leading_out_is_refused() {
        let (_d, outside, ws) = setup();
        let target = outside.path().join("secret");
        std::fs::write(&target, "x").unwrap();
        symlink(&target, ws.root().join("link")).unwrap();
        assert!(
            ws.resolve("link")
                .unwrap_err()
                .contains("through a symlink")
        );
        // Dangling link whose target would be created outside.
        symlink(outside.path().join("later"), ws.root().join("dangling")).unwrap();
        assert!(
            ws.resolve("dangling")
                .unwrap_err()
                .contains("through a symlink")
        );
    }

    #[test]
    fn symlinks_staying_inside_are_fine() {
        let (_d, _o, ws) = setup();
        std::fs::create_dir(ws.root().join("real")).unwrap();
        symlink(ws.root().join("real"), ws.root().join("alias")).unwrap();
        assert_eq!(ws.resolve("alias/x").unwrap(), ws.root().join("alias/x"));
        symlink("real/nothing-yet", ws.root().join("dangling_in")).unwrap();
        assert!(ws.resolve("dangling_in").is_ok());
    }

    #[test]
    fn path_under_a_file_is_not_an_escape() {
        let (_d, _o, ws) = setup();
        std::fs::write(ws.root().join("f"), "x").unwrap();
        assert_eq!(ws.resolve("f/g").unwrap(), ws.root().join("f/g"));
    }

    #[test]
    fn display_is_relative_to_the_root() {
        let (_d, _o, ws) = setup();
        assert_eq!(ws.display(&ws.root().join("src/a.rs")), "src/a.rs");
        assert_eq!(ws.display(ws.root()), ".");
        assert_eq!(ws.display(Path::new("/elsewhere")), "/elsewhere");
    }

    #[test]
    fn new_refuses_missing_root_and_files() {
        let (d, _o, _ws) = setup();
        assert!(Workspace::new(d.path().join("missing")).is_err());
        std::fs::write(d.path().join("file"), "").unwrap();
        assert!(Workspace::new(d.path().join("file")).is_err());
    }
}
