//! An active goal keeps the turn going when the model stops: the plan's
//! evidence is judged (see [`crate::agent::goal`]); the goal is met only
//! when every item is completed and verified or accepted and the goal's
//! own check passes; otherwise the model is told what is missing and the
//! turn goes on, until [`STALL_ROUNDS`] stops in a row change nothing
//! (then the goal stops as `unmet`, with why).

use std::hash::{Hash, Hasher};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{BeforeEnd, Next};
use crate::agent::goal::{self, STALL_ROUNDS, judge, run_check};
use crate::agent::{Session, TurnEnd};
use crate::events::{AbortReason, GoalState, StopReason};

/// The phase (its state is the goal's, kept across turns).
pub(super) struct GoalPhase;

impl BeforeEnd for GoalPhase {
    fn name(&self) -> &'static str {
        "goal"
    }

    fn check<'a>(
        &'a mut self,
        session: &'a mut Session,
        _stop: &'a StopReason,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Next> {
        Box::pin(judge_goal(session, cancel))
    }
}

async fn judge_goal(session: &mut Session, cancel: &CancellationToken) -> Next {
    let shared = session.host.requests.goal.clone();
    if !session.host.events.thread().is_root() || !shared.active() {
        return Next::End;
    }
    super::goal_budget::account(session);
    let judged = {
        let plan = session.thread.plan.lock();
        judge(plan.manager.items(), &plan.checks)
    };
    let Some(goal) = shared.lock().as_ref().map(|g| g.goal.clone()) else {
        return Next::End;
    };
    let judgeable = !(judged.empty && goal.check.is_none());
    let mut failed_check = None;
    if judged.items_done() && judgeable {
        if let Some(command) = &goal.check {
            let evidence = run_check(&session.host, command, ("", &goal.text), cancel).await;
            if cancel.is_cancelled() {
                let message = "interrupted while the goal's check ran".to_string();
                return Next::Ended(
                    session
                        .abort(AbortReason::Interrupted, message, TurnEnd::Interrupted)
                        .await,
                );
            }
            if !evidence.passed {
                failed_check = Some(format!(
                    "`{command}` (exit {}):\n{}",
                    evidence
                        .exit_code
                        .map_or_else(|| "none".to_string(), |c| c.to_string()),
                    evidence.tail
                ));
            }
            if let Some(run) = shared.lock().as_mut() {
                run.check = Some(evidence);
            }
        }
        if failed_check.is_none() {
            if let Some(run) = shared.lock().as_mut() {
                run.set(GoalState::Met, None);
            }
            goal::announce(session);
            return Next::End;
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (judged.seen, &failed_check).hash(&mut hasher);
    let seen = hasher.finish();
    let stalled = {
        let mut slot = shared.lock();
        let Some(run) = slot.as_mut() else {
            return Next::End;
        };
        if run.last_seen == Some(seen) {
            run.stale += 1;
        } else {
            run.stale = 0;
            run.last_seen = Some(seen);
        }
        if run.stale >= STALL_ROUNDS {
            let why = match judgeable {
                true => format!(
                    "no progress in {STALL_ROUNDS} rounds: the plan and its evidence did not change"
                ),
                false => {
                    "no evidence: the model wrote no plan and the goal has no check".to_string()
                }
            };
            run.set(GoalState::Unmet, Some(why));
            true
        } else {
            false
        }
    };
    if stalled {
        goal::announce(session);
        return Next::End;
    }
    let mut note = goal::go_on_note(&goal, &judged, failed_check.as_deref());
    if let Some(line) = drift_line(session) {
        note.push('\n');
        note.push_str(&line);
    }
    session.add_user_text(note, false);
    Next::GoOn
}

/// The item in progress, when it has taken more than twice as long as
/// the finished items did (see [`crate::todo::forecast`]): told once per
/// item.
fn drift_line(session: &Session) -> Option<String> {
    let (forecast, items) = {
        let plan = session.thread.plan.lock();
        (
            crate::todo::forecast::forecast(&plan.stats)?,
            plan.manager.items().to_vec(),
        )
    };
    let id = forecast.drifting?;
    {
        let mut slot = session.host.requests.goal.lock();
        let run = slot.as_mut()?;
        if run.drift_told.as_deref() == Some(id.as_str()) {
            return None;
        }
        run.drift_told = Some(id.clone());
    }
    let (at, item) = items.iter().enumerate().find(|(_, i)| i.id == id)?;
    Some(format!(
        "Item {} \"{}\" is drifting: it has taken more than twice as long as a finished item ({} on average). Finish it, split it into smaller items, or say what blocks it.",
        at + 1,
        item.content,
        crate::units::duration(forecast.mean_ms.div_ceil(1000))
    ))
}
