//! Item scope's sandbox (plan mode, issue 45): while an approved item that
//! declared its files is in progress, a sandboxed command that is not one
//! of the item's declared commands may write only those files, the device
//! files and the world's private temp folders. Landlock grants rights on
//! what exists, so a declared file stands for itself (written in place:
//! a tool that renames a new file over it needs its folder), a declared
//! folder for everything beneath it, a glob for its folder before the
//! first wildcard (`src/parser/**`: `src/parser`), and a path that does
//! not exist yet for its nearest existing folder (a new file at the
//! workspace's top leaves the whole workspace writable). Invariant: the
//! narrowed sandbox never lets a command write what the session's does
//! not (each path is kept only when its real path lies in the session's
//! writable set), and it is only ever narrower.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::blocked::{real_or_parent, user_could_write};
use super::sandbox::{Confinement, DEVICE_FILES, Narrowings, Prepared, Sandbox};

/// The narrowing of one command: the item's declared files (absolute,
/// as declared) and the hint a write it stops is told with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Narrowing {
    pub paths: Vec<PathBuf>,
    /// Names the item and its scope: `item 1's scope (Write a: a.txt) …`.
    pub hint: String,
}

/// The paths an item's `files` (workspace-relative paths or globs) name
/// under `root`: a glob's folder before its first wildcard, a plain path
/// as it is. Absolute entries and those climbing out (`..`) name nothing.
pub fn paths_of(root: &Path, files: &[String]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for entry in files {
        let entry = entry.trim().trim_start_matches("./");
        let plain: PathBuf = Path::new(entry)
            .components()
            .take_while(|c| {
                !c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            })
            .collect();
        let inside = plain
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        let path = root.join(&plain);
        if inside && !entry.is_empty() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// `path` made real: itself when it exists, else its nearest existing
/// folder (what Landlock can grant for it).
fn existing(path: &Path) -> Option<PathBuf> {
    path.ancestors().find_map(|p| p.canonicalize().ok())
}

impl Sandbox {
    /// This sandbox narrowed to `paths` (see the module): each one's real
    /// path (or nearest existing folder) that this one lets commands
    /// write, and the device files; in the separate world, its private
    /// temp folders but one the workspace comes back into. Reads, the
    /// network and sockets as in this one.
    pub fn narrowed(&self, paths: &[PathBuf]) -> Sandbox {
        let session: Vec<PathBuf> = self
            .writable
            .iter()
            .filter(|w| !w.starts_with("/dev"))
            .map(|w| w.canonicalize().unwrap_or_else(|_| w.clone()))
            .collect();
        let mut writable: Vec<PathBuf> = Vec::new();
        for real in paths.iter().filter_map(|p| existing(p)) {
            let allowed = session.iter().any(|w| real.starts_with(w));
            if allowed && !real.starts_with("/dev") && !writable.contains(&real) {
                writable.push(real);
            }
        }
        writable.extend(DEVICE_FILES.iter().map(PathBuf::from));
        Sandbox {
            writable,
            left_out: Vec::new(),
            network: self.network,
            world: self.world.clone(),
            sockets: self.sockets.clone(),
            prepared: Prepared::default(),
            prepared_read_only: Prepared::default(),
            prepared_narrowed: Narrowings::default(),
            nothing_writable: false,
            narrowed: true,
        }
    }

    /// The confinement for a command: narrowed to `narrowed`'s paths when
    /// given (outside plan mode), else [`Self::confinement_for`].
    pub fn confinement_of(
        &self,
        read_only: bool,
        narrowed: Option<&Narrowing>,
    ) -> Result<Arc<Confinement>, String> {
        let Some(narrowing) = narrowed.filter(|_| !read_only) else {
            return self.confinement_for(read_only);
        };
        let sandbox = self.narrowed(&narrowing.paths);
        let mut last = self
            .prepared_narrowed
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((writable, confinement)) = last.as_ref()
            && *writable == sandbox.writable
        {
            return Ok(Arc::clone(confinement));
        }
        let confinement = Arc::new(sandbox.prepare().map_err(|e| e.to_string())?);
        *last = Some((sandbox.writable, Arc::clone(&confinement)));
        Ok(confinement)
    }
}

/// What a narrowed command's output says the narrowing stopped: the first
/// line saying a permission was refused (as [`super::blocked::blocked`]
/// reads it) naming a path the session's sandbox lets commands write but
/// the narrowed one does not. A path is absolute, or relative to `root`
/// when it holds a `/` or a `.` (`bash: line 1: b.txt: Permission denied`).
pub fn blocked_by_narrowing<'a>(
    output: &'a str,
    sandbox: &Sandbox,
    narrowing: &Narrowing,
    root: &Path,
) -> Option<&'a str> {
    let narrowed = sandbox.narrowed(&narrowing.paths);
    output.lines().map(str::trim).find(|line| {
        let refused = line.contains("Permission denied")
            || line.contains("Operation not permitted")
            || line.contains("Read-only file system");
        refused
            && paths_named(line, root).any(|p| {
                let real = real_or_parent(&p);
                let session = sandbox.allows_write(&p) || sandbox.allows_write(&real);
                session && !narrowed.allows_write(&real) && user_could_write(&real)
            })
    })
}

