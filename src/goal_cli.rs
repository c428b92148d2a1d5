//! `waypoint -p --goal TEXT [--goal-check CMD] [--budget B]`: the goal
//! is the headless run's task (see [`crate::events::goal`]).

use crate::cli::Cli;
use crate::events::{Goal, GoalAction, Op};

/// `--goal TEXT` is the task: none besides it (`given`: a prompt was).
pub fn goal_task(given: bool) -> Result<Option<String>, &'static str> {
    match given {
        true => Err("--goal TEXT is the task: leave the prompt out (waypoint -p --goal \"TEXT\")"),
        false => Ok(None),
    }
}

/// The op that sets `--goal`'s goal (with its check and budget).
pub fn goal_op(cli: &Cli) -> Op {
    Op::Goal {
        action: GoalAction::Set {
            goal: Goal {
                text: cli.goal.clone().unwrap_or_default(),
                check: cli.goal_check.clone(),
                budget: cli.budget.unwrap_or_default(),
                item_budget: cli.item_budget.unwrap_or_default(),
            },
        },
    }
}
