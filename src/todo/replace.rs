//! The plan as the user wrote it in a file (`--approve-plan --plan-from
//! PLAN.md`): its checklist items become the whole plan, as one user
//! revision. Invariants: every item passes the rules a `todo_write` does
//! (the plan is unchanged otherwise); an item whose text matches one of
//! the plan's keeps its id, and its scope unless the file declares one;
//! new items get fresh ids.

use serde_json::{Value, json};

use super::file::parse_items;
use super::parse::{check_count, check_list, content_key, draft};
use super::{PlanDiff, PlanError, TodoItem, TodoManager, TodoStatus};

/// The checklist items of a plan file's `text` (ticked: completed), with
/// no ids yet.
pub fn items_in(text: &str) -> Vec<TodoItem> {
    parse_items(text)
        .into_iter()
        .map(|i| TodoItem {
            id: String::new(),
            active_form: i.text.clone(),
            content: i.text,
            status: if i.ticked {
                TodoStatus::Completed
            } else {
                TodoStatus::Pending
            },
            scope: i.scope,
        })
        .collect()
}

impl TodoManager {
    /// The plan becomes `items` (from `source`, for the description): the
    /// diff and what was done, or why not (the plan is then unchanged).
    pub fn replace_by_user(
        &mut self,
        items: &[TodoItem],
        source: &str,
    ) -> Result<(PlanDiff, String), PlanError> {
        check_count(items.len())?;
        let mut checked = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let value = json!({
                "content": item.content,
                "activeForm": if item.active_form.trim().is_empty() { &item.content } else { &item.active_form },
                "status": serde_json::to_value(item.status).unwrap_or(Value::Null),
                "files": item.scope.files,
                "commands": item.scope.commands,
            });
            let mut d = draft(i, &value)?;
            // The plan's item with the same text lends what a file line
            // cannot say (its active form) or left out (its scope).
            if let Some(old) = self
                .items()
                .iter()
                .find(|o| content_key(&o.content) == content_key(&d.content))
            {
                if d.active_form == d.content {
                    d.active_form.clone_from(&old.active_form);
                }
                if d.scope.is_empty() {
                    d.scope = old.scope.clone();
                }
            }
            checked.push(TodoItem {
                id: String::new(),
                content: d.content,
                status: d.status,
                active_form: d.active_form,
                scope: d.scope,
            });
        }
        check_list(checked.iter().map(|i| (None, i.content.as_str(), i.status)))?;
        let n = checked.len();
        let diff = self.replace_with(checked);
        let noun = if n == 1 { "item" } else { "items" };
        Ok((diff, format!("set the plan from {source} ({n} {noun})")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::todo::ItemScope;
    use crate::todo::file::render;

    fn scoped(files: &[&str]) -> ItemScope {
        ItemScope {
            files: files.iter().map(|f| (*f).to_string()).collect(),
            commands: Vec::new(),
            check: None,
        }
    }

    #[test]
    fn the_file_becomes_the_plan_keeping_ids_and_scopes() {
        let mut m = TodoManager::new();
        let (_, _) = m
            .replace_by_user(
                &[
                    TodoItem {
                        id: String::new(),
                        content: "Write the parser".into(),
                        status: TodoStatus::Pending,
                        active_form: "Writing the parser".into(),
                        scope: scoped(&["src/parser/**"]),
                    },
                    TodoItem {
                        id: String::new(),
                        content: "Drop me".into(),
                        status: TodoStatus::Pending,
                        active_form: String::new(),
                        scope: ItemScope::default(),
                    },
                ],
                "test",
            )
            .unwrap();
        let before = m.items().to_vec();
        // The file as rendered, edited: one item dropped, one added, the
        // kept item's scope line removed (the plan's scope stays).
        let text = render(m.items())
            .replace(
                "- [ ] Drop me\n",
                "- [ ] Test it\n  - commands: `cargo test`\n",
            )
            .replace("  - files: `src/parser/**`\n", "");
        let items = items_in(&text);
        assert_eq!(items.len(), 2);
        let (diff, said) = m.replace_by_user(&items, "PLAN.md").unwrap();
        assert_eq!(said, "set the plan from PLAN.md (2 items)");
        assert!(!diff.is_empty());
        let now = m.items();
        assert_eq!(now[0].id, before[0].id);
        assert_eq!(now[0].active_form, "Writing the parser");
        assert_eq!(now[0].scope, scoped(&["src/parser/**"]));
        assert_ne!(now[1].id, before[1].id);
        assert_eq!(now[1].content, "Test it");
        assert_eq!(now[1].scope.commands, ["cargo test"]);
    }

    #[test]
    fn a_file_breaking_the_rules_changes_nothing() {
        let mut m = crate::todo::test_helpers::three();
        let before = m.items().to_vec();
        let twice = items_in("- [ ] A\n- [ ] a\n");
        assert!(m.replace_by_user(&twice, "PLAN.md").is_err());
        assert_eq!(m.items(), before.as_slice());
        assert!(items_in("# Plan\n\nNo boxes here.\n").is_empty());
    }
}
