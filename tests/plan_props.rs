//! Property tests for the plan: random update sequences (valid and invalid)
//! always leave a list that satisfies every rule, a refused update changes
//! nothing, and the `todos` parser never panics on any string.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use waypoint::todo::*;

/// Every rule the stored list must satisfy.
fn check_invariants(items: &[TodoItem]) {
    assert!(items.len() <= MAX_ITEMS, "too many items: {}", items.len());
    let mut contents = HashSet::new();
    let mut ids = HashSet::new();
    let mut running = 0;
    for item in items {
        assert!(!item.content.trim().is_empty(), "empty content: {item:?}");
        assert_eq!(item.content, item.content.trim(), "untrimmed content");
        assert!(
            !item.active_form.trim().is_empty(),
            "empty activeForm: {item:?}"
        );
        assert_eq!(
            item.active_form,
            item.active_form.trim(),
            "untrimmed activeForm"
        );
        assert!(!item.id.is_empty(), "empty id: {item:?}");
        assert!(ids.insert(item.id.clone()), "duplicate id {:?}", item.id);
        assert!(
            contents.insert(item.content.to_lowercase()),
            "duplicate content {:?}",
            item.content
        );
        if item.status == TodoStatus::InProgress {
            running += 1;
        }
    }
    assert!(running <= 1, "{running} items in progress");
}

fn content() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => prop::sample::select(vec!["Read code", "Write code", "Run tests", "run tests ", "Build", "Ship", "Fix bug", "A", "B", "C", "D", "E"])
            .prop_map(Value::from),
        1 => prop::sample::select(vec!["", "   ", "\n"]).prop_map(Value::from),
        1 => any::<String>().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<i32>().prop_map(Value::from),
    ]
}

fn status() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "pending", "in_progress", "completed", "Pending", "IN-PROGRESS", "not_started", "inprogress", "Completed",
        ])
        .prop_map(|s| Some(Value::from(s))),
        1 => prop::sample::select(vec!["done", "", "started", "in progress!"]).prop_map(|s| Some(Value::from(s))),
        1 => Just(None),
        1 => Just(Some(json!(1))),
    ]
}

fn id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        6 => Just(None),
        2 => prop::sample::select(vec!["1", "2", "3", "x", "y", " ", ""]).prop_map(|s| Some(Value::from(s))),
        1 => (0u8..6).prop_map(|n| Some(Value::from(n))),
        1 => Just(Some(json!(true))),
    ]
}

fn active_form() -> impl Strategy<Value = Option<(&'static str, Value)>> {
    prop_oneof![
        8 => prop::sample::select(vec!["Doing it", " Working ", "Running"]).prop_map(|s| Some(("activeForm", Value::from(s)))),
        1 => Just(Some(("active_form", Value::from("Aliasing")))),
        1 => Just(Some(("activeForm", Value::from("  ")))),
        1 => Just(None),
    ]
}

fn item() -> impl Strategy<Value = Value> {
    prop_oneof![
        20 => (content(), status(), id(), active_form()).prop_map(|(c, s, i, a)| {
            let mut m = Map::new();
            m.insert("content".into(), c);
            if let Some(s) = s {
                m.insert("status".into(), s);
            }
            if let Some(i) = i {
                m.insert("id".into(), i);
            }
            if let Some((k, v)) = a {
                m.insert(k.into(), v);
            }
            Value::Object(m)
        }),
        1 => Just(json!("not an object")),
        1 => Just(json!(null)),
    ]
}

const NAMES: [&str; 24] = [
    "Read code",
    "Write code",
    "Run tests",
    "Build",
    "Ship",
    "Fix bug",
    "Refactor",
    "Lint",
    "Format",
    "Review",
    "Deploy",
    "Document",
    "Benchmark",
    "Profile",
    "Plan",
    "Merge",
    "Rebase",
    "Tag",
    "Release",
    "Announce",
    "Clean up",
    "Triage",
    "Measure",
    "Celebrate",
];

