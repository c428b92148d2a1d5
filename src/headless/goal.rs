//! A goal in headless mode (`waypoint -p --goal TEXT`): its lines on
//! stderr (set, budget warnings, each check's evidence, its end with the
//! report), the run's outcome as the goal's state says it (met: 0, unmet:
//! 4, budget-limited: 6), and the report for the `result` line.

use std::io::{self, Write};

use super::Printer;
use super::result_line::Outcome;
use crate::events::{Event, GoalReport, GoalState};
use crate::text::clean_line;

/// The run's outcome, as the goal's last report says it: a goal that
/// ended decides; otherwise the turn's own outcome stands.
pub(super) fn outcome(goal: Option<&GoalReport>, turn: Outcome) -> Outcome {
    match goal.map(|g| g.state) {
        Some(GoalState::Met) => Outcome::Completed,
        Some(GoalState::Unmet) => Outcome::GoalUnmet,
        Some(GoalState::BudgetLimited) => Outcome::BudgetLimited,
        _ => turn,
    }
}

impl<O: Write, E: Write> Printer<O, E> {
    /// A goal event's lines on `err` (text format), and the last report
    /// kept for the outcome and the `result` line.
    pub(super) fn goal_event(&mut self, event: &Event, text: bool) -> io::Result<()> {
        match event {
            Event::GoalUpdated { report } => {
                if text && report.state.ended() {
                    for line in report.lines() {
                        writeln!(self.err, "waypoint: {line}")?;
                    }
                } else if text {
                    writeln!(
                        self.err,
                        "waypoint: goal {}{}",
                        report.state,
                        report
                            .reason
                            .as_deref()
                            .map(|r| format!(": {}", clean_line(r)))
                            .unwrap_or_default()
                    )?;
                }
                self.goal = Some(report.clone());
            }
            Event::GoalSet { goal } if text => {
                let budget = match goal.budget.is_empty() {
                    true => String::new(),
                    false => format!(" (budget: {})", goal.budget.describe()),
                };
                writeln!(
                    self.err,
                    "waypoint: goal set: {}{budget}",
                    clean_line(&goal.text)
                )?;
            }
            Event::GoalBudget { share, limit } if text => {
                writeln!(
                    self.err,
                    "waypoint: goal budget: {share}% of its {limit} spent"
                )?;
            }
            Event::ItemChecked { n, evidence } if text => {
                let how = match (evidence.command.is_empty(), evidence.passed) {
                    (true, _) => "accepted by the user without evidence".to_string(),
                    (false, true) => format!("`{}` passed", clean_line(&evidence.command)),
                    (false, false) => format!(
                        "`{}` failed (exit {})",
                        clean_line(&evidence.command),
                        evidence
                            .exit_code
                            .map_or_else(|| "none".to_string(), |c| c.to_string())
                    ),
                };
                writeln!(self.err, "waypoint: check of item {n}: {how}")?;
            }
            _ => {}
        }
        Ok(())
    }
}
