//! The files an approved project hook runs (`python3
//! "$CLAUDE_PROJECT_DIR"/.claude/hooks/validate.py`): code that runs
//! later, so a write to one is asked in every mode but yolo, whoever
//! makes it.

use std::path::{Path, PathBuf};

use super::{HookOrigin, HookSet};

/// The files a set's project hooks name, resolved once (when the set is
/// made or approved), so a write asks no more of the disk than its own
/// path's resolution and a few stats.
#[derive(Debug, Default)]
pub struct ProjectScripts {
    /// Those that exist, canonical, inside the workspace.
    resolved: Vec<PathBuf>,
    /// The words that named nothing then (`python3`, a script not written
    /// yet), as paths in the workspace: looked at again on each write;
    /// with whether the word reads as a file's path (it has a `/` or a
    /// `.`: `lint.sh`, not `python3`), so writing a new file there is
    /// writing the script.
    unresolved: Vec<(PathBuf, bool)>,
    /// The workspace's canonical root.
    real_root: PathBuf,
}

impl ProjectScripts {
    /// The files `set`'s project hooks name in their commands
    /// (`$CLAUDE_PROJECT_DIR` and `$WAYPOINT_PROJECT_DIR` read as `root`, a
    /// relative word as relative to it).
    pub fn of(set: &HookSet, root: &Path) -> Self {
        let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut out = Self {
            real_root,
            ..Self::default()
        };
        for hook in set.all() {
            if !matches!(hook.origin, HookOrigin::Project(_)) {
                continue;
            }
            for word in words(&hook.command, root) {
                let path = crate::fsx::lexical(&root.join(&word));
                let named = (path, word.contains(['/', '.']));
                match out.script(&named.0) {
                    Some(real) if !out.resolved.contains(&real) => out.resolved.push(real),
                    Some(_) => {}
                    None if !out.unresolved.contains(&named) => out.unresolved.push(named),
                    None => {}
                }
            }
        }
        out
    }

    /// Whether the project's hooks name no file at all.
    pub fn is_empty(&self) -> bool {
        self.resolved.is_empty() && self.unresolved.is_empty()
    }

    /// The existing files named, canonical.
    pub fn resolved(&self) -> &[PathBuf] {
        &self.resolved
    }

    /// The hook script `file` (a path the workspace resolved) is, if it is
    /// one: the same file as one named, or a file not written yet at a
    /// path one names.
    pub fn find(&self, file: &Path) -> Option<PathBuf> {
        let file = crate::fsx::lexical(file);
        let real = file.canonicalize().unwrap_or_else(|_| file.clone());
        if let Some(found) = self.resolved.iter().find(|s| **s == real) {
            return Some(found.clone());
        }
        self.unresolved
            .iter()
            .find(|(named, a_path)| {
                (*a_path && *named == file) || self.script(named).is_some_and(|s| s == real)
            })
            .map(|(named, _)| named.clone())
    }

    /// `path`, canonical, when it is a file inside the workspace.
    fn script(&self, path: &Path) -> Option<PathBuf> {
        let real = path.canonicalize().ok()?;
        (real.starts_with(&self.real_root) && real.is_file()).then_some(real)
    }
}

/// The command's words with the project folder's variables replaced and
/// quotes taken away (a plain reading: enough to name the files a hook
/// runs, not a shell).
fn words(command: &str, root: &Path) -> Vec<String> {
    let root = root.display().to_string();
    let mut text = command.to_string();
    for var in ["CLAUDE_PROJECT_DIR", "WAYPOINT_PROJECT_DIR"] {
        text = text
            .replace(&format!("${{{var}}}"), &root)
            .replace(&format!("${var}"), &root);
    }
    text.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .map(|w| w.replace(['"', '\''], ""))
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::hooks::{Hook, HookEvent};

    fn hook(command: &str, origin: HookOrigin) -> Hook {
        Hook {
            event: HookEvent::parse("PreToolUse").unwrap(),
            matcher: None,
            command: command.to_string(),
            timeout: std::time::Duration::from_secs(5),
            origin,
        }
    }

    #[test]
    fn the_scripts_a_project_hook_names_are_found() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path().join(".claude/hooks");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("validate.py"), "").unwrap();
        std::fs::write(ws.path().join("lint.sh"), "").unwrap();
        let project = HookOrigin::Project(ws.path().join(".claude/settings.json"));
        let set = HookSet::new(vec![
            hook(
                "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate.py --strict",
                project.clone(),
            ),
            hook("bash lint.sh && echo done", project),
            hook("bash lint.sh", HookOrigin::Config(PathBuf::from("/c.toml"))),
        ]);
        let scripts = ProjectScripts::of(&set, ws.path());
        let real = |p: &str| ws.path().join(p).canonicalize().unwrap();
        assert_eq!(
            scripts.resolved(),
            [real(".claude/hooks/validate.py"), real("lint.sh")]
        );
        let found = |p: &str| scripts.find(&ws.path().join(p));
        assert_eq!(found("./lint.sh"), Some(real("lint.sh")));
        assert_eq!(found("x/../lint.sh"), Some(real("lint.sh")));
        assert_eq!(found("other.sh"), None);
        // The config's own hook names lint.sh too, but it is not the
        // project's: only what the project's hooks name counts.
        assert_eq!(found("python3"), None);
    }

    #[test]
    fn a_script_named_but_not_written_yet_is_found_when_written_or_linked() {
        let ws = tempfile::tempdir().unwrap();
        let project = HookOrigin::Project(ws.path().join(".claude/settings.json"));
        let set = HookSet::new(vec![hook("bash hooks/later.sh", project)]);
        let scripts = ProjectScripts::of(&set, ws.path());
        assert!(scripts.resolved().is_empty());
        // Creating it is writing it.
        let later = ws.path().join("hooks/later.sh");
        assert_eq!(scripts.find(&later), Some(later.clone()));
        // Once it exists, a link to it is it too.
        std::fs::create_dir_all(ws.path().join("hooks")).unwrap();
        std::fs::write(&later, "").unwrap();
        std::os::unix::fs::symlink(&later, ws.path().join("alias.sh")).unwrap();
        assert!(scripts.find(&ws.path().join("alias.sh")).is_some());
        assert_eq!(scripts.find(&ws.path().join("hooks/other.sh")), None);
    }
}
