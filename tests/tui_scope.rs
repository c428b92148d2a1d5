//! An item's scope in the plan pane (issue 45): items that declare files
//! or commands are marked `⊂` in the checklist (at 80x24 too), and the
//! selected item's detail lists them. After an approval, the scope shown
//! is the approved one (the one enforced), not a later rewrite's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support::*;

use ratatui::crossterm::event::KeyCode;
use waypoint::events::{Event, StopReason};
use waypoint::todo::{Author, ItemScope, PlanDiff, TodoItem, TodoStatus};
use waypoint::tui::state::{App, Focus};
use waypoint::tui::update;

fn scoped(id: &str, content: &str, files: &[&str], commands: &[&str]) -> TodoItem {
    let mut i = item(id, content, TodoStatus::Pending);
    i.scope = ItemScope {
        files: files.iter().map(|f| (*f).to_string()).collect(),
        commands: commands.iter().map(|c| (*c).to_string()).collect(),
        check: None,
    };
    i
}

fn plan() -> Vec<TodoItem> {
    vec![
        scoped(
            "1",
            "Write the parser",
            &["src/parser/**", "src/lib.rs"],
            &["cargo test"],
        ),
        item("2", "Read the lexer", TodoStatus::Pending),
        scoped("3", "Update the docs", &["README.md"], &[]),
    ]
}

fn proposed(clock: &Clock) -> App {
    let mut a = app(clock);
    let t0 = clock.at(0.0);
    type_text(&mut a, "Split the parser into modules", t0);
    update::on_key(&mut a, key(KeyCode::Enter), t0);
    feed(
        &mut a,
        clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.5, plan_event(plan(), PlanDiff::default())),
            (0.6, Event::PlanProposed { revision: 1 }),
            (
                1.0,
                Event::TurnComplete {
                    open_items: 3,
                    stop_reason: StopReason::EndTurn,
                },
            ),
        ],
    );
    a.focus = Focus::Checklist;
    a.root.plan.view.selected = Some("1".into());
    a
}

#[test]
fn scoped_items_are_marked_and_the_selected_ones_scope_listed() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = proposed(&clock);
    for (w, h) in [(80, 24), (120, 40)] {
        let text = screen_text(&mut a, w, h, now);
        assert!(text.contains("Write the parser ⊂"), "{text}");
        assert!(text.contains("Update the docs ⊂"), "{text}");
        assert!(!text.contains("Read the lexer ⊂"), "{text}");
        assert!(text.contains("files: src/parser/**, src/lib.rs"), "{text}");
        assert!(text.contains("commands: cargo test"), "{text}");
        let terminal = screen(&mut a, w, h, now);
        insta::assert_snapshot!(format!("plan_scope_{w}x{h}"), terminal.backend());
    }
    // Another item selected: its scope, not the first's.
    a.root.plan.view.selected = Some("3".into());
    let text = screen_text(&mut a, 120, 40, now);
    assert!(text.contains("files: README.md"), "{text}");
    assert!(!text.contains("commands: cargo test"), "{text}");
}

#[test]
fn after_approval_the_approved_scope_is_shown() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = proposed(&clock);
    let mut approved = plan_event(plan(), PlanDiff::default());
    if let Event::PlanUpdated {
        author, revision, ..
    } = &mut approved
    {
        *author = Author::Approved;
        *revision = 2;
    }
    // The model's later rewrite widens item 1's files and scopes item 2:
    // neither is what was approved.
    let mut rewritten = plan();
    rewritten[0].scope.files.push("src/main.rs".into());
    rewritten[1].scope.files.push("src/lexer.rs".into());
    feed(
        &mut a,
        &clock,
        vec![
            (2.0, approved),
            (
                2.1,
                Event::PlanApproved {
                    revision: 2,
                    mode: waypoint::events::ApprovalMode::Auto,
                    fresh: false,
                },
            ),
            (3.0, plan_event(rewritten, PlanDiff::default())),
        ],
    );
    let text = screen_text(&mut a, 120, 40, now);
    assert!(text.contains("files: src/parser/**, src/lib.rs"), "{text}");
    assert!(!text.contains("src/main.rs"), "{text}");
    assert!(!text.contains("Read the lexer ⊂"), "{text}");
}
