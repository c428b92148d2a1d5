//! What the model is told about the project besides the task: the
//! project's own instructions (`AGENTS.md`, or `CLAUDE.md` where a folder
//! has no `AGENTS.md`) from the repository root down to the workspace, the
//! user's `~/.config/waypoint/AGENTS.md`, and a short environment block.
//! Invariants: read once when a session's engine starts, so the system
//! prompt is byte-stable for the whole session (the provider can cache it);
//! a project's file is read only if it is a regular file inside the
//! repository (opened beneath the repository's root fd: a symlink leading
//! out, a device or a FIFO is skipped, and opening never blocks); at most
//! [`MAX_FILE_BYTES`] of any file is read.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The most of one instructions file that is sent.
pub const MAX_FILE_BYTES: usize = 32 * 1024;

/// One instructions file that was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instructions {
    pub path: PathBuf,
    /// Its bytes on disk.
    pub size: u64,
    /// What is sent (cut at [`MAX_FILE_BYTES`], with a note).
    pub text: String,
}

/// The instructions files for `workspace`, the user's first, then from the
/// repository root (the nearest folder above holding `.git`; the workspace
/// alone when there is none) down to the workspace.
pub fn instructions(workspace: &Path, user_dir: Option<&Path>) -> Vec<Instructions> {
    let mut folders: Vec<&Path> = Vec::new();
    for dir in workspace.ancestors() {
        folders.push(dir);
        if dir.join(".git").exists() {
            break;
        }
    }
    if !folders.last().is_some_and(|d| d.join(".git").exists()) {
        folders.truncate(1);
    }
    folders.reverse();
    // The user's own file may be a link (to their dotfiles, say); it is
    // still only read if it is a regular file, and only so much of it.
    let mut found: Vec<Instructions> = user_dir
        .map(|d| d.join("AGENTS.md"))
        .and_then(|path| read(&path, crate::fsx::open_regular(&path)))
        .into_iter()
        .collect();
    let Some(top) = folders.first() else {
        return found;
    };
    let repository = match crate::fsx::Root::new(top) {
        Ok(root) => root,
        Err(e) => {
            tracing::warn!(folder = %top.display(), error = %e, "project instructions not read");
            return found;
        }
    };
    for dir in &folders {
        let Ok(rel) = dir.strip_prefix(top) else {
            continue;
        };
        let open = |name: &str| {
            let path = dir.join(name);
            read(&path, repository.open_file(&rel.join(name)))
        };
        if let Some(file) = open("AGENTS.md").or_else(|| open("CLAUDE.md")) {
            found.push(file);
        }
    }
    found
}

/// What `opened` (the file at `path`) holds, cut at [`MAX_FILE_BYTES`];
/// `None` if it is missing, empty, or was refused (logged).
fn read(path: &Path, opened: std::io::Result<std::fs::File>) -> Option<Instructions> {
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "instructions file not read");
            return None;
        }
    };
    let (bytes, cut) = crate::fsx::read_capped(&mut file, MAX_FILE_BYTES).ok()?;
    let size = file
        .metadata()
        .map_or(bytes.len() as u64, |m| m.len().max(bytes.len() as u64));
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        let _ = write!(
            text,
            "\n[… cut: the file has {size} bytes; read it for the rest]"
        );
    }
    (!text.trim().is_empty()).then(|| Instructions {
        path: path.to_path_buf(),
        size,
        text,
    })
}

/// The environment block: working folder, OS, date, and the git state.
pub fn environment(workspace: &Path, today: &str) -> String {
    let git = match git_branch(workspace) {
        Some(Some(branch)) => format!("yes, on branch {branch}"),
        Some(None) => "yes (detached HEAD)".to_string(),
        None => "no".to_string(),
    };
    format!(
        "<environment>\nWorking directory: {}\nOS: {} ({})\nDate: {today}\nGit repository: {git}\n</environment>",
        workspace.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    )
}

