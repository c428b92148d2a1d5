//! Terminal notifications: when a turn ends, stops with plan items open,
//! or waits for an approval while the user looks elsewhere (the terminal
//! reported it lost focus, or the turn ran past `notify_after`), the app
//! writes a desktop notification the terminal shows: `OSC 9` or
//! `OSC 777;notify`, or the bell where neither is known. Inside tmux the
//! terminal around it is found from what it leaves in the environment
//! (`LC_TERMINAL`, `KITTY_WINDOW_ID`, …) or from tmux's own environment,
//! and the OSC goes through tmux's passthrough. Headless mode never
//! notifies.
//!
//! Invariant: the text written is one clean line with no control
//! character, no `;` in an `OSC 777` field, and at most [`MAX_CHARS`], so
//! a model's or a tool's string can never end the sequence early and
//! write to the screen.

use std::time::{Duration, Instant};

use crate::config::{NotifyMethod, NotifyMode, NotifySettings};
use crate::events::{AbortReason, Event};

/// The longest notification body, in characters.
pub const MAX_CHARS: usize = 120;

/// Decides when to notify, and writes how.
#[derive(Clone, Debug)]
pub struct Notifier {
    mode: NotifyMode,
    method: NotifyMethod,
    after: Option<Duration>,
    /// Inside tmux: OSC sequences go through its passthrough.
    tmux: bool,
    /// What the terminal last said of its focus (focused until it says).
    focused: bool,
    turn_started: Option<Instant>,
}

impl Default for Notifier {
    /// Never notifies (tests, and apps built without settings).
    fn default() -> Self {
        Self {
            mode: NotifyMode::Off,
            method: NotifyMethod::Bel,
            after: None,
            tmux: false,
            focused: true,
            turn_started: None,
        }
    }
}

impl Notifier {
    /// From the settings, the method `auto` chosen with `env`.
    pub fn new(settings: &NotifySettings, env: &dyn Fn(&str) -> Option<String>) -> Self {
        Self::detecting(settings, env, &Outer::default())
    }

    /// From the settings, for the terminal the app runs in (inside tmux,
    /// tmux is asked about the terminal around it).
    pub fn for_terminal(settings: &NotifySettings, env: &dyn Fn(&str) -> Option<String>) -> Self {
        Self::detecting(settings, env, &Outer::query(settings, env))
    }

    /// From the settings, the method `auto` chosen with `env` and, inside
    /// tmux, what tmux knows of the terminal around it.
    pub fn detecting(
        settings: &NotifySettings,
        env: &dyn Fn(&str) -> Option<String>,
        outer: &Outer,
    ) -> Self {
        let method = match settings.method {
            NotifyMethod::Auto => detect(env, outer),
            other => other,
        };
        Self {
            mode: settings.mode,
            method,
            after: (settings.after_secs > 0).then(|| Duration::from_secs(settings.after_secs)),
            tmux: env("TMUX").is_some_and(|t| !t.is_empty()),
            ..Self::default()
        }
    }

