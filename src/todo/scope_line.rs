//! An item's scope in the plan file: one indented line each for its
//! `files` and `commands`, every entry a Markdown code span
//! (`` - files: `src/parser/**`, `README.md` ``). Invariant: what
//! `render` writes, `parse` reads back to the same lists (an entry holding
//! backticks gets a longer fence); a hand-written line without code spans
//! is read as comma-separated entries.

use std::fmt::Write as _;

use super::ItemScope;

/// The lines `scope` adds under its item (none when it declares nothing).
pub fn render(scope: &ItemScope) -> String {
    let mut out = String::new();
    for (label, entries) in [("files", &scope.files), ("commands", &scope.commands)] {
        if entries.is_empty() {
            continue;
        }
        let spans: Vec<String> = entries.iter().map(|e| code_span(e)).collect();
        let _ = writeln!(out, "  - {label}: {}", spans.join(", "));
    }
    if let Some(check) = &scope.check {
        let _ = writeln!(out, "  - check: {}", code_span(check));
    }
    out
}

/// Which list a line (trimmed) names, and its entries; `None` for any
/// other line.
pub fn parse(line: &str) -> Option<(Field, Vec<String>)> {
    let rest = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))?
        .trim_start();
    let (field, rest) = if let Some(r) = rest.strip_prefix("files:") {
        (Field::Files, r)
    } else if let Some(r) = rest.strip_prefix("commands:") {
        (Field::Commands, r)
    } else if let Some(r) = rest.strip_prefix("check:") {
        // One command: commas are its own.
        let r = r.trim();
        let command = match entries(r).as_slice() {
            [one] if r.starts_with('`') => one.clone(),
            _ => r.to_string(),
        };
        let command: Vec<String> = Some(command)
            .into_iter()
            .filter(|c| !c.is_empty())
            .collect();
        return Some((Field::Check, command));
    } else {
        return None;
    };
    Some((field, entries(rest)))
}

/// The two lists a scope line fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Files,
    Commands,
    /// The item's check (one command).
    Check,
}

/// `text` as a code span: a fence one backtick longer than any run in it,
/// padded with a space when it starts or ends with a backtick.
fn code_span(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// The entries of a scope line after its label: code spans, or plain
/// text up to the next comma; empty entries are dropped.
fn entries(mut rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        if rest.is_empty() {
            return out;
        }
        let fence = rest.len() - rest.trim_start_matches('`').len();
        let (entry, after) = if fence > 0 {
            closed_span(&rest[fence..], fence).unwrap_or((rest, ""))
        } else {
            match rest.split_once(',') {
                Some((entry, after)) => (entry, after),
                None => (rest, ""),
            }
        };
        let entry = entry.trim();
        if !entry.is_empty() {
            out.push(entry.to_string());
        }
        rest = after;
    }
}

/// The span's text up to the closing run of exactly `fence` backticks
/// (one pad space each side removed), and what follows it.
fn closed_span(text: &str, fence: usize) -> Option<(&str, &str)> {
    let mut at = 0;
    while let Some(start) = text[at..].find('`').map(|i| i + at) {
        let run = text[start..].len() - text[start..].trim_start_matches('`').len();
        if run == fence {
            let inner = &text[..start];
            let inner = match (inner.strip_prefix(' '), inner.ends_with(' ')) {
                (Some(trimmed), true) if !trimmed.is_empty() => &trimmed[..trimmed.len() - 1],
                _ => inner,
            };
            return Some((inner, &text[start + run..]));
        }
        at = start + run;
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn round_trip(scope: &ItemScope) -> ItemScope {
        let mut back = ItemScope::default();
        for line in render(scope).lines() {
            let (field, entries) = parse(line.trim()).unwrap();
            match field {
                Field::Files => back.files = entries,
                Field::Commands => back.commands = entries,
                Field::Check => back.check = entries.into_iter().next(),
            }
        }
        back
    }

    #[test]
    fn a_scope_round_trips_through_its_lines() {
        let scope = ItemScope {
            files: vec!["src/parser/**".into(), "docs/{a,b}.md".into()],
            commands: vec![
                "cargo test --features a,b".into(),
                "echo `date`".into(),
                "`x`".into(),
                "a ``b`` c".into(),
            ],
            check: Some("cargo test -p a,b && test -f `x`".into()),
        };
        assert_eq!(
            render(&scope).lines().next().unwrap(),
            "  - files: `src/parser/**`, `docs/{a,b}.md`"
        );
        assert_eq!(round_trip(&scope), scope);
        assert_eq!(render(&ItemScope::default()), "");
        let files_only = ItemScope {
            files: vec!["README.md".into()],
            ..ItemScope::default()
        };
        assert_eq!(round_trip(&files_only), files_only);
    }

    #[test]
    fn hand_written_lines_are_read_as_commas() {
        assert_eq!(
            parse("- files: src/a.rs, src/b.rs ,"),
            Some((Field::Files, vec!["src/a.rs".into(), "src/b.rs".into()]))
        );
        assert_eq!(
            parse("* commands: `cargo test`, make"),
            Some((Field::Commands, vec!["cargo test".into(), "make".into()]))
        );
        // An unclosed span is the rest of the line.
        assert_eq!(
            parse("- files: `src/a.rs"),
            Some((Field::Files, vec!["`src/a.rs".into()]))
        );
        assert_eq!(parse("- [ ] files: x"), None);
        assert_eq!(parse("- notes: x"), None);
    }
}