/// `Some(branch)` inside a git repository (`None` when detached), `None`
/// outside one. Reads `.git/HEAD`; runs no git. Like the instructions, the
/// repository's files are read only if they are regular files, at most
/// `GIT_FILE_BYTES` of each (a FIFO or `/dev/zero` there cannot hang it).
pub fn git_branch(workspace: &Path) -> Option<Option<String>> {
    let dir = workspace.ancestors().find(|d| d.join(".git").exists())?;
    let mut git = dir.join(".git");
    if git.is_file() {
        // A worktree or submodule: `gitdir: PATH`.
        let text = small_text(&git)?;
        let target = text.strip_prefix("gitdir:")?.trim();
        git = dir.join(target);
    }
    let head = small_text(&git.join("HEAD"))?;
    Some(
        head.trim()
            .strip_prefix("ref: refs/heads/")
            .map(|b| crate::text::clean_line(b).into_owned()),
    )
}

/// The most of `.git` (a file) or `HEAD` that is read.
const GIT_FILE_BYTES: usize = 4096;

/// The start of the regular file at `path` (links followed: a worktree's
/// git folder lies elsewhere by design).
fn small_text(path: &Path) -> Option<String> {
    let mut file = crate::fsx::open_regular(path).ok()?;
    let (bytes, _) = crate::fsx::read_capped(&mut file, GIT_FILE_BYTES).ok()?;
    String::from_utf8(bytes).ok()
}

/// The system prompt: `base`, the environment block, and the
/// instructions, each file in its own delimited section.
pub fn system_prompt(base: &str, environment: &str, files: &[Instructions]) -> String {
    let mut prompt = format!("{}\n\n{environment}", base.trim_end());
    if !files.is_empty() {
        prompt.push_str(
            "\n\n# Project instructions\n\nThe user and the project wrote these for you; follow them unless the user says otherwise.",
        );
        for f in files {
            let _ = write!(
                prompt,
                "\n\n<instructions path=\"{}\">\n{}\n</instructions>",
                f.path.display(),
                f.text.trim_end()
            );
        }
    }
    prompt
}

/// Today's date (UTC), `2026-12-03`.
pub fn today() -> String {
    crate::session::utc(crate::session::now_ms())
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn files_come_from_the_repository_root_down_to_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let ws = repo.join("crates/app");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature-x\n").unwrap();
        // Above the repository: not read.
        std::fs::write(root.path().join("AGENTS.md"), "outside").unwrap();
        std::fs::write(repo.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(repo.join("CLAUDE.md"), "ignored: AGENTS.md is there").unwrap();
        std::fs::write(repo.join("crates/CLAUDE.md"), "crates rules").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "x".repeat(MAX_FILE_BYTES + 10)).unwrap();
        let user = root.path().join("user");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join("AGENTS.md"), "user rules").unwrap();

        let files = instructions(&ws, Some(&user));
        let texts: Vec<&str> = files
            .iter()
            .map(|f| &f.text[..f.text.len().min(12)])
            .collect();
        assert_eq!(
            texts,
            ["user rules", "root rules", "crates rules", "xxxxxxxxxxxx"]
        );
        assert!(files[3].text.ends_with("read it for the rest]"));
        assert_eq!(files[3].size as usize, MAX_FILE_BYTES + 10);

        let env = environment(&ws, "2026-12-03");
        assert!(
            env.contains("Git repository: yes, on branch feature-x"),
            "{env}"
        );
        assert!(env.contains("Date: 2026-12-03"));
        let prompt = system_prompt("Base.", &env, &files[..2]);
        assert!(prompt.starts_with("Base.\n\n<environment>"));
        assert!(prompt.contains(&format!(
            "<instructions path=\"{}\">\nroot rules\n</instructions>",
            repo.join("AGENTS.md").display()
        )));
    }

    #[test]
    fn outside_a_repository_only_the_workspace_counts() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(root.path().join("AGENTS.md"), "parent").unwrap();
        assert!(instructions(&ws, None).is_empty());
        std::fs::write(ws.join("CLAUDE.md"), "here").unwrap();
        assert_eq!(instructions(&ws, None)[0].text, "here");
        assert_eq!(git_branch(&ws), None);
        assert!(environment(&ws, "d").contains("Git repository: no"));
    }
}
