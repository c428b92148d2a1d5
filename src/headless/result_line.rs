//! How a headless run ended: the process exit code, and the `result` line
//! that ends `--output-format jsonl` (typed, so the events reference shows
//! its fields from this type).

use serde::Serialize;

use crate::chat::Usage;

/// How a headless run ended, and the process exit code that says so.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The task is done (exit code 0).
    Completed,
    /// The model stopped with plan items still open (exit code 4).
    OpenItems,
    /// In plan mode the model proposed a plan, which waits for approval
    /// (`waypoint -r ID -p --approve-plan`; exit code 5).
    PlanProposed,
    /// The turn failed: a setting, the API, the network (exit code 1).
    Failed,
    /// The turn hit `max_turns` model requests (exit code 3).
    MaxTurns,
    /// Ctrl+C twice (exit code 130).
    Interrupted,
    /// SIGTERM: the running tool was stopped (exit code 143).
    Terminated,
    /// SIGHUP (the terminal went away): the running tool was stopped
    /// (exit code 129).
    HungUp,
    /// The goal stopped without being met: no progress, or no evidence
    /// (exit code 4).
    #[serde(rename = "unmet")]
    GoalUnmet,
    /// The goal's budget ran out before it was met (exit code 6).
    BudgetLimited,
}

impl Outcome {
    /// The name the jsonl `result` line gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::OpenItems => "open_items",
            Outcome::PlanProposed => "plan_proposed",
            Outcome::Failed => "failed",
            Outcome::MaxTurns => "max_turns",
            Outcome::Interrupted => "interrupted",
            Outcome::Terminated => "terminated",
            Outcome::HungUp => "hung_up",
            Outcome::GoalUnmet => "unmet",
            Outcome::BudgetLimited => "budget_limited",
        }
    }

    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Completed => 0,
            Outcome::OpenItems => 4,
            Outcome::PlanProposed => 5,
            Outcome::Failed => 1,
            Outcome::MaxTurns => 3,
            Outcome::Interrupted => 130,
            Outcome::Terminated => 143,
            Outcome::HungUp => 129,
            Outcome::GoalUnmet => 4,
            Outcome::BudgetLimited => 6,
        }
    }
}

/// The last line of `--output-format jsonl` (`"type": "result"`): how the
/// run ended and what it cost. It has no envelope.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename = "result")]
pub struct ResultLine {
    /// How the run ended.
    pub exit_reason: Outcome,
    /// The process's exit code (the same as `exit_reason` says).
    pub exit_code: i32,
    /// The session's id (`waypoint -r ID` continues it); null when none
    /// was recorded.
    pub session_id: Option<String>,
    /// The plan's items at the end, completed and in all.
    pub plan: PlanProgress,
    /// What became of the items the user approved (plan mode); left out
    /// when no plan was approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementProgress>,
    /// The goal's report (`--goal`): its state, each item's evidence,
    /// what it spent against its budget, what is left; left out without
    /// a goal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<crate::events::GoalReport>,
    /// Every model request's tokens, all models together.
    pub usage: Usage,
    /// What the run cost in US dollars; null when a model's price is not
    /// known.
    pub cost_usd: Option<f64>,
    /// The run's wall time in milliseconds.
    pub duration_ms: u64,
}

/// The `result` line's JSON schema, for the events reference.
pub fn result_schema() -> serde_json::Value {
    crate::events::schema::schema_of::<ResultLine>()
}

/// The plan's items at the end of a run.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanProgress {
    /// Items completed.
    pub completed: usize,
    /// Items in the plan.
    pub total: usize,
}

/// What became of the approved plan's items (with the changes accepted
/// since) by the end of a run.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AgreementProgress {
    /// Approved items completed.
    pub done: usize,
    /// Approved items no longer in the plan.
    pub dropped: usize,
    /// Approved items still open.
    pub open: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_line_says_its_outcome_by_name() {
        for outcome in [
            Outcome::Completed,
            Outcome::OpenItems,
            Outcome::Failed,
            Outcome::MaxTurns,
            Outcome::Interrupted,
            Outcome::Terminated,
            Outcome::HungUp,
        ] {
            let json = serde_json::to_value(outcome).unwrap_or_default();
            assert_eq!(json, outcome.as_str());
        }
        let line = ResultLine {
            exit_reason: Outcome::OpenItems,
            exit_code: 4,
            session_id: None,
            plan: PlanProgress {
                completed: 1,
                total: 2,
            },
            agreement: None,
            goal: None,
            usage: Usage::default(),
            cost_usd: None,
            duration_ms: 5,
        };
        let json = serde_json::to_value(line).unwrap_or_default();
        // Without an approved plan there is nothing to say about one.
        assert!(json.get("agreement").is_none());
        assert_eq!(json["type"], "result");
        assert_eq!(json["exit_reason"], "open_items");
        assert_eq!(json["plan"]["total"], 2);
        assert_eq!(json["cost_usd"], serde_json::Value::Null);
    }
}
