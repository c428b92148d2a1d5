//! The plan store: the current list and the id counter. Invariant: the
//! stored list always satisfies every rule; a refused update changes nothing.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

use super::parse::{
    Draft, check_count, check_list, content_key, draft, label, one_line, todo_values,
};
use super::{PlanDiff, PlanError, TodoItem, TodoStatus};

#[derive(Clone, Debug, Default)]
pub struct TodoManager {
    items: Vec<TodoItem>,
    /// Last id handed out by the counter; fresh ids are `next_id + 1`, ….
    next_id: u64,
}

impl TodoManager {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a manager from a stored list, checking every rule (and that
    /// every id is non-empty). Text is trimmed. Fresh ids continue after the
    /// largest numeric id in the list.
    pub fn restore(items: Vec<TodoItem>) -> Result<TodoManager, PlanError> {
        check_count(items.len())?;
        let mut stored = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let content = item.content.trim().to_string();
            if content.is_empty() {
                return Err(PlanError(format!(
                    "{}: \"content\" is empty",
                    label(i, None)
                )));
            }
            one_line("content", &content, &label(i, None))?;
            let active_form = item.active_form.trim().to_string();
            if active_form.is_empty() {
                return Err(PlanError(format!(
                    "{}: \"activeForm\" is empty",
                    label(i, Some(&content))
                )));
            }
            one_line("activeForm", &active_form, &label(i, Some(&content)))?;
            let id = item.id.trim().to_string();
            if id.is_empty() {
                return Err(PlanError(format!(
                    "{}: \"id\" is empty",
                    label(i, Some(&content))
                )));
            }
            stored.push(TodoItem {
                id,
                content,
                status: item.status,
                active_form,
                scope: item.scope,
            });
        }
        check_list(
            stored
                .iter()
                .map(|i| (Some(i.id.as_str()), i.content.as_str(), i.status)),
        )?;
        let next_id = highest_numeric_id(&stored);
        Ok(TodoManager {
            items: stored,
            next_id,
        })
    }

    pub fn items(&self) -> &[TodoItem] {
        &self.items
    }

    /// Replaces the whole list with `todos` if it satisfies every rule, and
    /// returns what changed; otherwise returns why it was refused and leaves
    /// the list as it was.
    pub fn update(&mut self, todos: &Value) -> Result<PlanDiff, PlanError> {
        let raw = todo_values(todos)?;
        check_count(raw.len())?;
        let drafts = raw
            .iter()
            .enumerate()
            .map(|(i, v)| draft(i, v))
            .collect::<Result<Vec<_>, _>>()?;
        check_list(
            drafts
                .iter()
                .map(|d| (d.id.as_deref(), d.content.as_str(), d.status)),
        )?;
        let (items, next_id) = self.assign_ids(drafts, true);
        let diff = PlanDiff::between(&self.items, &items);
        self.items = items;
        self.next_id = next_id;
        Ok(diff)
    }

    /// Replaces the list with `items` (already checked against the rules),
    /// giving items without an id a fresh one; returns what changed.
    pub(super) fn replace_with(&mut self, items: Vec<TodoItem>) -> PlanDiff {
        let drafts = items
            .into_iter()
            .map(|i| Draft {
                id: (!i.id.is_empty()).then_some(i.id),
                content: i.content,
                status: i.status,
                active_form: i.active_form,
                scope: i.scope,
            })
            .collect();
        let (items, next_id) = self.assign_ids(drafts, false);
        let diff = PlanDiff::between(&self.items, &items);
        self.items = items;
        self.next_id = next_id;
        diff
    }

