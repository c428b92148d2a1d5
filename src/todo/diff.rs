//! What changed between two plans, matched by item id (the store settles
//! each item's id from its identity first: same text, then a similar text
//! or the model's id, see `TodoManager::assign_ids`, so ids given by
//! position cannot make a kept item look removed). Invariants: an item is
//! reported as added or removed only by id (an id kept with other text is
//! reworded, not new); a change of order is a reorder, never a removal;
//! every removed item that was not completed is also `dropped`.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{TodoItem, TodoStatus};

/// An item whose text changed while it kept its identity.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reworded {
    /// Its text before.
    pub from: String,
    /// Its text now.
    pub to: String,
}

/// What changed between two plans; each entry is an item's content (its
/// new content, for items still in the plan).
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDiff {
    /// Items new to the plan (by id).
    pub added: Vec<String>,
    /// Items no longer in the plan (by id).
    pub removed: Vec<String>,
    /// Items in progress now that were not before (new ones included).
    pub started: Vec<String>,
    /// Items completed now that were not before (new ones included).
    pub completed: Vec<String>,
    /// Items kept (same id) with other text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reworded: Vec<Reworded>,
    /// Items kept whose place changed relative to the others (the fewest
    /// that explain the new order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reordered: Vec<String>,
    /// Removed items that were not completed: work that disappeared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
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
            let before = old_by_id.get(item.id.as_str());
            match before {
                None => diff.added.push(item.content.clone()),
                Some(old) if old.content != item.content => diff.reworded.push(Reworded {
                    from: old.content.clone(),
                    to: item.content.clone(),
                }),
                Some(_) => {}
            }
            if before.map(|o| o.status) != Some(item.status) {
                match item.status {
                    TodoStatus::InProgress => diff.started.push(item.content.clone()),
                    TodoStatus::Completed => diff.completed.push(item.content.clone()),
                    TodoStatus::Pending => {}
                }
            }
        }
        for item in old.iter().filter(|i| !new_ids.contains(i.id.as_str())) {
            diff.removed.push(item.content.clone());
            if item.status != TodoStatus::Completed {
                diff.dropped.push(item.content.clone());
            }
        }
        diff.reordered = moved(old, new);
        diff
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.started.is_empty()
            && self.completed.is_empty()
            && self.reworded.is_empty()
            && self.reordered.is_empty()
    }

    /// Each item's change in one line, as the conversation echoes it:
    /// `▶ Write the lexer · ✓ Write the parser · + Add tests` (started,
    /// completed, added, reworded `~`, moved `↕`, dropped `✗`, removed
    /// once done `−`); each item once, by its first change in that order;
    /// `no changes` when empty.
    pub fn echo(&self) -> String {
        let mut said: Vec<&str> = Vec::new();
        let mut parts = Vec::new();
        let reworded = self.reworded.iter().map(|r| r.to.as_str());
        let removed = self
            .removed
            .iter()
            .filter(|r| !self.dropped.contains(r))
            .map(String::as_str);
        let lists: [(&str, Vec<&str>); 7] = [
            ("▶", self.started.iter().map(String::as_str).collect()),
            ("✓", self.completed.iter().map(String::as_str).collect()),
            ("+", self.added.iter().map(String::as_str).collect()),
            ("~", reworded.collect()),
            ("↕", self.reordered.iter().map(String::as_str).collect()),
            ("✗", self.dropped.iter().map(String::as_str).collect()),
            ("−", removed.collect()),
        ];
        for (mark, items) in lists {
            for item in items {
                if !said.contains(&item) {
                    said.push(item);
                    parts.push(format!("{mark} {item}"));
                }
            }
        }
        if parts.is_empty() {
            String::from("no changes")
        } else {
            parts.join(" · ")
        }
    }

    /// A one-line account, e.g.
    /// `+2 added, ✗ "Docs" dropped, ✓ "Write code" completed, ▶ "Run tests" started`;
    /// `no changes` when empty.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.added.is_empty() {
            parts.push(format!("+{} added", self.added.len()));
        }
        if !self.removed.is_empty() {
            parts.push(format!("-{} removed", self.removed.len()));
        }
        if !self.reworded.is_empty() {
            parts.push(format!("~{} reworded", self.reworded.len()));
        }
        if !self.reordered.is_empty() {
            parts.push(format!("↕{} moved", self.reordered.len()));
        }
        for c in &self.dropped {
            parts.push(format!("✗ {:?} dropped", c));
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

/// The kept items (by id) outside a longest common subsequence of the two
/// orders: the fewest items whose moving explains the new order.
fn moved(old: &[TodoItem], new: &[TodoItem]) -> Vec<String> {
    let new_ids: HashSet<&str> = new.iter().map(|i| i.id.as_str()).collect();
    let old_ids: HashSet<&str> = old.iter().map(|i| i.id.as_str()).collect();
    let a: Vec<&str> = old
        .iter()
        .map(|i| i.id.as_str())
        .filter(|id| new_ids.contains(id))
        .collect();
    let b: Vec<&TodoItem> = new
        .iter()
        .filter(|i| old_ids.contains(i.id.as_str()))
        .collect();
    if a.iter().copied().eq(b.iter().map(|i| i.id.as_str())) {
        return Vec::new();
    }
    // Plans hold at most 20 items: the quadratic table is tiny.
    let (n, m) = (a.len(), b.len());
    let mut len = vec![vec![0u8; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            len[i][j] = if a[i] == b[j].id {
                len[i + 1][j + 1].saturating_add(1)
            } else {
                len[i + 1][j].max(len[i][j + 1])
            };
        }
    }
    let mut kept = HashSet::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j].id {
            kept.insert(a[i]);
            i += 1;
            j += 1;
        } else if len[i + 1][j] >= len[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    b.iter()
        .filter(|i| !kept.contains(i.id.as_str()))
        .map(|i| i.content.clone())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::todo::test_helpers::*;
    use crate::todo::{PlanDiff, TodoManager};

    #[test]
    fn the_echo_names_each_item_once_by_its_change() {
        let mut m = TodoManager::new();
        m.update(&plan(&[
            item("Write the parser", "in_progress"),
            item("Write the lexer", "pending"),
            item("Old step", "pending"),
        ]))
        .unwrap();
        let diff = m
            .update(&plan(&[
                item("Write the parser", "completed"),
                item("Write the lexer", "in_progress"),
                item("Add tests", "pending"),
            ]))
            .unwrap();
        assert_eq!(
            diff.echo(),
            "▶ Write the lexer · ✓ Write the parser · + Add tests · ✗ Old step"
        );
        assert_eq!(PlanDiff::default().echo(), "no changes");
    }

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
                completed: vec!["B".into()],
                ..PlanDiff::default()
            }
        );
        assert_eq!(
            diff.summary(),
            "+2 added, ✓ \"B\" completed, ▶ \"C\" started"
        );
        let diff = m.update(&plan(&[item("C", "in_progress")])).unwrap();
        assert_eq!(diff.removed, vec!["A", "B", "D", "E"]);
        assert_eq!(
            diff.summary(),
            "-4 removed, ✗ \"D\" dropped, ✗ \"E\" dropped"
        );
        let same = m.update(&plan(&[item("C", "in_progress")])).unwrap();
        assert!(same.is_empty());
        assert_eq!(same.summary(), "no changes");
        // Moving back to pending is no start and no completion.
        let back = m.update(&plan(&[item("C", "pending")])).unwrap();
        assert!(back.is_empty());
    }

    use crate::todo::{Reworded, TodoItem, TodoStatus};

    fn list(spec: &[(&str, &str, char)]) -> Vec<TodoItem> {
        spec.iter()
            .map(|(id, content, st)| TodoItem {
                id: (*id).into(),
                content: (*content).into(),
                status: match st {
                    'x' => TodoStatus::Completed,
                    '>' => TodoStatus::InProgress,
                    _ => TodoStatus::Pending,
                },
                active_form: format!("Doing {content}"),
                scope: Default::default(),
            })
            .collect()
    }

    /// (case, old, new, expected: added, removed, dropped, reworded (from→to), reordered)
    type Row<'a> = (
        &'a str,
        Vec<(&'a str, &'a str, char)>,
        Vec<(&'a str, &'a str, char)>,
        (
            Vec<&'a str>,
            Vec<&'a str>,
            Vec<&'a str>,
            Vec<(&'a str, &'a str)>,
            Vec<&'a str>,
        ),
    );

    #[test]
    fn diff_table() {
        let rows: Vec<Row> = vec![
            (
                "reword keeps identity",
                vec![("1", "Write tests", ' '), ("2", "Ship", ' ')],
                vec![("1", "Write the unit tests", ' '), ("2", "Ship", ' ')],
                (
                    vec![],
                    vec![],
                    vec![],
                    vec![("Write tests", "Write the unit tests")],
                    vec![],
                ),
            ),
            (
                "a reorder is not a removal",
                vec![("1", "A", ' '), ("2", "B", ' '), ("3", "C", ' ')],
                vec![("3", "C", ' '), ("1", "A", ' '), ("2", "B", ' ')],
                (vec![], vec![], vec![], vec![], vec!["C"]),
            ),
            (
                "swapping two neighbours moves one",
                vec![("1", "A", ' '), ("2", "B", ' ')],
                vec![("2", "B", ' '), ("1", "A", ' ')],
                (vec![], vec![], vec![], vec![], vec!["A"]),
            ),
            (
                "a removed in-progress item is dropped",
                vec![("1", "A", 'x'), ("2", "B", '>'), ("3", "C", ' ')],
                vec![("1", "A", 'x'), ("3", "C", '>')],
                (vec![], vec!["B"], vec!["B"], vec![], vec![]),
            ),
            (
                "a removed completed item is not dropped",
                vec![("1", "A", 'x'), ("2", "B", ' ')],
                vec![("2", "B", ' ')],
                (vec![], vec!["A"], vec![], vec![], vec![]),
            ),
            (
                "removal and insertion around kept items keep their order",
                vec![("1", "A", ' '), ("2", "B", ' '), ("3", "C", ' ')],
                vec![("1", "A", ' '), ("4", "N", ' '), ("3", "C", ' ')],
                (vec!["N"], vec!["B"], vec!["B"], vec![], vec![]),
            ),
            (
                "nothing changed",
                vec![("1", "A", ' ')],
                vec![("1", "A", ' ')],
                (vec![], vec![], vec![], vec![], vec![]),
            ),
        ];
        for (case, old, new, (added, removed, dropped, reworded, reordered)) in rows {
            let d = PlanDiff::between(&list(&old), &list(&new));
            assert_eq!(d.added, added, "{case}: added");
            assert_eq!(d.removed, removed, "{case}: removed");
            assert_eq!(d.dropped, dropped, "{case}: dropped");
            let want: Vec<Reworded> = reworded
                .iter()
                .map(|(f, t)| Reworded {
                    from: (*f).into(),
                    to: (*t).into(),
                })
                .collect();
            assert_eq!(d.reworded, want, "{case}: reworded");
            assert_eq!(d.reordered, reordered, "{case}: reordered");
            assert_eq!(d.is_empty(), case == "nothing changed", "{case}: is_empty");
        }
    }

    #[test]
    fn rewording_without_an_id_keeps_identity_by_place_and_similar_text() {
        let mut m = TodoManager::new();
        m.update(&plan(&[
            item("Write tests", "pending"),
            item("Ship it", "pending"),
        ]))
        .unwrap();
        let ids: Vec<String> = m.items().iter().map(|i| i.id.clone()).collect();
        // Item 1 reworded in place, item 2 replaced by something unrelated.
        let d = m
            .update(&plan(&[
                item("Write the tests", "pending"),
                item("Deploy to production", "pending"),
            ]))
            .unwrap();
        assert_eq!(
            m.items()[0].id,
            ids[0],
            "similar text in place keeps the id"
        );
        assert_ne!(m.items()[1].id, ids[1], "unrelated text is a new item");
        assert_eq!(d.reworded.len(), 1);
        assert_eq!(d.added, vec!["Deploy to production"]);
        assert_eq!(d.dropped, vec!["Ship it"]);
        // A reorder keeps every id, whatever the positions.
        m.update(&plan(&[
            item("Deploy to production", "pending"),
            item("Write the tests", "pending"),
        ]))
        .unwrap();
        assert_eq!(m.items()[1].id, ids[0]);
    }
}
