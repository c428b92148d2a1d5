//! What a 100-column terminal shows whole: the `/model` table (one line
//! per model, nothing wrapped) and the status line's cost beside a key hint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::events::Event;
use waypoint::models::KNOWN;
use waypoint::tui::update;

#[test]
fn the_model_table_fits_a_100_column_terminal() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    let mut a = plan_in_progress(&clock);
    type_text(&mut a, "/model", now);
    update::on_key(&mut a, key(KeyCode::Enter), now);
    let text = screen_text(&mut a, 100, 40, now);
    for m in KNOWN {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {} ", m.name)))
            .unwrap_or_else(|| panic!("{} listed:\n{text}", m.name));
        assert!(
            line.contains(m.provider) && line.contains('$') || line.contains("unknown"),
            "{} on one line with its provider and price: {line:?}\n{text}",
            m.name
        );
    }
    let header = text
        .lines()
        .find(|l| l.contains(" provider "))
        .expect("a header");
    assert!(
        header.contains("in/out"),
        "the header on one line: {header:?}"
    );
    insta::assert_snapshot!("model_table_100x40", text);
}

/// At 100 columns the status line keeps the session's cost: the key hint
/// takes its short form before the cost goes, idle and while a task runs.
#[test]
fn the_cost_stays_on_the_status_line_at_100_columns() {
    let clock = Clock::new();
    let now = clock.at(42.0);
    for running in [false, true] {
        let mut a = app(&clock);
        a.status.accounts.set_price(waypoint::pricing::price_of(
            "claude-sonnet-4-5-20250929",
            &Default::default(),
        ));
        a.status
            .accounts
            .set_model("claude-sonnet-4-5-20250929".into());
        let used = waypoint::chat::Usage {
            input_tokens: 120_000,
            output_tokens: 9_000,
            cache_read_tokens: 880_000,
            cache_write_tokens: 0,
        };
        update::on_event(
            &mut a,
            Event::Usage {
                model: "claude-sonnet-4-5-20250929".into(),
                request: used,
                totals: used,
            },
            now,
        );
        update::on_event(
            &mut a,
            Event::ContextUsage {
                used: 122_000,
                window: 200_000,
            },
            now,
        );
        if running {
            type_text(&mut a, "Add a --verbose flag to the CLI and test it", now);
            update::on_key(&mut a, key(KeyCode::Enter), now);
            update::on_event(&mut a, Event::TurnStarted { resumed: false }, now);
            update::on_event(&mut a, Event::RoundStarted { round: 1 }, now);
            let input = serde_json::json!({"command": "cargo test"});
            update::on_event(&mut a, begin("t1", "bash", "cargo test", input, None), now);
        }
        let text = screen_text(&mut a, 100, 30, clock.at(80.0));
        let status = text.lines().last().unwrap();
        assert!(
            status.contains("$0."),
            "the cost (running: {running}): {status:?}"
        );
        let hint = if running {
            "Esc interrupt"
        } else {
            "Enter send"
        };
        assert!(
            status.contains(hint),
            "a key hint (running: {running}): {status:?}"
        );
    }
}