/// The paths a message line names: absolute ones, and relative ones that
/// look like paths, resolved against `root`.
fn paths_named<'l>(line: &'l str, root: &'l Path) -> impl Iterator<Item = PathBuf> + 'l {
    line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '‘' | '’'))
        .map(|w| w.trim_end_matches([':', ',', ';', ')', ']']))
        .filter_map(move |w| {
            if w.starts_with('/') && w.len() > 1 {
                Some(PathBuf::from(w))
            } else if w.contains(['/', '.'])
                && !w.contains("://")
                && !w.starts_with('-')
                && !matches!(w, "." | "..")
            {
                Some(root.join(w))
            } else {
                None
            }
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn files(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_items_files_name_paths_in_the_workspace() {
        let root = Path::new("/ws");
        let paths = paths_of(
            root,
            &files(&[
                "a.txt",
                "./src/parser/**",
                "docs/",
                "src/*.rs",
                "**",
                "../out",
                "/etc/x",
                "",
                "a.txt",
            ]),
        );
        let want: Vec<PathBuf> = ["/ws/a.txt", "/ws/src/parser", "/ws/docs", "/ws/src", "/ws"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(paths, want);
    }

    #[test]
    fn the_writable_set_narrows_to_the_declared_files() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "").unwrap();
        std::fs::create_dir_all(root.join("src/parser")).unwrap();
        let sandbox = Sandbox::for_workspace(&root, &[], true);
        let declared = paths_of(&root, &files(&["a.txt", "src/parser/**", "src/new/x.rs"]));
        let narrowed = sandbox.narrowed(&declared);
        assert!(narrowed.narrowed && !narrowed.nothing_writable);
        assert!(narrowed.allows_write(&root.join("a.txt")));
        assert!(narrowed.allows_write(&root.join("src/parser/deep/y.rs")));
        // A path not there yet: its nearest existing folder.
        assert!(narrowed.allows_write(&root.join("src/z.rs")));
        assert!(!narrowed.allows_write(&root.join("b.txt")));
        assert!(!narrowed.allows_write(&root));
        assert!(!narrowed.allows_write(&std::env::temp_dir().join("x")));
        assert!(narrowed.allows_write(Path::new("/dev/null")));
        assert_eq!(narrowed.network, sandbox.network);
        assert_eq!(narrowed.world, sandbox.world);
    }

    #[test]
    fn the_narrowed_set_never_holds_what_the_sessions_does_not() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        // A link in the workspace to a file outside it.
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).unwrap();
        let sandbox = Sandbox::for_workspace(&root, &[], true);
        let declared = vec![
            root.join("link"),
            PathBuf::from("/etc/passwd"),
            PathBuf::from("/etc/nonexistent-dir/x"),
            PathBuf::from("/dev/sda"),
        ];
        let narrowed = sandbox.narrowed(&declared);
        assert_eq!(
            narrowed.writable,
            DEVICE_FILES.iter().map(PathBuf::from).collect::<Vec<_>>()
        );
        for w in narrowed.writable.iter().filter(|w| !w.starts_with("/dev")) {
            assert!(sandbox.allows_write(w), "{}", w.display());
        }
    }

    #[test]
    fn a_private_temp_the_workspace_comes_back_into_is_not_writable() {
        let ws = tempfile::tempdir_in("/tmp").unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "").unwrap();
        let sandbox = Sandbox::for_workspace(&root, &[], true);
        let places = sandbox.world.as_ref().unwrap();
        let world = super::super::world::World::plan(places, true).unwrap();
        let narrowed = sandbox.narrowed(&[root.join("a.txt")]);
        // The private /tmp (the workspace comes back into it) is left out.
        let all = sandbox.private_writable(&world).len();
        assert_eq!(narrowed.private_writable(&world).len(), all - 1);
    }

    #[test]
    fn a_refusal_inside_the_session_but_outside_the_item_is_the_narrowings() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "").unwrap();
        let sandbox = Sandbox::for_workspace(&root, &[], true);
        let narrowing = Narrowing {
            paths: vec![root.join("a.txt")],
            hint: String::new(),
        };
        let said =
            |out: &str| blocked_by_narrowing(out, &sandbox, &narrowing, &root).map(str::to_string);
        let line = "bash: line 1: b.txt: Permission denied";
        assert_eq!(
            said(&format!("{line}\n[exit code: 1]")),
            Some(line.to_string())
        );
        let abs = format!(
            "touch: cannot touch '{}': Permission denied",
            root.display()
        );
        assert!(said(&abs).is_some());
        assert_eq!(said("bash: line 1: a.txt: Permission denied"), None);
        assert_eq!(said("Permission denied"), None);
        assert_eq!(said("wrote b.txt"), None);
        // Outside the session's set: the sandbox's own block, not this.
        assert_eq!(
            said("touch: cannot touch '/etc/x': Permission denied"),
            None
        );
    }
}
