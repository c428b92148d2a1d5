//! Plan mode's proposal and its approval (issue 45, part 2): a plan the
//! model writes in plan mode is proposed, and only a proposal can be
//! approved; the approval is a revision by `approved`, the mode becomes
//! the one plan mode was entered from (or the one named), and a turn
//! starts carrying it out, optionally from a fresh conversation holding
//! only the task, the research's summary and the plan. Headless, a plan
//! mode run that proposes exits 5, and `-r ID -p --approve-plan` carries
//! the proposal out to exit 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::support;

use scripted_support::{plan, scenario, start_with, stop, turn_end, until};
use serde_json::{Value, json};
use waypoint::agent::{AgentConfig, SessionSetup};
use waypoint::events::{ApprovalMode, ErrorKind, Event, Op};
use waypoint::llm::{ContentBlock, Role};
use waypoint::todo::Author;

fn config(approval: ApprovalMode) -> AgentConfig {
    AgentConfig {
        approval,
        nag_every: 0,
        ..AgentConfig::default()
    }
}

/// The model's research turn: a plan, then its rationale.
fn research() -> Vec<Value> {
    vec![
        json!({"text": "Reading.", "tool_calls": [{"name": "todo_write", "input": plan(&[("Write greet.sh", "pending"), ("Test it", "pending")])}]}),
        json!({"text": "Research: the scripts live at the root; greet.sh goes there."}),
    ]
}

#[tokio::test]
async fn a_plan_written_in_plan_mode_is_proposed_and_approved_with_fresh_context() {
    let ws = support::sandbox::outside_hidden("proposal-ws-");
    let mut turns = research();
    turns.push(json!({"text": "Starting with item 1."}));
    let client = scenario(Value::Array(turns));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        config(ApprovalMode::Plan),
        SessionSetup::Off,
    );
    h.ops
        .send(Op::Submit {
            text: "Add a greeting script".into(),
        })
        .unwrap();
    let first = until(&mut h.events, turn_end).await;
    assert!(
        first
            .iter()
            .any(|e| matches!(e, Event::PlanProposed { revision: 1 })),
        "{first:?}"
    );
    h.ops
        .send(Op::ApprovePlan {
            mode: Some(ApprovalMode::AutoEdit),
            fresh: true,
            items: None,
        })
        .unwrap();
    let second = until(&mut h.events, turn_end).await;
    stop(h).await;
    let approved = second.iter().find_map(|e| match e {
        Event::PlanUpdated {
            author: Author::Approved,
            revision,
            items,
            ..
        } => Some((*revision, items.len())),
        _ => None,
    });
    assert_eq!(approved, Some((2, 2)), "{second:?}");
    assert!(second.iter().any(|e| matches!(
        e,
        Event::PlanApproved {
            revision: 2,
            mode: ApprovalMode::AutoEdit,
            fresh: true
        }
    )));
    assert!(second.iter().any(|e| matches!(
        e,
        Event::ApprovalMode {
            mode: ApprovalMode::AutoEdit,
            ..
        }
    )));
    // The request after the approval: one user message holding the task,
    // the research's last reply, the plan, and the approval.
    let requests = client.requests.lock().unwrap().clone();
    let last = requests.last().unwrap();
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(last[0].role, Role::User);
    let texts: Vec<&str> = last[0]
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], "Add a greeting script", "{texts:?}");
    assert!(texts[1].contains("Research: the scripts live at the root"));
    assert!(texts[2].contains("Write greet.sh") && texts[2].contains("Test it"));
    assert!(texts[3].contains("The user approved the plan (revision 2)"));
    assert!(texts[3].contains("auto-edit mode"));
    // After those, only the harness's own reminders (the mode it left).
    assert!(
        texts[4..].iter().all(|t| t.starts_with("<reminder>")),
        "{texts:?}"
    );
}

