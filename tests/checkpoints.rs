//! Checkpoints and undo through the engine, on real git repositories the
//! tests make (and on a plain folder): write_file, edit_file and bash
//! (`sed -i`, `rm`, `mv`, a new file, `chmod +x`) change files across
//! three plan items; undoing item 2 takes back exactly item 2's changes
//! (merged around item 1's and a later turn's changes to the same file);
//! `/undo` takes back the last turn; a rewind to item 1's start restores
//! the files, the plan and the conversation. The user's `.git` is compared
//! byte for byte before and after (nothing excluded). Outside git, own
//! edits undo exactly and commands are reported as not undoable; a file
//! the user changed after the agent is a conflict and left alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::support;
use crate::tui_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use scripted_support::{plan, scenario, start_with, stop, turn_end, until};
use serde_json::json;
use support::repo::{git, tree_of};
use waypoint::agent::{AgentConfig, AgentHandle, SessionSetup};
use waypoint::checkpoint::Target;
use waypoint::checkpoint::restore::Preview;
use waypoint::events::{CheckpointAnswer, CheckpointOp, Event, Op, PointInfo};
use waypoint::session::SessionStore;
use waypoint::tui::state::App;
use waypoint::tui::update::{self, Effect};

const ITEMS: [&str; 3] = ["Edit a", "Reshape files", "Add h"];

fn three(statuses: [&str; 3]) -> serde_json::Value {
    plan(&[
        (ITEMS[0], statuses[0]),
        (ITEMS[1], statuses[1]),
        (ITEMS[2], statuses[2]),
    ])
}

fn text(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn executable(dir: &Path, name: &str) -> bool {
    std::fs::metadata(dir.join(name))
        .unwrap()
        .permissions()
        .mode()
        & 0o111
        != 0
}

struct Rig {
    h: AgentHandle,
    ws: tempfile::TempDir,
    _home: tempfile::TempDir,
    model: std::sync::Arc<scripted_support::Recording>,
    /// The events the last checkpoint op's answer came with.
    seen: Vec<Event>,
}

fn rig(turns: serde_json::Value, ws: tempfile::TempDir) -> Rig {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let model = scenario(turns);
    let h = start_with(
        model.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::New(store),
    );
    Rig {
        h,
        ws,
        _home: home,
        model,
        seen: Vec::new(),
    }
}

impl Rig {
    async fn turn(&mut self, text: &str) -> Vec<Event> {
        self.h.ops.send(Op::Submit { text: text.into() }).unwrap();
        until(&mut self.h.events, turn_end).await
    }

    async fn ask(&mut self, action: CheckpointOp) -> Result<CheckpointAnswer, String> {
        self.h.ops.send(Op::Checkpoint { action }).unwrap();
        let events = until(&mut self.h.events, |e| {
            matches!(e, Event::Checkpoint { .. } | Event::Error { .. })
        })
        .await;
        self.seen.clone_from(&events);
        match events.last() {
            Some(Event::Checkpoint { answer }) => Ok(answer.clone()),
            Some(Event::Error { message, .. }) => Err(message.clone()),
            other => panic!("{other:?}"),
        }
    }

    /// Previews undoing `target`, then applies it; the preview and the
    /// report.
    async fn undo(&mut self, target: Target, conversation: bool) -> (Preview, String) {
        let op = |confirm| CheckpointOp::Undo {
            target: target.clone(),
            files: true,
            conversation,
            confirm,
        };
        let Ok(CheckpointAnswer::Preview { preview, .. }) = self.ask(op(false)).await else {
            panic!("no preview")
        };
        let Ok(CheckpointAnswer::Done { report, item }) = self.ask(op(true)).await else {
            panic!("not done")
        };
        // The answer names the item whose work it took back (the app marks it).
        let undone = match &target {
            Target::Item { id } => Some(id.clone()),
            _ => None,
        };
        assert_eq!(item, undone);
        (preview, report)
    }

    async fn points(&mut self) -> Vec<PointInfo> {
        match self.ask(CheckpointOp::List).await {
            Ok(CheckpointAnswer::List { points, .. }) => points,
            other => panic!("{other:?}"),
        }
    }
}

/// The session: three items over turn 1, one command in turn 2.
fn session_turns() -> serde_json::Value {
    let bash = "sed -i 's/three/THREE/' b.txt && rm d.txt && mv e.txt f.txt && echo new > g.txt && chmod +x c.sh && ln -s c.sh link.sh && rm old_link";
    json!([
        {"tool_calls": [{"name": "todo_write", "input": three(["in_progress", "pending", "pending"])}]},
        {"tool_calls": [
            {"name": "write_file", "input": {"path": "new.txt", "content": "made in item 1\n"}},
            {"name": "edit_file", "input": {"path": "a.txt", "old_text": "two", "new_text": "TWO"}}
        ]},
        {"tool_calls": [{"name": "todo_write", "input": three(["completed", "in_progress", "pending"])}]},
        {"tool_calls": [{"name": "bash", "input": {"command": bash}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"path": "a.txt", "old_text": "one", "new_text": "ONE"}}]},
        {"tool_calls": [{"name": "todo_write", "input": three(["completed", "completed", "in_progress"])}]},
        {"tool_calls": [
            {"name": "write_file", "input": {"path": "h.txt", "content": "item 3\n"}},
            {"name": "edit_file", "input": {"path": "b.txt", "old_text": "alpha", "new_text": "ALPHA"}}
        ]},
        {"tool_calls": [{"name": "todo_write", "input": three(["completed", "completed", "completed"])}]},
        {"text": "All three done."},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo extra >> a.txt"}}]},
        {"text": "Added a line."}
    ])
}

