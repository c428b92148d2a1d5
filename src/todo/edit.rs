//! The user's own changes to the plan (`/plan add …`, the plan pane's keys,
//! the plan file). Invariants: an edit goes through the same rules as a
//! `todo_write` (≤ 20 items, one line, unique content, ≤ 1 in progress) and
//! a refused edit changes nothing; positions are 1-based as the user sees
//! them; every accepted edit is described in one line the model can read.

use serde::{Deserialize, Serialize};

use super::edit_item::{put_back, quoted, set_check};
use super::parse::{check_count, check_list, content_key};
use super::store::TodoManager;
use super::{PlanDiff, PlanError, TodoItem, TodoStatus};

/// Who made a plan revision.
#[derive(
    schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Author {
    /// The model, with `todo_write`.
    #[default]
    Model,
    /// The user, with an edit in the app (or of the plan file while no
    /// tool ran).
    User,
    /// The plan file, changed while a tool ran (or just after): perhaps
    /// by the model's own `write_file` or a build script, so never said
    /// to be the user's.
    PlanFile,
    /// A skill's `## Plan`, loaded by the model's `skill` call: proposed
    /// by the skill's author, never said to be the user's.
    Skill,
    /// The user, approving the plan the model proposed in plan mode: the
    /// first revision of the live plan, the agreement.
    Approved,
    /// The model's reply, naming an item it finished (`Done: N`) when it
    /// has no todo tool (`plan_tool = false`).
    Reply,
}

impl Author {
    pub fn as_str(self) -> &'static str {
        match self {
            Author::Model => "model",
            Author::User => "user",
            Author::PlanFile => "plan file",
            Author::Skill => "skill",
            Author::Approved => "user (approved)",
            Author::Reply => "model's reply",
        }
    }
}

/// One change the user makes to the plan. Positions (`n`, `after`, `to`)
/// count from 1.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
pub enum PlanEdit {
    /// A new pending item after item `after` (0: at the top; `None`: at the end).
    Add {
        /// The item's text.
        text: String,
        /// The position it goes after (0: at the top; left out: at the end).
        after: Option<usize>,
    },
    /// New text for item `n` (it keeps its identity).
    Reword {
        /// The item's position.
        n: usize,
        /// Its new text.
        text: String,
    },
    /// Item `n` gets `status` (starting one puts the running one back to pending).
    Status {
        /// The item's position.
        n: usize,
        /// Its new status.
        status: TodoStatus,
    },
    /// Item `n` leaves the plan.
    Remove {
        /// The item's position.
        n: usize,
    },
    /// Item `from` moves to position `to`.
    Move {
        /// The item's position now.
        from: usize,
        /// The position it moves to.
        to: usize,
    },
    /// The plan is emptied (its revisions stay in the history).
    Clear,
    /// The plan goes back to an earlier list (a rewind of the conversation).
    Restore {
        /// The whole list to go back to.
        items: Vec<super::TodoItem>,
    },
    /// The plan becomes a skill's `## Plan` checklist, every item pending.
    Template {
        /// The skill's name.
        skill: String,
        /// The checklist's items' text, in order.
        items: Vec<String>,
        /// Each item's check, in the same order (left out: none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        checks: Vec<Option<String>>,
    },
    /// An item the user removed goes back at place `n` (at the end when
    /// the plan is shorter now), with its id, text and status: the
    /// removal undone.
    PutBack {
        /// The position it goes back to.
        n: usize,
        /// The removed item, as it was.
        item: super::TodoItem,
    },
    /// Item `n`'s check: the command whose success is the evidence it
    /// is done (left out: it has none).
    Check {
        /// The item's position.
        n: usize,
        /// The command (left out: the check is cleared).
        command: Option<String>,
    },
}

/// The longest item text a user's edit may bring (a plan line, not a document).
pub const MAX_EDIT_CHARS: usize = super::MAX_ITEM_CHARS;

/// The usage of `/plan`, for errors and help.
pub const PLAN_USAGE: &str = "/plan add TEXT | edit N TEXT | done N [--force] | undone N | start N | remove N | move N M | check N [CMD] | clear";

