//! The evidence that plan items are done (issue 46): each item's last
//! check run, which checks the user approved to run unasked, and the items
//! the user accepted without evidence. Invariants: evidence belongs to the
//! item (by id) and to the exact command that ran: a changed check is
//! unverified again until it runs; an item is `verified` only while it is
//! completed and its current check's last run passed.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{TodoItem, TodoStatus};

/// One run of a plan item's check (or of a goal's own check, whose
/// `item` is empty): the evidence the item is done.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The item's id (empty: the goal's own check).
    pub item: String,
    /// Its text when checked.
    pub content: String,
    /// The command run.
    pub command: String,
    /// Its exit code; none when it did not end by itself (timeout,
    /// interrupted, not started).
    pub exit_code: Option<i32>,
    pub passed: bool,
    pub duration_ms: u64,
    /// The last lines of its output (stdout then stderr).
    pub tail: String,
}

/// How evidence from an item's `ItemCompleting` hooks names its command.
pub const HOOK_EVIDENCE: &str = "ItemCompleting hook: ";

/// What is known of an item's completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Completed, and its check passed.
    Verified,
    /// Completed, and the user accepted it without evidence.
    Accepted,
    /// Its check's last run failed.
    Failed,
    /// Completed without a check that ran (or not completed yet).
    Unverified,
}

impl Proof {
    /// `verified`, `accepted`, `failed`, `unverified`.
    pub fn as_str(self) -> &'static str {
        match self {
            Proof::Verified => "verified",
            Proof::Accepted => "accepted",
            Proof::Failed => "failed",
            Proof::Unverified => "unverified",
        }
    }
}

/// A plan's evidence.
#[derive(Clone, Debug, Default)]
pub struct Checks {
    last: HashMap<String, Evidence>,
    /// (item id, command) pairs the user approved to run unasked.
    approved: HashSet<(String, String)>,
    accepted: HashSet<String>,
}

impl Checks {
    /// Keeps `evidence` as its item's last.
    pub fn record(&mut self, evidence: Evidence) {
        self.last.insert(evidence.item.clone(), evidence);
    }

    /// The last run of `item`'s check, if it is still its check; for an
    /// item without a check, what its `ItemCompleting` hooks proved.
    pub fn last(&self, item: &TodoItem) -> Option<&Evidence> {
        let last = self.last.get(&item.id)?;
        match item.scope.check.as_deref() {
            Some(check) => (last.command == check).then_some(last),
            None => last.command.starts_with(HOOK_EVIDENCE).then_some(last),
        }
    }

    /// What is known of `item`.
    pub fn proof(&self, item: &TodoItem) -> Proof {
        if let Some(e) = self.last(item) {
            match (e.passed, item.status) {
                (true, TodoStatus::Completed) => return Proof::Verified,
                (false, _) => return Proof::Failed,
                _ => {}
            }
        }
        if item.status == TodoStatus::Completed && self.accepted.contains(&item.id) {
            return Proof::Accepted;
        }
        Proof::Unverified
    }

    /// The user accepted `id` as done without evidence.
    pub fn accept(&mut self, id: &str) {
        self.accepted.insert(id.to_string());
    }

    /// The ids the user accepted.
    pub fn accepted(&self) -> impl Iterator<Item = &String> {
        self.accepted.iter()
    }

    /// The user approved `command` as `id`'s check: it runs unasked.
    pub fn approve(&mut self, id: &str, command: &str) {
        self.approved.insert((id.to_string(), command.to_string()));
    }

    pub fn is_approved(&self, id: &str, command: &str) -> bool {
        self.approved
            .contains(&(id.to_string(), command.to_string()))
    }
}

/// The last lines of `stdout` then `stderr`, at most `lines` of them and
/// 2,000 characters.
pub fn tail(stdout: &str, stderr: &str, lines: usize) -> String {
    let both = format!("{}\n{}", stdout.trim_end(), stderr.trim_end());
    let kept: Vec<&str> = both
        .trim()
        .lines()
        .rev()
        .take(lines)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let text = kept.join("\n");
    match text.char_indices().rev().nth(2000) {
        Some((at, _)) => format!("…{}", &text[at..]),
        None => text,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::todo::ItemScope;

    /// Item `id` (`item ID`) with `status` and `check`.
    pub(crate) fn item(id: &str, status: TodoStatus, check: Option<&str>) -> TodoItem {
        TodoItem {
            id: id.into(),
            content: format!("item {id}"),
            status,
            active_form: format!("doing {id}"),
            scope: ItemScope {
                check: check.map(str::to_string),
                ..ItemScope::default()
            },
        }
    }

    fn ran(id: &str, command: &str, passed: bool) -> Evidence {
        Evidence {
            item: id.into(),
            command: command.into(),
            passed,
            exit_code: Some(if passed { 0 } else { 1 }),
            ..Evidence::default()
        }
    }

    #[test]
    fn evidence_belongs_to_the_item_and_its_exact_check() {
        let mut checks = Checks::default();
        let done = item("1", TodoStatus::Completed, Some("cargo test"));
        assert_eq!(checks.proof(&done), Proof::Unverified);
        checks.record(ran("1", "cargo test", false));
        assert_eq!(checks.proof(&done), Proof::Failed);
        checks.record(ran("1", "cargo test", true));
        assert_eq!(checks.proof(&done), Proof::Verified);
        // Another command is another check: not verified until it runs.
        let changed = item("1", TodoStatus::Completed, Some("cargo test -p x"));
        assert_eq!(checks.proof(&changed), Proof::Unverified);
        // Open again: its old pass is not a completion.
        let open = item("1", TodoStatus::InProgress, Some("cargo test"));
        assert_eq!(checks.proof(&open), Proof::Unverified);
    }

    #[test]
    fn the_user_may_accept_an_item_without_evidence() {
        let mut checks = Checks::default();
        let done = item("2", TodoStatus::Completed, None);
        checks.accept("2");
        assert_eq!(checks.proof(&done), Proof::Accepted);
        assert_eq!(
            checks.proof(&item("2", TodoStatus::Pending, None)),
            Proof::Unverified
        );
    }

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let out = (1..=30)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let tail = tail(&out, "error: boom", 5);
        assert_eq!(tail, "line 27\nline 28\nline 29\nline 30\nerror: boom");
    }
}
