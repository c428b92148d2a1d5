//! The context window and the cost: the meter and its warnings, cached
//! tokens at their prices, and compaction.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use waypoint::events::{CompactReason, Event, Op};
use waypoint::tui::state::{Activity, App, EntryKind, NoticeKind};
use waypoint::tui::update::{self, Effect};

#[test]
fn the_context_meter_follows_context_usage() {
    let clock = Clock::new();
    let mut a = app(&clock);
    assert_eq!(a.status.accounts.context_percent(), None);
    let status_line = |a: &mut App| {
        let text = screen_text(a, 120, 30, clock.at(5.0));
        text.lines().last().unwrap().to_string()
    };
    assert!(!status_line(&mut a).contains("ctx"));
    for (used, window, shown) in [(122_000, 200_000, 61), (180_000, 200_000, 90), (5, 0, 90)] {
        update::on_event(&mut a, Event::ContextUsage { used, window }, clock.at(1.0));
        // A window of 0 (unknown) keeps nothing but says nothing either.
        if window > 0 {
            assert_eq!(a.status.accounts.context_percent(), Some(shown));
            assert!(status_line(&mut a).contains(&format!("ctx {shown}%")));
        } else {
            assert_eq!(a.status.accounts.context_percent(), None);
            assert!(!status_line(&mut a).contains("ctx"));
        }
    }
    // On a narrow terminal the meter stays while other parts drop, and the
    // quit warning still wins.
    update::on_event(
        &mut a,
        Event::ContextUsage {
            used: 190_000,
            window: 200_000,
        },
        clock.at(1.0),
    );
    let text = screen_text(&mut a, 30, 12, clock.at(5.0));
    assert!(text.lines().last().unwrap().contains("ctx 95%"), "{text}");
    update::on_key(&mut a, ctrl('c'), clock.at(5.0));
    let text = screen_text(&mut a, 30, 12, clock.at(5.0));
    assert!(
        text.lines().last().unwrap().contains("Ctrl+C again"),
        "{text}"
    );
}

#[test]
fn the_cached_share_of_prompt_tokens_is_shown_and_costed_per_model() {
    let clock = Clock::new();
    let mut a = app(&clock);
    // 88k of 100k prompt tokens read from the cache.
    update::on_event(
        &mut a,
        usage(12_000, 88_000, 4_000, (12_000, 88_000, 4_000)),
        clock.at(1.0),
    );
    assert_eq!(a.status.accounts.prompt_tokens(), 100_000);
    assert_eq!(a.status.accounts.cached_percent(), Some(88));
    let text = screen_text(&mut a, 160, 30, clock.at(2.0));
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("↑100.0k (88% cached) ↓4.0k tok"),
        "{text}"
    );
    // The per-model usage keeps the cache tokens; /cost shows the share.
    let u = &a.status.accounts.by_model()[0];
    assert_eq!(
        (
            u.usage.input_tokens,
            u.usage.cache_read_tokens,
            u.usage.output_tokens
        ),
        (12_000, 88_000, 4_000)
    );
    type_text(&mut a, "/cost", clock.at(3.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(3.0));
    let cost = notices(&a).last().unwrap().to_string();
    assert!(cost.contains("↑100000 in (88% cached)"), "{cost}");
    assert!(
        cost.contains("claude-test: ↑100.0k (88% cached) ↓4.0k · "),
        "{cost}"
    );
    // No cache reads: no share.
    let mut b = app(&clock);
    update::on_event(&mut b, usage(1_000, 0, 10, (1_000, 0, 10)), clock.at(1.0));
    assert_eq!(b.status.accounts.cached_percent(), None);
}

#[test]
fn compact_sends_the_op_with_its_focus_and_needs_an_engine() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    type_text(&mut a, "/compact", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(effects.contains(&Effect::Send(Op::Compact { focus: None })));
    type_text(&mut a, "/compact the parser work", now);
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    assert!(effects.contains(&Effect::Send(Op::Compact {
        focus: Some("the parser work".into())
    })));
    // Without an engine: a notice, no op.
    let mut b = app(&clock);
    update::no_engine(&mut b, "Set up a provider.".into(), now);
    type_text(&mut b, "/compact", now);
    let effects = update::on_key(&mut b, key(KeyCode::Enter), now);
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Send(Op::Compact { .. })))
    );
    assert!(notices(&b).last().unwrap().contains("Nothing to compact"));
}

