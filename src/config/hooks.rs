//! The config file's hooks (`[[hooks.EVENT]]`, `hooks_from_claude`), as
//! written; [`crate::hooks`] reads them into hooks that run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// The events a hook can be written for (`crate::hooks::HookEvent`'s names).
pub const HOOK_EVENTS: [&str; 10] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "PlanUpdated",
    "ItemStarted",
    "ItemCompleting",
];

/// One entry of `[[hooks.EVENT]]`.
#[derive(schemars::JsonSchema, Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// The tools (or subjects) it runs for: a name, `A|B`, a regex; none
    /// or `*`: all.
    pub matcher: Option<String>,
    /// The shell command run, the event's JSON on its stdin.
    pub command: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
    /// Claude Code's shape: the commands of this matcher.
    #[serde(default)]
    pub hooks: Vec<HookCommand>,
}

/// One command of a Claude Code matcher group.
#[derive(schemars::JsonSchema, Clone, Debug, Default, Deserialize, PartialEq)]
pub struct HookCommand {
    /// `command` (the only kind run).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The shell command run, the event's JSON on its stdin.
    pub command: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
}

/// The config file's hooks settings.
#[derive(Clone, Debug, Default)]
pub struct HooksConfig {
    /// `[[hooks.EVENT]]` entries, by event name as written.
    pub entries: BTreeMap<String, Vec<HookEntry>>,
    /// `hooks_from_claude = true`: every project's `.claude` hooks run
    /// without asking.
    pub from_claude: bool,
    /// The config file they were read from.
    pub file: Option<PathBuf>,
}

impl HooksConfig {
    /// The names in `entries` that are no event of `events` (for a config error).
    pub fn unknown_events(&self, events: &[&str]) -> Vec<String> {
        self.entries
            .keys()
            .filter(|name| !events.contains(&name.as_str()))
            .cloned()
            .collect()
    }
}