#[tokio::test]
async fn only_a_proposal_is_approved_and_it_runs_in_the_mode_plan_mode_was_entered_from() {
    let ws = support::sandbox::outside_hidden("proposal-mode-ws-");
    let mut turns = vec![
        json!({"text": "Planning in auto.", "tool_calls": [{"name": "todo_write", "input": plan(&[("One", "pending")])}]}),
        json!({"text": "Done planning."}),
    ];
    turns.extend(research());
    turns.push(json!({"text": "Going."}));
    let client = scenario(Value::Array(turns));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        config(ApprovalMode::Auto),
        SessionSetup::Off,
    );
    // Outside plan mode the model's plan is live: nothing to approve.
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let live = until(&mut h.events, turn_end).await;
    assert!(!live.iter().any(|e| matches!(e, Event::PlanProposed { .. })));
    h.ops
        .send(Op::ApprovePlan {
            mode: None,
            fresh: false,
            items: None,
        })
        .unwrap();
    let refused = until(&mut h.events, |e| matches!(e, Event::Error { .. })).await;
    match refused.last() {
        Some(Event::Error {
            kind: ErrorKind::PlanEdit,
            message,
        }) => assert!(message.starts_with("No plan is proposed"), "{message}"),
        other => panic!("{other:?}"),
    }
    // Into plan mode from auto; the proposal approved without a mode
    // goes back to auto, in the same conversation.
    h.ops
        .send(Op::SetApproval {
            mode: ApprovalMode::Plan,
        })
        .unwrap();
    h.ops
        .send(Op::Submit {
            text: "Add a greeting script".into(),
        })
        .unwrap();
    let proposed = until(&mut h.events, turn_end).await;
    assert!(
        proposed
            .iter()
            .any(|e| matches!(e, Event::PlanProposed { .. })),
        "{proposed:?}"
    );
    h.ops
        .send(Op::ApprovePlan {
            mode: None,
            fresh: false,
            items: None,
        })
        .unwrap();
    let carried = until(&mut h.events, turn_end).await;
    stop(h).await;
    assert!(carried.iter().any(|e| matches!(
        e,
        Event::PlanApproved {
            mode: ApprovalMode::Auto,
            fresh: false,
            ..
        }
    )));
    let requests = client.requests.lock().unwrap().clone();
    // Not fresh: the whole conversation goes on.
    assert!(requests.last().unwrap().len() > 4);
}

#[test]
fn headless_a_proposal_exits_5_and_approve_plan_carries_it_out() {
    let home = support::sandbox::outside_hidden("proposal-home-");
    let ws = support::sandbox::outside_hidden("proposal-bin-ws-");
    let first = home.path().join("propose.json");
    std::fs::write(&first, json!({ "turns": research() }).to_string()).unwrap();
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
            first.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let seen = support::json_lines(&out);
    assert!(seen.iter().any(|e| e["type"] == "plan_proposed"));
    let result = seen.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["exit_reason"], "plan_proposed");
    let id = result["session_id"].as_str().unwrap().to_string();
    // In text mode the same run would say how to approve it.
    assert!(!ws.path().join("greet.sh").exists());

    let second = home.path().join("carry.json");
    let turns = scripted_support::carry_out_greet(&["Write greet.sh", "Test it"]);
    std::fs::write(&second, turns).unwrap();
    let out = support::run_waypoint(
        home.path(),
        ws.path(),
        &[
            "-r",
            &id,
            "-p",
            "--approve-plan",
            "--approval",
            "auto",
            "--scenario",
            second.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("plan approved (revision 2); it runs in auto mode"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("greet.sh")).unwrap(),
        "echo hi\n"
    );
    assert!(
        stderr.contains("the approved plan: 2 of 2 items done, 0 dropped, 0 open"),
        "{stderr}"
    );
    // Approving again: nothing is proposed now.
    let out = support::run_waypoint(
        home.path(),
        ws.path(),
        &[
            "-r",
            &id,
            "-p",
            "--approve-plan",
            "--scenario",
            second.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("No plan is proposed"), "{stderr}");
}

#[test]
fn approve_plan_needs_a_session_and_no_task() {
    let home = support::sandbox::outside_hidden("proposal-flags-home-");
    let ws = support::sandbox::outside_hidden("proposal-flags-ws-");
    let out = support::run_waypoint(home.path(), ws.path(), &["-p", "x", "--approve-plan"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use it with -r ID or -c"));
}
