//! The plan: a validated checklist the model replaces whole with `todo_write`.
//! Invariant: the stored list always satisfies every rule (≤ 20 items,
//! non-empty trimmed content and activeForm, ≤ 1 in progress, unique content,
//! unique non-empty ids); an update that breaks one is refused with a
//! [`PlanError`] naming the item and the rule, and the previous list stays.
//! Input may be a JSON array, a string holding one, or a string holding a
//! Python list literal (read by a small parser that never evaluates and never
//! panics).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

pub use crate::pylit::{MAX_LITERAL_DEPTH, parse_python_literal};
use crate::tools::json_type;
use serde_json::Value;

pub const MAX_ITEMS: usize = 20;

/// How a list of the expected shape looks; quoted in error messages.
pub const TODOS_SHAPE: &str = r#"[{"content": "Run tests", "activeForm": "Running tests", "status": "pending"}, ...] (status is pending, in_progress or completed; optional "id")"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
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

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

#[derive(Clone, Debug, Default)]
pub struct TodoManager {
    items: Vec<TodoItem>,
    /// Last id handed out by the counter; fresh ids are `next_id + 1`, ….
    next_id: u64,
}

/// An item as read from the model, before ids are settled.
struct Draft {
    id: Option<String>,
    content: String,
    status: TodoStatus,
    active_form: String,
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
            let active_form = item.active_form.trim().to_string();
            if active_form.is_empty() {
                return Err(PlanError(format!(
                    "{}: \"activeForm\" is empty",
                    label(i, Some(&content))
                )));
            }
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
            });
        }
        check_list(
            stored
                .iter()
                .map(|i| (Some(i.id.as_str()), i.content.as_str(), i.status)),
        )?;
        let next_id = stored
            .iter()
            .filter_map(|i| i.id.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
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
        let (items, next_id) = self.assign_ids(drafts);
        let diff = PlanDiff::between(&self.items, &items);
        self.items = items;
        self.next_id = next_id;
        Ok(diff)
    }

    /// Settles ids: a model-given id wins; else the id of the old item with
    /// the same content (if no given id took it); else a fresh counter id that
    /// clashes with nothing in the old or new list.
    fn assign_ids(&self, drafts: Vec<Draft>) -> (Vec<TodoItem>, u64) {
        let mut used: HashSet<String> = drafts.iter().filter_map(|d| d.id.clone()).collect();
        let old_by_content: HashMap<String, &str> = self
            .items
            .iter()
            .map(|i| (content_key(&i.content), i.id.as_str()))
            .collect();
        let old_ids: HashSet<&str> = self.items.iter().map(|i| i.id.as_str()).collect();
        let mut next_id = self.next_id;
        let mut items = Vec::with_capacity(drafts.len());
        for d in drafts {
            let id = match d.id {
                Some(id) => id,
                None => {
                    let inherited = old_by_content
                        .get(&content_key(&d.content))
                        .filter(|id| !used.contains(**id))
                        .map(|id| id.to_string());
                    let id = inherited.unwrap_or_else(|| {
                        loop {
                            next_id = next_id.wrapping_add(1);
                            let candidate = next_id.to_string();
                            if !used.contains(&candidate) && !old_ids.contains(candidate.as_str()) {
                                break candidate;
                            }
                        }
                    });
                    used.insert(id.clone());
                    id
                }
            };
            items.push(TodoItem {
                id,
                content: d.content,
                status: d.status,
                active_form: d.active_form,
            });
        }
        // Numeric ids the model chose also advance the counter, so an id is
        // never handed out again after its item is gone.
        let highest = items
            .iter()
            .filter_map(|i| i.id.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        (items, next_id.max(highest))
    }

    /// One line per item (`[x]` completed, `[>] … <- activeForm` in progress,
    /// `[ ]` pending), a blank line and `(k/n completed)`; `No todos.` when empty.
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

/// The key under which contents are compared (trimmed, lowercase).
fn content_key(content: &str) -> String {
    content.trim().to_lowercase()
}

/// `item 3 ("Run tests")`, or `item 3` when the content is not known.
fn label(index: usize, content: Option<&str>) -> String {
    match content {
        Some(c) => {
            let shown: String = if c.chars().count() > 60 {
                c.chars().take(57).chain("…".chars()).collect()
            } else {
                c.to_string()
            };
            format!("item {} ({:?})", index + 1, shown)
        }
        None => format!("item {}", index + 1),
    }
}

fn check_count(n: usize) -> Result<(), PlanError> {
    if n > MAX_ITEMS {
        return Err(PlanError(format!(
            "the plan has {n} items; at most {MAX_ITEMS} are allowed (merge or drop some)"
        )));
    }
    Ok(())
}

/// The rules between items: ≤ 1 in progress, unique content, unique ids.
fn check_list<'a>(
    entries: impl Iterator<Item = (Option<&'a str>, &'a str, TodoStatus)>,
) -> Result<(), PlanError> {
    let entries: Vec<_> = entries.collect();
    let mut running: Option<usize> = None;
    let mut contents: HashMap<String, usize> = HashMap::new();
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (i, &(id, content, status)) in entries.iter().enumerate() {
        if status == TodoStatus::InProgress {
            if let Some(first) = running {
                return Err(PlanError(format!(
                    "items {} and {} are both in_progress; at most one item may be in_progress at a time",
                    label(first, Some(entries[first].1)).trim_start_matches("item "),
                    label(i, Some(content)).trim_start_matches("item "),
                )));
            }
            running = Some(i);
        }
        if let Some(&first) = contents.get(&content_key(content)) {
            return Err(PlanError(format!(
                "items {} and {} have the same content; each item's content must be unique",
                label(first, Some(entries[first].1)).trim_start_matches("item "),
                label(i, Some(content)).trim_start_matches("item "),
            )));
        }
        contents.insert(content_key(content), i);
        if let Some(id) = id {
            if let Some(&first) = ids.get(id) {
                return Err(PlanError(format!(
                    "items {} and {} both have id {:?}; ids must be unique (or leave \"id\" out)",
                    label(first, Some(entries[first].1)).trim_start_matches("item "),
                    label(i, Some(content)).trim_start_matches("item "),
                    id,
                )));
            }
            ids.insert(id, i);
        }
    }
    Ok(())
}

