//! A project's Claude Code hooks in the real binary's full screen, inside
//! a private tmux server (a scripted scenario, offline): the app says the
//! project's `.claude/settings.json` hooks wait and does not run them (the
//! first command runs); `/hooks` lists them; `/hooks approve` makes them
//! run from the next call on, in the same session (the second command is
//! refused by the hook, and the app says so). Needs `tmux`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use support::tmux::Tmux;

#[test]
fn project_hooks_wait_then_run_once_approved_in_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    let settings = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'no commands in this project' >&2; exit 2"}]}]}}"#;
    std::fs::write(ws.join(".claude/settings.json"), settings).unwrap();
    let tmux = Tmux::scenario(120, 36, dir.path(), "hooks.json", &ws);
    tmux.wait_for("the waiting hooks' notice", |s| {
        s.contains("hook(s) that do not run")
    });
    tmux.type_text("first");
    tmux.key("Enter");
    tmux.wait_for("the first turn's end", |s| {
        s.contains("First command done.")
    });
    assert!(
        ws.join("made-1").exists(),
        "not approved: the hook did not run"
    );
    tmux.type_text("/hooks");
    tmux.key("Enter");
    tmux.wait_for("the list", |s| s.contains("hooks wait for approval"));
    tmux.type_text("/hooks approve");
    tmux.key("Enter");
    tmux.type_text("second");
    tmux.key("Enter");
    let screen = tmux.wait_for("the second turn's end", |s| s.contains("Second turn over."));
    assert!(!ws.join("made-2").exists(), "approved: the hook refused it");
    assert!(screen.contains("blocked it"), "{screen}");
    assert!(
        dir.path().join("home/hooks-approved.json").exists(),
        "remembered for the project"
    );
    assert!(!screen.contains("panicked"), "{screen}");
    tmux.quit_and_wait(true);
}
