//! Claude Code's permission rules, read into Waypoint's: the
//! `permissions` block (`allow`, `deny`, `ask`) of the user's
//! `~/.claude/settings.json` and of a project's `.claude/settings.json` and
//! `.claude/settings.local.json`. `Bash(prefix:*)` and `Bash(cmd)` become
//! command rules, `mcp__…` tool rules, `Read(path)` and `Edit(path)` rules
//! on the files tools read and change, `WebFetch(domain:host)` rules on
//! the hosts `web_fetch` reaches.
//!
//! Invariants: a project's rules that allow more (its `allow` list) apply
//! only once the user approved them as written now (`waypoint hooks
//! approve`); its `deny` and `ask` rules apply at once, as they only take
//! away; a rule that cannot be read as Claude Code means it is never
//! widened: it is skipped and said, and what was read is said too
//! ([`ClaudeRules::describe`], in `waypoint config`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Approvals, Fingerprint};
use crate::safety::access::{Kind, Pattern, valid_pattern};
use crate::safety::rules::{Rules, Waiting};

/// The project's settings files read, in order.
pub const PROJECT_FILES: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];

/// The approvals file (the one project hooks are approved in) and the name
/// a project's permission rules are approved under in it.
const APPROVALS: &str = "hooks-approved.json";
const APPROVED_AS: &str = "claude-permissions";

/// The largest settings file read.
const MAX_BYTES: usize = 1024 * 1024;

/// What one rule of a settings file became.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleRead {
    pub kind: Kind,
    /// As written: `Bash(curl:*)`.
    pub rule: String,
    /// Waypoint's rule (`deny "curl"`), or why it was not read.
    pub became: Result<String, String>,
    /// A project's allow rule not yet approved.
    pub waiting: bool,
}

/// One settings file: where it is, whose, and what its rules became.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRead {
    pub path: PathBuf,
    pub project: bool,
    pub rules: Vec<RuleRead>,
    /// What could not be read of the file.
    pub problems: Vec<String>,
}

/// The rules read from Claude Code's settings, and what each file gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaudeRules {
    pub rules: Rules,
    pub files: Vec<FileRead>,
}

/// Waypoint's form of one Claude Code rule.
enum Form {
    /// Command words, matched as Waypoint's rules match (a prefix for an
    /// allow rule; the words anywhere for a deny or ask rule).
    Command(String),
    /// A command allowed word for word.
    Exact(String),
    /// An MCP tool or server.
    Tool(String),
    Read(String),
    Edit(String),
    Fetch(String),
}

/// The folders a rule's path is read against.
struct Places<'a> {
    workspace: &'a Path,
    home: Option<&'a Path>,
}

/// The rules of the user's and the project's settings in `workspace`.
pub fn read(workspace: &Path, env: &dyn Fn(&str) -> Option<String>) -> ClaudeRules {
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let places = Places {
        workspace,
        home: home.as_deref(),
    };
    let mut out = ClaudeRules::default();
    if let Some(home) = &home {
        let path = home.join(".claude/settings.json");
        let text = read_user_file(&path);
        out.add_file(path, false, text, &places);
    }
    let mut project = Rules::default();
    let mut blocks = Vec::new();
    let mut files = Vec::new();
    for file in PROJECT_FILES {
        let text = read_project_file(workspace, file);
        if let Ok(Some(text)) = &text
            && let Ok(value) = serde_json::from_str::<Value>(text)
            && let Some(block) = value.get("permissions")
        {
            blocks.push(serde_json::json!({"file": file, "permissions": block}));
        }
        let at = out.files.len();
        out.add_file(workspace.join(file), true, text, &places);
        if let Some(read) = out.files.get(at)
            && take_allowing(read, &places, &mut project)
        {
            files.push(file.to_string());
        }
    }
    if !project.is_empty() {
        let print = Fingerprint::of(&Value::Array(blocks));
        let approved = approvals(env).is_some_and(|a| a.approved(workspace, APPROVED_AS, &print));
        if approved {
            out.rules.extend(project);
        } else {
            out.mark_waiting();
            out.rules.waiting = Some(Box::new(Waiting {
                files,
                print: print.hex().to_string(),
                rules: project,
            }));
        }
    }
    out
}

/// Remembers the project's waiting rules, as written now, as approved for
/// `workspace`.
pub fn approve(
    waiting: &Waiting,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let approvals = approvals(env).ok_or("no data folder to remember the approval in")?;
    let print = Fingerprint::from_hex(waiting.print.clone());
    let one = BTreeMap::from([(APPROVED_AS.to_string(), print)]);
    approvals
        .approve(workspace, &one)
        .map_err(|e| format!("the approval was not saved: {e}"))
}

