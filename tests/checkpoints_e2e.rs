//! Undo in the real binary's full screen, inside a private tmux server: a
//! scripted scenario (offline) in a git repository writes a file in plan
//! item 1 and runs a command in item 2 (`rm`, a new file); `/undo item 2`
//! shows the preview and asks, `y` writes the files back: item 2's
//! command is undone, item 1's file stays. Needs `tmux` and `git`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use support::tmux::Tmux;

#[test]
fn undo_item_2_in_the_app_asks_then_takes_back_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("old.txt"), "keep me\n").unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(git.success());
    let tmux = Tmux::scenario(100, 32, dir.path(), "checkpoints.json", &ws);
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("tidy up");
    tmux.key("Enter");
    // The reply's last words come before the turn's end (its checkpoint):
    // /undo is refused until the status line says idle.
    tmux.wait_for("the turn's end", |s| {
        s.contains("Both steps done.") && s.contains("○ idle")
    });
    assert!(!ws.join("old.txt").exists() && ws.join("gen.txt").exists());
    tmux.type_text("/undo item 2");
    tmux.key("Enter");
    let screen = tmux.wait_for("the preview's question", |s| {
        s.contains("Undo item \"Clean up\": 2 files")
    });
    assert!(screen.contains("y yes"), "{screen}");
    assert!(
        !ws.join("old.txt").exists(),
        "nothing is written before the yes"
    );
    tmux.type_text("y");
    let screen = tmux.wait_for("the undo's report", |s| s.contains("Undone."));
    assert_eq!(
        std::fs::read_to_string(ws.join("old.txt")).unwrap(),
        "keep me\n"
    );
    assert!(!ws.join("gen.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.md")).unwrap(),
        "# Notes\n"
    );
    assert!(!screen.contains("panicked"), "{screen}");
    tmux.quit_and_wait(true);
}
