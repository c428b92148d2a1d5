//! A hook's run, as the trace shows it and the transcript keeps it.

use serde::{Deserialize, Serialize};

/// How a hook's run came out.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookResult {
    /// Exit 0: it went on (or allowed, or answered in JSON).
    Ok,
    /// Exit 2, or a JSON `block`/`deny`: what it concerned was stopped.
    Blocked,
    /// Another exit code, a signal, a failure to start: a warning, and
    /// it went on.
    Failed,
    /// Killed at its timeout; it went on.
    TimedOut,
    /// The turn was interrupted while it ran.
    Interrupted,
    /// The user completed an item an `ItemCompleting` hook guards, so the
    /// hook was not asked.
    Overridden,
}

/// One run of a hook.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookReport {
    /// The event's name (`PreToolUse`, `ItemCompleting`, …).
    pub event: String,
    /// The hook's command line.
    pub command: String,
    /// What it concerned: the tool, the item, the prompt's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// How it came out.
    pub result: HookResult,
    /// Its exit code; null when it did not exit (a signal, its timeout,
    /// an interrupt, a failure to start).
    pub exit_code: Option<i32>,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// Why it blocked (its stderr or reason), or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