fn approvals(env: &dyn Fn(&str) -> Option<String>) -> Option<Approvals> {
    Approvals::from_env_named(env, APPROVALS)
}

/// The user's own settings file (links followed: it is theirs).
fn read_user_file(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("not read: {e}")),
    };
    let mut text = String::new();
    file.take(MAX_BYTES as u64)
        .read_to_string(&mut text)
        .map_err(|e| format!("not read: {e}"))?;
    Ok(Some(text))
}

/// A project's settings file, opened beneath the workspace without
/// following links.
fn read_project_file(workspace: &Path, file: &str) -> Result<Option<String>, String> {
    let root = crate::fsx::Root::new(workspace).map_err(|e| format!("not read: {e}"))?;
    crate::fsx::read_text(&root, Path::new(file), MAX_BYTES).map_err(|e| format!("not read: {e}"))
}

impl ClaudeRules {
    /// Reads one file's `permissions` block: every rule it can into
    /// `self.rules` (a project's allow rules wait, see [`take_allowing`]).
    fn add_file(
        &mut self,
        path: PathBuf,
        project: bool,
        text: Result<Option<String>, String>,
        places: &Places<'_>,
    ) {
        let mut file = FileRead {
            path,
            project,
            rules: Vec::new(),
            problems: Vec::new(),
        };
        let block = match text.map(|t| t.map(|t| serde_json::from_str::<Value>(&t))) {
            Ok(None) => return,
            Err(why) => {
                file.problems.push(why);
                self.files.push(file);
                return;
            }
            Ok(Some(Err(e))) => {
                file.problems.push(format!("not valid JSON: {e}"));
                self.files.push(file);
                return;
            }
            Ok(Some(Ok(value))) => match value.get("permissions") {
                Some(block) => block.clone(),
                None => return,
            },
        };
        for (key, kind) in [
            ("deny", Kind::Deny),
            ("ask", Kind::Ask),
            ("allow", Kind::Allow),
        ] {
            let Some(list) = block.get(key) else {
                continue;
            };
            let Some(list) = list.as_array() else {
                file.problems
                    .push(format!("`permissions.{key}` is not a list"));
                continue;
            };
            for entry in list {
                let Some(rule) = entry.as_str() else {
                    file.problems
                        .push(format!("`permissions.{key}` holds {entry}, not a rule"));
                    continue;
                };
                let form = translate(rule.trim(), kind, places);
                let became = match &form {
                    Ok(form) => Ok(describe_form(form, kind)),
                    Err(why) => Err(why.clone()),
                };
                // A project's allow rules wait: `read` decides.
                if let Ok(form) = form
                    && !(project && kind == Kind::Allow)
                {
                    apply(&mut self.rules, form, kind, rule.trim());
                }
                file.rules.push(RuleRead {
                    kind,
                    rule: rule.trim().to_string(),
                    became,
                    waiting: false,
                });
            }
        }
        for key in ["defaultMode", "additionalDirectories"] {
            if block.get(key).is_some() {
                file.problems.push(format!(
                    "`permissions.{key}` is not read: Waypoint's approval mode and sandbox say that"
                ));
            }
        }
        self.files.push(file);
    }

    /// The project's allow rules wait for approval.
    fn mark_waiting(&mut self) {
        for file in self.files.iter_mut().filter(|f| f.project) {
            for rule in file.rules.iter_mut() {
                rule.waiting = rule.kind == Kind::Allow && rule.became.is_ok();
            }
        }
    }
}

/// The allow rules of a project file, into `to`; whether it has any.
fn take_allowing(file: &FileRead, places: &Places<'_>, to: &mut Rules) -> bool {
    let mut any = false;
    for rule in file
        .rules
        .iter()
        .filter(|r| file.project && r.kind == Kind::Allow)
    {
        if let Ok(form) = translate(&rule.rule, Kind::Allow, places) {
            apply(to, form, Kind::Allow, &rule.rule);
            any = true;
        }
    }
    any
}

/// Adds one rule in Waypoint's form to `rules`.
fn apply(rules: &mut Rules, form: Form, kind: Kind, written: &str) {
    let list = match kind {
        Kind::Allow => &mut rules.allow,
        Kind::Deny => &mut rules.deny,
        Kind::Ask => &mut rules.ask,
    };
    let pattern = |p: String| Pattern {
        rule: written.to_string(),
        pattern: p,
    };
    match form {
        Form::Command(words) | Form::Tool(words) => {
            if !list.contains(&words) {
                list.push(words);
            }
        }
        Form::Exact(words) => rules.exact.push(words),
        Form::Read(p) => rules.access.read.add(kind, pattern(p)),
        Form::Edit(p) => rules.access.edit.add(kind, pattern(p)),
        Form::Fetch(host) => rules.access.fetch.add(kind, pattern(host)),
    }
}

