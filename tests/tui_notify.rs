//! Terminal notifications in the app: with the terminal unfocused, a
//! turn's end, a stop with open items and a subagent's approval request
//! each become one `Effect::Notify` whose bytes are a well-formed
//! `OSC 9`; focused and short, nothing is written; an interrupt by the
//! user is never notified.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use tui_support::{Clock, app};
use waypoint::config::{NotifyMethod, NotifyMode, NotifySettings};
use waypoint::events::{
    AbortReason, ApprovalReason, Envelope, Event, StopReason, ThreadId, ToolDetail, ToolSummary,
};
use waypoint::tui::notify::Notifier;
use waypoint::tui::update::{self, Effect};

fn envelope(thread: ThreadId, event: Event) -> Envelope {
    Envelope {
        thread,
        parent_call: None,
        turn: 1,
        event,
    }
}

fn notices(effects: Vec<Effect>) -> Vec<String> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Notify(s) => Some(s),
            _ => None,
        })
        .collect()
}

#[test]
fn an_unfocused_terminal_hears_of_ends_stops_and_questions() {
    let clock = Clock::new();
    let mut a = app(&clock);
    let settings = NotifySettings {
        mode: NotifyMode::Unfocused,
        method: NotifyMethod::Osc9,
        after_secs: 0,
    };
    a.notify = Notifier::new(&settings, &|_| None);
    let root = ThreadId::ROOT;
    let started = Event::TurnStarted { resumed: false };
    update::on_envelope(&mut a, envelope(root, started), clock.at(0.0));
    let done = Event::TurnComplete {
        stop_reason: StopReason::EndTurn,
        open_items: 0,
    };
    let focused = update::on_envelope(&mut a, envelope(root, done.clone()), clock.at(1.0));
    assert!(notices(focused).is_empty(), "focused: nothing");
    a.notify.set_focus(false);
    let away = update::on_envelope(&mut a, envelope(root, done), clock.at(2.0));
    assert_eq!(notices(away), ["\u{1b}]9;Waypoint: Done.\u{7}"]);
    let open = Event::TurnComplete {
        stop_reason: StopReason::EndTurn,
        open_items: 3,
    };
    let stopped = update::on_envelope(&mut a, envelope(root, open), clock.at(3.0));
    assert_eq!(
        notices(stopped),
        ["\u{1b}]9;Waypoint: Stopped with 3 plan items open.\u{7}"]
    );
    let question = Event::ApprovalRequested {
        id: "c1".into(),
        name: "bash".into(),
        summary: ToolSummary {
            line: "cargo publish".into(),
            detail: ToolDetail::Output,
        },
        command: Some("cargo publish".into()),
        cwd: "/w".into(),
        reason: ApprovalReason::Mode,
    };
    let child = update::on_envelope(&mut a, envelope(ThreadId(2), question), clock.at(4.0));
    assert_eq!(
        notices(child),
        ["\u{1b}]9;Waypoint: Waiting for your approval: bash\u{7}"]
    );
    let interrupted = Event::TurnAborted {
        reason: AbortReason::Interrupted,
        message: "interrupted".into(),
        error: None,
    };
    let by_user = update::on_envelope(&mut a, envelope(root, interrupted), clock.at(5.0));
    assert!(notices(by_user).is_empty(), "the user interrupted it");
}

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

/// A pane of tmux: tmux names itself in `TERM_PROGRAM` and `TERM`.
const PANE: [(&str, &str); 3] = [
    ("TMUX", "/run/user/1000/tmux-1000/default,4242,0"),
    ("TERM_PROGRAM", "tmux"),
    ("TERM", "tmux-256color"),
];

const OSC9_THROUGH_TMUX: &str = "\u{1b}Ptmux;\u{1b}\u{1b}]9;Waypoint: Done.\u{7}\u{1b}\\";