    /// The terminal reported it gained (`true`) or lost focus.
    pub fn set_focus(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// The sequence to write for `event` at `now`, when it notifies.
    pub fn on_event(&mut self, event: &Event, now: Instant) -> Option<String> {
        let body = match event {
            Event::TurnStarted { .. } => {
                self.turn_started = Some(now);
                return None;
            }
            Event::TurnComplete { open_items: 0, .. } => "Done.".to_string(),
            Event::TurnComplete { open_items, .. } => {
                format!(
                    "Stopped with {} open.",
                    crate::units::plural(*open_items, "plan item")
                )
            }
            Event::TurnAborted {
                reason: AbortReason::Interrupted,
                ..
            } => return None,
            Event::TurnAborted { message, .. } => format!("Stopped: {message}"),
            Event::ApprovalRequested { name, .. } => format!("Waiting for your approval: {name}"),
            _ => return None,
        };
        if !self.due(now) {
            return None;
        }
        Some(self.sequence(&body))
    }

    /// Whether a notification is due now.
    fn due(&self, now: Instant) -> bool {
        let long = self
            .after
            .zip(self.turn_started)
            .is_some_and(|(after, started)| now.saturating_duration_since(started) >= after);
        match self.mode {
            NotifyMode::Off => false,
            NotifyMode::Always => true,
            NotifyMode::Unfocused => !self.focused || long,
        }
    }

    /// The bytes that show `body` as a notification titled "Waypoint".
    pub fn sequence(&self, body: &str) -> String {
        let body = clean(body);
        let osc = match self.method {
            NotifyMethod::Osc9 => format!("\u{1b}]9;Waypoint: {body}\u{7}"),
            NotifyMethod::Osc777 => {
                format!("\u{1b}]777;notify;Waypoint;{}\u{7}", body.replace(';', ","))
            }
            NotifyMethod::Bel | NotifyMethod::Auto => return "\u{7}".to_string(),
        };
        if self.tmux {
            // tmux passes a sequence on inside DCS, its ESCs doubled.
            format!(
                "\u{1b}Ptmux;{}\u{1b}\\",
                osc.replace('\u{1b}', "\u{1b}\u{1b}")
            )
        } else {
            osc
        }
    }
}

/// One line of printable text, cut to [`MAX_CHARS`].
fn clean(text: &str) -> String {
    let line = crate::text::clean_line(text);
    let printable: String = line.chars().filter(|c| !c.is_control()).collect();
    if printable.chars().count() > MAX_CHARS {
        let cut: String = printable.chars().take(MAX_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        printable
    }
}

/// The method the terminal is known to show. Inside tmux (which names
/// itself in `TERM_PROGRAM` and `TERM`) the outer terminal is found from
/// the variables it leaves that tmux keeps, then from tmux's environment
/// (the terminal that started or last attached to it); tmux set to drop
/// passed-through sequences gets the bell.
fn detect(env: &dyn Fn(&str) -> Option<String>, outer: &Outer) -> NotifyMethod {
    let inside_tmux = env("TMUX").is_some_and(|t| !t.is_empty())
        || env("TERM_PROGRAM").is_some_and(|p| p == "tmux");
    if !inside_tmux {
        return by_terminal(env);
    }
    let method = match by_terminal(env) {
        NotifyMethod::Bel => by_terminal(&|name| outer.vars.get(name).cloned()),
        known => known,
    };
    if outer.passthrough == Some(false) {
        return NotifyMethod::Bel;
    }
    method
}

/// The method the terminal that `env` describes shows.
fn by_terminal(env: &dyn Fn(&str) -> Option<String>) -> NotifyMethod {
    let program = env("TERM_PROGRAM").unwrap_or_default();
    let term = env("TERM").unwrap_or_default();
    let lc_terminal = env("LC_TERMINAL").unwrap_or_default();
    if matches!(program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
        || lc_terminal == "iTerm2"
        || term.contains("kitty")
        || term == "xterm-ghostty"
        || [
            "WT_SESSION",
            "ITERM_SESSION_ID",
            "KITTY_WINDOW_ID",
            "WEZTERM_PANE",
            "GHOSTTY_RESOURCES_DIR",
        ]
        .iter()
        .any(|name| env(name).is_some_and(|v| !v.is_empty()))
    {
        NotifyMethod::Osc9
    } else if env("VTE_VERSION").is_some() || term.starts_with("foot") || term.starts_with("rxvt") {
        NotifyMethod::Osc777
    } else {
        NotifyMethod::Bel
    }
}

/// What tmux knows of the terminal around it: its environment (the
/// session's over the server's) and whether it passes sequences on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outer {
    pub vars: std::collections::HashMap<String, String>,
    /// `allow-passthrough`: `None` when tmux did not say (before 3.3 it
    /// always passes them on).
    pub passthrough: Option<bool>,
}

/// How long tmux may take to answer.
const TMUX_LIMIT: Duration = Duration::from_secs(1);

impl Outer {
    /// Asked of tmux (found on the trusted `PATH`) when `env` is inside
    /// tmux and the method is chosen automatically; empty otherwise.
    pub fn query(settings: &NotifySettings, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let inside = env("TMUX").is_some_and(|t| !t.is_empty());
        if !inside || settings.method != NotifyMethod::Auto || settings.mode == NotifyMode::Off {
            return Self::default();
        }
        match &crate::programs::get().tmux {
            Some(tmux) => Self::from_tmux(tmux),
            None => Self::default(),
        }
    }

    /// Asks the `tmux` at `program`; what it does not answer stays unknown.
    pub fn from_tmux(program: &std::path::Path) -> Self {
        let ask = |args: &[&str]| {
            let mut cmd = std::process::Command::new(program);
            cmd.args(args).stdin(std::process::Stdio::null());
            crate::programs::output_within(&mut cmd, None, TMUX_LIMIT)
                .ok()
                .filter(|out| out.status.success())
                .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let mut vars = std::collections::HashMap::new();
        // The server's (the terminal that started it), then the session's
        // (updated when a client attaches) over it.
        for args in [&["show-environment", "-g"][..], &["show-environment"][..]] {
            for line in ask(args).unwrap_or_default().lines() {
                if let Some((name, value)) = line.split_once('=') {
                    vars.insert(name.to_string(), value.to_string());
                } else if let Some(name) = line.strip_prefix('-') {
                    vars.remove(name);
                }
            }
        }
        let passthrough = ask(&["show-options", "-gv", "allow-passthrough"])
            .map(|v| matches!(v.trim(), "on" | "all"));
        Self { vars, passthrough }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::StopReason;

    fn with(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn done(open_items: usize) -> Event {
        Event::TurnComplete {
            stop_reason: StopReason::EndTurn,
            open_items,
        }
    }

    #[test]
    fn it_notifies_when_unfocused_or_after_a_long_turn_and_never_when_off() {
        let settings = NotifySettings::default();
        let mut n = Notifier::new(&settings, &with(&[("TERM_PROGRAM", "iTerm.app")]));
        let t0 = Instant::now();
        n.on_event(&Event::TurnStarted { resumed: false }, t0);
        assert_eq!(
            n.on_event(&done(0), t0 + Duration::from_secs(5)),
            None,
            "focused, short"
        );
        n.set_focus(false);
        assert_eq!(
            n.on_event(&done(2), t0 + Duration::from_secs(5)).as_deref(),
            Some("\u{1b}]9;Waypoint: Stopped with 2 plan items open.\u{7}")
        );
        n.set_focus(true);
        n.on_event(&Event::TurnStarted { resumed: false }, t0);
        assert!(
            n.on_event(&done(0), t0 + Duration::from_secs(61)).is_some(),
            "a long turn"
        );
        let interrupted = Event::TurnAborted {
            reason: AbortReason::Interrupted,
            message: "interrupted".into(),
            error: None,
        };
        n.set_focus(false);
        assert_eq!(n.on_event(&interrupted, t0), None, "the user did it");
        let off = NotifySettings {
            mode: NotifyMode::Off,
            ..settings
        };
        let mut quiet = Notifier::new(&off, &with(&[]));
        quiet.set_focus(false);
        assert_eq!(quiet.on_event(&done(0), t0), None);
    }

    #[test]
    fn the_method_fits_the_terminal_and_no_text_escapes_the_sequence() {
        let settings = NotifySettings {
            mode: NotifyMode::Always,
            ..NotifySettings::default()
        };
        let foot = Notifier::new(&settings, &with(&[("TERM", "foot")]));
        assert_eq!(
            foot.sequence("a;b\u{1b}]0;evil\u{7}\nnext"),
            "\u{1b}]777;notify;Waypoint;a,b next\u{7}"
        );
        let plain = Notifier::new(&settings, &with(&[("TERM", "xterm-256color")]));
        assert_eq!(plain.sequence("Done."), "\u{7}");
        let tmux = Notifier::new(
            &settings,
            &with(&[
                ("TERM_PROGRAM", "WezTerm"),
                ("TMUX", "/tmp/tmux-0/default,1,0"),
            ]),
        );
        assert_eq!(
            tmux.sequence("Done."),
            "\u{1b}Ptmux;\u{1b}\u{1b}]9;Waypoint: Done.\u{7}\u{1b}\\"
        );
        let long = "x".repeat(500);
        assert_eq!(plain_len(&foot.sequence(&long)), MAX_CHARS);
    }

    fn plain_len(sequence: &str) -> usize {
        sequence
            .trim_start_matches("\u{1b}]777;notify;Waypoint;")
            .trim_end_matches('\u{7}')
            .chars()
            .count()
    }
}
