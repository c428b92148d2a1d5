//! Soft nudges about the plan: one reminder on the first user message, and
//! a nag after N consecutive tool rounds without `todo_write`, only when it
//! can help: while items are open (or when there is still no plan after
//! [`NO_PLAN_AFTER`] rounds), never when every item is done. Invariants: the
//! counter resets on every plan update and after every nag, so no nag
//! follows a round that updated the plan and nags are at least N rounds
//! apart; after M nags in a row without a plan update the nag stops until
//! the plan is updated (it is not helping, and it costs every request).

use crate::todo::{TodoManager, TodoStatus};

pub const INITIAL_REMINDER: &str = "<reminder>For a task with several steps, first write a plan with \
todo_write, keep exactly one item in_progress while you work on it, and mark each item completed as \
soon as it is done. Skip the plan for a one-step task.</reminder>";

/// Tool rounds without any plan before a nag suggests writing one.
pub const NO_PLAN_AFTER: u32 = 3;

#[derive(Clone, Debug)]
pub struct Reminders {
    /// Rounds without a plan update before a nag; 0 turns the nag off.
    nag_every: u32,
    /// Nags in a row without a plan update before they stop; 0 = no limit.
    nag_max: u32,
    rounds_since_plan: u32,
    /// Nags since the last plan update.
    unanswered: u32,
}

impl Reminders {
    pub fn new(nag_every: u32, nag_max: u32) -> Self {
        Self {
            nag_every,
            nag_max,
            rounds_since_plan: 0,
            unanswered: 0,
        }
    }

    /// Called after each tool round; returns the nag text when one is due.
    pub fn after_round(&mut self, plan_updated: bool, plan: &TodoManager) -> Option<String> {
        if plan_updated {
            self.rounds_since_plan = 0;
            self.unanswered = 0;
            return None;
        }
        self.rounds_since_plan += 1;
        let due = if plan.items().is_empty() {
            self.nag_every.max(NO_PLAN_AFTER)
        } else {
            self.nag_every
        };
        if self.nag_every == 0 || self.rounds_since_plan < due {
            return None;
        }
        // Every item done: nothing to nudge about.
        if !plan.items().is_empty() && plan.open_items().is_empty() {
            return None;
        }
        if self.nag_max > 0 && self.unanswered >= self.nag_max {
            return None;
        }
        self.unanswered += 1;
        let rounds = std::mem::take(&mut self.rounds_since_plan);
        Some(nag_text(rounds, plan))
    }
}

fn nag_text(rounds: u32, plan: &TodoManager) -> String {
    let open = plan.open_items();
    if plan.items().is_empty() {
        return format!(
            "<reminder>{rounds} tool rounds without a plan. If this task has several steps, write one with todo_write.</reminder>"
        );
    }
    let mut text = format!(
        "<reminder>{rounds} tool rounds since the last plan update. Still open ({} of {}):",
        open.len(),
        plan.items().len()
    );
    for item in open {
        let mark = if item.status == TodoStatus::InProgress {
            "[>]"
        } else {
            "[ ]"
        };
        text.push_str(&format!("\n{mark} {}", item.content));
    }
    text.push_str("\nIf your progress changed, update the plan with todo_write.</reminder>");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nags_exactly_every_n_rounds_without_update() {
        let plan = TodoManager::new();
        let mut r = Reminders::new(3, 0);
        assert_eq!(r.after_round(false, &plan), None);
        assert_eq!(r.after_round(false, &plan), None);
        assert!(
            r.after_round(false, &plan)
                .is_some_and(|t| t.contains("3 tool rounds without a plan"))
        );
        assert_eq!(r.after_round(false, &plan), None);
        assert_eq!(r.after_round(true, &plan), None);
        assert_eq!(r.after_round(false, &plan), None);
        assert_eq!(r.after_round(false, &plan), None);
        assert!(r.after_round(false, &plan).is_some());
    }

    #[test]
    fn zero_disables_the_nag() {
        let plan = TodoManager::new();
        let mut r = Reminders::new(0, 0);
        for _ in 0..10 {
            assert_eq!(r.after_round(false, &plan), None);
        }
    }

    fn plan_of(items: &[(&str, &str)]) -> TodoManager {
        let mut plan = TodoManager::new();
        let todos: Vec<_> = items
            .iter()
            .map(|(c, s)| serde_json::json!({"content": c, "status": s, "activeForm": c}))
            .collect();
        plan.update(&serde_json::Value::Array(todos))
            .map(|_| ())
            .ok();
        plan
    }

    /// The nag policy over a run of rounds: `true` where a round updated the plan.
    fn nags(r: &mut Reminders, plan: &TodoManager, rounds: &[bool]) -> Vec<bool> {
        rounds
            .iter()
            .map(|&u| r.after_round(u, plan).is_some())
            .collect()
    }

    #[test]
    fn the_nag_policy_table() {
        let open = plan_of(&[("a", "in_progress"), ("b", "pending")]);
        let done = plan_of(&[("a", "completed")]);
        let none = TodoManager::new();
        let f = false;
        // (nag_every, nag_max, plan, rounds (true = plan updated), nags expected)
        type Row<'a> = (u32, u32, &'a TodoManager, Vec<bool>, Vec<bool>);
        let table: Vec<Row> = vec![
            // Every 3 rounds while items are open; never right after an update.
            (
                3,
                0,
                &open,
                vec![f, f, f, f, f, f],
                vec![f, f, true, f, f, true],
            ),
            (
                3,
                0,
                &open,
                vec![f, f, true, f, f, f],
                vec![f, f, f, f, f, true],
            ),
            // At most 2 in a row without effect, then silence until an update.
            (
                2,
                2,
                &open,
                vec![f, f, f, f, f, f, f, f],
                vec![f, true, f, true, f, f, f, f],
            ),
            (
                2,
                2,
                &open,
                vec![f, f, f, f, true, f, f],
                vec![f, true, f, true, f, f, true],
            ),
            // Every item done: no nag at all.
            (2, 0, &done, vec![f, f, f, f], vec![f, f, f, f]),
            // No plan: only after 3 rounds, even with a shorter interval.
            (1, 0, &none, vec![f, f, f, f], vec![f, f, true, f]),
            // Off.
            (0, 0, &open, vec![f, f, f, f], vec![f, f, f, f]),
        ];
        for (i, (every, max, plan, rounds, expected)) in table.into_iter().enumerate() {
            let mut r = Reminders::new(every, max);
            assert_eq!(nags(&mut r, plan, &rounds), expected, "row {i}");
        }
    }
}
