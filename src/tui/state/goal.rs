//! The session's goal as the screen shows it (issue 46): the goal the user
//! set, its state and last report, and each plan item's evidence, folded
//! from the engine's `GoalSet`, `GoalUpdated`, `GoalBudget` and
//! `ItemChecked` events (a resumed session's history replays them, so the
//! goal comes back with it). Invariant: nothing here is judged by the
//! app: an item's mark is what its last check (by id and exact command)
//! or the user's acceptance says, as the engine's `Checks` would.

use crate::events::{Event, Goal, GoalReport, GoalState};
use crate::todo::{Checks, Evidence, Proof, TodoItem, TodoStatus};

/// The goal and the plan's evidence.
#[derive(Debug, Default)]
pub struct GoalView {
    /// The goal the user set (none: no goal in this session).
    pub goal: Option<Goal>,
    /// Where it is (`Active` from its `GoalSet` until a report says else).
    pub state: Option<GoalState>,
    /// The engine's last account of it.
    pub report: Option<GoalReport>,
    /// The last budget warning: the share spent (percent) and the limit.
    pub warned: Option<(u32, String)>,
    /// Each item's last check, the items the user accepted.
    checks: Checks,
    /// The goal's own check's last run.
    pub own_check: Option<Evidence>,
    /// The last `GoalUpdated` changed the goal's state (the conversation
    /// says so; a report of the same state is not news).
    pub changed: bool,
}

impl GoalView {
    /// Takes the goal's part of an engine event.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::GoalSet { goal } => {
                self.goal = Some(goal.clone());
                self.state = Some(GoalState::Active);
                self.report = None;
                self.warned = None;
                self.own_check = None;
            }
            Event::GoalUpdated { report } => {
                self.changed = self.state != Some(report.state);
                self.goal = Some(report.goal.clone());
                self.state = Some(report.state);
                if report.check.is_some() {
                    self.own_check.clone_from(&report.check);
                }
                self.report = Some(report.clone());
            }
            Event::GoalBudget { share, limit } => self.warned = Some((*share, limit.clone())),
            Event::ItemChecked { evidence, .. } if evidence.item.is_empty() => {
                self.own_check = Some(evidence.clone());
            }
            // No command: the user accepted the item without evidence.
            Event::ItemChecked { evidence, .. } if evidence.command.is_empty() => {
                self.checks.accept(&evidence.item);
            }
            Event::ItemChecked { evidence, .. } => self.checks.record(evidence.clone()),
            _ => {}
        }
    }

    /// A goal is set and not cleared (whatever its state).
    pub fn is_set(&self) -> bool {
        self.goal.is_some()
    }

    /// The goal is being worked on.
    pub fn active(&self) -> bool {
        self.state == Some(GoalState::Active)
    }

    /// `goal: active`, `goal met`, `goal budget-limited` (none without a goal).
    pub fn label(&self) -> Option<String> {
        let state = self.state.filter(|_| self.goal.is_some())?;
        Some(match state {
            GoalState::Active | GoalState::Paused => format!("goal: {state}"),
            ended => format!("goal {ended}"),
        })
    }

    /// The mark `item` shows: none for a plain plan (no goal, no check)
    /// or an open item that no check failed.
    pub fn mark(&self, item: &TodoItem) -> Option<Proof> {
        if !self.is_set() && item.scope.check.is_none() && !self.accepted(item) {
            return None;
        }
        let proof = self.checks.proof(item);
        match (proof, item.status) {
            (Proof::Failed, _) => Some(proof),
            (_, TodoStatus::Completed) => Some(proof),
            _ => None,
        }
    }

    /// The last run of `item`'s current check.
    pub fn last(&self, item: &TodoItem) -> Option<&Evidence> {
        self.checks.last(item)
    }

    fn accepted(&self, item: &TodoItem) -> bool {
        self.checks.accepted().any(|id| *id == item.id)
    }

    /// The goal was cleared, or another session began: nothing is set.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// A goal's report in a few lines: its state and why, each item with its
