//! What the app's state counts and writes short, below both the state and
//! the widgets (each uses it; neither reaches into the other for it): a
//! call's duration, a clock, a change's added and removed lines.
//! Invariant: pure functions of their arguments.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// `m:ss`, or `h:mm:ss` past an hour.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A compact duration for finished calls: `850 ms`, `4.2 s`, `1:03`.
pub fn short_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        clock(d)
    }
}

/// Lines added and removed from `old` to `new`.
pub fn diff_stats(old: &str, new: &str) -> (usize, usize) {
    let diff = TextDiff::from_lines(old, new);
    diff.iter_all_changes()
        .fold((0, 0), |(added, removed), c| match c.tag() {
            ChangeTag::Insert => (added + 1, removed),
            ChangeTag::Delete => (added, removed + 1),
            ChangeTag::Equal => (added, removed),
        })
}
