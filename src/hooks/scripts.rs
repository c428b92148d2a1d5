//! The files an approved project hook runs (`python3
//! "$CLAUDE_PROJECT_DIR"/.claude/hooks/validate.py`): code that runs
//! later, so a write to one is asked in every mode but yolo, whoever
//! makes it.

use std::path::{Path, PathBuf};

use super::{HookOrigin, HookSet};

impl HookSet {
    /// The existing files inside `root` that the project's hooks name in
    /// their commands (`$CLAUDE_PROJECT_DIR` and `$WAYPOINT_PROJECT_DIR`
    /// read as `root`, a relative word as relative to it), canonical.
    pub fn project_scripts(&self, root: &Path) -> Vec<PathBuf> {
        let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut out = Vec::new();
        for hook in self.all() {
            if !matches!(hook.origin, HookOrigin::Project(_)) {
                continue;
            }
            for word in words(&hook.command, root) {
                let path = root.join(&word);
                let Ok(real) = path.canonicalize() else {
                    continue;
                };
                if real.starts_with(&real_root) && real.is_file() && !out.contains(&real) {
                    out.push(real);
                }
            }
        }
        out
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
        let found = set.project_scripts(ws.path());
        let real = |p: &str| ws.path().join(p).canonicalize().unwrap();
        assert_eq!(
            found,
            vec![real(".claude/hooks/validate.py"), real("lint.sh")]
        );
    }
}
