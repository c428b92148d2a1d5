//! Subagents in the real binary's full screen, inside a private tmux
//! server: a scripted scenario (offline) where the parent starts two
//! explore children on its item 2; while they wait for their model, both
//! children's plans are drawn nested under that item, each with its live
//! line; then the parent finishes and the nested plans leave with the
//! item. Needs `tmux` on the PATH (the CI script installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;

use support::tmux::Tmux;

#[test]
fn two_childrens_plans_nest_under_the_parents_item_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "remember the milk\n").unwrap();
    std::fs::write(ws.join("todo.txt"), "sweep\nwash\n").unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/subagents.json");
    let tmux = Tmux::start(
        120,
        40,
        dir.path(),
        &[
            Path::new("--scenario"),
            &scenario,
            Path::new("--workspace"),
            &ws,
        ],
    );
    tmux.wait_for("the app to open", |s| s.contains("Enter send"));
    tmux.type_text("look around");
    tmux.key("Enter");
    let screen = tmux.wait_for("both children's plans nested under item 2", |s| {
        s.contains("[>] Explore the code")
            && s.contains("↳ explore · Find the notes · 0/2")
            && s.contains("↳ explore · Find the todo list · 0/2")
            && s.contains("[>] Open notes.txt")
            && s.contains("[>] Open todo.txt")
    });
    let rows: Vec<&str> = screen.lines().collect();
    let at = |text: &str| rows.iter().position(|r| r.contains(text)).unwrap();
    assert!(
        at("[>] Explore the code") < at("↳ explore · Find the notes"),
        "{screen}"
    );
    assert!(
        at("↳ explore · Find the notes") < at("[>] Open notes.txt"),
        "{screen}"
    );
    assert!(
        at("[>] Open todo.txt") < at("[ ] Write the summary"),
        "{screen}"
    );
    let screen = tmux.wait_for("the finished plan", |s| {
        s.contains("[x] Write the summary") && s.contains("All done.")
    });
    assert!(
        !screen.contains("↳ explore"),
        "the nested plans left with their item:\n{screen}"
    );
    assert!(
        screen.contains("✔ task explore · Find the notes"),
        "{screen}"
    );
    assert!(!screen.contains("panicked"), "{screen}");
    tmux.quit_and_wait(true);
}