/// What a rule became, in words.
fn describe_form(form: &Form, kind: Kind) -> String {
    let verb = match kind {
        Kind::Allow => "allow",
        Kind::Deny => "deny",
        Kind::Ask => "ask",
    };
    match form {
        Form::Command(words) if words == "*" => format!("{verb} every command"),
        Form::Command(words) => format!("{verb} {words:?}"),
        Form::Exact(words) => format!("allow exactly {words:?}"),
        Form::Tool(name) => format!("{verb} {name:?}"),
        Form::Read(p) => format!("{verb} reading {p}"),
        Form::Edit(p) => format!("{verb} changing {p}"),
        Form::Fetch(host) if host == "*" => format!("{verb} fetching from every host"),
        Form::Fetch(host) => format!("{verb} fetching from {host}"),
    }
}

/// Waypoint's form of the Claude Code rule `rule` in list `kind`, or why
/// it cannot be read without widening what it says.
fn translate(rule: &str, kind: Kind, places: &Places<'_>) -> Result<Form, String> {
    if rule.starts_with("mcp__") {
        return Ok(Form::Tool(rule.to_string()));
    }
    let (tool, content) = match rule.split_once('(') {
        Some((tool, rest)) => {
            let content = rest
                .strip_suffix(')')
                .ok_or("the rule's `(` is not closed")?;
            (tool, Some(content.trim()))
        }
        None => (rule, None),
    };
    match (tool, content) {
        ("Bash", None) | ("Bash", Some("*")) => match kind {
            Kind::Allow => Err(
                "a rule that allows every command is not read: Waypoint's approval modes say that"
                    .into(),
            ),
            _ => Ok(Form::Command("*".into())),
        },
        ("Bash", Some(command)) => bash(command, kind),
        ("Read", content) => path(content, places).map(Form::Read),
        ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", content) => {
            path(content, places).map(Form::Edit)
        }
        ("WebFetch", None) => Ok(Form::Fetch("*".into())),
        ("WebFetch", Some(content)) => match content.strip_prefix("domain:") {
            Some(host)
                if !host.trim().is_empty()
                    && !host.contains(['/', ':', '@', ' '])
                    && !host.trim_start_matches("*.").contains('*') =>
            {
                Ok(Form::Fetch(
                    host.trim().trim_end_matches('.').to_ascii_lowercase(),
                ))
            }
            _ => Err("only `WebFetch(domain:HOST)` and `WebFetch(domain:*.HOST)` are read".into()),
        },
        (other, _) => Err(format!("Waypoint has no tool `{other}`")),
    }
}

/// `Bash(…)`: `prefix:*` and `prefix *` match commands that begin with
/// the prefix; a command without `*` matches itself only (an allow rule
/// stays exact; a deny or ask rule matches the command wherever it is).
/// Another `*` is read only where it widens a deny or ask rule.
fn bash(command: &str, kind: Kind) -> Result<Form, String> {
    let prefix = command
        .strip_suffix(":*")
        .or_else(|| command.strip_suffix(" *"))
        .map(str::trim);
    if let Some(prefix) = prefix.filter(|p| !p.contains('*')) {
        return if prefix.is_empty() {
            bash("*", kind)
        } else {
            Ok(Form::Command(prefix.to_string()))
        };
    }
    if !command.contains('*') {
        return Ok(match kind {
            Kind::Allow => Form::Exact(command.to_string()),
            _ => Form::Command(command.to_string()),
        });
    }
    if kind == Kind::Allow {
        return Err("only a `*` at the end is read in an allow rule".into());
    }
    // A deny or ask rule: its words without the patterns, which a command
    // must all have (a rule that matches more than the one written).
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_end_matches(":*").trim_matches('*'))
        .filter(|w| !w.is_empty())
        .collect();
    match words.first() {
        Some(_) if !command.trim_start().starts_with('*') => Ok(Form::Command(words.join(" "))),
        _ => Ok(Form::Command("*".into())),
    }
}

/// A `Read` or `Edit` rule's path as an absolute glob pattern, read as
/// Claude Code reads it: `//abs`, `~/home`, `/` and `./` and a path with
/// a `/` from the workspace, a name without `/` at any depth beneath it.
fn path(content: Option<&str>, places: &Places<'_>) -> Result<String, String> {
    let root = escape(places.workspace);
    let Some(path) = content.filter(|c| !c.is_empty() && *c != "*" && *c != "**") else {
        return Ok("/**".into());
    };
    let path = path.trim_end_matches('/');
    let pattern = if let Some(abs) = path.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rest) = path.strip_prefix("~/") {
        let home = places
            .home
            .ok_or("a path from the home folder, and no home folder is known")?;
        format!("{}/{rest}", escape(home))
    } else if let Some(rest) = path.strip_prefix("./").or_else(|| path.strip_prefix('/')) {
        format!("{root}/{rest}")
    } else if path.contains('/') {
        format!("{root}/{path}")
    } else {
        format!("{root}/**/{path}")
    };
    valid_pattern(&pattern).map_err(|e| format!("the path is no pattern: {e}"))?;
    Ok(pattern)
}