impl PlanEdit {
    /// Reads the arguments of `/plan` (`add Write docs`, `done 3`, `move 4 1`, …).
    pub fn parse_command(args: &str) -> Result<PlanEdit, String> {
        let args = args.trim();
        let (verb, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        let rest = rest.trim();
        let number = |s: &str| -> Result<usize, String> {
            s.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                format!("{s:?} is not an item number (1, 2, …). Usage: {PLAN_USAGE}")
            })
        };
        let text = |s: &str| -> Result<String, String> {
            if s.is_empty() {
                Err(format!("the item's text is missing. Usage: {PLAN_USAGE}"))
            } else {
                Ok(s.to_string())
            }
        };
        match verb.to_ascii_lowercase().as_str() {
            "add" => Ok(PlanEdit::Add {
                text: text(rest)?,
                after: None,
            }),
            "edit" | "reword" => {
                let (n, t) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                Ok(PlanEdit::Reword {
                    n: number(n)?,
                    text: text(t.trim())?,
                })
            }
            "done" | "undone" | "start" => Ok(PlanEdit::Status {
                // `--force`: the user's `done` completes an item a hook
                // keeps open (any user edit does; it is recorded as such).
                n: number(rest.strip_suffix("--force").unwrap_or(rest).trim())?,
                status: match verb {
                    "done" => TodoStatus::Completed,
                    "start" => TodoStatus::InProgress,
                    _ => TodoStatus::Pending,
                },
            }),
            "remove" | "rm" => Ok(PlanEdit::Remove { n: number(rest)? }),
            "move" | "mv" => {
                let mut parts = rest.split_whitespace();
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(a), Some(b), None) => Ok(PlanEdit::Move {
                        from: number(a)?,
                        to: number(b)?,
                    }),
                    _ => Err(format!("move takes two item numbers. Usage: {PLAN_USAGE}")),
                }
            }
            "check" => {
                let (n, cmd) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let cmd = cmd.trim();
                Ok(PlanEdit::Check {
                    n: number(n)?,
                    command: (!cmd.is_empty()).then(|| cmd.to_string()),
                })
            }
            "clear" if rest.is_empty() => Ok(PlanEdit::Clear),
            "" => Err(format!("Usage: {PLAN_USAGE}")),
            other => Err(format!(
                "unknown /plan command {other:?}. Usage: {PLAN_USAGE}"
            )),
        }
    }
}

impl TodoManager {
    /// Applies the user's `edit`: returns what changed and a one-line
    /// account for the model (`added "Update the README" after item 3`);
    /// a refused edit leaves the plan as it was.
    pub fn apply_edit(&mut self, edit: &PlanEdit) -> Result<(PlanDiff, String), PlanError> {
        let mut items = self.items().to_vec();
        let description = edited(&mut items, edit)?;
        // An edit that leaves the plan as it is (the same text, status or
        // place) makes no revision and tells the model nothing.
        let same = |a: &TodoItem, b: &TodoItem| {
            a.id == b.id && a.content == b.content && a.status == b.status && a.scope == b.scope
        };
        if items.len() == self.items().len()
            && items.iter().zip(self.items()).all(|(a, b)| same(a, b))
        {
            return Err(PlanError(format!(
                "nothing to change ({description} is how it already is)"
            )));
        }
        check_list(items.iter().map(|i| {
            (
                Some(i.id.as_str()).filter(|id| !id.is_empty()),
                i.content.as_str(),
                i.status,
            )
        }))?;
        let diff = self.replace_with(items);
        Ok((diff, description))
    }
}

