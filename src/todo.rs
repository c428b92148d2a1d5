//! The plan: a validated checklist the model replaces whole with `todo_write`.
//! Invariant: the stored list always satisfies every rule (≤ 20 items,
//! non-empty content and activeForm, ≤ 1 in progress, unique content);
//! an update that breaks one is refused and the previous list stays.
//! STUB: to be implemented (helper A).

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const MAX_ITEMS: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub id: String,
    pub content: String,
    pub status: TodoStatus,
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// What changed between two plans; each entry is an item's content.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub started: Vec<String>,
    pub completed: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

#[derive(Clone, Debug, Default)]
pub struct TodoManager {
    items: Vec<TodoItem>,
}

impl TodoManager {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn items(&self) -> &[TodoItem] {
        &self.items
    }
    pub fn update(&mut self, _todos: &Value) -> Result<PlanDiff, PlanError> {
        Err(PlanError("not implemented".into()))
    }
    pub fn render(&self) -> String {
        String::from("No todos.")
    }
    pub fn in_progress(&self) -> Option<&TodoItem> {
        self.items.iter().find(|i| i.status == TodoStatus::InProgress)
    }
    pub fn open_items(&self) -> Vec<&TodoItem> {
        self.items.iter().filter(|i| i.status != TodoStatus::Completed).collect()
    }
    pub fn completed_count(&self) -> usize {
        self.items.len() - self.open_items().len()
    }
}