fn seed(dir: &Path) {
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\n").unwrap();
    std::fs::write(
        dir.join("b.txt"),
        "alpha\nbeta\ngamma\ndelta\nepsilon\nthree\n",
    )
    .unwrap();
    std::fs::write(dir.join("c.sh"), "echo c\n").unwrap();
    std::fs::write(dir.join("d.txt"), "to be removed\n").unwrap();
    std::fs::write(dir.join("e.txt"), "to be moved\n").unwrap();
    std::fs::set_permissions(dir.join("c.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink("a.txt", dir.join("old_link")).unwrap();
}

#[tokio::test]
async fn undo_an_item_the_last_turn_and_rewind_in_a_git_repository_leave_dot_git_untouched() {
    let ws = tempfile::tempdir().unwrap();
    seed(ws.path());
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "start"]);
    let dot_git = tree_of(&ws.path().join(".git"), false);
    let original = tree_of(ws.path(), true);
    let mut r = rig(session_turns(), ws);
    let dir = r.ws.path().to_path_buf();

    r.turn("reshape the files").await;
    r.turn("add a line").await;
    assert_eq!(
        text(&dir, "a.txt"),
        "ONE\nTWO\nthree\nfour\nfive\nsix\nextra\n"
    );
    assert!(executable(&dir, "c.sh"));

    // `/undo`: the last turn (its command's line) only.
    let (preview, _) = r.undo(Target::LastTurn, false).await;
    assert_eq!(preview.actions.len(), 1, "{}", preview.report());
    assert_eq!(text(&dir, "a.txt"), "ONE\nTWO\nthree\nfour\nfive\nsix\n");

    // Undo item 2: its command and its edit, and nothing of items 1 and 3.
    let (preview, report) = r.undo(Target::Item { id: "2".into() }, false).await;
    assert!(preview.conflicts.is_empty(), "{report}");
    let paths: Vec<&str> = preview.actions.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "a.txt", "b.txt", "c.sh", "d.txt", "e.txt", "f.txt", "g.txt", "link.sh", "old_link"
        ],
        "{report}"
    );
    assert_eq!(text(&dir, "a.txt"), "one\nTWO\nthree\nfour\nfive\nsix\n");
    assert_eq!(
        text(&dir, "b.txt"),
        "ALPHA\nbeta\ngamma\ndelta\nepsilon\nthree\n"
    );
    assert_eq!(text(&dir, "d.txt"), "to be removed\n");
    assert_eq!(text(&dir, "e.txt"), "to be moved\n");
    assert!(!dir.join("f.txt").exists() && !dir.join("g.txt").exists());
    assert!(!executable(&dir, "c.sh"), "the mode went back too");
    assert!(
        !dir.join("link.sh").exists() && std::fs::symlink_metadata(dir.join("link.sh")).is_err()
    );
    assert_eq!(
        std::fs::read_link(dir.join("old_link")).unwrap(),
        Path::new("a.txt"),
        "the link is back as a link"
    );
    assert_eq!(text(&dir, "new.txt"), "made in item 1\n");
    assert_eq!(text(&dir, "h.txt"), "item 3\n");

    // Rewind to item 1's start: files, plan and conversation.
    let points = r.points().await;
    let start = points
        .iter()
        .find(|p| p.label.contains("start of \"Edit a\""))
        .unwrap_or_else(|| panic!("{points:?}"));
    let (_, report) = r.undo(Target::Point { id: start.id }, true).await;
    assert!(report.contains("The conversation went back"), "{report}");
    assert_eq!(tree_of(&dir, true), original, "{report}");

    // The app is sent the session as it now reads: the later message is gone.
    let shown = r
        .seen
        .iter()
        .find_map(|e| match e {
            Event::History { events } => Some(format!("{events:?}")),
            _ => None,
        })
        .expect("the rewound session is shown again");
    assert!(shown.contains("reshape the files"), "{shown}");
    assert!(!shown.contains("add a line"), "{shown}");
    // The plan is back to item 1 in progress.
    let plan = r.seen.iter().rev().find_map(|e| match e {
        Event::PlanUpdated { items, .. } => Some(items.clone()),
        _ => None,
    });
    let plan = plan.expect("the plan went back");
    assert_eq!(plan[0].status, waypoint::todo::TodoStatus::InProgress);
    assert_eq!(plan[1].status, waypoint::todo::TodoStatus::Pending);
    // The model's next request: cut back, and told why.
    r.turn("what now?").await;
    let last = r.model.requests.lock().unwrap().last().cloned().unwrap();
    let text = format!("{last:?}");
    assert!(!text.contains("add a line"), "{text}");
    assert!(text.contains("The conversation was cut back"), "{text}");
    stop(r.h).await;

    assert_eq!(
        tree_of(&dir.join(".git"), false),
        dot_git,
        "the user's .git is byte for byte as it was"
    );
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}

