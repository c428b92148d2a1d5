//! Skills and commands in the app, against the real engine: the command
//! list offers the project's custom commands and skills beside the
//! built-in commands, and `/release` typed in the input seeds the plan
//! pane with the skill's `## Plan` checklist (snapshot) while the model
//! gets the skill's instructions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;
use crate::tui_support;

use std::sync::Arc;

use common::*;
use ratatui::crossterm::event::KeyCode;
use tui_support::{Clock, app, key, screen, screen_text, type_text};
use waypoint::agent::AgentConfig;
use waypoint::events::{Event, Op};
use waypoint::skills::{Catalog, Places};
use waypoint::tools::ToolConfig;
use waypoint::tui::state::App;
use waypoint::tui::update::{self, Effect};

type Rig = engine_support::Rig<Anthropic>;

fn show(a: &mut App, events: Vec<Event>, clock: &Clock) {
    for mut e in events {
        if let Event::ToolCallEnd { duration_ms, .. } = &mut e {
            *duration_ms = 3;
        }
        update::on_event(a, e, clock.at(1.0));
    }
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_skill_typed_as_a_command_seeds_the_plan_pane() {
    let ws = tempfile::tempdir().unwrap();
    write(
        &ws.path().join(".agents/skills/release/SKILL.md"),
        "---\nname: release\ndescription: Cut a release of this project\n---\nNever skip the changelog.\n\n## Plan\n- [ ] Bump the version\n- [ ] Update the CHANGELOG\n- [ ] Tag and push\n",
    );
    write(
        &ws.path().join(".claude/commands/review.md"),
        "---\ndescription: Review the staged change\n---\nReview what is staged.\n",
    );
    let catalog = Catalog::discover(&Places::of(ws.path(), None, None));
    let config = AgentConfig {
        tools: ToolConfig {
            catalog: Arc::new(catalog),
            ..ToolConfig::default()
        },
        ..AgentConfig::default()
    };
    let mut r = Rig::with(
        vec![sse(Turn::text("Following the release skill."))],
        config,
        loopback::ClientOpts::default(),
    )
    .await;
    let clock = Clock::new();
    let mut a = app(&clock);
    a.status.engine.arrived();
    // The engine names its skills and commands first.
    let start = r.until(|e| matches!(e, Event::Catalog { .. })).await;
    show(&mut a, start, &clock);
    type_text(&mut a, "/re", clock.at(1.0));
    let s = screen_text(&mut a, 100, 30, clock.at(1.0));
    assert!(s.contains("/review"), "{s}");
    assert!(s.contains("/release [ARGS]"), "{s}");
    assert!(s.contains("Cut a release of this project"), "{s}");
    type_text(&mut a, "lease", clock.at(1.0));
    // Enter closes the list on the chosen entry, then sends it.
    update::on_key(&mut a, key(KeyCode::Esc), clock.at(1.0));
    let effects = update::on_key(&mut a, key(KeyCode::Enter), clock.at(1.0));
    let sent: Vec<&Effect> = effects
        .iter()
        .filter(|e| matches!(e, Effect::Send(Op::Submit { .. })))
        .collect();
    assert_eq!(sent.len(), 1, "{effects:?}");
    for effect in effects {
        if let Effect::Send(op) = effect {
            r.handle.ops.send(op).unwrap();
        }
    }
    let events = r.turn_events().await;
    show(&mut a, events, &clock);
    let t = screen(&mut a, 100, 30, clock.at(2.0));
    insta::assert_snapshot!("skill_plan_seeded_100x30", t.backend());
    let s = screen_text(&mut a, 100, 30, clock.at(2.0));
    assert!(s.contains("Bump the version"), "{s}");
    let request = r.server.requests().pop().unwrap().body.to_string();
    assert!(request.contains("Never skip the changelog"), "{request}");
    assert!(request.contains("Tag and push"), "{request}");
}
