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
            let why = goal_over(session).or_else(|| item_over(session));
            let Some(why) = why else {
                // This request counts.
                if let Some(run) = shared.lock().as_mut() {
                    run.spent.turns = run.spent.turns.saturating_add(1);
                }
                return None;
            };
            if let Some(run) = shared.lock().as_mut() {
                run.set(GoalState::BudgetLimited, Some(why.clone()));
            }
            goal::announce(session);
            let message = format!("the goal stopped: {why}");
            Some(
                session
                    .abort(AbortReason::MaxTurns, message, TurnEnd::Stopped)
                    .await,
            )
        })
    }
}

/// Why the goal's budget stops it now, if it does; at 80% the user is
/// told once.
fn goal_over(session: &Session) -> Option<String> {
    let (share, warn, why) = {
        let mut slot = session.host.requests.goal.lock();
        let run = slot.as_mut()?;
        let (share, limit) = run.spent.share(&run.goal.budget)?;
        let warn = (share >= 0.8 && !run.warned).then(|| {
            run.warned = true;
            (limit, (share * 100.0).round() as u32)
        });
        let why = format!(
            "its budget ran out ({} of {})",
            spent_line(&run.spent, &run.goal.budget),
            run.goal.budget.describe()
        );
        (share, warn, why)
    };
    if let Some((limit, percent)) = warn {
        session.emit(Event::GoalBudget {
            share: percent,
            limit: limit.to_string(),
        });
    }
    (share >= 1.0).then_some(why)
}

/// Why the item in progress stops the goal now: it spent its own budget
/// (the goal's `item_budget`), as the plan's account last said.
fn item_over(session: &Session) -> Option<String> {
    let budget = session
        .host
        .requests
        .goal
        .lock()
        .as_ref()
        .map(|run| run.goal.item_budget)
        .filter(|b| !b.is_empty())?;
    let plan = session.thread.plan.lock();
    let (at, item) = plan
        .manager
        .items()
        .iter()
        .enumerate()
        .find(|(_, i)| i.status == crate::todo::TodoStatus::InProgress)?;
    let stats = plan.stats.iter().find(|s| s.id == item.id)?;
    let spent = crate::events::Spent::of_item(stats);
    let (share, _) = spent.share(&budget)?;
    (share >= 1.0).then(|| {
        format!(
            "item {} \"{}\" spent its own budget ({} of {})",
            at + 1,
            item.content,
            spent_line(&spent, &budget),
            budget.describe()
        )
    })
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
