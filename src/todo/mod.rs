//! The plan: a validated checklist the model replaces whole with `todo_write`.
//! Invariant: the stored list always satisfies every rule (≤ 20 items,
//! non-empty trimmed content and activeForm, ≤ 1 in progress, unique content,
//! unique non-empty ids); an update that breaks one is refused with a
//! [`PlanError`] naming the item and the rule, and the previous list stays.
//! Input may be a JSON array, a string holding one, or a string holding a
//! Python list literal (read by a small parser that never evaluates and never
//! panics).

mod diff;
mod edit;
mod edit_item;
pub mod evidence;
pub mod file;
pub mod forecast;
pub mod ledger;
mod parse;
mod replace;
pub mod scope_line;
mod shared;
mod store;

use serde::{Deserialize, Serialize};

pub use crate::pylit::{MAX_LITERAL_DEPTH, parse_python_literal};
pub use diff::{PlanDiff, Reworded};
pub use edit::{Author, PLAN_USAGE, PlanEdit, net_change};
pub use evidence::{Checks, Evidence, Proof};
pub use forecast::{Forecast, forecast};
pub use ledger::{ItemStats, Ledger};
pub use replace::items_in as items_in_plan_file;
pub use shared::{PlanState, SharedPlan, UserChange};
pub use store::TodoManager;

pub const MAX_ITEMS: usize = 20;

/// The longest `content` or `activeForm` (in characters) a plan item may
/// have, from the model or the user: a step is said in a line.
pub const MAX_ITEM_CHARS: usize = 500;

/// How a list of the expected shape looks; quoted in error messages.
pub const TODOS_SHAPE: &str = r#"[{"content": "Run tests", "activeForm": "Running tests", "status": "pending"}, ...] (status is pending, in_progress or completed; optional "id")"#;

#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (at most one item at a time).
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The canonical name (`pending`, `in_progress`, `completed`).
    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
        }
    }

    /// Reads a status, ignoring case and surrounding space, and accepting the
    /// aliases `not-started`/`not_started` (pending) and
    /// `in-progress`/`inprogress` (in_progress).
    pub fn parse(text: &str) -> Option<TodoStatus> {
        let norm: String = text
            .trim()
            .chars()
            .map(|c| {
                if c == '-' || c == ' ' {
                    '_'
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        match norm.as_str() {
            "pending" | "not_started" => Some(TodoStatus::Pending),
            "in_progress" | "inprogress" => Some(TodoStatus::InProgress),
            "completed" => Some(TodoStatus::Completed),
            _ => None,
        }
    }
}

impl std::fmt::Display for TodoStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// Its id, unique in the plan: it keeps it when reworded or moved.
    pub id: String,
    /// The step, in the imperative (`Run tests`).
    pub content: String,
    /// Where it is.
    pub status: TodoStatus,
    /// The step in the present tense (`Running tests`), shown while it
    /// is in progress.
    #[serde(rename = "activeForm")]
    pub active_form: String,
    /// The files and commands the item declared it needs (plan mode's
    /// item scope); the latest write's value, empty when none.
    #[serde(flatten)]
    pub scope: ItemScope,
}

// What a plan item declared it would touch: workspace-relative paths or
// globs it writes, and command prefixes it runs (matched like allow
// rules). Empty lists are left out of the serialized item. (A plain
// comment: flattened, a doc comment would become the item's schema's.)
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemScope {
    /// Workspace-relative paths or globs (`src/parser/**`) the item writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Command prefixes (`cargo test`) the item runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// A command whose success is the evidence the item is done (`cargo
    /// test -p parser`): run when the item is marked completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

impl ItemScope {
    /// Declares no files and no commands (a check is not a scope).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.commands.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// How far a list is: (completed items, all items).
pub fn progress(items: &[TodoItem]) -> (usize, usize) {
    let done = items
        .iter()
        .filter(|i| i.status == TodoStatus::Completed)
        .count();
    (done, items.len())
}

#[cfg(test)]
pub(crate) mod test_helpers {
    #![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]
    use super::*;
    use serde_json::{Value, json};

    pub(crate) fn item(content: &str, status: &str) -> Value {
        json!({"content": content, "activeForm": format!("Doing {content}"), "status": status})
    }

    pub(crate) fn plan(items: &[Value]) -> Value {
        Value::Array(items.to_vec())
    }

    pub(crate) fn err(m: &mut TodoManager, v: &Value) -> String {
        match m.update(v) {
            Err(PlanError(msg)) => msg,
            Ok(d) => panic!("expected refusal, got {d:?}"),
        }
    }

    pub(crate) fn three() -> TodoManager {
        let mut m = TodoManager::new();
        m.update(&plan(&[
            item("Read code", "completed"),
            item("Write code", "in_progress"),
            item("Run tests", "pending"),
        ]))
        .unwrap();
        m
    }
}
