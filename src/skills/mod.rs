//! Skills and custom commands: what users already wrote for other agents,
//! found where those agents look, so a repository that serves one serves
//! Waypoint unchanged.
//!
//! A skill is an Agent Skills folder: `SKILL.md` with YAML front matter
//! (`name`, `description`; other fields are ignored) and a body of
//! instructions, found under `.agents/skills/*/` and `.claude/skills/*/`
//! (and their `skills.local` variants for personal ones) from the
//! repository's root down to the working folder, then under the user's
//! `~/.agents/skills`, `~/.claude/skills` and Waypoint's config folder
//! `skills`. Only names and descriptions go into the system prompt (built
//! once per session, under a budget); a body is read when the model calls
//! the `skill` tool or the user types `/NAME`. A body with a `## Plan`
//! checklist seeds the plan pane when the skill is invoked.
//!
//! Invariants: every file is opened beneath its folder without following
//! links, 256 KiB at most; a broken file is skipped and named, never
//! fatal; the nearest folder wins a name.

pub mod commands;
mod front;

use std::path::{Path, PathBuf};

pub use commands::{Command, expand, shell_note};

/// The largest `SKILL.md` or command file read.
pub const MAX_BYTES: usize = 256 * 1024;

/// At most this many skills (and as many commands) are taken.
const MAX_ENTRIES: usize = 1000;

/// Where project skills live under a folder, nearest-wins order.
const PROJECT_SKILLS: [&str; 4] = [
    ".agents/skills.local",
    ".claude/skills.local",
    ".agents/skills",
    ".claude/skills",
];

/// Where a skill or command was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Project,
    User,
}

/// One skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    pub origin: Origin,
}

/// The skills and commands of a session, and what could not be read.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub skills: Vec<Skill>,
    pub commands: Vec<Command>,
    pub problems: Vec<String>,
}

/// The folders searched: the project's, nearest first (the working
/// folder up to the repository's root, or the working folder alone
/// outside a repository), and the user's.
pub struct Places {
    pub project: Vec<PathBuf>,
    pub user: Vec<PathBuf>,
}

impl Places {
    /// The usual places for `workspace`, with `home` and Waypoint's
    /// config folder.
    pub fn of(workspace: &Path, home: Option<&Path>, config_dir: Option<&Path>) -> Self {
        let mut project: Vec<PathBuf> = Vec::new();
        for dir in workspace.ancestors() {
            project.push(dir.to_path_buf());
            if dir.join(".git").exists() {
                break;
            }
        }
        if !project.last().is_some_and(|d| d.join(".git").exists()) {
            project.truncate(1);
        }
        Self {
            project,
            user: home
                .map(|h| vec![h.join(".agents"), h.join(".claude")])
                .unwrap_or_default()
                .into_iter()
                .chain(config_dir.map(Path::to_path_buf))
                .collect(),
        }
    }
}

impl Catalog {
    /// Finds the skills and commands in `places`.
    pub fn discover(places: &Places) -> Self {
        let mut catalog = Catalog::default();
        for dir in &places.project {
            for rel in PROJECT_SKILLS {
                catalog.add_skills(dir, Path::new(rel), Origin::Project);
            }
            for rel in commands::PROJECT_COMMANDS {
                commands::add(&mut catalog, dir, Path::new(rel), Origin::Project);
            }
        }
        for dir in &places.user {
            catalog.add_skills(dir, Path::new("skills"), Origin::User);
            commands::add(&mut catalog, dir, Path::new("commands"), Origin::User);
        }
        catalog
    }