/// A folder's path as a glob pattern that matches it literally.
fn escape(path: &Path) -> String {
    globset::escape(&path.to_string_lossy())
        .trim_end_matches('/')
        .to_string()
}

impl ClaudeRules {
    /// What was read, as comments for `waypoint config`: each file, each
    /// rule and what it became (or why not), what waits for approval.
    pub fn describe(&self) -> String {
        if self.files.is_empty() {
            return "# Claude Code permission rules: none (no `permissions` in ~/.claude/settings.json or the project's .claude/settings.json)\n".into();
        }
        let mut out = String::from("# Claude Code permission rules read:\n");
        for file in &self.files {
            let whose = if file.project {
                "the project's"
            } else {
                "yours"
            };
            out.push_str(&format!("#   {} ({whose}):\n", file.path.display()));
            for rule in &file.rules {
                let verb = match rule.kind {
                    Kind::Allow => "allow",
                    Kind::Deny => "deny",
                    Kind::Ask => "ask",
                };
                let became = match (&rule.became, rule.waiting) {
                    (Ok(_), true) => "waits for approval (`waypoint hooks approve`)".to_string(),
                    (Ok(form), false) => form.clone(),
                    (Err(why), _) => format!("not read: {why}"),
                };
                let line = format!("{verb} {}", rule.rule);
                out.push_str(&format!(
                    "#     {} -> {}\n",
                    crate::text::clean_line(&line),
                    crate::text::clean_line(&became)
                ));
            }
            for problem in &file.problems {
                out.push_str(&format!("#     {}\n", crate::text::clean_line(problem)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_read_as_claude_code_means_them_or_not_at_all() {
        let ws = Path::new("/ws");
        let places = Places {
            workspace: ws,
            home: Some(Path::new("/home/u")),
        };
        let form = |rule: &str, kind: Kind| {
            translate(rule, kind, &places).map(|f| describe_form(&f, kind))
        };
        let table: &[(&str, Kind, Result<&str, ()>)] = &[
            (
                "Bash(npm run test:*)",
                Kind::Allow,
                Ok("allow \"npm run test\""),
            ),
            ("Bash(git log *)", Kind::Allow, Ok("allow \"git log\"")),
            (
                "Bash(npm run lint)",
                Kind::Allow,
                Ok("allow exactly \"npm run lint\""),
            ),
            ("Bash(git * main)", Kind::Allow, Err(())),
            (
                "Bash(git * --force)",
                Kind::Deny,
                Ok("deny \"git --force\""),
            ),
            ("Bash(* --version)", Kind::Deny, Ok("deny every command")),
            ("Bash", Kind::Deny, Ok("deny every command")),
            ("Bash", Kind::Allow, Err(())),
            ("Read(./.env)", Kind::Deny, Ok("deny reading /ws/.env")),
            ("Read(.env)", Kind::Deny, Ok("deny reading /ws/**/.env")),
            (
                "Read(~/.ssh/**)",
                Kind::Deny,
                Ok("deny reading /home/u/.ssh/**"),
            ),
            (
                "Read(//etc/passwd)",
                Kind::Deny,
                Ok("deny reading /etc/passwd"),
            ),
            (
                "Edit(/docs/**)",
                Kind::Allow,
                Ok("allow changing /ws/docs/**"),
            ),
            ("Write(src/)", Kind::Ask, Ok("ask changing /ws/**/src")),
            (
                "WebFetch(domain:Docs.rs)",
                Kind::Allow,
                Ok("allow fetching from docs.rs"),
            ),
            ("WebFetch(https://x.y/)", Kind::Deny, Err(())),
            ("WebFetch", Kind::Deny, Ok("deny fetching from every host")),
            ("mcp__github", Kind::Deny, Ok("deny \"mcp__github\"")),
            ("WebSearch", Kind::Deny, Err(())),
            ("Bash(ls", Kind::Deny, Err(())),
        ];
        for (rule, kind, want) in table {
            let got = form(rule, *kind);
            match want {
                Ok(want) => assert_eq!(got.as_deref(), Ok(*want), "{rule}"),
                Err(()) => assert!(got.is_err(), "{rule}: {got:?}"),
            }
        }
    }
}
