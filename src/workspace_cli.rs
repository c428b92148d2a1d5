//! The commands that act on a workspace without a session: `waypoint
//! mcp …` (see [`crate::mcp::cli`]) and `waypoint hooks list|approve`: which hooks run in this workspace (the
//! config file's, the project's), which wait for approval and what could
//! not be read; approving the project's `.claude/settings.json` (its hooks
//! and its permission rules that allow more). Exit codes: 0 done, 1 the
//! approval could not be saved.

use std::io::{self, Write};
use std::path::Path;

use crate::cli::HooksAction;
use crate::hooks::HookSet;
use crate::text::clean_line;

pub fn run(
    settings: &crate::config::Settings,
    action: &HooksAction,
    workspace: &Path,
) -> io::Result<i32> {
    let env = |k: &str| std::env::var(k).ok();
    let set = crate::hooks::load(&settings.hooks, workspace, &env);
    let out = &mut io::stdout().lock();
    match action {
        HooksAction::List => list(&set, out).map(|()| 0),
        HooksAction::Approve => approve(&set, workspace, out),
    }
}

/// Approves what of the project's Claude Code settings waits: its hooks,
/// its rules that allow more.
fn approve(set: &HookSet, workspace: &Path, out: &mut dyn Write) -> io::Result<i32> {
    let env = |k: &str| std::env::var(k).ok();
    let rules = crate::config::claude::read(workspace, &env).rules;
    if set.waiting.is_none() && rules.waiting.is_none() {
        writeln!(out, "Nothing of this project waits for approval.")?;
        return Ok(0);
    }
    let mut code = 0;
    if let Some(waiting) = &set.waiting {
        match crate::hooks::config::approve(waiting, workspace, &env) {
            Ok(()) => writeln!(
                out,
                "Approved {} hook(s) of {} for {} (asked again if they change).",
                waiting.count,
                files(&waiting.files),
                workspace.display()
            )?,
            Err(e) => {
                eprintln!("waypoint: {e}");
                code = 1;
            }
        }
    }
    if let Some(waiting) = &rules.waiting {
        match crate::config::claude::approve(waiting, workspace, &env) {
            Ok(()) => writeln!(
                out,
                "Approved the permission rules of {} for {} (asked again if they change).",
                waiting.files.join(" and "),
                workspace.display()
            )?,
            Err(e) => {
                eprintln!("waypoint: {e}");
                code = 1;
            }
        }
    }
    Ok(code)
}

/// `waypoint mcp …` and `waypoint hooks …`, which act on the workspace
/// (`--workspace`, else the current folder); `None` for another command.
pub async fn workspace_command(
    cli: &crate::cli::Cli,
    settings: &crate::config::Settings,
) -> Option<std::io::Result<i32>> {
    let command = cli.command.as_ref()?;
    if !matches!(
        command,
        crate::cli::Command::Mcp { .. } | crate::cli::Command::Hooks { .. }
    ) {
        return None;
    }
    let dir = match cli.workspace.clone().map_or_else(std::env::current_dir, Ok) {
        Ok(dir) => dir,
        Err(e) => return Some(Err(e)),
    };
    match command {
        crate::cli::Command::Mcp { action } => {
            Some(crate::mcp::cli::run(settings, action, &dir).await)
        }
        crate::cli::Command::Hooks { action } => Some(run(settings, action, &dir)),
        _ => None,
    }
}

fn files(files: &[std::path::PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ")
}

fn list(set: &HookSet, out: &mut dyn Write) -> io::Result<()> {
    if set.is_empty() {
        writeln!(out, "No hooks run here.")?;
    }
    for hook in set.all() {
        writeln!(out, "{}", hook.line())?;
    }
    if let Some(waiting) = &set.waiting {
        writeln!(
            out,
            "\nWaiting for approval (`waypoint hooks approve`), from {}:",
            files(&waiting.files)
        )?;
        for command in &waiting.commands {
            writeln!(out, "  {command}")?;
        }
    }
    for problem in &set.problems {
        writeln!(out, "skipped: {}", clean_line(problem))?;
    }
    Ok(())
}
