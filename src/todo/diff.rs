//! What changed between two plans, matched by item id. Invariant: an item
//! is reported as added or removed only by id, never by content.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{TodoItem, TodoStatus};

/// What changed between two plans; each entry is an item's content.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub started: Vec<String>,
    pub completed: Vec<String>,
}

impl PlanDiff {
    /// Compares two plans, matching items by id. `added`/`removed` are items
    /// whose id appears only in the new/old list; `started`/`completed` are
    /// new items that are in progress/completed and were not before
    /// (including newly added ones).
    pub fn between(old: &[TodoItem], new: &[TodoItem]) -> PlanDiff {
        let old_by_id: HashMap<&str, &TodoItem> = old.iter().map(|i| (i.id.as_str(), i)).collect();
        let new_ids: HashSet<&str> = new.iter().map(|i| i.id.as_str()).collect();
        let mut diff = PlanDiff::default();
        for item in new {
            let before = old_by_id.get(item.id.as_str()).map(|i| i.status);
            if before.is_none() {
                diff.added.push(item.content.clone());
            }
            if before != Some(item.status) {
                match item.status {
                    TodoStatus::InProgress => diff.started.push(item.content.clone()),
                    TodoStatus::Completed => diff.completed.push(item.content.clone()),
                    TodoStatus::Pending => {}
                }
            }
        }
        diff.removed = old
            .iter()
            .filter(|i| !new_ids.contains(i.id.as_str()))
            .map(|i| i.content.clone())
            .collect();
        diff
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.started.is_empty()
            && self.completed.is_empty()
    }

    /// A one-line account, e.g.
    /// `+2 added, ✓ "Write code" completed, ▶ "Run tests" started`;
    /// `no changes` when empty.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.added.is_empty() {
            parts.push(format!("+{} added", self.added.len()));
        }
        if !self.removed.is_empty() {
            parts.push(format!("-{} removed", self.removed.len()));
        }
        for c in &self.completed {
            parts.push(format!("✓ {:?} completed", c));
        }
        for c in &self.started {
            parts.push(format!("▶ {:?} started", c));
        }
        if parts.is_empty() {
            String::from("no changes")
        } else {
            parts.join(", ")
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::todo::test_helpers::*;
    use crate::todo::{PlanDiff, TodoManager};

    #[test]
    fn diff_reports_added_removed_started_completed() {
        let mut m = TodoManager::new();
        let first = m
            .update(&plan(&[
                item("A", "completed"),
                item("B", "in_progress"),
                item("C", "pending"),
            ]))
            .unwrap();
        assert_eq!(first.added, vec!["A", "B", "C"]);
        assert_eq!(first.completed, vec!["A"]);
        assert_eq!(first.started, vec!["B"]);
        assert!(first.removed.is_empty());
        let diff = m
            .update(&plan(&[
                item("A", "completed"),
                item("B", "completed"),
                item("C", "in_progress"),
                item("D", "pending"),
                item("E", "pending"),
            ]))
            .unwrap();
        assert_eq!(
            diff,
            PlanDiff {
                added: vec!["D".into(), "E".into()],
                removed: vec![],
                started: vec!["C".into()],
                completed: vec!["B".into()]
            }
        );
        assert_eq!(
            diff.summary(),
            "+2 added, ✓ \"B\" completed, ▶ \"C\" started"
        );
        let diff = m.update(&plan(&[item("C", "in_progress")])).unwrap();
        assert_eq!(diff.removed, vec!["A", "B", "D", "E"]);
        assert_eq!(diff.summary(), "-4 removed");
        let same = m.update(&plan(&[item("C", "in_progress")])).unwrap();
        assert!(same.is_empty());
        assert_eq!(same.summary(), "no changes");
        // Moving back to pending is no start and no completion.
        let back = m.update(&plan(&[item("C", "pending")])).unwrap();
        assert!(back.is_empty());
    }
}
