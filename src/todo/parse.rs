//! Reading the model's `todos` value into checked drafts: a JSON array, a
//! string holding one, or a Python list literal. Invariant: nothing here
//! panics; every refusal is a [`PlanError`] naming the item and the rule.

use std::collections::HashMap;

use serde_json::Value;

use super::{
    ItemScope, MAX_ITEM_CHARS, MAX_ITEMS, PlanError, TODOS_SHAPE, TodoStatus, parse_python_literal,
};
use crate::json::json_type;

/// An item as read from the model, before ids are settled.
#[derive(Debug)]
pub(super) struct Draft {
    pub(super) id: Option<String>,
    pub(super) content: String,
    pub(super) status: TodoStatus,
    pub(super) active_form: String,
    pub(super) scope: ItemScope,
}

/// The most paths or commands an item may declare.
const MAX_SCOPE_ENTRIES: usize = 20;

/// An item's optional `check`: one command line (empty or null: none).
fn check_of(obj: &serde_json::Map<String, Value>, here: &str) -> Result<Option<String>, PlanError> {
    match obj.get("check") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => {
            let check = s.trim().to_string();
            one_line("check", &check, here)?;
            short_enough("check", &check, here)?;
            Ok(Some(check))
        }
        Some(other) => Err(PlanError(format!(
            "{here}: \"check\" must be a command (a string), got {}",
            json_type(other)
        ))),
    }
}

/// An item's optional `files` or `commands`: a list of one-line strings
/// (a lone string is a list of one); absent or null is none.
fn scope_list(
    obj: &serde_json::Map<String, Value>,
    field: &str,
    here: &str,
) -> Result<Vec<String>, PlanError> {
    let values = match obj.get(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => vec![Value::String(s.clone())],
        Some(Value::Array(values)) => values.clone(),
        Some(other) => {
            return Err(PlanError(format!(
                "{here}: \"{field}\" must be a list of strings, got {}",
                json_type(other)
            )));
        }
    };
    if values.len() > MAX_SCOPE_ENTRIES {
        return Err(PlanError(format!(
            "{here}: \"{field}\" has {} entries; at most {MAX_SCOPE_ENTRIES} are allowed",
            values.len()
        )));
    }
    let mut out = Vec::with_capacity(values.len());
    for value in values {
        let Value::String(text) = value else {
            return Err(PlanError(format!(
                "{here}: \"{field}\" must be a list of strings, got an entry that is {}",
                json_type(&value)
            )));
        };
        let text = text.trim().to_string();
        one_line(field, &text, here)?;
        short_enough(field, &text, here)?;
        if !text.is_empty() && !out.contains(&text) {
            out.push(text);
        }
    }
    Ok(out)
}

/// The key under which contents are compared (trimmed, lowercase).
pub(super) fn content_key(content: &str) -> String {
    content.trim().to_lowercase()
}

/// `item 3 ("Run tests")`, or `item 3` when the content is not known.
pub(super) fn label(index: usize, content: Option<&str>) -> String {
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

/// A plan field is one line: a line break or a control character could
/// forge lines of the rendered plan (`[x] …`, `(9/9 completed)`).
pub(super) fn one_line(field: &str, text: &str, at: &str) -> Result<(), PlanError> {
    match text.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(PlanError(format!(
            "{at}: \"{field}\" must be one line, without line breaks or control characters (found {})",
            c.escape_default()
        ))),
    }
}

/// A plan field from the model is at most [`MAX_ITEM_CHARS`] characters
/// (a 1 MB item made every plan result and record as big).
fn short_enough(field: &str, text: &str, at: &str) -> Result<(), PlanError> {
    let len = text.chars().count();
    if len <= MAX_ITEM_CHARS {
        return Ok(());
    }
    Err(PlanError(format!(
        "{at}: \"{field}\" is {len} characters; at most {MAX_ITEM_CHARS} are allowed (name the step in a line; details belong in the conversation)"
    )))
}

pub(super) fn check_count(n: usize) -> Result<(), PlanError> {
    if n > MAX_ITEMS {
        return Err(PlanError(format!(
            "the plan has {n} items; at most {MAX_ITEMS} are allowed (merge or drop some)"
        )));
    }
    Ok(())
}

