//! After approval the plan is a contract (issue 45, part 3): a model
//! revision that adds, drops or rewords approved items is a change to the
//! agreement: told (`plan_changes = "tell"`, the default), signed off by
//! the user first (`"ask"`), refused headless unless
//! `--accept-plan-changes`; status changes are never asked about.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::support;

use scripted_support::{Recording, plan, scenario, start_with, stop};
use serde_json::{Value, json};
use std::sync::Arc;
use waypoint::agent::{AgentConfig, AgentHandle, PlanSettings, SessionSetup};
use waypoint::config::PlanChanges;
use waypoint::events::{ApprovalMode, Decision, Event};

fn config(changes: PlanChanges) -> AgentConfig {
    AgentConfig {
        approval: ApprovalMode::Plan,
        nag_every: 0,
        plan: PlanSettings {
            changes,
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    }
}

const APPROVED: &[(&str, &str)] = &[("Write greet.sh", "pending"), ("Test it", "pending")];

/// The research turn, then (after approval) a start that only changes a
/// status, one that adds an item, and the end.
fn turns() -> Value {
    json!([
        {"text": "Reading.", "tool_calls": [{"name": "todo_write", "input": plan(APPROVED)}]},
        {"text": "Research done."},
        {"text": "Starting.", "tool_calls": [{"name": "todo_write", "input": plan(&[("Write greet.sh", "in_progress"), ("Test it", "pending")])}]},
        {"text": "More.", "tool_calls": [{"name": "todo_write", "input": plan(&[("Write greet.sh", "in_progress"), ("Test it", "pending"), ("Add docs", "pending")])}]},
        {"text": "Done for now."}
    ])
}

/// Proposes, approves (into `auto`), and runs the approved turn, every
/// approval request answered with `answer`: its events and the plan.
async fn approved_turn(changes: PlanChanges, answer: Decision) -> (Vec<Event>, Arc<Recording>) {
    let ws = support::sandbox::outside_hidden("contract-ws-");
    let client = scenario(turns());
    let mut h: AgentHandle = start_with(
        client.clone(),
        ws.path(),
        config(changes),
        SessionSetup::Off,
    );
    let events = scripted_support::propose_then_approve(
        &mut h,
        "Add a greeting script",
        ApprovalMode::Auto,
        answer,
    )
    .await;
    stop(h).await;
    (events, client)
}

fn last_plan(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::PlanUpdated { items, .. } => {
                Some(items.iter().map(|i| i.content.clone()).collect())
            }
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn a_change_to_the_agreement_is_told_by_default_and_statuses_are_not_changes() {
    let (events, _) = approved_turn(PlanChanges::Tell, Decision::Once).await;
    let accepted: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::PlanChangeAccepted { lines, asked } => Some((lines.clone(), *asked)),
            _ => None,
        })
        .collect();
    // The status-only write is the work, not a change.
    assert_eq!(
        accepted,
        [(vec!["+ Add docs".to_string()], false)],
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    assert_eq!(
        last_plan(&events),
        ["Write greet.sh", "Test it", "Add docs"]
    );
}

#[tokio::test]
async fn with_ask_the_user_signs_a_change_off_or_refuses_it() {
    let (events, client) = approved_turn(
        PlanChanges::Ask,
        Decision::Refuse {
            reason: Some("not now".into()),
        },
    )
    .await;
    let asked: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::ApprovalRequested { .. }))
        .collect();
    assert_eq!(asked.len(), 1, "only the change is asked about: {events:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PlanChangeRequested { lines } if lines == &["+ Add docs"]))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PlanChangeRefused { lines } if lines == &["+ Add docs"]))
    );
    assert_eq!(last_plan(&events), ["Write greet.sh", "Test it"]);
    // The model read the refusal.
    let requests = client.requests.lock().unwrap().clone();
    let results = scripted_support::tool_results(requests.last().unwrap());
    assert!(
        results.iter().any(|(_, r)| r.contains("not now")),
        "{results:?}"
    );

    let (events, _) = approved_turn(PlanChanges::Ask, Decision::Once).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::PlanChangeAccepted { asked: true, .. }))
    );
    assert_eq!(
        last_plan(&events),
        ["Write greet.sh", "Test it", "Add docs"]
    );
}

#[test]
fn headless_a_change_is_refused_with_ask_unless_accepted_by_flag() {
    let home = support::sandbox::outside_hidden("contract-home-");
    let turns = turns();
    let all = turns.as_array().unwrap();
    let propose = home.path().join("propose.json");
    std::fs::write(&propose, json!({"turns": all[..2]}).to_string()).unwrap();
    let carry = home.path().join("carry.json");
    std::fs::write(&carry, json!({"turns": all[2..]}).to_string()).unwrap();
    for (flag, refused) in [
        ("--plan-changes=ask", true),
        ("--accept-plan-changes", false),
    ] {
        let ws = support::sandbox::outside_hidden("contract-bin-ws-");
        let out = support::run_waypoint(
            home.path(),
            ws.path(),
            &[
                "-p",
                "Add a greeting script",
                "--approval",
                "plan",
                "--output-format",
                "jsonl",
                "--scenario",
                propose.to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(5),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        let id = result["session_id"].as_str().unwrap().to_string();
        let out = support::run_waypoint(
            home.path(),
            ws.path(),
            &[
                "-r",
                &id,
                "-p",
                "--approve-plan",
                flag,
                "--scenario",
                carry.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if refused {
            assert!(stderr.contains("a change to the approved plan was refused (--accept-plan-changes allows it): + Add docs"), "{stderr}");
            // The agreement is kept in the session: a later run holds to it.
            let again = home.path().join("again.json");
            std::fs::write(&again, json!({"turns": all[3..]}).to_string()).unwrap();
            let out = support::run_waypoint(
                home.path(),
                ws.path(),
                &[
                    "-r",
                    &id,
                    "-p",
                    "Go on",
                    "--plan-changes",
                    "ask",
                    "--scenario",
                    again.to_str().unwrap(),
                ],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("a change to the approved plan was refused"),
                "{stderr}"
            );
        } else {
            assert!(
                stderr.contains("a change to the approved plan was made: + Add docs"),
                "{stderr}"
            );
            // The run's last word on the agreement: three items (one
            // accepted), none done, none dropped.
            assert!(
                stderr.contains("the approved plan: 0 of 3 items done, 0 dropped, 3 open"),
                "{stderr}"
            );
        }
    }
}