    /// A skill by name.
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// A command by name.
    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.commands.is_empty()
    }

    /// Adds the skills of `base/rel/*/SKILL.md` not already found.
    fn add_skills(&mut self, base: &Path, rel: &Path, origin: Origin) {
        let Ok(root) = crate::fsx::Root::new(base) else {
            return;
        };
        let Ok(mut entries) = root.read_dir(rel) else {
            return;
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in entries.into_iter().filter(|e| e.is_dir) {
            if self.skills.len() >= MAX_ENTRIES {
                return;
            }
            let file = rel.join(&entry.name).join("SKILL.md");
            let shown = base.join(&file);
            let text = match read_text(&root, &file) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(why) => {
                    self.problems.push(format!("{}: {why}", shown.display()));
                    continue;
                }
            };
            let folder = entry.name.to_string_lossy().into_owned();
            match front::skill(&text, &folder) {
                Ok((name, description)) => {
                    if self.skill(&name).is_none() {
                        self.skills.push(Skill {
                            name,
                            description,
                            path: shown,
                            origin,
                        });
                    }
                }
                Err(why) => self
                    .problems
                    .push(format!("{} skipped: {why}", shown.display())),
            }
        }
    }
}

/// A file under `root` as text (see [`crate::fsx::read_text`]), with
/// [`MAX_BYTES`] at most; an error says why in words for a notice.
pub(crate) fn read_text(root: &crate::fsx::Root, rel: &Path) -> Result<Option<String>, String> {
    crate::fsx::read_text(root, rel, MAX_BYTES).map_err(|e| format!("not read: {e}"))
}

/// A skill's whole text as the model reads it: its body (the front
/// matter left out), read again now, beneath its folder.
pub fn body(skill: &Skill) -> Result<String, String> {
    let dir = skill.path.parent().ok_or("the skill has no folder")?;
    let root = crate::fsx::Root::new(dir).map_err(|e| e.to_string())?;
    let text = read_text(&root, Path::new("SKILL.md"))?.ok_or("its SKILL.md is gone")?;
    Ok(front::split(&text).1.trim().to_string())
}

/// The items of a body's `## Plan` checklist (`- [ ] Do this`), in order,
/// each with the check an indented ``- check: `CMD` `` line under it
/// gives (the plan file's form); empty when it has none. At most 20, one
/// line each.
pub fn plan_template(body: &str) -> Vec<(String, Option<String>)> {
    let mut items: Vec<(String, Option<String>)> = Vec::new();
    let mut inside = false;
    for line in body.lines() {
        let trimmed = line.trim();
        if let Some(heading) = trimmed.strip_prefix("## ") {
            inside = heading.trim().eq_ignore_ascii_case("plan");
            continue;
        }
        if trimmed.starts_with("# ") {
            inside = false;
        }
        if !inside {
            continue;
        }
        if line.starts_with([' ', '\t'])
            && let Some((crate::todo::scope_line::Field::Check, check)) =
                crate::todo::scope_line::parse(trimmed)
        {
            if let Some(last) = items.last_mut() {
                last.1 = check.into_iter().next();
            }
            continue;
        }
        let item = ["- [ ] ", "* [ ] ", "- [x] ", "- "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(item) = item
            && items.len() < crate::todo::MAX_ITEMS
            && !items.iter().any(|(i, _)| i == item)
        {
            items.push((crate::text::clean_line(item).into_owned(), None));
        }
    }
    items
}

/// The system prompt's part: each skill's name and description while they
/// fit in `budget` bytes, then the rest by name only. Empty without skills.
pub fn prompt_block(skills: &[Skill], budget: usize) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Skills\nSkills are instructions written for particular tasks. When a task matches one, call the `skill` tool with its name before you start, and follow what it says.\n",
    );
    let mut used = out.len();
    let mut rest = Vec::new();
    for skill in skills {
        let line = format!(
            "- {}: {}\n",
            skill.name,
            crate::text::clean_line(&skill.description)
        );
        if rest.is_empty() && used + line.len() <= budget {
            used += line.len();
            out.push_str(&line);
        } else {
            rest.push(skill.name.as_str());
        }
    }
    if !rest.is_empty() {
        out.push_str(&format!(
            "More skills (call `skill` with a name to read what it is for): {}\n",
            rest.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests;