#[tokio::test]
async fn outside_git_own_edits_undo_exactly_and_commands_are_reported() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\n").unwrap();
    let original = tree_of(ws.path(), false);
    let mut r = rig(
        json!([
            {"tool_calls": [
                {"name": "edit_file", "input": {"path": "a.txt", "old_text": "two", "new_text": "TWO"}},
                {"name": "write_file", "input": {"path": "sub/new.txt", "content": "new\n"}},
                {"name": "bash", "input": {"command": "echo made > cmd.txt"}}
            ]},
            {"text": "Done."}
        ]),
        ws,
    );
    let dir = r.ws.path().to_path_buf();
    r.turn("change things").await;
    let (preview, report) = r.undo(Target::LastTurn, false).await;
    assert_eq!(preview.not_undoable, ["echo made > cmd.txt"], "{report}");
    assert!(
        report.contains("not undoable: echo made > cmd.txt"),
        "{report}"
    );
    assert_eq!(text(&dir, "a.txt"), "one\ntwo\n");
    assert!(!dir.join("sub/new.txt").exists());
    // The command's file stays: it could not be undone, and said so.
    let mut now = tree_of(&dir, false);
    assert!(now.remove("cmd.txt").is_some());
    assert_eq!(now, original);
    stop(r.h).await;
}

#[tokio::test]
async fn a_file_the_user_changed_after_the_agent_is_a_conflict_and_the_rest_applies() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "bee\n").unwrap();
    git(ws.path(), &["init", "-q"]);
    let mut r = rig(
        json!([
            {"tool_calls": [
                {"name": "write_file", "input": {"path": "a.txt", "content": "agent\n"}},
                {"name": "write_file", "input": {"path": "b.txt", "content": "agent bee\n"}}
            ]},
            {"text": "Done."}
        ]),
        ws,
    );
    let dir = r.ws.path().to_path_buf();
    r.turn("write").await;
    std::fs::write(dir.join("a.txt"), "the user's own\n").unwrap();
    let (preview, report) = r.undo(Target::LastTurn, false).await;
    assert_eq!(preview.conflicts.len(), 1, "{report}");
    assert_eq!(preview.conflicts[0].path, "a.txt");
    assert!(
        preview.conflicts[0].why.contains("changed since"),
        "{report}"
    );
    assert_eq!(text(&dir, "a.txt"), "the user's own\n", "never overwritten");
    assert_eq!(text(&dir, "b.txt"), "bee\n");
    stop(r.h).await;
}

