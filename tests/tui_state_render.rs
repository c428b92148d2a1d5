//! What the conversation draws: reasoning, highlighted code, no escape
//! sequence from outside, and an incremental layout equal to a fresh one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support;

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use tui_support::*;
use waypoint::events::{Event, ToolStatus};
use waypoint::todo::TodoStatus;
use waypoint::tui::state::{App, EntryKind, Focus, NoticeKind};
use waypoint::tui::update;

#[test]
fn escape_sequences_from_the_model_tools_or_servers_never_reach_the_screen() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}]52;c;aGk=\u{1b}\\\u{9b}31m";
    let events = vec![
        Event::TurnStarted { resumed: false },
        Event::TextDelta {
            text: format!("reply {evil}"),
        },
        // A sequence split between two deltas goes whole too.
        Event::TextDelta {
            text: "tail \u{1b}]0;pw".into(),
        },
        Event::TextDelta {
            text: "ned\u{7} end".into(),
        },
        plan_event(
            vec![item("1", &format!("step {evil}"), TodoStatus::InProgress)],
            Default::default(),
        ),
        begin(
            "t1",
            &format!("bash{evil}"),
            &format!("ls {evil}"),
            json!({"command": "ls"}),
            Some(&format!("item {evil}")),
        ),
        Event::ToolCallOutputDelta {
            id: "t1".into(),
            chunk: format!("out\tput {evil}\nline\rover\n"),
        },
        end("t1", "bash", ToolStatus::Error, 5, "Error: failed"),
        Event::Error {
            kind: waypoint::events::ErrorKind::Api,
            message: format!("server said {evil}"),
        },
        Event::ModelChanged {
            provider: "anthropic".into(),
            model: format!("claude{evil}"),
        },
    ];
    for e in events {
        update::on_event(&mut a, e, now);
    }
    let check = |s: &str| {
        assert!(
            !s.contains("pwned") && !s.contains("pw") && !s.contains("[2J") && !s.contains("]52"),
            "{s}"
        );
        assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
    };
    check(&screen_text(&mut a, 120, 40, now));
    check(&screen_text(&mut a, 60, 20, now));
    // The expanded output too, its tab expanded and `\r` unable to overwrite.
    a.focus = Focus::Trace;
    update::on_key(&mut a, key(KeyCode::Enter), now);
    let s = screen_text(&mut a, 120, 40, now);
    check(&s);
    assert!(s.contains("out     put"), "to its tab stop: {s}");
    assert!(s.contains("over"), "{s}");
    // Pasted text is cleaned as well.
    update::on_paste(&mut a, &format!("pasted {evil}"));
    check(&a.input.text());
}

#[test]
fn reasoning_gets_its_own_dimmed_entry_before_the_reply_and_a_retry_drops_both() {
    let clock = Clock::new();
    let mut a = app(&clock);
    type_text(&mut a, "task", clock.at(0.0));
    update::on_key(&mut a, key(KeyCode::Enter), clock.at(0.0));
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, clock.at(0.1));
    update::on_event(&mut a, Event::RoundStarted { round: 1 }, clock.at(0.1));
    let think = |t: &str| Event::ReasoningDelta { text: t.into() };
    update::on_event(&mut a, think("Let me "), clock.at(0.2));
    update::on_event(&mut a, think("think."), clock.at(0.3));
    update::on_event(&mut a, text("Answer"), clock.at(0.4));
    let entries = |a: &App| -> Vec<(EntryKind, String)> {
        a.root
            .conversation
            .entries
            .iter()
            .map(|e| (e.kind, e.text().to_string()))
            .collect()
    };
    assert_eq!(
        entries(&a),
        vec![
            (EntryKind::User, "task".into()),
            (EntryKind::Reasoning, "Let me think.".into()),
            (EntryKind::Assistant, "Answer".into()),
        ]
    );
    let s = screen_text(&mut a, 80, 24, clock.at(0.5));
    assert!(s.contains("∴ Let me think."), "{s}");
    update::on_event(
        &mut a,
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "cut".into(),
        },
        clock.at(0.6),
    );
    let kinds: Vec<EntryKind> = entries(&a).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds[..2],
        [EntryKind::User, EntryKind::Notice(NoticeKind::Warning)]
    );
    assert_eq!(kinds.len(), 2);
}

#[test]
fn long_reasoning_is_folded_to_its_latest_lines_until_ctrl_o() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    update::on_event(&mut a, Event::TurnStarted { resumed: false }, now);
    let thoughts: String = (1..=10).map(|i| format!("thought {i}\n")).collect();
    update::on_event(&mut a, Event::ReasoningDelta { text: thoughts }, now);
    update::on_event(&mut a, text("The answer."), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("∴ thinking · 7 earlier lines (Ctrl+O shows them)"),
        "{s}"
    );
    assert!(
        !s.contains("thought 7 ") && s.contains("thought 8") && s.contains("thought 10"),
        "{s}"
    );
    assert!(s.contains("The answer."), "{s}");
    update::on_key(&mut a, ctrl('o'), now);
    let s = screen_text(&mut a, 120, 40, now);
    assert!(
        s.contains("thought 1 ") && !s.contains("earlier lines"),
        "{s}"
    );
    update::on_key(&mut a, ctrl('o'), now);
    assert!(screen_text(&mut a, 120, 40, now).contains("earlier lines"));
}