#[test]
fn inside_tmux_the_outer_terminal_is_found_from_what_it_left() {
    let settings = NotifySettings {
        mode: NotifyMode::Always,
        method: NotifyMethod::Auto,
        after_secs: 0,
    };
    // What iTerm2, kitty, WezTerm and Ghostty leave in the environment
    // survives tmux.
    for hint in [
        ("LC_TERMINAL", "iTerm2"),
        ("ITERM_SESSION_ID", "w0t0p0:1234"),
        ("KITTY_WINDOW_ID", "1"),
        ("WEZTERM_PANE", "0"),
        ("GHOSTTY_RESOURCES_DIR", "/usr/share/ghostty"),
    ] {
        let mut pairs = PANE.to_vec();
        pairs.push(hint);
        let n = Notifier::new(&settings, &vars(&pairs));
        assert_eq!(n.sequence("Done."), OSC9_THROUGH_TMUX, "{hint:?}");
    }
    // Nothing known: the bell.
    assert_eq!(
        Notifier::new(&settings, &vars(&PANE)).sequence("Done."),
        "\u{7}"
    );
}

/// A stand-in `tmux` in its own folder (outside the temp folders, so
/// Waypoint may run it) printing `environment` for `show-environment -g`
/// and `passthrough` for the option, in a folder of `base`.
fn stand_in_tmux(
    base: &std::path::Path,
    name: &str,
    environment: &str,
    passthrough: &str,
) -> std::path::PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("tmux");
    let program = format!(
        "#!/bin/sh\ncase \"$*\" in\n  'show-environment -g') printf '%b' '{environment}' ;;\n  'show-environment') printf '%b' 'DISPLAY=:0\\n-SSH_AUTH_SOCK\\n' ;;\n  'show-options -gv allow-passthrough') printf '{passthrough}\\n' ;;\n  *) exit 1 ;;\nesac\n"
    );
    crate::support::write_program(&script, program.as_bytes());
    dir
}

#[test]
fn inside_tmux_its_environment_names_the_terminal_that_started_it() {
    use waypoint::programs::Programs;
    use waypoint::tui::notify::Outer;
    let settings = NotifySettings {
        mode: NotifyMode::Always,
        method: NotifyMethod::Auto,
        after_secs: 0,
    };
    // Outside the temp folders, where Waypoint never trusts a program
    // (a clean clone may be in /tmp).
    let base = crate::support::sandbox::outside_hidden("tui-notify-");
    let workspace = base.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let found = |dir: &std::path::Path| {
        Programs::resolve(Some(dir.as_os_str()), &workspace)
            .tmux
            .expect("the stand-in tmux is trusted")
    };
    let wezterm = stand_in_tmux(
        base.path(),
        "wezterm",
        "TERM_PROGRAM=WezTerm\\nTERM=xterm-256color\\n",
        "on",
    );
    let outer = Outer::from_tmux(&found(&wezterm));
    let n = Notifier::detecting(&settings, &vars(&PANE), &outer);
    assert_eq!(n.sequence("Done."), OSC9_THROUGH_TMUX);
    // kitty's TERM, as the server kept it.
    let kitty = stand_in_tmux(
        base.path(),
        "kitty",
        "-TERM_PROGRAM\\nTERM=xterm-kitty\\n",
        "all",
    );
    let n = Notifier::detecting(&settings, &vars(&PANE), &Outer::from_tmux(&found(&kitty)));
    assert_eq!(n.sequence("Done."), OSC9_THROUGH_TMUX);
    // tmux would drop the sequence (allow-passthrough off): the bell.
    let closed = stand_in_tmux(base.path(), "closed", "TERM_PROGRAM=ghostty\\n", "off");
    let n = Notifier::detecting(&settings, &vars(&PANE), &Outer::from_tmux(&found(&closed)));
    assert_eq!(n.sequence("Done."), "\u{7}");
    // An explicit method is kept as set.
    let set = NotifySettings {
        method: NotifyMethod::Osc777,
        ..settings
    };
    let n = Notifier::detecting(&set, &vars(&PANE), &Outer::from_tmux(&found(&closed)));
    assert!(
        n.sequence("Done.")
            .starts_with("\u{1b}Ptmux;\u{1b}\u{1b}]777;notify;")
    );
    // A tmux in the workspace is never run.
    let planted = workspace.join("bin");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::copy(wezterm.join("tmux"), planted.join("tmux")).unwrap();
    assert_eq!(
        Programs::resolve(Some(planted.as_os_str()), &workspace).tmux,
        None
    );
}