/// Makes the change `edit` to `items`; says what it did, in one line.
fn edited(items: &mut Vec<TodoItem>, edit: &PlanEdit) -> Result<String, PlanError> {
    Ok(match edit {
        PlanEdit::Add { text, after } => add(items, text, *after)?,
        PlanEdit::Restore { items: earlier } => {
            items.clone_from(earlier);
            "the plan went back to an earlier revision".to_string()
        }
        PlanEdit::Template {
            skill,
            items: texts,
            checks,
        } => {
            check_count(texts.len())?;
            let mut fresh = Vec::with_capacity(texts.len());
            for (i, text) in texts.iter().enumerate() {
                let text = clean_text(text)?;
                let scope = super::ItemScope {
                    check: checks.get(i).cloned().flatten(),
                    ..Default::default()
                };
                fresh.push(TodoItem {
                    id: String::new(),
                    content: text.clone(),
                    status: TodoStatus::Pending,
                    active_form: text,
                    scope,
                });
            }
            *items = fresh;
            format!("set the plan from the skill `{skill}`")
        }
        PlanEdit::Reword { n, text } => {
            let i = index(*n, items)?;
            let text = clean_text(text)?;
            let old = std::mem::replace(&mut items[i].content, text.clone());
            if content_key(&items[i].active_form) == content_key(&old) {
                items[i].active_form = text.clone();
            }
            format!("reworded item {n} {} to {}", quoted(&old), quoted(&text))
        }
        PlanEdit::Status { n, status } => {
            let i = index(*n, items)?;
            if *status == TodoStatus::InProgress {
                for other in items.iter_mut() {
                    if other.status == TodoStatus::InProgress {
                        other.status = TodoStatus::Pending;
                    }
                }
            }
            items[i].status = *status;
            let what = status_verb(*status);
            format!("{what} item {n} {}", quoted(&items[i].content))
        }
        PlanEdit::Remove { n } => {
            let gone = items.remove(index(*n, items)?);
            format!("removed item {n} {}", quoted(&gone.content))
        }
        PlanEdit::PutBack { n, item } => put_back(items, *n, item)?,
        PlanEdit::Check { n, command } => {
            let i = index(*n, items)?;
            set_check(items, i, command.as_deref())?
        }
        PlanEdit::Move { from, to } => {
            let i = index(*from, items)?;
            let j = index(*to, items)?;
            let item = items.remove(i);
            let text = quoted(&item.content);
            items.insert(j, item);
            format!("moved item {from} {text} to position {to}")
        }
        PlanEdit::Clear => {
            if items.is_empty() {
                return Err(PlanError("the plan is already empty".into()));
            }
            let n = items.len();
            items.clear();
            format!("cleared the plan ({})", crate::units::plural(n, "item"))
        }
    })
}

/// Adds a pending item with `text` after item `after` (0: at the top;
/// `None`: at the end).
fn add(items: &mut Vec<TodoItem>, text: &str, after: Option<usize>) -> Result<String, PlanError> {
    let text = clean_text(text)?;
    check_count(items.len() + 1)?;
    let place = match after {
        None => items.len(),
        Some(0) => 0,
        Some(n) => index(n, items)? + 1,
    };
    items.insert(
        place,
        TodoItem {
            id: String::new(),
            content: text.clone(),
            status: TodoStatus::Pending,
            active_form: text.clone(),
            scope: Default::default(),
        },
    );
    Ok(match after {
        Some(0) => format!("added {} at the top", quoted(&text)),
        Some(n) if place < items.len() - 1 => format!("added {} after item {n}", quoted(&text)),
        _ => format!("added {} at the end", quoted(&text)),
    })
}

/// Where item `n` (counted from 1, as the user sees it) is in `items`.
fn index(n: usize, items: &[TodoItem]) -> Result<usize, PlanError> {
    if n == 0 || n > items.len() {
        Err(PlanError(match items.len() {
            0 => "the plan is empty".to_string(),
            len => format!("there is no item {n} (the plan has {len})"),
        }))
    } else {
        Ok(n - 1)
    }
}

/// An item's text as the user gave it: trimmed, control characters made
/// spaces; refused when empty or longer than `MAX_EDIT_CHARS`.
fn clean_text(text: &str) -> Result<String, PlanError> {
    let text: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.is_empty() {
        return Err(PlanError("the item's text is empty".into()));
    }
    let len = text.chars().count();
    if len > MAX_EDIT_CHARS {
        return Err(PlanError(format!(
            "the item's text is too long ({len} characters; at most {MAX_EDIT_CHARS})"
        )));
    }
    Ok(text)
}