#[test]
fn a_compaction_folds_its_summary_and_ends_with_a_divider() {
    let clock = Clock::new();
    let mut a = compacted(&clock);
    let kinds: Vec<EntryKind> = a.root.conversation.entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds[kinds.len() - 3..],
        [
            EntryKind::Notice(NoticeKind::Info),
            EntryKind::Summary,
            EntryKind::Divider
        ]
    );
    assert!(
        notices(&a)
            .iter()
            .any(|n| n.starts_with("Compacting the conversation"))
    );
    let summary = &a.root.conversation.entries[kinds.len() - 2];
    assert_eq!(summary.text().lines().count(), 6);
    // Folded: the earliest points are hidden; Ctrl+O shows them, and again folds.
    let text = screen_text(&mut a, 100, 40, clock.at(5.0));
    assert!(
        text.contains("summary · 3 earlier lines (Ctrl+O shows them)"),
        "{text}"
    );
    assert!(!text.contains("Summary point 1:"));
    assert!(text.contains("Summary point 6:"));
    assert!(
        text.contains("── context compacted: 171k → 14k tokens ──"),
        "{text}"
    );
    update::on_key(&mut a, ctrl('o'), clock.at(5.0));
    let text = screen_text(&mut a, 100, 40, clock.at(5.0));
    assert!(text.contains("Summary point 1:"), "{text}");
    assert!(!text.contains("earlier lines"));
    update::on_key(&mut a, ctrl('o'), clock.at(5.0));
    let text = screen_text(&mut a, 100, 40, clock.at(5.0));
    assert!(!text.contains("Summary point 1:"));
    // The meter reads the context after compaction; activity is back.
    assert_eq!(a.status.accounts.context_percent(), Some(7));
    assert_eq!(*a.status.turn.activity(), Activity::Thinking);
}

#[test]
fn compacting_shows_in_the_status_and_a_fallback_says_outputs_were_dropped() {
    let clock = Clock::new();
    let mut a = app(&clock);
    update::on_event(
        &mut a,
        Event::CompactionBegin {
            reason: CompactReason::User,
        },
        clock.at(1.0),
    );
    assert_eq!(*a.status.turn.activity(), Activity::Compacting);
    assert!(
        a.animating(clock.at(1.5)),
        "the spinner turns while compacting"
    );
    let text = screen_text(&mut a, 100, 20, clock.at(2.0));
    assert!(
        text.lines().last().unwrap().contains("compacting"),
        "{text}"
    );
    update::on_event(
        &mut a,
        Event::CompactionEnd {
            before_tokens: 171_400,
            after_tokens: 950,
            fallback: true,
        },
        clock.at(3.0),
    );
    assert_eq!(*a.status.turn.activity(), Activity::Idle);
    let divider = a.root.conversation.entries.last().unwrap();
    assert_eq!(divider.kind, EntryKind::Divider);
    assert_eq!(
        divider.text(),
        "context compacted: 171k → 950 tokens (old tool outputs dropped)"
    );
    assert_eq!(
        waypoint::units::compaction(2_500_000, 14_499, false),
        "context compacted: 2.5M → 14k tokens"
    );
}

#[test]
fn the_context_meter_warns_from_80_and_alarms_from_95_percent() {
    use ratatui::style::Color;
    let clock = Clock::new();
    let mut a = app(&clock);
    a.palette = waypoint::tui::style::Palette::colored();
    for (used, colour) in [(79, Color::Reset), (80, Color::Yellow), (95, Color::Red)] {
        update::on_event(
            &mut a,
            Event::ContextUsage {
                used: used * 1_000,
                window: 100_000,
            },
            clock.at(1.0),
        );
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 1)).unwrap();
        t.draw(|f| {
            let area = f.area();
            waypoint::tui::view::draw_pane(
                f,
                &mut a,
                waypoint::tui::view::Pane::Status,
                area,
                clock.at(2.0),
            )
        })
        .unwrap();
        let buffer = t.backend().buffer();
        let row: String = (0..100).map(|x| buffer[(x, 0)].symbol()).collect();
        let at = row.find("ctx").map(|i| row[..i].chars().count()).unwrap();
        assert_eq!(buffer[(at as u16, 0)].fg, colour, "{used}%: {row}");
    }
}

#[test]
fn the_cost_counts_cache_reads_and_writes_at_their_prices() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    a.status.accounts.set_price(waypoint::pricing::price_of(
        "claude-sonnet-4-5",
        &Default::default(),
    ));
    a.status.accounts.set_model("claude-sonnet-4-5".into());
    let million = waypoint::chat::Usage {
        input_tokens: 1_000_000,
        output_tokens: 0,
        cache_read_tokens: 1_000_000,
        cache_write_tokens: 1_000_000,
    };
    update::on_event(
        &mut a,
        Event::Usage {
            model: "claude-sonnet-4-5".into(),
            request: million,
            totals: million,
        },
        now,
    );
    // $3 input + $0.30 cache reads + $3.75 cache writes per million.
    let cost = a.status.accounts.cost().unwrap();
    assert!((cost - 7.05).abs() < 1e-9, "{cost}");
}
