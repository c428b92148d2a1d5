//! Hooks: the user's commands run at named moments of a session, in the
//! contract Claude Code set and Codex, crush and Gemini CLI follow (JSON
//! on stdin; exit 0 goes on and may answer in JSON on stdout, exit 2
//! blocks with stderr as the reason, any other code is a warning), plus
//! Waypoint's plan events (`PlanUpdated`, `ItemStarted`, `ItemCompleting`).
//!
//! Invariants: a project's hooks (`.claude/settings.json`) never run
//! before the user approved them for that project as they are written
//! now (or trusts every project's, `hooks_from_claude = true`); a hook
//! runs as a contained child like `bash` (own session, no terminal,
//! killed with its group at its timeout, confined in auto mode), so no
//! hook can hang a turn; and whatever a hook prints, the call, prompt or
//! stop it concerns ends in one readable outcome ([`verdict::Verdict`]).

pub mod config;
pub mod run;
mod scripts;
pub mod verdict;

use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};

pub use crate::config::{HookEntry, HooksConfig};
pub use config::load;
pub use scripts::ProjectScripts;
pub use verdict::{Decision, Verdict};

/// How long a hook may run when its entry does not say (Claude Code's).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many times in a row a `Stop` hook may keep a turn going.
pub const STOP_CONTINUES: u32 = 3;

/// The moments a hook can run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
    SubagentStop,
    PreCompact,
    PlanUpdated,
    ItemStarted,
    ItemCompleting,
}

/// What an event's `matcher` is matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The tool's name (Waypoint's or Claude Code's for the same tool),
    /// the whole name.
    Tool,
    /// The item's text, anywhere in it.
    Item,
    /// The event's kind (`startup`, `resume`, `manual`, `auto`, …), the whole word.
    Kind,
    /// Nothing: every hook of the event runs.
    None,
}

impl HookEvent {
    pub const ALL: [HookEvent; 10] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PlanUpdated,
        HookEvent::ItemStarted,
        HookEvent::ItemCompleting,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PlanUpdated => "PlanUpdated",
            HookEvent::ItemStarted => "ItemStarted",
            HookEvent::ItemCompleting => "ItemCompleting",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// What the event's matcher is matched against.
    pub fn subject(self) -> Subject {
        match self {
            HookEvent::PreToolUse | HookEvent::PostToolUse => Subject::Tool,
            HookEvent::ItemStarted | HookEvent::ItemCompleting => Subject::Item,
            HookEvent::SessionStart | HookEvent::PreCompact => Subject::Kind,
            _ => Subject::None,
        }
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a hook was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookOrigin {
    /// The user's config file.
    Config(PathBuf),
    /// A project's settings file (`.claude/settings.json`), approved.
    Project(PathBuf),
}

/// One hook: when it runs, and what.
#[derive(Clone, Debug)]
pub struct Hook {
    pub event: HookEvent,
    /// `None`: every subject (no matcher, `""` or `"*"`).
    pub matcher: Option<Matcher>,
    pub command: String,
    pub timeout: Duration,
    pub origin: HookOrigin,
}

impl Hook {
    /// One line: event, matcher, timeout, command, where it is written.
    pub fn line(&self) -> String {
        let matcher = self
            .matcher
            .as_ref()
            .map_or_else(|| "*".to_string(), |m| m.text.clone());
        let from = match &self.origin {
            HookOrigin::Config(path) | HookOrigin::Project(path) => path.display().to_string(),
        };
        format!(
            "{:<16} {:<14} {:>4}s  {}  ({from})",
            self.event.name(),
            crate::text::clean_line(&matcher),
            self.timeout.as_secs(),
            crate::text::clean_line(&self.command),
        )
    }
}

/// A matcher as written, and the regex it compiles to.
#[derive(Clone, Debug)]
pub struct Matcher {
    pub text: String,
    regex: Regex,
}

impl Matcher {
    /// `text` for `subject`: a tool name or kind must match whole
    /// (`Bash` is not `BashOutput`, as in Claude Code); an item's text
    /// anywhere. `None` for a matcher that matches everything.
    pub fn new(text: &str, subject: Subject) -> Result<Option<Self>, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" || subject == Subject::None {
            return Ok(None);
        }
        let pattern = match subject {
            Subject::Tool | Subject::Kind => format!("^(?:{text})$"),
            Subject::Item | Subject::None => text.to_string(),
        };
        let regex = Regex::new(&pattern).map_err(|e| format!("matcher `{text}`: {e}"))?;
        Ok(Some(Self {
            text: text.to_string(),
            regex,
        }))
    }

    fn matches(&self, subjects: &[&str]) -> bool {
        subjects.iter().any(|s| self.regex.is_match(s))
    }
}