/// How an account says an item got `status`.
fn status_verb(status: TodoStatus) -> &'static str {
    match status {
        TodoStatus::Completed => "marked done",
        TodoStatus::InProgress => "started",
        TodoStatus::Pending => "marked not done",
    }
}

/// What the user's edits changed from `before` to `after`, net (an item
/// added then removed is not mentioned; a reword then another is one), as
/// lines for the model in the words of the edits themselves; items are
/// matched by id, numbered as in the plan they are found in.
pub fn net_change(before: &[TodoItem], after: &[TodoItem]) -> Vec<String> {
    let old: std::collections::HashMap<&str, (usize, &TodoItem)> = before
        .iter()
        .enumerate()
        .map(|(i, item)| (item.id.as_str(), (i + 1, item)))
        .collect();
    let kept: std::collections::HashSet<&str> = after.iter().map(|i| i.id.as_str()).collect();
    let mut out: Vec<String> = before
        .iter()
        .enumerate()
        .filter(|(_, i)| !kept.contains(i.id.as_str()))
        .map(|(n, i)| format!("removed item {} {}", n + 1, quoted(&i.content)))
        .collect();
    for (place, item) in after.iter().enumerate() {
        let n = place + 1;
        let Some((_, was)) = old.get(item.id.as_str()) else {
            let text = quoted(&item.content);
            out.push(match place {
                0 if after.len() > 1 => format!("added {text} at the top"),
                p if p + 1 == after.len() => format!("added {text} at the end"),
                p => format!("added {text} after item {p}"),
            });
            continue;
        };
        if was.content != item.content {
            out.push(format!(
                "reworded item {n} {} to {}",
                quoted(&was.content),
                quoted(&item.content)
            ));
        }
        if was.status != item.status {
            let what = status_verb(item.status);
            out.push(format!("{what} item {n} {}", quoted(&item.content)));
        }
    }
    for moved in &super::PlanDiff::between(before, after).reordered {
        let to = after.iter().position(|i| &i.content == moved);
        let from = after
            .iter()
            .find(|i| &i.content == moved)
            .and_then(|i| old.get(i.id.as_str()))
            .map(|(n, _)| *n);
        if let (Some(to), Some(from)) = (to, from) {
            out.push(format!(
                "moved item {from} {} to position {}",
                quoted(moved),
                to + 1
            ));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::todo::test_helpers::three;

    fn contents(m: &TodoManager) -> Vec<(String, TodoStatus)> {
        m.items()
            .iter()
            .map(|i| (i.content.clone(), i.status))
            .collect()
    }

    #[test]
    fn a_removed_item_goes_back_at_its_place_as_it_was() {
        let mut m = three(); // Read code (done), Write code (in progress), Run tests
        let before = m.items().to_vec();
        m.apply_edit(&PlanEdit::Remove { n: 1 }).unwrap();
        let back = PlanEdit::PutBack {
            n: 1,
            item: before[0].clone(),
        };
        let (diff, said) = m.apply_edit(&back).unwrap();
        assert_eq!(m.items(), before.as_slice(), "same id, text, status, place");
        assert_eq!(diff.added, vec!["Read code"]);
        assert_eq!(said, "put back item 1 \"Read code\" (its removal undone)");
        // Twice is refused; an item in progress goes back pending when
        // another one runs now; past the end is the end.
        assert!(
            m.apply_edit(&back)
                .unwrap_err()
                .0
                .contains("in the plan already")
        );
        m.apply_edit(&PlanEdit::Remove { n: 2 }).unwrap();
        m.apply_edit(&PlanEdit::Status {
            n: 2,
            status: TodoStatus::InProgress,
        })
        .unwrap();
        m.apply_edit(&PlanEdit::PutBack {
            n: 9,
            item: before[1].clone(),
        })
        .unwrap();
        assert_eq!(
            contents(&m),
            vec![
                ("Read code".into(), TodoStatus::Completed),
                ("Run tests".into(), TodoStatus::InProgress),
                ("Write code".into(), TodoStatus::Pending),
            ]
        );
    }

    #[test]
    fn an_edit_that_changes_nothing_makes_no_revision() {
        let mut m = three(); // Read code (done), Write code (in progress), Run tests
        let before = m.items().to_vec();
        for edit in [
            "edit 2 Write code",
            "done 1",
            "start 2",
            "undone 3",
            "move 2 2",
        ] {
            let edit = PlanEdit::parse_command(edit).unwrap();
            let err = m.apply_edit(&edit).unwrap_err().0;
            assert!(err.starts_with("nothing to change"), "{edit:?}: {err}");
        }
        assert_eq!(m.items(), before.as_slice());
    }

    #[test]
    fn a_run_of_edits_is_told_as_its_net_change() {
        let mut m = three();
        let before = m.items().to_vec();
        for edit in [
            "add Update the README",
            "edit 4 Update the docs",
            "edit 4 Update the whole docs",
            "remove 4",
            "edit 3 Run the tests",
            "done 2",
            "undone 2",
        ] {
            m.apply_edit(&PlanEdit::parse_command(edit).unwrap())
                .unwrap();
        }
        assert_eq!(
            net_change(&before, m.items()),
            vec![
                "marked not done item 2 \"Write code\"",
                "reworded item 3 \"Run tests\" to \"Run the tests\""
            ]
        );
        // Undone whole: nothing to say.
        let mut m = three();
        let before = m.items().to_vec();
        m.apply_edit(&PlanEdit::parse_command("add Tmp").unwrap())
            .unwrap();
        m.apply_edit(&PlanEdit::parse_command("remove 4").unwrap())
            .unwrap();
        assert!(net_change(&before, m.items()).is_empty());
    }

    #[test]
    fn edits_change_the_plan_and_say_what_they_did() {
        use TodoStatus::*;
        type Case<'a> = (PlanEdit, &'a str, Vec<(&'a str, TodoStatus)>);
        let cases: Vec<Case> = vec![
            (
                PlanEdit::Add {
                    text: "Update the README".into(),
                    after: Some(2),
                },
                "added \"Update the README\" after item 2",
                vec![
                    ("Read code", Completed),
                    ("Write code", InProgress),
                    ("Update the README", Pending),
                    ("Run tests", Pending),
                ],
            ),
            (
                PlanEdit::Add {
                    text: "Last".into(),
                    after: None,
                },
                "added \"Last\" at the end",
                vec![
                    ("Read code", Completed),
                    ("Write code", InProgress),
                    ("Run tests", Pending),
                    ("Last", Pending),
                ],
            ),
            (
                PlanEdit::Status {
                    n: 2,
                    status: Completed,
                },
                "marked done item 2 \"Write code\"",
                vec![
                    ("Read code", Completed),
                    ("Write code", Completed),
                    ("Run tests", Pending),
                ],
            ),
            (
                PlanEdit::Status {
                    n: 3,
                    status: InProgress,
                },
                "started item 3 \"Run tests\"",
                vec![
                    ("Read code", Completed),
                    ("Write code", Pending),
                    ("Run tests", InProgress),
                ],
            ),
            (
                PlanEdit::Remove { n: 1 },
                "removed item 1 \"Read code\"",
                vec![("Write code", InProgress), ("Run tests", Pending)],
            ),
            (
                PlanEdit::Move { from: 3, to: 1 },
                "moved item 3 \"Run tests\" to position 1",
                vec![
                    ("Run tests", Pending),
                    ("Read code", Completed),
                    ("Write code", InProgress),
                ],
            ),
            (
                PlanEdit::Reword {
                    n: 3,
                    text: "Run all tests".into(),
                },
                "reworded item 3 \"Run tests\" to \"Run all tests\"",
                vec![
                    ("Read code", Completed),
                    ("Write code", InProgress),
                    ("Run all tests", Pending),
                ],
            ),
            (PlanEdit::Clear, "cleared the plan (3 items)", vec![]),
        ];
        for (edit, said, want) in cases {
            let mut m = three();
            let ids: Vec<String> = m.items().iter().map(|i| i.id.clone()).collect();
            let (diff, text) = m.apply_edit(&edit).unwrap();
            assert_eq!(text, said);
            let want: Vec<(String, TodoStatus)> =
                want.into_iter().map(|(c, s)| (c.to_string(), s)).collect();
            assert_eq!(contents(&m), want, "{said}");
            // Kept items keep their ids; a new one gets a fresh id.
            for item in m.items() {
                assert!(!item.id.is_empty());
            }
            if let PlanEdit::Reword { .. } = edit {
                assert_eq!(m.items()[2].id, ids[2]);
                assert_eq!(diff.reworded.len(), 1);
            }
            if let PlanEdit::Move { .. } = edit {
                assert!(diff.removed.is_empty() && diff.added.is_empty());
                assert_eq!(diff.reordered, vec!["Run tests"]);
            }
        }
    }

    #[test]
    fn refused_edits_change_nothing() {
        let cases = [
            (
                PlanEdit::Remove { n: 4 },
                "there is no item 4 (the plan has 3)",
            ),
            (
                PlanEdit::Remove { n: 0 },
                "there is no item 0 (the plan has 3)",
            ),
            (
                PlanEdit::Add {
                    text: "  ".into(),
                    after: None,
                },
                "the item's text is empty",
            ),
            (
                PlanEdit::Add {
                    text: "run tests".into(),
                    after: None,
                },
                "same content",
            ),
            (
                PlanEdit::Add {
                    text: "x".repeat(501),
                    after: None,
                },
                "too long (501 characters; at most 500)",
            ),
        ];
        for (edit, why) in cases {
            let mut m = three();
            let before = m.items().to_vec();
            let err = m.apply_edit(&edit).unwrap_err();
            assert!(err.0.contains(why), "{edit:?}: {}", err.0);
            assert_eq!(m.items(), before.as_slice());
        }
        let mut full = TodoManager::new();
        for i in 0..20 {
            full.apply_edit(&PlanEdit::Add {
                text: format!("T{i}"),
                after: None,
            })
            .unwrap();
        }
        assert!(
            full.apply_edit(&PlanEdit::Add {
                text: "one more".into(),
                after: None
            })
            .is_err()
        );
        assert_eq!(full.items().len(), 20);
    }

    #[test]
    fn plan_commands_parse() {
        assert_eq!(
            PlanEdit::parse_command("add Update the README"),
            Ok(PlanEdit::Add {
                text: "Update the README".into(),
                after: None
            })
        );
        assert_eq!(
            PlanEdit::parse_command("done 3"),
            Ok(PlanEdit::Status {
                n: 3,
                status: TodoStatus::Completed
            })
        );
        assert_eq!(
            PlanEdit::parse_command("remove 2"),
            Ok(PlanEdit::Remove { n: 2 })
        );
        assert_eq!(
            PlanEdit::parse_command("move 4 1"),
            Ok(PlanEdit::Move { from: 4, to: 1 })
        );
        assert_eq!(PlanEdit::parse_command("clear"), Ok(PlanEdit::Clear));
        assert_eq!(
            PlanEdit::parse_command("edit 2 New words"),
            Ok(PlanEdit::Reword {
                n: 2,
                text: "New words".into()
            })
        );
        for bad in [
            "",
            "add",
            "done x",
            "done 0",
            "move 1",
            "frobnicate 2",
            "clear all",
        ] {
            assert!(PlanEdit::parse_command(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_items_text_is_one_trimmed_line_of_bounded_length() {
        assert_eq!(clean_text("  Fix\tthe\nbuild \n").unwrap(), "Fix the build");
        assert_eq!(clean_text("a\u{7}b").unwrap(), "a b");
        assert!(clean_text(" \n\t ").is_err(), "only blanks: empty");
        // Characters, not bytes, are counted.
        assert!(clean_text(&"é".repeat(MAX_EDIT_CHARS)).is_ok());
        assert!(clean_text(&"é".repeat(MAX_EDIT_CHARS + 1)).is_err());
        assert_eq!(index(1, &[]).unwrap_err().0, "the plan is empty");
    }
}