    /// Settles each draft's identity against the old list, then its id.
    /// Identity, strongest first: the old item with the same text (an
    /// exact match wins over a model id whose old text is dissimilar, so
    /// ids given by position cannot swap items); the old item with the
    /// draft's id and similar text; the old item in its place with similar
    /// text; any old item with similar text; the old item with the draft's
    /// id, whatever its text. A draft matched keeps its old item's id; a
    /// new one gets its given id unless an old or kept item has it, else a
    /// fresh counter id that clashes with nothing in the old or new list.
    fn assign_ids(&self, drafts: Vec<Draft>, keep_checks: bool) -> (Vec<TodoItem>, u64) {
        let old = &self.items;
        let matched = identities(old, &drafts);
        let old_ids: HashSet<&str> = old.iter().map(|i| i.id.as_str()).collect();
        let mut used: HashSet<String> = matched
            .iter()
            .flatten()
            .map(|&o| old[o].id.clone())
            .collect();
        // Ids the model gave new items, where nothing old or kept has them.
        let mut ids: Vec<Option<String>> = Vec::with_capacity(drafts.len());
        for (d, m) in drafts.iter().zip(&matched) {
            let id = match m {
                Some(o) => Some(old[*o].id.clone()),
                None => {
                    d.id.clone()
                        .filter(|id| !old_ids.contains(id.as_str()) && !used.contains(id))
                }
            };
            if let Some(id) = &id {
                used.insert(id.clone());
            }
            ids.push(id);
        }
        let mut next_id = self.next_id;
        let mut items = Vec::with_capacity(drafts.len());
        for (mut d, id) in drafts.into_iter().zip(ids) {
            let id = id.unwrap_or_else(|| {
                let id = loop {
                    next_id = next_id.wrapping_add(1);
                    let candidate = next_id.to_string();
                    if !used.contains(&candidate) && !old_ids.contains(candidate.as_str()) {
                        break candidate;
                    }
                };
                used.insert(id.clone());
                id
            });
            // A write that leaves an item's check out keeps it (models
            // do not repeat every field); a user's whole list says it all.
            if keep_checks && d.scope.check.is_none() {
                d.scope.check = self
                    .items
                    .iter()
                    .find(|old| old.id == id)
                    .and_then(|old| old.scope.check.clone());
            }
            items.push(TodoItem {
                id,
                content: d.content,
                status: d.status,
                active_form: d.active_form,
                scope: d.scope,
            });
        }
        // Numeric ids the model chose also advance the counter, so an id is
        // never handed out again after its item is gone.
        let highest = highest_numeric_id(&items);
        (items, next_id.max(highest))
    }

    /// One line per item (`[x]` completed, `[>] … <- activeForm` in progress,
    /// `[ ]` pending; an item's declared `files` and `commands` indented
    /// under it), a blank line and `(k/n completed)`; `No todos.` when empty.
    pub fn render(&self) -> String {
        if self.items.is_empty() {
            return String::from("No todos.");
        }
        let mut out = String::new();
        for item in &self.items {
            let _ = match item.status {
                TodoStatus::Completed => writeln!(out, "[x] {}", item.content),
                TodoStatus::InProgress => {
                    writeln!(out, "[>] {} <- {}", item.content, item.active_form)
                }
                TodoStatus::Pending => writeln!(out, "[ ] {}", item.content),
            };
            let scope = &item.scope;
            if !scope.files.is_empty() {
                let _ = writeln!(out, "    files: {}", scope.files.join(", "));
            }
            if !scope.commands.is_empty() {
                let _ = writeln!(out, "    commands: {}", scope.commands.join(", "));
            }
            if let Some(check) = &scope.check {
                let _ = writeln!(out, "    check: {check}");
            }
        }
        let _ = write!(
            out,
            "\n({}/{} completed)",
            self.completed_count(),
            self.items.len()
        );
        out
    }

    pub fn in_progress(&self) -> Option<&TodoItem> {
        self.items
            .iter()
            .find(|i| i.status == TodoStatus::InProgress)
    }
    pub fn open_items(&self) -> Vec<&TodoItem> {
        self.items
            .iter()
            .filter(|i| i.status != TodoStatus::Completed)
            .collect()
    }
    pub fn completed_count(&self) -> usize {
        self.items.len() - self.open_items().len()
    }
}

/// One identity pass: for draft `i`, the old item it is, given which old
/// items are taken already.
type Pick<'a> = dyn Fn(usize, &Draft, &[bool]) -> Option<usize> + 'a;

/// For each draft, the old item it is (see `assign_ids`), each old item
/// claimed at most once, in passes from the strongest evidence down.
fn identities(old: &[TodoItem], drafts: &[Draft]) -> Vec<Option<usize>> {
    let by_content: HashMap<String, usize> = old
        .iter()
        .enumerate()
        .map(|(i, item)| (content_key(&item.content), i))
        .collect();
    let by_id: HashMap<&str, usize> = old
        .iter()
        .enumerate()
        .map(|(i, item)| (item.id.as_str(), i))
        .collect();
    let id_of = |d: &Draft| d.id.as_deref().and_then(|id| by_id.get(id).copied());
    let similar = |o: usize, d: &Draft| similar_text(&old[o].content, &d.content);
    let mut matched: Vec<Option<usize>> = vec![None; drafts.len()];
    let mut taken = vec![false; old.len()];
    let mut pass = |pick: &Pick| {
        for (i, d) in drafts.iter().enumerate() {
            if matched[i].is_none()
                && let Some(o) = pick(i, d, &taken)
            {
                matched[i] = Some(o);
                taken[o] = true;
            }
        }
    };
    pass(&|_, d, taken| {
        by_content
            .get(&content_key(&d.content))
            .copied()
            .filter(|&o| !taken[o])
    });
    pass(&|_, d, taken| id_of(d).filter(|&o| !taken[o] && similar(o, d)));
    pass(&|i, d, taken| (i < old.len() && !taken[i] && similar(i, d)).then_some(i));
    pass(&|_, d, taken| (0..old.len()).find(|&o| !taken[o] && similar(o, d)));
    pass(&|_, d, taken| id_of(d).filter(|&o| !taken[o]));
    matched
}

