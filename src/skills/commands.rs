//! Custom commands: Markdown files that become slash commands, found in
//! `.claude/commands/` and `.waypoint/commands/` (repository root down to
//! the working folder; a subfolder is a namespace, `frontend/test.md` is
//! `/frontend:test`) and in the user's `~/.claude/commands/` and
//! Waypoint's config folder `commands/`. The body is the prompt, with
//! `$ARGUMENTS` (all arguments), `$1`…`$9` (each word) and `@file`
//! mentions (attached by the engine as any mention is). An inline shell
//! command (`` !`cmd` `` anywhere, which Claude Code runs) is never run:
//! it is left as text, with a note naming it.

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
/// body are added at its end. Inline shell commands (`` !`cmd` ``, at a
/// line's start or anywhere in it) are kept as text, and the model is told
/// which did not run.
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
    if let Some(note) = shell_note(body) {
        out.push_str("\n\n");
        out.push_str(&note);
    }
    out
}

/// Inline commands named at most in a note.
const MAX_NAMED: usize = 10;
/// Characters of an inline command named in a note.
const MAX_COMMAND_CHARS: usize = 200;

/// The commands written `` !`cmd` `` anywhere in `body` (Claude Code runs
/// them and puts their output in the prompt), in order.
pub fn inline_shell(body: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for line in body.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("!`") {
            let after = &rest[at + 2..];
            let Some(end) = after.find('`') else {
                break;
            };
            let command = after[..end].trim();
            if !command.is_empty() {
                found.push(command);
            }
            rest = &after[end + 1..];
        }
    }
    found
}

/// The note telling the model which inline commands of a command's or
/// skill's `body` did not run; `None` when it has none.
pub fn shell_note(body: &str) -> Option<String> {
    let commands = inline_shell(body);
    if commands.is_empty() {
        return None;
    }
    let named: Vec<String> = commands
        .iter()
        .take(MAX_NAMED)
        .map(|c| match c.char_indices().nth(MAX_COMMAND_CHARS) {
            Some((cut, _)) => format!("`{}…`", &c[..cut]),
            None => format!("`{c}`"),
        })
        .collect();
    let more = match commands.len().saturating_sub(MAX_NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(format!(
        "[The !`…` commands above are shell commands Claude Code runs to put their output here; Waypoint did not run them: {}{more}. Run what you need with bash.]",
        named.join(", ")
    ))
}
