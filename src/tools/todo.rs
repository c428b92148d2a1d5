//! `todo_write` and `todo_read`: the plan tools. STUB (helper A).

use serde_json::Value;

use super::ToolOutput;
use crate::todo::{PlanDiff, TodoManager};

/// Applies a `todo_write` call. On success returns the rendered plan and the diff.
pub fn todo_write(plan: &mut TodoManager, input: &Value) -> (ToolOutput, Option<PlanDiff>) {
    let _ = (plan, input);
    (ToolOutput::error("not implemented"), None)
}

/// Answers a `todo_read` call.
pub fn todo_read(plan: &TodoManager) -> ToolOutput {
    ToolOutput::ok(plan.render())
}
