//! Soft nudges about the plan: one reminder on the first user message, and
//! a nag after N consecutive tool rounds without `todo_write`. Invariant:
//! the counter resets on every plan update and after every nag, so no nag
//! follows a round that updated the plan and nags are at least N rounds apart.

use crate::todo::{TodoManager, TodoStatus};

pub const INITIAL_REMINDER: &str = "<reminder>For a task with several steps, first write a plan with \
todo_write, keep exactly one item in_progress while you work on it, and mark each item completed as \
soon as it is done. Skip the plan for a one-step task.</reminder>";

#[derive(Clone, Debug)]
pub struct Reminders {
    /// Rounds without a plan update before a nag; 0 turns the nag off.
    nag_every: u32,
    rounds_since_plan: u32,
}

impl Reminders {
    pub fn new(nag_every: u32) -> Self {
        Self {
            nag_every,
            rounds_since_plan: 0,
        }
    }

    /// Called after each tool round; returns the nag text when one is due.
    pub fn after_round(&mut self, plan_updated: bool, plan: &TodoManager) -> Option<String> {
        if plan_updated {
            self.rounds_since_plan = 0;
            return None;
        }
        self.rounds_since_plan += 1;
        if self.nag_every == 0 || self.rounds_since_plan < self.nag_every {
            return None;
        }
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
    if open.is_empty() {
        return format!(
            "<reminder>{rounds} tool rounds since the last plan update, and every item is completed. \
If you are doing new work, add it to the plan with todo_write.</reminder>"
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
        let mut r = Reminders::new(3);
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
        let mut r = Reminders::new(0);
        for _ in 0..10 {
            assert_eq!(r.after_round(false, &plan), None);
        }
    }
}