/// Turns the `todos` value into the list of raw items: an array as is; a
/// string holding a JSON array or a Python list literal; an object wrapping
/// the list under `todos` by mistake.
fn todo_values(todos: &Value) -> Result<Vec<Value>, PlanError> {
    let mut current = todos.clone();
    // A few rounds cover a string holding a string, or a wrapped object.
    for _ in 0..4 {
        current = match current {
            Value::Array(items) => return Ok(items),
            Value::String(text) => parse_list_text(&text)?,
            Value::Object(mut map) if map.len() == 1 && map.contains_key("todos") => {
                map.remove("todos").unwrap_or(Value::Null)
            }
            other => return Err(not_a_list(&other)),
        };
    }
    Err(PlanError(format!(
        "`todos` is nested too deeply; expected an array like {TODOS_SHAPE}"
    )))
}

fn not_a_list(v: &Value) -> PlanError {
    PlanError(format!(
        "`todos` must be an array of objects, got {}; expected {TODOS_SHAPE}",
        json_type(v)
    ))
}

/// Reads a string that should hold a list: JSON first, then a Python literal.
fn parse_list_text(text: &str) -> Result<Value, PlanError> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return match v {
            Value::Array(_) | Value::String(_) | Value::Object(_) => Ok(v),
            other => Err(PlanError(format!(
                "`todos` is a string holding {}, not a list; expected {TODOS_SHAPE}",
                json_type(&other)
            ))),
        };
    }
    match parse_python_literal(text) {
        Ok(v @ (Value::Array(_) | Value::Object(_))) => Ok(v),
        Ok(other) => Err(PlanError(format!(
            "`todos` is a string holding {}, not a list; expected {TODOS_SHAPE}",
            json_type(&other)
        ))),
        Err(e) => Err(PlanError(format!(
            "`todos` is a string that is neither a JSON array nor a Python list literal ({e}); \
             send `todos` as an array like {TODOS_SHAPE}"
        ))),
    }
}