/// A list that is usually valid: distinct contents, rare in_progress, a few
/// given ids, and now and then one item swapped for a random (maybe bad) one.
fn mostly_valid_list() -> impl Strategy<Value = Value> {
    let status = prop_oneof![
        30 => prop::sample::select(vec!["pending", "completed", "Pending", "not-started", "COMPLETED"]),
        2 => prop::sample::select(vec!["in_progress", "In-Progress", "inprogress"]),
    ];
    let id = prop_oneof![
        20 => Just(None),
        1 => prop::sample::select(vec!["1", "2", "3", "x", "y"]).prop_map(|s| Some(Value::from(s))),
        1 => (0u8..8).prop_map(|n| Some(Value::from(n))),
    ];
    (
        prop::sample::subsequence(NAMES.to_vec(), 0..=MAX_ITEMS + 1),
        prop::collection::vec((status, id), MAX_ITEMS + 1),
        prop::option::weighted(0.2, (any::<prop::sample::Index>(), item())),
    )
        .prop_map(|(names, extras, noise)| {
            let mut items: Vec<Value> = names
                .into_iter()
                .zip(extras)
                .map(|(name, (status, id))| {
                    let mut v = json!({
                        "content": name,
                        "activeForm": format!("Doing {name}"),
                        "status": status,
                    });
                    if let Some(id) = id {
                        v["id"] = id;
                    }
                    v
                })
                .collect();
            if let Some((at, bad)) = noise
                && !items.is_empty()
            {
                let at = at.index(items.len());
                items[at] = bad;
            }
            Value::Array(items)
        })
}

fn list() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => mostly_valid_list(),
        1 => prop::collection::vec(item(), 0..24).prop_map(Value::Array),
    ]
}

/// A `todos` value: usually an array, sometimes encoded as a string.
fn todos() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => list(),
        2 => list().prop_map(|v| Value::String(v.to_string())),
        1 => list().prop_map(|v| json!({ "todos": v })),
        1 => Just(json!(42)),
    ]
}

/// Pieces that, glued together, look like (possibly broken) Python lists.
fn python_ish() -> impl Strategy<Value = String> {
    let tokens = vec![
        "[",
        "]",
        "{",
        "}",
        "(",
        ")",
        ",",
        ":",
        " ",
        "\n",
        "#c\n",
        "'content'",
        "\"activeForm\"",
        "'status'",
        "'pending'",
        "'in_progress'",
        "'completed'",
        "'id'",
        "True",
        "False",
        "None",
        "1",
        "-2",
        "3.5",
        "1e3",
        "0x1F",
        "1_0",
        "'a\\'b'",
        "'\\x4",
        "'\\u12",
        "'\\ud83d\\ude00'",
        "\\",
        "'''",
        "\"\"\"",
        "r'",
        "u'",
        "b'",
        "'",
        "\"",
        "'\\N{DASH}'",
        "nan",
        "-",
        ".",
        "é",
        "\\\n",
        "'\\777'",
        "'\\U0010FFFF'",
        "'\\UFFFFFFFF'",
    ];
    prop::collection::vec(prop::sample::select(tokens), 0..60).prop_map(|parts| parts.concat())
}

