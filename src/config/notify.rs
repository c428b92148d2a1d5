//! `notify`, `notify_method` and `notify_after`: when the app sends a
//! terminal notification, and how.

use serde::Deserialize;

/// When a notification is sent.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyMode {
    /// Never.
    Off,
    /// When the terminal is not focused (it reports focus), or the turn
    /// ran longer than `notify_after` seconds.
    #[default]
    Unfocused,
    /// Every time.
    Always,
}

/// How a notification is written to the terminal.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyMethod {
    /// Chosen from the terminal (`TERM_PROGRAM`, `VTE_VERSION`, `TERM`;
    /// inside tmux, the terminal around it).
    #[default]
    Auto,
    /// `OSC 9` (iTerm2, WezTerm, Ghostty, kitty, Windows Terminal).
    Osc9,
    /// `OSC 777;notify` (foot, rxvt-unicode, VTE terminals).
    Osc777,
    /// The bell character (every terminal; tmux marks the window).
    Bel,
}

/// The resolved notification settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotifySettings {
    pub mode: NotifyMode,
    pub method: NotifyMethod,
    /// A turn that ran at least this many seconds notifies even while the
    /// terminal is focused; 0: only focus decides.
    pub after_secs: u64,
}

impl Default for NotifySettings {
    fn default() -> Self {
        Self {
            mode: NotifyMode::Unfocused,
            method: NotifyMethod::Auto,
            after_secs: 60,
        }
    }
}