/// The hooks of a session, and what the user was not asked about yet.
#[derive(Clone, Debug, Default)]
pub struct HookSet {
    hooks: Vec<Hook>,
    /// A project's settings file with hooks that wait for the user's
    /// approval: not run.
    pub waiting: Option<config::Waiting>,
    /// What could not be read (a bad entry is skipped, never fatal).
    pub problems: Vec<String>,
}

impl HookSet {
    pub fn new(hooks: Vec<Hook>) -> Self {
        Self {
            hooks,
            ..Self::default()
        }
    }

    /// Every hook, in the order written.
    pub fn all(&self) -> &[Hook] {
        &self.hooks
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// The project's waiting hooks run from now on (the user approved them).
    pub fn activate(&mut self) {
        if let Some(waiting) = self.waiting.take() {
            self.hooks.extend(waiting.hooks);
        }
    }

    /// Whether any hook runs at `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// The hooks of `event` whose matcher takes one of `subjects` (a
    /// command written twice runs once).
    pub fn matching(&self, event: HookEvent, subjects: &[&str]) -> Vec<&Hook> {
        let mut out: Vec<&Hook> = Vec::new();
        for hook in self.hooks.iter().filter(|h| h.event == event) {
            let takes = hook.matcher.as_ref().is_none_or(|m| m.matches(subjects));
            if takes && !out.iter().any(|h| h.command == hook.command) {
                out.push(hook);
            }
        }
        out
    }
}

/// Claude Code's name for a Waypoint tool, where it has one, so a hook
/// written for Claude Code (`matcher = "Bash"`, `tool_name == "Bash"`)
/// sees the same call.
pub fn claude_tool_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "bash" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "todo_write" => "TodoWrite",
        "task" => "Task",
        _ => return None,
    })
}

/// A hook's run in one line for the user when it blocked, failed or was
/// overridden, or said something (`systemMessage`); `None` when it went
/// on silently.
pub fn report_line(report: &crate::events::HookReport) -> Option<String> {
    use crate::events::HookResult;
    let about = report
        .subject
        .as_deref()
        .map(|s| format!(" ({})", crate::text::clean_line(s)))
        .unwrap_or_default();
    let why = report
        .message
        .as_deref()
        .map(|m| format!(": {}", crate::text::clean_line(m)))
        .unwrap_or_default();
    let command = run::short(&report.command);
    let what = match report.result {
        // A hook that went on speaks only through its `systemMessage`.
        HookResult::Ok => {
            let said = crate::text::clean_line(report.message.as_deref()?).into_owned();
            return Some(format!("{} hook `{command}`{about}: {said}", report.event));
        }
        HookResult::Interrupted => return None,
        HookResult::Blocked => "blocked it",
        HookResult::Failed => "failed; going on",
        HookResult::TimedOut => "timed out and was killed; going on",
        HookResult::Overridden => "was overridden by the user",
    };
    Some(format!(
        "{} hook `{command}`{about} {what}{why}",
        report.event
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: HookEvent, matcher: &str, command: &str) -> Hook {
        Hook {
            event,
            matcher: Matcher::new(matcher, event.subject()).unwrap(),
            command: command.into(),
            timeout: DEFAULT_TIMEOUT,
            origin: HookOrigin::Config(PathBuf::from("c.toml")),
        }
    }

    #[test]
    fn tool_matchers_match_whole_names_and_item_matchers_anywhere() {
        let set = HookSet::new(vec![
            hook(HookEvent::PreToolUse, "Bash", "a"),
            hook(HookEvent::PreToolUse, "Edit|Write", "b"),
            hook(HookEvent::PreToolUse, "*", "c"),
            hook(HookEvent::PreToolUse, "", "c"),
            hook(HookEvent::ItemCompleting, "(?i)test", "d"),
        ]);
        let names = |v: Vec<&Hook>| v.iter().map(|h| h.command.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(set.matching(HookEvent::PreToolUse, &["bash", "Bash"])),
            ["a", "c"]
        );
        assert_eq!(
            names(set.matching(HookEvent::PreToolUse, &["BashOutput"])),
            ["c"]
        );
        assert_eq!(
            names(set.matching(HookEvent::PreToolUse, &["write_file", "Write"])),
            ["b", "c"]
        );
        assert_eq!(
            names(set.matching(HookEvent::ItemCompleting, &["Add tests"])),
            ["d"]
        );
        assert!(
            set.matching(HookEvent::ItemCompleting, &["Docs"])
                .is_empty()
        );
        assert!(Matcher::new("(", Subject::Tool).is_err());
    }

    #[test]
    fn the_config_knows_every_event_by_its_name() {
        assert_eq!(
            HookEvent::ALL.map(HookEvent::name),
            crate::config::HOOK_EVENTS
        );
    }
}
