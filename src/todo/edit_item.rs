//! The user's edits that change one item as it is (put back after a
//! removal, its check set or cleared), and how an account quotes an item.
//! Invariant: a refused edit leaves `items` as they were.

use super::parse::{check_count, content_key};
use super::{PlanError, TodoItem, TodoStatus};

/// The longest check command a user's edit may set.
const MAX_CHECK_CHARS: usize = 1000;

/// Quotes an item's text for a note, shortened to 80 characters.
pub(super) fn quoted(text: &str) -> String {
    let short: String = if text.chars().count() > 80 {
        text.chars().take(79).chain(['…']).collect()
    } else {
        text.to_string()
    };
    format!("\"{short}\"")
}

/// Puts a removed `item` back at place `n` (at the end when the plan is
/// shorter now) as it was; in progress only when nothing else is.
pub(super) fn put_back(
    items: &mut Vec<TodoItem>,
    n: usize,
    item: &TodoItem,
) -> Result<String, PlanError> {
    if items
        .iter()
        .any(|i| i.id == item.id || content_key(&i.content) == content_key(&item.content))
    {
        return Err(PlanError(format!(
            "{} is in the plan already",
            quoted(&item.content)
        )));
    }
    check_count(items.len() + 1)?;
    let mut back = item.clone();
    if back.status == TodoStatus::InProgress
        && items.iter().any(|i| i.status == TodoStatus::InProgress)
    {
        back.status = TodoStatus::Pending;
    }
    let place = n.saturating_sub(1).min(items.len());
    items.insert(place, back);
    Ok(format!(
        "put back item {} {} (its removal undone)",
        place + 1,
        quoted(&item.content)
    ))
}

/// Sets (or, with `None`, clears) the check of the item at `i` (0-based):
/// one line, trimmed, at most [`MAX_CHECK_CHARS`].
pub(super) fn set_check(
    items: &mut [TodoItem],
    i: usize,
    command: Option<&str>,
) -> Result<String, PlanError> {
    let command = match command.map(str::trim).filter(|c| !c.is_empty()) {
        None => None,
        Some(c) if c.chars().any(char::is_control) => {
            return Err(PlanError("a check is one line".into()));
        }
        Some(c) if c.chars().count() > MAX_CHECK_CHARS => {
            return Err(PlanError(format!(
                "the check is too long (at most {MAX_CHECK_CHARS} characters)"
            )));
        }
        Some(c) => Some(c.to_string()),
    };
    let item = &mut items[i];
    let n = i + 1;
    let said = match &command {
        Some(c) => format!("set item {n} {}'s check to `{c}`", quoted(&item.content)),
        None => format!("cleared item {n} {}'s check", quoted(&item.content)),
    };
    item.scope.check = command;
    Ok(said)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::todo::PlanEdit;
    use crate::todo::test_helpers::three;

    #[test]
    fn the_user_sets_and_clears_an_items_check() {
        let mut m = three();
        let edit = PlanEdit::parse_command("check 3 cargo test -p parser").unwrap();
        assert_eq!(
            edit,
            PlanEdit::Check {
                n: 3,
                command: Some("cargo test -p parser".into())
            }
        );
        let (_, said) = m.apply_edit(&edit).unwrap();
        assert_eq!(
            said,
            "set item 3 \"Run tests\"'s check to `cargo test -p parser`"
        );
        assert_eq!(
            m.items()[2].scope.check.as_deref(),
            Some("cargo test -p parser")
        );
        // The same again changes nothing; no command clears it.
        assert!(m.apply_edit(&edit).is_err());
        let clear = PlanEdit::parse_command("check 3").unwrap();
        assert_eq!(
            clear,
            PlanEdit::Check {
                n: 3,
                command: None
            }
        );
        m.apply_edit(&clear).unwrap();
        assert_eq!(m.items()[2].scope.check, None);
        assert!(PlanEdit::parse_command("check x make").is_err());
        assert!(
            m.apply_edit(&PlanEdit::parse_command("check 9 make").unwrap())
                .is_err()
        );
    }
}