/// Feeds `events` to the app.
fn show(a: &mut App, events: Vec<Event>, clock: &tui_support::Clock) {
    for e in events {
        update::on_event(a, e, clock.at(1.0));
    }
}

/// Sends the ops among `effects` to the engine; how many.
fn forward(h: &AgentHandle, effects: Vec<Effect>) -> usize {
    let mut sent = 0;
    for effect in effects {
        if let Effect::Send(op) = effect {
            h.ops.send(op).unwrap();
            sent += 1;
        }
    }
    sent
}

#[tokio::test]
async fn in_the_app_u_on_a_plan_item_previews_its_undo_y_applies_it_and_the_item_says_so() {
    use ratatui::crossterm::event::KeyCode;
    use tui_support::{Clock, app, key, screen, screen_text};
    let ws = tempfile::tempdir().unwrap();
    seed(ws.path());
    git(ws.path(), &["init", "-q"]);
    let mut r = rig(session_turns(), ws);
    let dir = r.ws.path().to_path_buf();
    let clock = Clock::new();
    let mut a = app(&clock);
    a.status.engine.arrived();
    // The first turn (three items), shown as the app would.
    r.h.ops
        .send(Op::Submit {
            text: "reshape the files".into(),
        })
        .unwrap();
    let events = until(&mut r.h.events, turn_end).await;
    show(&mut a, events, &clock);
    // Plan pane, item 2, `u`.
    while a.focus != waypoint::tui::state::Focus::Checklist {
        update::on_key(&mut a, key(KeyCode::Tab), clock.at(1.0));
    }
    for _ in 0..2 {
        update::on_key(&mut a, key(KeyCode::Down), clock.at(1.0));
    }
    assert_eq!(a.root.plan.selected_index(), Some(1));
    let effects = update::on_key(&mut a, key(KeyCode::Char('u')), clock.at(1.0));
    assert_eq!(forward(&r.h, effects), 1);
    let answer = until(&mut r.h.events, |e| matches!(e, Event::Checkpoint { .. })).await;
    show(&mut a, answer, &clock);
    let t = screen(&mut a, 80, 24, clock.at(2.0));
    insta::assert_snapshot!("undo_item_preview_80x24", t.backend());
    let s = screen_text(&mut a, 120, 40, clock.at(2.0));
    assert!(s.contains("9 files (+5 −5)? Files are"), "{s}");
    assert!(s.contains("remove  g.txt"), "{s}");
    assert!(
        !dir.join("d.txt").exists(),
        "nothing is written before the yes"
    );
    // `y`: the same undo, confirmed.
    let effects = update::on_key(&mut a, key(KeyCode::Char('y')), clock.at(3.0));
    assert_eq!(forward(&r.h, effects), 1);
    let answer = until(&mut r.h.events, |e| matches!(e, Event::Checkpoint { .. })).await;
    show(&mut a, answer, &clock);
    assert_eq!(text(&dir, "d.txt"), "to be removed\n");
    assert!(!dir.join("g.txt").exists());
    let s = screen_text(&mut a, 120, 40, clock.at(4.0));
    assert!(s.contains("Undone."), "{s}");
    // The plan still says done, so the pane says its work was undone, and
    // how to reopen it: `d` on it, the pane's own edit.
    assert!(s.contains("[x] Reshape files ↶ undone · d reopens"), "{s}");
    assert!(
        s.contains("Item 2 \"Reshape files\" is still marked done: d on it in the plan"),
        "{s}"
    );
    let effects = update::on_key(&mut a, key(KeyCode::Char('d')), clock.at(5.0));
    assert_eq!(
        effects,
        vec![Effect::Send(Op::EditPlan {
            thread: waypoint::events::ThreadId::ROOT,
            edit: waypoint::todo::PlanEdit::Status {
                n: 2,
                status: waypoint::todo::TodoStatus::Pending
            }
        })]
    );
    assert_eq!(forward(&r.h, effects), 1);
    let reopened = until(&mut r.h.events, |e| matches!(e, Event::PlanUpdated { .. })).await;
    show(&mut a, reopened, &clock);
    let s = screen_text(&mut a, 120, 40, clock.at(6.0));
    assert!(s.contains("[ ] Reshape files"), "{s}");
    assert!(
        !s.contains("↶ undone"),
        "reopened, it is plain open work: {s}"
    );
    stop(r.h).await;
}