/// Reads one raw item and checks the rules that concern it alone.
fn draft(index: usize, value: &Value) -> Result<Draft, PlanError> {
    let Value::Object(obj) = value else {
        return Err(PlanError(format!(
            "{}: expected an object with \"content\", \"activeForm\" and \"status\", got {}",
            label(index, None),
            json_type(value)
        )));
    };
    let content = match obj.get("content") {
        None | Some(Value::Null) => {
            return Err(PlanError(format!(
                "{}: missing required field \"content\" (imperative, e.g. \"Run tests\")",
                label(index, None)
            )));
        }
        Some(Value::String(s)) => s.trim().to_string(),
        Some(other) => {
            return Err(PlanError(format!(
                "{}: \"content\" must be a string, got {}",
                label(index, None),
                json_type(other)
            )));
        }
    };
    if content.is_empty() {
        return Err(PlanError(format!(
            "{}: \"content\" is empty",
            label(index, None)
        )));
    }
    let here = label(index, Some(&content));
    let active = match obj.get("activeForm") {
        None | Some(Value::Null) => obj.get("active_form"),
        some => some,
    };
    let active_form = match active {
        None | Some(Value::Null) => {
            return Err(PlanError(format!(
                "{here}: missing required field \"activeForm\" (present tense, e.g. \"Running tests\")"
            )));
        }
        Some(Value::String(s)) => s.trim().to_string(),
        Some(other) => {
            return Err(PlanError(format!(
                "{here}: \"activeForm\" must be a string, got {}",
                json_type(other)
            )));
        }
    };
    if active_form.is_empty() {
        return Err(PlanError(format!("{here}: \"activeForm\" is empty")));
    }
    let status = match obj.get("status") {
        None | Some(Value::Null) => {
            return Err(PlanError(format!(
                "{here}: missing required field \"status\" (one of pending, in_progress, completed)"
            )));
        }
        Some(Value::String(s)) => TodoStatus::parse(s).ok_or_else(|| {
            PlanError(format!(
                "{here}: status {:?} is not one of pending, in_progress, completed",
                s
            ))
        })?,
        Some(other) => {
            return Err(PlanError(format!(
                "{here}: status must be a string (pending, in_progress or completed), got {}",
                json_type(other)
            )));
        }
    };
    let id = match obj.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(PlanError(format!(
                "{here}: \"id\" must be a string or a number, got {}",
                json_type(other)
            )));
        }
    };
    Ok(Draft {
        id,
        content,
        status,
        active_form,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(content: &str, status: &str) -> Value {
        json!({"content": content, "activeForm": format!("Doing {content}"), "status": status})
    }

    fn plan(items: &[Value]) -> Value {
        Value::Array(items.to_vec())
    }

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

    fn err(m: &mut TodoManager, v: &Value) -> String {
        match m.update(v) {
            Err(PlanError(msg)) => msg,
            Ok(d) => panic!("expected refusal, got {d:?}"),
        }
    }

    fn three() -> TodoManager {
        let mut m = TodoManager::new();
        m.update(&plan(&[
            item("Read code", "completed"),
            item("Write code", "in_progress"),
            item("Run tests", "pending"),
        ]))
        .unwrap();
        m
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
            }]
        );
    }

    #[test]
    fn at_most_twenty_items() {
        let mut m = three();
        let before = m.items().to_vec();
        let ok: Vec<Value> = (0..MAX_ITEMS)
            .map(|i| item(&format!("Task {i}"), "pending"))
            .collect();
        let mut m2 = TodoManager::new();
        m2.update(&plan(&ok)).unwrap();
        assert_eq!(m2.items().len(), 20);
        let too_many: Vec<Value> = (0..21)
            .map(|i| item(&format!("Task {i}"), "pending"))
            .collect();
        let msg = err(&mut m, &plan(&too_many));
        assert_eq!(
            msg,
            "the plan has 21 items; at most 20 are allowed (merge or drop some)"
        );
        assert_eq!(m.items(), before.as_slice());
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
    fn content_is_required_and_non_empty() {
        let mut m = three();
        let before = m.items().to_vec();
        let msg = err(
            &mut m,
            &json!([item("A", "pending"), {"content": "   ", "activeForm": "x", "status": "pending"}]),
        );
        assert_eq!(msg, "item 2: \"content\" is empty");
        let msg = err(&mut m, &json!([{"activeForm": "x", "status": "pending"}]));
        assert!(
            msg.starts_with("item 1: missing required field \"content\""),
            "{msg}"
        );
        let msg = err(
            &mut m,
            &json!([{"content": 5, "activeForm": "x", "status": "pending"}]),
        );
        assert_eq!(msg, "item 1: \"content\" must be a string, got a number");
        assert_eq!(m.items(), before.as_slice());
    }

    #[test]
    fn active_form_is_required_non_empty_and_has_an_alias() {
        let mut m = TodoManager::new();
        let msg = err(&mut m, &json!([{"content": "Build", "status": "pending"}]));
        assert!(
            msg.starts_with("item 1 (\"Build\"): missing required field \"activeForm\""),
            "{msg}"
        );
        let msg = err(
            &mut m,
            &json!([item("A", "pending"), {"content": "Build", "activeForm": " ", "status": "pending"}]),
        );
        assert_eq!(msg, "item 2 (\"Build\"): \"activeForm\" is empty");
        let msg = err(
            &mut m,
            &json!([{"content": "Build", "activeForm": [], "status": "pending"}]),
        );
        assert_eq!(
            msg,
            "item 1 (\"Build\"): \"activeForm\" must be a string, got an array"
        );
        m.update(&json!([{"content": "Build", "active_form": "Building", "status": "pending"}]))
            .unwrap();
        assert_eq!(m.items()[0].active_form, "Building");
    }

    #[test]
    fn bad_status_is_refused_with_item_and_rule() {
        let mut m = TodoManager::new();
        let msg = err(
            &mut m,
            &json!([
                item("A", "pending"),
                item("B", "pending"),
                item("Run tests", "done")
            ]),
        );
        assert_eq!(
            msg,
            "item 3 (\"Run tests\"): status \"done\" is not one of pending, in_progress, completed"
        );
        let msg = err(&mut m, &json!([{"content": "A", "activeForm": "a"}]));
        assert!(
            msg.starts_with("item 1 (\"A\"): missing required field \"status\""),
            "{msg}"
        );
        let msg = err(
            &mut m,
            &json!([{"content": "A", "activeForm": "a", "status": 1}]),
        );
        assert!(msg.contains("status must be a string"), "{msg}");
        assert!(m.items().is_empty());
    }

    #[test]
    fn status_aliases_and_case() {
        let cases = [
            ("pending", TodoStatus::Pending),
            ("PENDING", TodoStatus::Pending),
            ("not-started", TodoStatus::Pending),
            ("Not_Started", TodoStatus::Pending),
            ("in_progress", TodoStatus::InProgress),
            ("In-Progress", TodoStatus::InProgress),
            ("inprogress", TodoStatus::InProgress),
            (" IN_PROGRESS ", TodoStatus::InProgress),
            ("completed", TodoStatus::Completed),
            ("Completed", TodoStatus::Completed),
        ];
        for (text, want) in cases {
            let mut m = TodoManager::new();
            m.update(&json!([item("A", text)])).unwrap();
            assert_eq!(m.items()[0].status, want, "{text}");
        }
        assert_eq!(TodoStatus::parse("done"), None);
        assert_eq!(TodoStatus::parse(""), None);
    }

    #[test]
    fn at_most_one_in_progress() {
        let mut m = three();
        let before = m.items().to_vec();
        let msg = err(
            &mut m,
            &json!([
                item("A", "pending"),
                item("Write code", "in_progress"),
                item("C", "pending"),
                item("Build", "in-progress")
            ]),
        );
        assert_eq!(
            msg,
            "items 2 (\"Write code\") and 4 (\"Build\") are both in_progress; at most one item may be in_progress at a time"
        );
        assert_eq!(m.items(), before.as_slice());
    }

    #[test]
    fn duplicate_content_is_refused() {
        let mut m = three();
        let before = m.items().to_vec();
        let msg = err(
            &mut m,
            &json!([
                item("Build", "pending"),
                item("X", "pending"),
                item(" build ", "completed")
            ]),
        );
        assert_eq!(
            msg,
            "items 1 (\"Build\") and 3 (\"build\") have the same content; each item's content must be unique"
        );
        assert_eq!(m.items(), before.as_slice());
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let mut m = three();
        let before = m.items().to_vec();
        let mut a = item("A", "pending");
        a["id"] = json!("x");
        let mut b = item("B", "pending");
        b["id"] = json!("x");
        let msg = err(&mut m, &plan(&[a, b]));
        assert_eq!(
            msg,
            "items 1 (\"A\") and 2 (\"B\") both have id \"x\"; ids must be unique (or leave \"id\" out)"
        );
        // A number and a string with the same text clash too.
        let mut a = item("A", "pending");
        a["id"] = json!(7);
        let mut b = item("B", "pending");
        b["id"] = json!("7");
        assert!(err(&mut m, &plan(&[a, b])).contains("both have id \"7\""));
        let mut a = item("A", "pending");
        a["id"] = json!(true);
        assert_eq!(
            err(&mut m, &plan(&[a])),
            "item 1 (\"A\"): \"id\" must be a string or a number, got a boolean"
        );
        assert_eq!(m.items(), before.as_slice());
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
        // "B" claims id "1" explicitly, so "Read code" cannot inherit it;
        // fresh ids skip "4" because "Z" claims it.
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
            vec![("1", "B"), ("5", "Read code"), ("4", "Z"), ("6", "New")]
        );
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
    fn json_string_input() {
        let mut m = TodoManager::new();
        let text = r#"[{"content": "A", "activeForm": "Doing A", "status": "in_progress"}]"#;
        m.update(&Value::String(text.into())).unwrap();
        assert_eq!(m.items()[0].content, "A");
        assert_eq!(m.items()[0].status, TodoStatus::InProgress);
        // Double-encoded, and wrapped in {"todos": …} by mistake.
        let double = Value::String(serde_json::to_string(&Value::String(text.into())).unwrap());
        m.update(&double).unwrap();
        assert_eq!(m.items().len(), 1);
        m.update(&json!({"todos": [item("B", "pending")]})).unwrap();
        assert_eq!(m.items()[0].content, "B");
        let msg = err(&mut m, &Value::String("42".into()));
        assert!(msg.contains("holding a number"), "{msg}");
    }

    #[test]
    fn python_literal_input() {
        let mut m = TodoManager::new();
        let text = r#"[
            {'content': 'Say \'hi\' to "Bob"', 'activeForm': "Saying hi\tnow", 'status': 'pending', 'id': None},
            {'content': u'Caf\xe9 \u00e9 \U0001F600', 'activeForm': r'raw\n', 'status': 'In-Progress', 'id': 7,
             'meta': {'nested': [True, False, None, 1.5, -2, (1, 2,), 0x10, 1_000,],},},  # comment
            {"content": 'Adjacent ' 'strings', "activeForm": '''triple 'quoted' ''', "status": 'completed', 'id': 'x'},
        ]"#;
        let diff = m.update(&Value::String(text.into())).unwrap();
        let items = m.items();
        assert_eq!(items[0].content, "Say 'hi' to \"Bob\"");
        assert_eq!(items[0].active_form, "Saying hi\tnow");
        assert_eq!(items[0].id, "1");
        assert_eq!(items[1].content, "Café é 😀");
        assert_eq!(items[1].active_form, "raw\\n");
        assert_eq!(items[1].status, TodoStatus::InProgress);
        assert_eq!(items[1].id, "7");
        assert_eq!(items[2].content, "Adjacent strings");
        assert_eq!(items[2].active_form, "triple 'quoted'");
        assert_eq!(items[2].id, "x");
        assert_eq!(diff.added.len(), 3);
    }

    #[test]
    fn python_literal_values() {
        let v = parse_python_literal(
            "[True, False, None, 1, -2, 3.5, 1e3, 0o17, 0b11, -0x1f, (1,), (2), (), {}, {1: 'a'},]",
        )
        .unwrap();
        assert_eq!(
            v,
            json!([true, false, null, 1, -2, 3.5, 1000.0, 15, 3, -31, [1], 2, [], {}, {"1": "a"}])
        );
        assert_eq!(
            parse_python_literal(r"'\101\x41\u0041\N'").unwrap_err(),
            "\\N{…} escapes are not supported (position 15)"
        );
        assert_eq!(
            parse_python_literal(
                r"'\101\x41\u0041\q\
'"
            )
            .unwrap(),
            json!("AAA\\q")
        );
        assert_eq!(
            parse_python_literal(r"'\ud83d\ude00'").unwrap(),
            json!("😀")
        );
        assert_eq!(
            parse_python_literal("18446744073709551615").unwrap(),
            json!(18446744073709551615u64)
        );
    }

    #[test]
    fn python_literal_errors_do_not_panic() {
        let bad = [
            "",
            "[",
            "]",
            "[1 2]",
            "{'a' 1}",
            "{'a': 1",
            "'unterminated",
            "'line\nbreak'",
            "[os.system('x')]",
            "__import__('os')",
            "[1,,]",
            "{[1]: 2}",
            "-",
            "+",
            "0x",
            "1e",
            "1e999",
            "'\\x4'",
            "'\\ud800'",
            "'\\U99999999'",
            "'''abc''",
            "r'\\",
            "'\\",
            "{,}",
            "(,)",
            "[1] 2",
            "\u{0}",
            "é",
            "[)",
            "--1",
            "r",
            "rb",
            "u'",
            "[1.2.3]",
            "nan",
            "inf",
            "[-inf]",
        ];
        for text in bad {
            assert!(
                parse_python_literal(text).is_err(),
                "{text:?} should be refused"
            );
            let mut m = TodoManager::new();
            assert!(m.update(&Value::String(text.into())).is_err(), "{text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let e = parse_python_literal(&deep).unwrap_err();
        assert!(e.contains("nesting deeper than"), "{e}");
        let mut m = TodoManager::new();
        assert!(m.update(&Value::String(deep)).is_err());
        let ok = "[".repeat(MAX_LITERAL_DEPTH) + &"]".repeat(MAX_LITERAL_DEPTH);
        assert!(parse_python_literal(&ok).is_ok());
    }

    #[test]
    fn garbage_gives_an_error() {
        let mut m = three();
        let before = m.items().to_vec();
        for v in [
            json!(null),
            json!(3),
            json!(true),
            json!({"content": "A"}),
            json!("not a list at all"),
            json!([1, 2]),
            json!([[item("A", "pending")]]),
            json!("{'a': 1}"),
        ] {
            assert!(m.update(&v).is_err(), "{v}");
        }
        let msg = err(&mut m, &json!(3));
        assert!(
            msg.starts_with("`todos` must be an array of objects, got a number"),
            "{msg}"
        );
        let msg = err(&mut m, &json!(["x"]));
        assert!(msg.starts_with("item 1: expected an object"), "{msg}");
        assert_eq!(m.items(), before.as_slice());
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

    #[test]
    fn long_content_is_shortened_in_messages() {
        let long = "x".repeat(100);
        let mut m = TodoManager::new();
        let msg = err(&mut m, &json!([item(&long, "nope")]));
        assert!(
            msg.starts_with(&format!("item 1 (\"{}…\")", "x".repeat(57))),
            "{msg}"
        );
    }
}
