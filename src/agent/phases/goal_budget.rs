//! An active goal's budget, counted at every round's start: what the
//! session spent since the goal was set (tokens, cost where prices are
//! known, active time, model requests). At 80% of a limit the user is told
//! once (`GoalBudget`); at 100% the goal stops as `budget-limited` and the
//! turn ends before the next request.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::RoundStart;
use crate::agent::goal;
use crate::agent::{Session, TurnEnd};
use crate::events::{AbortReason, Event, GoalState};

/// The phase (its state is the goal's).
pub(super) struct GoalBudget;

impl RoundStart for GoalBudget {
    fn name(&self) -> &'static str {
        "goal-budget"
    }

    fn start<'a>(
        &'a mut self,
        session: &'a mut Session,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<TurnEnd>> {
        Box::pin(async move {
            let shared = session.host.requests.goal.clone();
            if !session.host.events.thread().is_root() || !shared.active() {
                return None;
            }
            account(session);
            let (share, warn) = {
                let mut slot = shared.lock();
                let run = slot.as_mut()?;
                let Some((share, limit)) = run.spent.share(&run.goal.budget) else {
                    run.spent.turns = run.spent.turns.saturating_add(1);
                    return None;
                };
                let warn = (share >= 0.8 && !run.warned).then(|| {
                    run.warned = true;
                    limit
                });
                (share, warn.map(|l| (l, (share * 100.0).round() as u32)))
            };
            if let Some((limit, percent)) = warn {
                session.emit(Event::GoalBudget {
                    share: percent,
                    limit: limit.to_string(),
                });
            }
            if share < 1.0 {
                // This request counts.
                if let Some(run) = shared.lock().as_mut() {
                    run.spent.turns = run.spent.turns.saturating_add(1);
                }
                return None;
            }
            let why = {
                let mut slot = shared.lock();
                let run = slot.as_mut()?;
                let why = format!(
                    "its budget ran out ({} of {})",
                    spent_line(&run.spent, &run.goal.budget),
                    run.goal.budget.describe()
                );
                run.set(GoalState::BudgetLimited, Some(why.clone()));
                why
            };
            goal::announce(session);
            Some(
                session
                    .abort(
                        AbortReason::MaxTurns,
                        format!("the goal stopped: {why}"),
                        TurnEnd::Stopped,
                    )
                    .await,
            )
        })
    }
}

/// Counts what the session spent since the goal's last count.
pub(in crate::agent) fn account(session: &Session) {
    let price =
        crate::pricing::price_of(session.thread.client.model(), &session.host.config.prices);
    if let Some(run) = session.host.requests.goal.lock().as_mut() {
        run.account(session.thread.totals, price);
    }
}

/// What was spent, in the budget's terms.
fn spent_line(spent: &crate::events::Spent, budget: &crate::events::Budget) -> String {
    let mut parts = Vec::new();
    if budget.tokens.is_some() {
        parts.push(format!("{} tokens", crate::units::tokens(spent.tokens)));
    }
    if budget.cost_cents.is_some() {
        parts.push(crate::pricing::format_cost(spent.cost_usd));
    }
    if budget.seconds.is_some() {
        parts.push(crate::events::goal::duration(spent.seconds));
    }
    if budget.turns.is_some() {
        parts.push(format!("{} turns", spent.turns));
    }
    parts.join(", ")
}
