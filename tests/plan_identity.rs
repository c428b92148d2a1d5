//! The plan's diff tells the truth whatever ids the model sends: random
//! plan pairs (items kept, reworded, removed, added, moved, restatused)
//! under four id schemes (none, stable, positional, shuffled). Invariants:
//! a dropped or removed item's text never appears in the new list; every
//! old item not in the new list is reported once (removed, or reworded
//! into a new text); and the note `todo_write` gives the model names no
//! item the list it returns still holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{Value, json};
use waypoint::todo::{PlanDiff, TodoManager};
use waypoint::tools::todo::dropped_note;

const WORDS: &[&str] = &[
    "Read", "Write", "Run", "Fix", "Build", "Ship", "Test", "Docs", "parser", "lexer", "tests",
    "module", "config", "alpha", "bravo", "charlie",
];

#[derive(Clone, Copy, Debug)]
enum Ids {
    None,
    Stable,
    Positional,
    Shuffled,
}

/// An item's text of 1 to 3 words.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..4).prop_map(|w| w.join(" "))
}

fn status() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["pending", "in_progress", "completed"])
}

/// What happens to an old item: kept, kept with a word added, or removed.
#[derive(Clone, Debug)]
enum Fate {
    Keep,
    Reword(&'static str),
    Remove,
}

fn fate() -> impl Strategy<Value = Fate> {
    prop_oneof![
        4 => Just(Fate::Keep),
        2 => prop::sample::select(WORDS).prop_map(Fate::Reword),
        2 => Just(Fate::Remove),
    ]
}

/// Distinct texts (case-insensitively) with at most one in progress.
fn plan_items(texts: Vec<String>, statuses: Vec<&'static str>) -> Vec<(String, &'static str)> {
    let mut seen = HashSet::new();
    let mut running = false;
    texts
        .into_iter()
        .zip(statuses)
        .filter(|(t, _)| seen.insert(t.to_lowercase()))
        .map(|(t, s)| {
            let s = if s == "in_progress" && std::mem::replace(&mut running, true) {
                "pending"
            } else {
                s
            };
            (t, s)
        })
        .collect()
}

fn to_json(items: &[(String, &str, Option<String>)]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|(c, s, id)| {
                let mut v = json!({"content": c, "activeForm": format!("Doing {c}"), "status": s});
                if let Some(id) = id {
                    v["id"] = json!(id);
                }
                v
            })
            .collect(),
    )
}

/// Ids for a list under a scheme; `stable` gives each text the id it had.
fn with_ids(
    items: &[(String, &'static str)],
    scheme: Ids,
    stable: &dyn Fn(&str) -> String,
    perm: &[usize],
) -> Vec<(String, &'static str, Option<String>)> {
    items
        .iter()
        .enumerate()
        .map(|(i, (c, s))| {
            let id = match scheme {
                Ids::None => None,
                Ids::Stable => Some(stable(c)),
                Ids::Positional => Some((i + 1).to_string()),
                Ids::Shuffled => Some((perm[i % perm.len()] + 1).to_string()),
            };
            (c.clone(), *s, id)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn the_diff_never_says_something_false(
        old_texts in prop::collection::vec(text(), 1..8),
        old_status in prop::collection::vec(status(), 8),
        fates in prop::collection::vec(fate(), 8),
        new_status in prop::collection::vec(status(), 16),
        added in prop::collection::vec(text(), 0..4),
        order in prop::collection::vec(any::<u8>(), 16),
        scheme in prop::sample::select(vec![Ids::None, Ids::Stable, Ids::Positional, Ids::Shuffled]),
        perm_seed in prop::collection::vec(any::<u8>(), 16),
    ) {
        let old = plan_items(old_texts, old_status);
        // The new list: each old item's fate, then new items, in a new order.
        let mut next: Vec<String> = Vec::new();
        for ((text, _), fate) in old.iter().zip(fates.iter().cycle()) {
            match fate {
                Fate::Keep => next.push(text.clone()),
                Fate::Reword(w) => next.push(format!("{text} {w}")),
                Fate::Remove => {}
            }
        }
        next.extend(added);
        let mut keyed: Vec<(u8, String)> = order.iter().copied().zip(next).collect();
        keyed.sort_by_key(|(k, _)| *k);
        let new = plan_items(keyed.into_iter().map(|(_, t)| t).collect(), new_status);

        // A permutation of 0..16 for shuffled ids.
        let mut perm: Vec<usize> = (0..16).collect();
        let mut by_seed: Vec<(u8, usize)> = perm_seed.iter().copied().zip(perm.clone()).collect();
        by_seed.sort();
        perm = by_seed.into_iter().map(|(_, i)| i).collect();
        let stable_ids: Vec<String> = old.iter().map(|(c, _)| c.to_lowercase()).collect();
        let stable = |c: &str| {
            stable_ids
                .iter()
                .position(|s| *s == c.to_lowercase())
                .map(|i| format!("s{i}"))
                .unwrap_or_else(|| format!("n-{}", c.to_lowercase().replace(' ', "-")))
        };

        let mut m = TodoManager::new();
        m.update(&to_json(&with_ids(&old, scheme, &stable, &perm))).unwrap();
        let diff: PlanDiff = m.update(&to_json(&with_ids(&new, scheme, &stable, &perm))).unwrap();
        let new_keys: HashSet<String> = m.items().iter().map(|i| i.content.to_lowercase()).collect();

        for gone in diff.removed.iter().chain(&diff.dropped) {
            prop_assert!(!new_keys.contains(&gone.to_lowercase()), "{gone:?} reported gone but listed: {diff:?}");
        }
        for r in &diff.reworded {
            prop_assert!(!new_keys.contains(&r.from.to_lowercase()), "{r:?} reworded from a text still listed");
            prop_assert!(new_keys.contains(&r.to.to_lowercase()), "{r:?} reworded into a text not listed");
        }
        for (text, _) in &old {
            let key = text.to_lowercase();
            let reported = diff.removed.iter().filter(|r| r.to_lowercase() == key).count()
                + diff.reworded.iter().filter(|r| r.from.to_lowercase() == key).count();
            let expected = usize::from(!new_keys.contains(&key));
            prop_assert_eq!(reported, expected, "{:?} reported {} times: {:?}", text, reported, diff);
        }
        let note = dropped_note(&diff.dropped);
        for item in m.items() {
            prop_assert!(!note.contains(&format!("\"{}\"", item.content)), "the note names {:?}, still listed: {}", item.content, note);
        }
    }
}