#[tokio::test]
async fn a_later_change_on_the_same_lines_is_a_conflict_a_restore_can_be_undone_and_diff_shows_the_session()
 {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "bee\n").unwrap();
    git(ws.path(), &["init", "-q"]);
    let two = |s: [&str; 2]| plan(&[("First", s[0]), ("Second", s[1])]);
    let mut r = rig(
        json!([
            {"tool_calls": [{"name": "todo_write", "input": two(["in_progress", "pending"])}]},
            {"tool_calls": [
                {"name": "edit_file", "input": {"path": "a.txt", "old_text": "one", "new_text": "ONE"}},
                {"name": "write_file", "input": {"path": "b.txt", "content": "BEE\n"}}
            ]},
            {"tool_calls": [{"name": "todo_write", "input": two(["completed", "in_progress"])}]},
            {"tool_calls": [{"name": "edit_file", "input": {"path": "a.txt", "old_text": "ONE", "new_text": "uno"}}]},
            {"tool_calls": [{"name": "todo_write", "input": two(["completed", "completed"])}]},
            {"text": "Done."}
        ]),
        ws,
    );
    let dir = r.ws.path().to_path_buf();
    r.turn("go").await;

    // /diff: the session's changes, forward.
    let Ok(CheckpointAnswer::Diff { text: diff }) = r.ask(CheckpointOp::Diff { since: None }).await
    else {
        panic!("no diff")
    };
    assert!(diff.contains("-one\n+uno\n"), "{diff}");
    assert!(diff.contains("-bee\n+BEE\n"), "{diff}");

    // Item 1's change to a.txt was changed again on the same line by
    // item 2: a conflict; its b.txt goes back.
    let (preview, report) = r.undo(Target::Item { id: "1".into() }, false).await;
    assert_eq!(preview.conflicts.len(), 1, "{report}");
    assert_eq!(preview.conflicts[0].path, "a.txt");
    assert!(preview.conflicts[0].why.contains("same lines"), "{report}");
    assert_eq!(text(&dir, "a.txt"), "uno\ntwo\nthree\n");
    assert_eq!(text(&dir, "b.txt"), "bee\n");

    // The restore is a point: going back to just before it undoes it.
    let points = r.points().await;
    let before = points
        .iter()
        .rev()
        .find(|p| p.label.contains("before a restore"))
        .unwrap_or_else(|| panic!("{points:?}"));
    let op = |confirm| CheckpointOp::Undo {
        target: Target::Point { id: before.id },
        files: true,
        conversation: false,
        confirm,
    };
    assert!(matches!(
        r.ask(op(false)).await,
        Ok(CheckpointAnswer::Preview { .. })
    ));
    assert!(matches!(
        r.ask(op(true)).await,
        Ok(CheckpointAnswer::Done { .. })
    ));
    assert_eq!(text(&dir, "b.txt"), "BEE\n");
    assert_eq!(text(&dir, "a.txt"), "uno\ntwo\nthree\n");

    // Confirming what was not previewed is refused.
    let unseen = CheckpointOp::Undo {
        target: Target::LastTurn,
        files: true,
        conversation: false,
        confirm: true,
    };
    let refused = r.ask(unseen).await.unwrap_err();
    assert!(refused.contains("preview it first"), "{refused}");
    stop(r.h).await;
}

#[tokio::test]
async fn outside_git_an_edit_through_a_link_undoes_through_it_and_the_link_stays() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("real.txt"), "real\n").unwrap();
    std::os::unix::fs::symlink("real.txt", ws.path().join("alias.txt")).unwrap();
    let mut r = rig(
        json!([
            {"tool_calls": [{"name": "edit_file", "input": {"path": "alias.txt", "old_text": "real", "new_text": "edited"}}]},
            {"text": "Done."}
        ]),
        ws,
    );
    let dir = r.ws.path().to_path_buf();
    r.turn("edit").await;
    assert_eq!(text(&dir, "real.txt"), "edited\n");
    let (preview, report) = r.undo(Target::LastTurn, false).await;
    assert!(preview.conflicts.is_empty(), "{report}");
    assert_eq!(text(&dir, "real.txt"), "real\n");
    assert_eq!(
        std::fs::read_link(dir.join("alias.txt")).unwrap(),
        Path::new("real.txt"),
        "the link stays a link"
    );
    stop(r.h).await;
}