/// Whether two items' texts are close enough to be one item reworded: the
/// Dice coefficient of their words (case ignored) is at least 0.6, so
/// "Write tests" → "Write the unit tests" is one item and "Read code" →
/// "Write code" is not.
pub(super) fn similar_text(a: &str, b: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, mut b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let total = a.len() + b.len();
    let mut common = 0;
    for w in &a {
        if let Some(at) = b.iter().position(|x| x == w) {
            b.swap_remove(at);
            common += 1;
        }
    }
    common * 2 * 10 >= total * 6
}

/// The largest id that is a number (0 when none is): fresh ids go above it.
fn highest_numeric_id(items: &[TodoItem]) -> u64 {
    items
        .iter()
        .filter_map(|i| i.id.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::todo::test_helpers::*;
    use serde_json::json;

    #[test]
    fn ids_given_by_the_model_are_never_handed_out_again() {
        let mut m = TodoManager::new();
        let mut a = item("A", "pending");
        a["id"] = json!("2");
        m.update(&plan(&[a])).unwrap();
        m.update(&plan(&[item("B", "pending")])).unwrap();
        let b = m.items()[0].id.clone();
        assert_ne!(b, "2");
        m.update(&plan(&[item("C", "pending")])).unwrap();
        let c = &m.items()[0].id;
        assert!(c != "2" && *c != b, "C got a used id {c}");
    }

    #[test]
    fn accepts_a_valid_list_and_trims_text() {
        let mut m = TodoManager::new();
        let v = json!([{"content": "  Run tests ", "activeForm": " Running tests\n", "status": "pending"}]);
        m.update(&v).unwrap();
        assert_eq!(
            m.items(),
            &[TodoItem {
                id: "1".into(),
                content: "Run tests".into(),
                status: TodoStatus::Pending,
                active_form: "Running tests".into(),
                scope: Default::default(),
            }]
        );
    }

    #[test]
    fn empty_list_clears_the_plan() {
        let mut m = three();
        let diff = m.update(&json!([])).unwrap();
        assert!(m.items().is_empty());
        assert_eq!(m.render(), "No todos.");
        assert_eq!(diff.removed, vec!["Read code", "Write code", "Run tests"]);
        assert!(diff.added.is_empty());
    }

    #[test]
    fn ids_are_stable_across_updates() {
        let mut m = three();
        let ids: Vec<String> = m.items().iter().map(|i| i.id.clone()).collect();
        assert_eq!(ids, vec!["1", "2", "3"]);
        // Reordered, one removed, one added, one given an explicit id.
        let mut given = item("New thing", "pending");
        given["id"] = json!("custom");
        m.update(&plan(&[
            item("Run tests", "pending"),
            given,
            item("Write code", "completed"),
            item("Other", "pending"),
        ]))
        .unwrap();
        let got: Vec<(&str, &str)> = m
            .items()
            .iter()
            .map(|i| (i.id.as_str(), i.content.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("3", "Run tests"),
                ("custom", "New thing"),
                ("2", "Write code"),
                ("4", "Other")
            ]
        );
        // Removed "1" is never handed out again; "Read code" comes back with a fresh id.
        m.update(&plan(&[item("Read code", "pending")])).unwrap();
        assert_eq!(m.items()[0].id, "5");
        // A model-given number id is kept as text.
        let mut n = item("Numbered", "pending");
        n["id"] = json!(42);
        m.update(&plan(&[n])).unwrap();
        assert_eq!(m.items()[0].id, "42");
    }

    #[test]
    fn inherited_and_fresh_ids_never_clash_with_given_ones() {
        let mut m = three(); // ids 1, 2, 3
        // "B" claims id "1", but "Read code" is still here by its text: the
        // text wins, and "B" (new) gets a fresh id; fresh ids skip "4"
        // because "Z" claims it.
        let mut b = item("B", "pending");
        b["id"] = json!("1");
        let mut z = item("Z", "pending");
        z["id"] = json!("4");
        m.update(&plan(&[
            b,
            item("Read code", "pending"),
            z,
            item("New", "pending"),
        ]))
        .unwrap();
        let got: Vec<(&str, &str)> = m
            .items()
            .iter()
            .map(|i| (i.id.as_str(), i.content.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![("5", "B"), ("1", "Read code"), ("4", "Z"), ("6", "New")]
        );
    }

    #[test]
    fn positional_ids_do_not_swap_items() {
        let with_id = |id: u32, content: &str, status: &str| {
            let mut v = item(content, status);
            v["id"] = json!(id.to_string());
            v
        };
        let mut m = TodoManager::new();
        m.update(&plan(&[
            with_id(1, "Step alpha", "pending"),
            with_id(2, "Step bravo", "pending"),
            with_id(3, "Step charlie", "pending"),
        ]))
        .unwrap();
        // The model numbers by position: "Step charlie" is now id 2.
        let d = m
            .update(&plan(&[
                with_id(1, "Step alpha", "completed"),
                with_id(2, "Step charlie", "in_progress"),
            ]))
            .unwrap();
        assert_eq!(d.dropped, vec!["Step bravo"]);
        assert_eq!(d.removed, vec!["Step bravo"]);
        assert!(d.reworded.is_empty(), "{d:?}");
        assert_eq!(d.started, vec!["Step charlie"]);
        assert_eq!(m.items()[1].id, "3", "charlie keeps its identity");
        assert_eq!(
            d.summary(),
            "-1 removed, ✗ \"Step bravo\" dropped, ✓ \"Step alpha\" completed, ▶ \"Step charlie\" started"
        );
        // A reworded and moved item keeps its identity by similar text.
        let d = m
            .update(&plan(&[
                with_id(1, "Step charlie again", "in_progress"),
                with_id(2, "Step alpha", "completed"),
            ]))
            .unwrap();
        assert!(d.dropped.is_empty() && d.removed.is_empty(), "{d:?}");
        assert_eq!(d.reworded.len(), 1, "{d:?}");
    }

    #[test]
    fn refusal_leaves_previous_list_and_counter_untouched() {
        let mut m = three();
        let before = m.items().to_vec();
        let rendered = m.render();
        assert!(
            m.update(&json!([item("A", "pending"), item("B", "bogus")]))
                .is_err()
        );
        assert_eq!(m.items(), before.as_slice());
        assert_eq!(m.render(), rendered);
        m.update(&json!([item("Fresh", "pending")])).unwrap();
        assert_eq!(m.items()[0].id, "4");
    }

    #[test]
    fn render_format_is_exact() {
        let m = three();
        assert_eq!(
            m.render(),
            "[x] Read code\n[>] Write code <- Doing Write code\n[ ] Run tests\n\n(1/3 completed)"
        );
        assert_eq!(TodoManager::new().render(), "No todos.");
        assert_eq!(
            m.in_progress().map(|i| i.content.as_str()),
            Some("Write code")
        );
        assert_eq!(m.open_items().len(), 2);
        assert_eq!(m.completed_count(), 1);
    }

    #[test]
    fn restore_validates_a_stored_list() {
        let m = three();
        let restored = TodoManager::restore(m.items().to_vec()).unwrap();
        assert_eq!(restored.items(), m.items());
        let mut r = restored;
        r.update(&plan(&[item("Brand new", "pending")])).unwrap();
        assert_eq!(r.items()[0].id, "4");

        let mk = |id: &str, content: &str, status| TodoItem {
            id: id.into(),
            content: content.into(),
            status,
            active_form: format!("Doing {content}"),
            scope: Default::default(),
        };
        let two_running = vec![
            mk("1", "A", TodoStatus::InProgress),
            mk("2", "B", TodoStatus::InProgress),
        ];
        assert!(
            TodoManager::restore(two_running)
                .unwrap_err()
                .0
                .contains("both in_progress")
        );
        let dup_id = vec![
            mk("1", "A", TodoStatus::Pending),
            mk("1", "B", TodoStatus::Pending),
        ];
        assert!(
            TodoManager::restore(dup_id)
                .unwrap_err()
                .0
                .contains("both have id")
        );
        let empty_id = vec![mk(" ", "A", TodoStatus::Pending)];
        assert_eq!(
            TodoManager::restore(empty_id).unwrap_err().0,
            "item 1 (\"A\"): \"id\" is empty"
        );
        let mut blank = mk("1", "A", TodoStatus::Pending);
        blank.active_form = String::new();
        assert!(
            TodoManager::restore(vec![blank])
                .unwrap_err()
                .0
                .contains("\"activeForm\" is empty")
        );
        let too_many: Vec<TodoItem> = (0..21)
            .map(|i| mk(&i.to_string(), &format!("T{i}"), TodoStatus::Pending))
            .collect();
        assert!(TodoManager::restore(too_many).is_err());
        assert!(TodoManager::restore(vec![]).unwrap().items().is_empty());
    }
}