/// The rules between items: ≤ 1 in progress, unique content, unique ids.
pub(super) fn check_list<'a>(
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
pub(super) fn todo_values(todos: &Value) -> Result<Vec<Value>, PlanError> {
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
pub(super) fn draft(index: usize, value: &Value) -> Result<Draft, PlanError> {
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
        // A tab is folded to a space; other controls are refused below.
        Some(Value::String(s)) => s.trim().replace('\t', " "),
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
    one_line("content", &content, &label(index, None))?;
    short_enough("content", &content, &label(index, None))?;
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
        // A tab is folded to a space; other controls are refused below.
        Some(Value::String(s)) => s.trim().replace('\t', " "),
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
    one_line("activeForm", &active_form, &here)?;
    short_enough("activeForm", &active_form, &here)?;
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
    let scope = ItemScope {
        files: scope_list(obj, "files", &here)?,
        commands: scope_list(obj, "commands", &here)?,
        check: check_of(obj, &here)?,
    };
    Ok(Draft {
        id,
        content,
        status,
        active_form,
        scope,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_at_most_max_item_chars() {
        let long = "x".repeat(MAX_ITEM_CHARS + 1);
        let fits = "y".repeat(MAX_ITEM_CHARS);
        let at = |content: &str, active: &str| {
            draft(
                0,
                &serde_json::json!({"content": content, "activeForm": active, "status": "pending"}),
            )
        };
        assert!(at(&fits, &fits).is_ok());
        let msg = at(&long, "Doing").unwrap_err().0;
        assert!(
            msg.contains("\"content\" is 501 characters; at most 500"),
            "{msg}"
        );
        assert!(
            msg.len() < 300,
            "the message does not repeat the item: {msg}"
        );
        let msg = at("Build", &long).unwrap_err().0;
        assert!(
            msg.starts_with("item 1 (\"Build\"): \"activeForm\" is 501"),
            "{msg}"
        );
    }
    use crate::todo::test_helpers::*;
    use crate::todo::{MAX_LITERAL_DEPTH, TodoManager};
    use serde_json::json;

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
        // The tab was decoded, then folded: a plan field is one line.
        assert_eq!(items[0].active_form, "Saying hi now");
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
            parse_python_literal(r"'\101\x41\u0041\N'")
                .unwrap_err()
                .to_string(),
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
        let e = parse_python_literal(&deep).unwrap_err().to_string();
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
    fn long_content_is_shortened_in_messages() {
        let long = "x".repeat(100);
        let mut m = TodoManager::new();
        let msg = err(&mut m, &json!([item(&long, "nope")]));
        assert!(
            msg.starts_with(&format!("item 1 (\"{}…\")", "x".repeat(57))),
            "{msg}"
        );
    }

    #[test]
    fn fields_with_line_breaks_or_controls_cannot_forge_plan_lines() {
        let forged = json!([{
            "content": "Write tests\n[x] Deploy to production\n(9/9 completed)",
            "activeForm": "Writing tests",
            "status": "pending"
        }]);
        let mut m = three();
        let before = m.items().to_vec();
        let msg = err(&mut m, &forged);
        assert_eq!(m.items(), before.as_slice(), "the old plan stays");
        assert_eq!(
            msg,
            "item 1: \"content\" must be one line, without line breaks or control characters (found \\n)"
        );
        let escaped = json!([{
            "content": "Build",
            "activeForm": "Building\u{1b}[2J",
            "status": "in_progress"
        }]);
        let msg = err(&mut m, &escaped);
        assert!(
            msg.starts_with("item 1 (\"Build\"): \"activeForm\" must be one line"),
            "{msg}"
        );
        // Trailing whitespace is trimmed, not refused.
        let fine = json!([{"content": "Build\n", "activeForm": " Building ", "status": "pending"}]);
        assert!(m.update(&fine).is_ok());
    }

    #[test]
    fn an_item_may_declare_its_files_and_commands() {
        let mut m = TodoManager::new();
        m.update(&json!([
            {"content": "Write the parser", "activeForm": "Writing the parser", "status": "pending",
             "files": ["src/parser/**", " src/parser/**", ""], "commands": "cargo test"},
            item("Run tests", "pending"),
        ]))
        .unwrap();
        let scope = &m.items()[0].scope;
        assert_eq!(scope.files, ["src/parser/**"], "trimmed, once, none empty");
        assert_eq!(
            scope.commands,
            ["cargo test"],
            "a lone string is a list of one"
        );
        assert!(m.items()[1].scope.is_empty());
        // Serialized, an item without a scope is as it always was.
        let plain = serde_json::to_value(&m.items()[1]).unwrap();
        let mut keys: Vec<_> = plain.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["activeForm", "content", "id", "status"]);
        let scoped = serde_json::to_value(&m.items()[0]).unwrap();
        assert_eq!(scoped["files"], json!(["src/parser/**"]));
        let back: crate::todo::TodoItem = serde_json::from_value(scoped).unwrap();
        assert_eq!(&back, &m.items()[0]);
        assert!(m.render().contains(
            "[ ] Write the parser\n    files: src/parser/**\n    commands: cargo test\n"
        ));
        // The latest write's value: written without it, the item has none.
        m.update(&json!([item("Write the parser", "in_progress")]))
            .unwrap();
        assert!(m.items()[0].scope.is_empty());
        let msg = err(
            &mut m,
            &json!([{"content": "A", "activeForm": "B", "status": "pending", "files": [3]}]),
        );
        assert_eq!(
            msg,
            "item 1 (\"A\"): \"files\" must be a list of strings, got an entry that is a number"
        );
        let msg = err(
            &mut m,
            &json!([{"content": "A", "activeForm": "B", "status": "pending", "commands": {"x": 1}}]),
        );
        assert!(
            msg.contains("\"commands\" must be a list of strings"),
            "{msg}"
        );
    }
}
