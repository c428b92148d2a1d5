//! Custom commands: Markdown files that become slash commands, found in
//! `.claude/commands/` and `.waypoint/commands/` (repository root down to
//! the working folder; a subfolder is a namespace, `frontend/test.md` is
//! `/frontend:test`) and in the user's `~/.claude/commands/` and
//! Waypoint's config folder `commands/`. The body is the prompt, with
//! `$ARGUMENTS` (all arguments), `$1`…`$9` (each word) and `@file`
//! mentions (attached by the engine as any mention is). A `!`-line (a
//! shell command in Claude Code's commands) is never run: it is left as
//! text, with a note saying so.

use std::path::{Path, PathBuf};

use super::{Catalog, MAX_ENTRIES, Origin, front};

/// Where project commands live under a folder.
pub const PROJECT_COMMANDS: [&str; 2] = [".waypoint/commands", ".claude/commands"];

/// How deep namespaces go.
const MAX_DEPTH: usize = 3;

/// One custom command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub description: String,
    /// `argument-hint` from its front matter.
    pub hint: Option<String>,
    pub path: PathBuf,
    pub origin: Origin,
    /// The prompt, before expansion.
    pub body: String,
}

/// Adds the commands under `base/rel` not already found.
pub(super) fn add(catalog: &mut Catalog, base: &Path, rel: &Path, origin: Origin) {
    let Ok(root) = crate::fsx::Root::new(base) else {
        return;
    };
    walk(catalog, &root, base, rel, "", origin, 0);
}

fn walk(
    catalog: &mut Catalog,
    root: &crate::fsx::Root,
    base: &Path,
    rel: &Path,
    namespace: &str,
    origin: Origin,
    depth: usize,
) {
    let Ok(mut entries) = root.read_dir(rel) else {
        return;
    };
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for entry in entries {
        if catalog.commands.len() >= MAX_ENTRIES {
            return;
        }
        let name = entry.name.to_string_lossy().into_owned();
        let path = rel.join(&entry.name);
        if entry.is_dir {
            if depth < MAX_DEPTH && front::valid_name(&name) {
                let inner = format!("{namespace}{name}:");
                walk(catalog, root, base, &path, &inner, origin, depth + 1);
            }
            continue;
        }
        let Some(stem) = name.strip_suffix(".md") else {
            continue;
        };
        let full = format!("{namespace}{stem}");
        let shown = base.join(&path);
        if !front::valid_name(&full) || catalog.command(&full).is_some() {
            continue;
        }
        let text = match super::read_text(root, &path) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(why) => {
                catalog.problems.push(format!("{}: {why}", shown.display()));
                continue;
            }
        };
        match front::command(&text) {
            Ok((description, hint, body)) => catalog.commands.push(Command {
                name: full,
                description,
                hint,
                path: shown,
                origin,
                body: body.trim().to_string(),
            }),
            Err(why) => catalog
                .problems
                .push(format!("{} skipped: {why}", shown.display())),
        }
    }
}

/// `body` with the arguments put in: `$ARGUMENTS` is them all, `$1`…`$9`
/// each word (missing ones empty); arguments with no `$ARGUMENTS` in the
/// body are added at its end. `!`-lines are kept as text, and the model is
/// told they were not run.
pub fn expand(body: &str, arguments: &str) -> String {
    let arguments = arguments.trim();
    let words: Vec<&str> = arguments.split_whitespace().collect();
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut chars = body.char_indices().peekable();
    let mut used = false;
    while let Some((at, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let rest = &body[at + 1..];
        if rest.starts_with("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            for _ in 0.."ARGUMENTS".len() {
                chars.next();
            }
        } else if let Some(d) = rest
            .chars()
            .next()
            .and_then(|d| d.to_digit(10))
            .filter(|d| *d > 0)
        {
            out.push_str(words.get(d as usize - 1).copied().unwrap_or(""));
            used = true;
            chars.next();
        } else {
            out.push('$');
        }
    }
    if !used && !arguments.is_empty() {
        out.push_str("\n\n");
        out.push_str(arguments);
    }
    let shell = out.lines().any(|l| l.trim_start().starts_with("!`"));
    if shell {
        out.push_str(
            "\n\n[Lines starting with !` are shell commands in Claude Code's commands; Waypoint did not run them. Run what you need with bash.]",
        );
    }
    out
}