/// evidence, the goal's own check, spent against the budget, what is left.
pub fn report_text(report: &GoalReport) -> String {
    let clean = |t: &str| crate::text::clean_line(t).into_owned();
    let mut out = format!("Goal {}: {}", report.state, clean(&report.goal.text));
    if let Some(reason) = &report.reason {
        out.push_str(&format!(" ({})", clean(reason)));
    }
    for (n, item) in report.items.iter().enumerate() {
        let evidence = match (&item.check, item.status) {
            (_, s) if s != TodoStatus::Completed && item.evidence != "failed" => "open".to_string(),
            (Some(e), _) if !e.command.is_empty() => format!("{} · {}", item.evidence, ran(e)),
            _ => item.evidence.clone(),
        };
        out.push_str(&format!(
            "\n  {} {}. {} — {evidence}",
            match item.evidence.as_str() {
                "verified" | "accepted" => "✓",
                "failed" => "✗",
                _ if item.status == TodoStatus::Completed => "?",
                _ => "·",
            },
            n + 1,
            clean(&item.content)
        ));
    }
    if let Some(e) = &report.check {
        out.push_str(&format!("\n  goal check: {}", ran(e)));
    }
    let s = &report.spent;
    out.push_str(&format!(
        "\nSpent: {} tokens, ${:.2}, {}, {}",
        crate::units::tokens(s.tokens),
        s.cost_usd,
        crate::units::duration(s.seconds),
        crate::units::plural(s.turns as usize, "turn")
    ));
    if !report.goal.budget.is_empty() {
        out.push_str(&format!(" of {}", report.goal.budget.describe()));
    }
    out.push('.');
    let left = report.left();
    if !left.is_empty() {
        let left: Vec<String> = left.iter().map(|t| clean(t)).collect();
        out.push_str(&format!("\nLeft: {}.", left.join("; ")));
    }
    out
}

/// `` `cargo test` exit 0, 2.1 s: last line ``.
pub fn ran(e: &Evidence) -> String {
    let code = e
        .exit_code
        .map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
    let last = e.tail.lines().last().map(crate::text::clean_line);
    let last = last.filter(|l| !l.trim().is_empty());
    format!(
        "`{}` {code}, {:.1} s{}",
        crate::text::clean_line(&e.command),
        e.duration_ms as f64 / 1000.0,
        last.map(|l| format!(": {}", l.trim())).unwrap_or_default()
    )
}

/// The short mark of a proof in the plan pane.
pub fn mark_text(proof: Proof) -> &'static str {
    match proof {
        Proof::Verified => "✓ verified",
        Proof::Accepted => "accepted",
        Proof::Failed => "✗ check failed",
        Proof::Unverified => "unverified",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::todo::evidence::tests::item;

    fn checked(id: &str, command: &str, passed: bool) -> Event {
        Event::ItemChecked {
            n: 1,
            evidence: Evidence {
                item: id.into(),
                command: command.into(),
                passed,
                exit_code: Some(i32::from(!passed)),
                ..Evidence::default()
            },
        }
    }

    #[test]
    fn a_plain_plan_has_no_marks_and_a_goal_shows_them() {
        let mut view = GoalView::default();
        let done = item("1", TodoStatus::Completed, None);
        assert_eq!(view.mark(&done), None);
        assert_eq!(view.label(), None);
        view.apply(&Event::GoalSet {
            goal: Goal {
                text: "ship it".into(),
                ..Goal::default()
            },
        });
        assert_eq!(view.label().as_deref(), Some("goal: active"));
        assert_eq!(view.mark(&done), Some(Proof::Unverified));
        assert_eq!(view.mark(&item("2", TodoStatus::Pending, None)), None);
        // Accepted without evidence: an ItemChecked without a command.
        view.apply(&checked("1", "", true));
        assert_eq!(view.mark(&done), Some(Proof::Accepted));
    }

    #[test]
    fn an_items_check_marks_it_by_its_last_run() {
        let mut view = GoalView::default();
        let open = item("3", TodoStatus::InProgress, Some("make test"));
        assert_eq!(view.mark(&open), None);
        view.apply(&checked("3", "make test", false));
        assert_eq!(view.mark(&open), Some(Proof::Failed));
        assert_eq!(view.last(&open).unwrap().exit_code, Some(1));
        view.apply(&checked("3", "make test", true));
        let done = item("3", TodoStatus::Completed, Some("make test"));
        assert_eq!(view.mark(&done), Some(Proof::Verified));
        // Completed with a check that never ran: unverified, goal or not.
        let other = item("4", TodoStatus::Completed, Some("make lint"));
        assert_eq!(view.mark(&other), Some(Proof::Unverified));
    }
}