#[test]
fn a_long_code_block_is_coloured_over_a_few_frames_then_the_app_rests() {
    use ratatui::style::Color;
    waypoint::tui::markdown::warm_up();
    let clock = Clock::new();
    let mut a = App::new(
        "claude-test",
        "/work/project",
        waypoint::tui::style::Palette::colored(),
        clock.base,
    );
    let mut reply = String::from("```rust\n");
    for i in 0..100 {
        reply.push_str(&format!("let v{i} = {i};\n"));
    }
    reply.push_str("```\n");
    feed(
        &mut a,
        &clock,
        vec![
            (0.1, Event::TurnStarted { resumed: false }),
            (0.1, Event::RoundStarted { round: 1 }),
            (0.5, text(&reply)),
            (
                1.0,
                Event::TurnComplete {
                    stop_reason: waypoint::events::StopReason::EndTurn,
                    open_items: 0,
                },
            ),
        ],
    );
    // The last line on screen (a `let`) at each frame: plain code first,
    // coloured once the budget reached it; the app redraws until then.
    let mut colours = Vec::new();
    for frame in 0..4 {
        let now = clock.at(2.0 + f64::from(frame) * 0.1);
        let t = screen(&mut a, 120, 40, now);
        let buf = t.backend().buffer();
        let at = |x: u16, y: u16| -> String {
            (x..x + 5)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        };
        let (x, row) = (0..buf.area.height)
            .rev()
            .flat_map(|y| (0..60).map(move |x| (x, y)))
            .find(|&(x, y)| at(x, y) == "let v")
            .unwrap_or_else(|| panic!("no code on screen"));
        colours.push((buf[(x, row)].fg, a.animating(now)));
    }
    assert_eq!(colours[0], (Color::Cyan, true), "{colours:?}");
    assert_eq!(
        colours.last(),
        Some(&(Color::Magenta, false)),
        "{colours:?}"
    );
}

/// The conversation pane measured incrementally (only what changed since
/// the last frame) draws exactly what measuring everything afresh draws,
/// through replies, reasoning, tool cells with output, retries, scrolling
/// and resizing.
#[test]
fn the_incremental_layout_draws_what_a_fresh_layout_draws() {
    let clock = Clock::new();
    let (mut a, mut b) = (app(&clock), app(&clock));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let sizes = [(120, 40), (80, 24), (41, 12), (120, 40)];
    let mut t = 0.0;
    let mut call = 0;
    let mut running: Option<String> = None;
    for step in 0..400 {
        t += 0.05;
        let now = clock.at(t);
        let events: Vec<Event> = match next(9) {
            0 => vec![Event::TurnStarted { resumed: false }],
            1 | 2 => vec![
                Event::RoundStarted { round: 1 },
                text(&format!(
                    "Reply {step}: some **words** and `code`.\n\n```rust\nfn f{step}() {{}}\n```\n"
                )),
            ],
            3 => vec![Event::ReasoningDelta {
                text: format!("thinking {step} ").repeat(1 + next(30) as usize),
            }],
            4 => {
                call += 1;
                let id = format!("c{call}");
                running = Some(id.clone());
                vec![begin(
                    &id,
                    "bash",
                    &format!("cargo test {call}"),
                    json!({"command": "cargo test"}),
                    None,
                )]
            }
            5 => match &running {
                Some(id) => vec![Event::ToolCallOutputDelta {
                    id: id.clone(),
                    chunk: format!("line {step}\n").repeat(1 + next(4) as usize),
                }],
                None => vec![text("more text\n")],
            },
            6 => match running.take() {
                Some(id) => vec![end(&id, "bash", ToolStatus::Ok, 12, "done\n")],
                None => vec![Event::Retrying {
                    attempt: 1 + next(3) as u32,
                    delay_ms: 100,
                    reason: "overloaded".into(),
                }],
            },
            7 => vec![text(
                &"a longer paragraph of the reply ".repeat(1 + next(20) as usize),
            )],
            _ => Vec::new(),
        };
        for e in events {
            update::on_event(&mut a, e.clone(), now);
            update::on_event(&mut b, e, now);
        }
        if next(6) == 0 {
            let k = [
                KeyCode::PageUp,
                KeyCode::PageDown,
                KeyCode::End,
                KeyCode::Up,
            ][next(4) as usize];
            update::on_key(&mut a, key(k), now);
            update::on_key(&mut b, key(k), now);
        }
        if next(10) == 0 {
            update::on_key(&mut a, ctrl('o'), now);
            update::on_key(&mut b, ctrl('o'), now);
        }
        let (w, h) = sizes[(step / 100) % sizes.len()];
        let ours = screen_text(&mut a, w, h, now);
        b.root.conversation.index = Default::default();
        for e in &mut b.root.conversation.entries {
            e.cache = None;
        }
        let fresh = screen_text(&mut b, w, h, now);
        assert_eq!(ours, fresh, "step {step} at {w}x{h}");
    }
    assert!(a.root.conversation.entries.len() > 100);
}
