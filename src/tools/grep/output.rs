//! What the model reads of a search: the files newest first (then by
//! path), the page `offset`/`head_limit` asks for, and footers that say
//! what was left out and how to narrow it, and which files were skipped.

use super::search::{FileHit, Found, Line, MAX_KEPT};
use super::{MAX_FILE, Mode, Query};

/// How many skipped files are named (the rest are counted).
const NAMED: usize = 5;

/// The result text of `found` for `query`.
pub fn render(query: &Query, mut found: Found) -> String {
    found.files.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    let entries = entries(query, &found.files);
    let total = entries.len();
    let shown: Vec<&String> = entries
        .iter()
        .skip(query.offset)
        .take(query.limit)
        .collect();
    let mut out = if total == 0 {
        format!("No matches for `{}`.", query.pattern)
    } else if shown.is_empty() {
        format!(
            "No results past offset {} (there are {total}).",
            query.offset
        )
    } else {
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let unit = match query.mode {
        Mode::Content => "lines",
        Mode::Files | Mode::Count => "files",
    };
    let end = query.offset + shown.len();
    if end < total {
        out.push_str(&format!(
            "\n[{} of {total} {unit} shown (from {}). Narrow the search with path, glob or type, or see the next ones with offset={end}.]",
            shown.len(),
            query.offset + 1
        ));
    }
    if found.capped {
        out.push_str(&format!(
            "\n[The search kept the first {MAX_KEPT} lines it found: there are more. Narrow it with path, glob or type.]"
        ));
    }
    if query.mode == Mode::Count && total > 0 {
        let all: u64 = found.files.iter().map(|f| f.count).sum();
        out.push_str(&format!("\n[{all} matching lines in {total} files.]"));
    }
    out.push_str(&skipped(&found));
    out
}

/// Every entry in order: a path, a `path:count`, or a content line.
fn entries(query: &Query, files: &[FileHit]) -> Vec<String> {
    match query.mode {
        Mode::Files => files.iter().map(|f| f.path.clone()).collect(),
        Mode::Count => files
            .iter()
            .map(|f| format!("{}:{}", f.path, f.count))
            .collect(),
        Mode::Content => {
            let mut out = Vec::new();
            for file in files {
                if !out.is_empty() && query.context != (0, 0) {
                    out.push("--".to_string());
                }
                for line in &file.lines {
                    out.push(match (line, query.line_numbers) {
                        (Line::Match(n, text), true) => format!("{}:{n}:{text}", file.path),
                        (Line::Context(n, text), true) => format!("{}-{n}-{text}", file.path),
                        (Line::Match(_, text), false) => format!("{}:{text}", file.path),
                        (Line::Context(_, text), false) => format!("{}-{text}", file.path),
                        (Line::Break, _) => "--".to_string(),
                    });
                }
            }
            out
        }
    }
}

/// The footer naming what was not searched.
fn skipped(found: &Found) -> String {
    let mut out = String::new();
    let named = |names: Vec<String>| {
        let more = names.len().saturating_sub(NAMED);
        let mut list: Vec<String> = names.into_iter().take(NAMED).collect();
        if more > 0 {
            list.push(format!("and {more} more"));
        }
        list.join(", ")
    };
    if !found.binary.is_empty() {
        let mut names = found.binary.clone();
        names.sort();
        out.push_str(&format!(
            "\n[Skipped {} binary file(s): {}.]",
            names.len(),
            named(names)
        ));
    }
    if !found.huge.is_empty() {
        let mut names: Vec<String> = found
            .huge
            .iter()
            .map(|(p, size)| format!("{p} ({} MiB)", size / (1024 * 1024)))
            .collect();
        names.sort();
        out.push_str(&format!(
            "\n[Skipped {} file(s) over {} MiB: {}. Search one with read_file, or bash and a narrower tool.]",
            names.len(),
            MAX_FILE / (1024 * 1024),
            named(names)
        ));
    }
    if !found.unreadable.is_empty() {
        let mut names: Vec<String> = found
            .unreadable
            .iter()
            .map(|(p, why)| format!("{p} ({why})"))
            .collect();
        names.sort();
        out.push_str(&format!(
            "\n[Could not read {} file(s): {}.]",
            names.len(),
            named(names)
        ));
    }
    out
}
