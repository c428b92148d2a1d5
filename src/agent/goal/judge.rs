//! Judging a goal by its evidence: which items are open, unverified or
//! failed, whether it is met, what the model is told to go on, and the
//! report. Pure functions of the plan, its evidence and the goal: nothing
//! here runs a command or asks a model.

use std::hash::{Hash, Hasher};

use super::GoalRun;
use crate::events::goal::ReportItem;
use crate::events::{Goal, GoalReport};
use crate::todo::{Checks, Proof, TodoItem, TodoStatus};

/// What the evidence says of the plan.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Judged {
    /// Items not completed: (number, text).
    pub open: Vec<(usize, String)>,
    /// Completed items whose check failed: (number, text, output tail).
    pub failed: Vec<(usize, String, String)>,
    /// Completed items with no check that passed and not accepted:
    /// (number, text, whether it has a check at all).
    pub unverified: Vec<(usize, String, bool)>,
    /// The plan has no item.
    pub empty: bool,
    /// A fingerprint of the plan and its evidence: unchanged means no
    /// progress.
    pub seen: u64,
}

impl Judged {
    /// Every item is completed and verified or accepted.
    pub fn items_done(&self) -> bool {
        self.open.is_empty() && self.failed.is_empty() && self.unverified.is_empty()
    }
}

/// Judges `items` by `checks`.
pub fn judge(items: &[TodoItem], checks: &Checks) -> Judged {
    let mut judged = Judged {
        empty: items.is_empty(),
        ..Judged::default()
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let proof = checks.proof(item);
        (
            &item.id,
            &item.content,
            item.status.as_str(),
            &item.scope.check,
        )
            .hash(&mut hasher);
        proof.as_str().hash(&mut hasher);
        if let Some(e) = checks.last(item) {
            (e.passed, e.exit_code, &e.tail).hash(&mut hasher);
        }
        match (item.status, proof) {
            (TodoStatus::Completed, Proof::Verified | Proof::Accepted) => {}
            (TodoStatus::Completed, Proof::Failed) => {
                let tail = checks
                    .last(item)
                    .map(|e| e.tail.clone())
                    .unwrap_or_default();
                judged.failed.push((n, item.content.clone(), tail));
            }
            (TodoStatus::Completed, Proof::Unverified) => {
                judged
                    .unverified
                    .push((n, item.content.clone(), item.scope.check.is_some()));
            }
            _ => judged.open.push((n, item.content.clone())),
        }
    }
    judged.seen = hasher.finish();
    judged
}

/// The message that starts work on `goal`.
pub fn first_prompt(goal: &Goal) -> String {
    let check = match &goal.check {
        Some(check) => format!(" The goal's own check is `{check}`: it must pass too."),
        None => String::new(),
    };
    format!(
        "{}\n\n[This is a goal: Waypoint keeps you working on it until the evidence says it is met. \
Write a plan with todo_write, and give each item a `check`: a command whose success proves the item done \
(`cargo test -p parser`, `test -f dist/app`). An item is accepted as completed only when its check passes.{check}]",
        goal.text.trim()
    )
}

/// What the model reads when it stopped and the goal is not met.
pub fn go_on_note(goal: &Goal, judged: &Judged, goal_check: Option<&str>) -> String {
    let mut lines = vec![format!(
        "[The goal is not met yet; Waypoint keeps you going: {}]",
        goal.text.trim()
    )];
    if judged.empty {
        lines.push(
            "There is no plan: write one with todo_write, each item with a `check` command that proves it done."
                .into(),
        );
    }
    if !judged.open.is_empty() {
        lines.push(format!("Open items: {}.", numbered(&judged.open)));
    }
    for (n, content, tail) in &judged.failed {
        lines.push(format!("Item {n} \"{content}\": its check failed:\n{tail}"));
    }
    if !judged.unverified.is_empty() {
        let list: Vec<(usize, String)> = judged
            .unverified
            .iter()
            .map(|(n, c, _)| (*n, c.clone()))
            .collect();
        lines.push(format!(
            "Completed without evidence: {}. Give each a `check` command with todo_write (it runs then), or ask the user to accept it.",
            numbered(&list)
        ));
    }
    if let Some(output) = goal_check {
        lines.push(format!("The goal's own check failed:\n{output}"));
    }
    lines.push("Go on with the work; do not stop until the evidence shows it done.".into());
    lines.join("\n")
}

fn numbered(items: &[(usize, String)]) -> String {
    items
        .iter()
        .map(|(n, c)| format!("{n}. {c}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The goal's report as the plan stands.
pub fn report(run: &GoalRun, items: &[TodoItem], checks: &Checks) -> GoalReport {
    GoalReport {
        goal: run.goal.clone(),
        state: run.state,
        reason: run.reason.clone(),
        spent: run.spent,
        items: items
            .iter()
            .map(|item| ReportItem {
                id: item.id.clone(),
                content: item.content.clone(),
                status: item.status,
                evidence: checks.proof(item).as_str().to_string(),
                check: checks.last(item).cloned(),
            })
            .collect(),
        check: run.check.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::todo::Evidence;
    use crate::todo::evidence::tests::item;

    #[test]
    fn only_evidence_makes_items_done() {
        let mut checks = Checks::default();
        let items = vec![
            item("1", TodoStatus::Completed, Some("true")),
            item("2", TodoStatus::Completed, None),
            item("3", TodoStatus::Pending, None),
        ];
        let judged = judge(&items, &checks);
        assert_eq!(judged.open, [(3, "item 3".to_string())]);
        assert_eq!(judged.unverified.len(), 2);
        assert!(!judged.items_done());
        checks.record(Evidence {
            item: "1".into(),
            command: "true".into(),
            passed: true,
            ..Evidence::default()
        });
        checks.accept("2");
        let later = judge(&items[..2], &checks);
        assert!(later.items_done(), "{later:?}");
        assert_ne!(later.seen, judged.seen);
        let note = go_on_note(&Goal::default(), &judged, None);
        assert!(note.contains("Open items: 3. item 3"), "{note}");
    }
}
