//! Reminder bytes per session: Waypoint's nag policy against the seeds'
//! fixed nag (`<reminder>10+ turns without todo update. Please update
//! todos.</reminder>` after every round past 10 without `todo_write`), on the
//! same scripted sessions. A nag stays in the conversation, so it is also
//! re-sent with every later request: both the bytes added and the bytes
//! sent are reported.
//!
//! `cargo run --example nag_bytes`

use serde_json::json;
use waypoint::agent::reminders::Reminders;
use waypoint::todo::TodoManager;

const SEED_NAG: &str = "<reminder>10+ turns without todo update. Please update todos.</reminder>";

/// One round: did it update the plan, and how many items are open after it.
#[derive(Clone, Copy)]
struct Round {
    updated: bool,
    open: usize,
}

fn plan_with(open: usize, total: usize) -> TodoManager {
    let mut plan = TodoManager::new();
    let todos: Vec<_> = (0..total)
        .map(|i| {
            let status = if i < total - open {
                "completed"
            } else if i == total - open {
                "in_progress"
            } else {
                "pending"
            };
            json!({"content": format!("Step {i}"), "status": status, "activeForm": format!("Doing step {i}")})
        })
        .collect();
    let _ = plan.update(&serde_json::Value::Array(todos));
    plan
}

/// (bytes added, bytes sent over the session's later requests).
fn waypoint_bytes(rounds: &[Round], total: usize) -> (usize, usize) {
    let mut r = Reminders::new(3, 2);
    let (mut added, mut sent, mut carried) = (0, 0, 0);
    for round in rounds {
        let plan = if total == 0 {
            TodoManager::new()
        } else {
            plan_with(round.open, total)
        };
        if let Some(nag) = r.after_round(round.updated, &plan) {
            added += nag.len();
            carried += nag.len();
        }
        sent += carried;
    }
    (added, sent)
}

fn seed_bytes(rounds: &[Round]) -> (usize, usize) {
    let (mut added, mut sent, mut carried, mut since) = (0, 0, 0, 0);
    for round in rounds {
        since = if round.updated { 0 } else { since + 1 };
        if since > 10 {
            added += SEED_NAG.len();
            carried += SEED_NAG.len();
        }
        sent += carried;
    }
    (added, sent)
}

fn main() {
    let work = |n: usize, every: usize, total: usize| -> Vec<Round> {
        (0..n)
            .map(|i| Round {
                updated: every > 0 && i % every == 0,
                open: total.saturating_sub(i * total / n.max(1)).max(1),
            })
            .collect()
    };
    let sessions: Vec<(&str, Vec<Round>, usize)> = vec![
        (
            "diligent: plan updated every 2 rounds, 40 rounds",
            work(40, 2, 8),
            8,
        ),
        (
            "drifting: plan once, then 40 rounds with items open",
            work(40, 40, 8),
            8,
        ),
        ("no plan: 30 tool rounds", work(30, 0, 0), 0),
        (
            "finished: all done, then 25 more rounds",
            (0..25)
                .map(|i| Round {
                    updated: i == 0,
                    open: 0,
                })
                .collect(),
            5,
        ),
    ];
    println!("| session | Waypoint added | seeds added | Waypoint sent | seeds sent |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let (mut wa, mut sa, mut ws, mut ss) = (0, 0, 0, 0);
    for (name, rounds, total) in &sessions {
        let (a, s) = waypoint_bytes(rounds, *total);
        let (b, t) = seed_bytes(rounds);
        println!("| {name} | {a} B | {b} B | {s} B | {t} B |");
        (wa, sa, ws, ss) = (wa + a, sa + b, ws + s, ss + t);
    }
    println!("| all four | {wa} B | {sa} B | {ws} B | {ss} B |");
}