/// A well-formed Python list of items, to check the parser accepts it.
fn python_list() -> impl Strategy<Value = String> {
    let entry = (
        prop::sample::select(vec![
            "Read code",
            "Write 'code'",
            "Run \"tests\"",
            "Build\\n",
            "Ship it",
        ]),
        prop::sample::select(vec!["pending", "completed"]),
        prop::bool::ANY,
    );
    prop::collection::vec(entry, 0..5).prop_map(|entries| {
        let mut out = String::from("[");
        let mut seen = HashSet::new();
        for (content, status, trailing) in entries {
            if !seen.insert(content) {
                continue;
            }
            let quoted = format!("'{}'", content.replace('\\', "\\\\").replace('\'', "\\'"));
            out.push_str(&format!(
                "{{'content': {quoted}, 'activeForm': 'Doing', 'status': '{status}', 'x': (None, True, 1.5,)}}"
            ));
            out.push_str(if trailing { ",\n" } else { ", " });
        }
        out.push(']');
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn updates_keep_every_rule(seq in prop::collection::vec(todos(), 1..8)) {
        let mut m = TodoManager::new();
        let mut ever: HashSet<String> = HashSet::new();
        for v in &seq {
            let before = m.items().to_vec();
            let before_render = m.render();
            match m.update(v) {
                Ok(diff) => {
                    check_invariants(m.items());
                    let old_ids: HashSet<&str> = before.iter().map(|i| i.id.as_str()).collect();
                    let added = m.items().iter().filter(|i| !old_ids.contains(i.id.as_str())).count();
                    prop_assert_eq!(diff.added.len(), added);
                    for c in &diff.started {
                        prop_assert_eq!(m.in_progress().map(|i| &i.content), Some(c));
                    }
                    for c in &diff.completed {
                        prop_assert!(m.items().iter().any(|i| &i.content == c && i.status == TodoStatus::Completed));
                    }
                    prop_assert_eq!(
                        before.len() + diff.added.len(),
                        m.items().len() + diff.removed.len()
                    );
                    // Same content with no given id keeps the old id.
                    if let Value::Array(raw) = v {
                        for (new, raw) in m.items().iter().zip(raw) {
                            if raw.get("id").is_none()
                                && let Some(old) = before.iter().find(|o| o.content.to_lowercase() == new.content.to_lowercase())
                                && !m.items().iter().any(|n| n.id == old.id && n.content != new.content)
                            {
                                prop_assert_eq!(&new.id, &old.id);
                            }
                        }
                    }
                    // An id the counter hands out was never used before in this plan's life.
                    if let Value::Array(raw) = v {
                        for (new, raw) in m.items().iter().zip(raw) {
                            let given = raw.get("id").is_some_and(|id| !id.is_null() && id != "");
                            if !given && !old_ids.contains(new.id.as_str()) {
                                prop_assert!(!ever.contains(&new.id), "id {} was reused", new.id);
                            }
                        }
                    }
                    ever.extend(m.items().iter().map(|i| i.id.clone()));
                }
                Err(e) => {
                    prop_assert!(!e.0.is_empty());
                    prop_assert_eq!(m.items(), before.as_slice());
                    prop_assert_eq!(m.render(), before_render);
                }
            }
        }
        // A restored copy of the final list is accepted as is.
        let restored = TodoManager::restore(m.items().to_vec()).unwrap();
        prop_assert_eq!(restored.items(), m.items());
    }

    #[test]
    fn any_string_never_panics(s in any::<String>()) {
        let mut m = TodoManager::new();
        let _ = m.update(&Value::String(s.clone()));
        check_invariants(m.items());
        let _ = parse_python_literal(&s);
    }

    #[test]
    fn python_ish_strings_never_panic(s in python_ish()) {
        let mut m = TodoManager::new();
        let before = m.items().to_vec();
        if m.update(&Value::String(s.clone())).is_err() {
            prop_assert_eq!(m.items(), before.as_slice());
        }
        check_invariants(m.items());
        let _ = parse_python_literal(&s);
    }

    #[test]
    fn python_lists_are_read(s in python_list()) {
        let mut m = TodoManager::new();
        let parsed = m.update(&Value::String(s.clone()));
        prop_assert!(parsed.is_ok(), "{:?} refused: {:?}", s, parsed);
        check_invariants(m.items());
        for item in m.items() {
            prop_assert!(["Read code", "Write 'code'", "Run \"tests\"", "Build\\n", "Ship it"].contains(&item.content.as_str()));
        }
    }
}
