//! A file change as numbered, coloured `-`/`+` lines with a few lines of
//! context around each change and `⋯` where unchanged lines are skipped,
//! for the trace's expanded view and the approval prompt. Invariant: the
//! model's text is cleaned before it is cut into lines, and no shown line
//! drops a character: long lines wrap under their text.

use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};
use unicode_width::UnicodeWidthChar;

use crate::tui::style::Palette;

/// Lines shown at most (changed and context).
const MAX_ROWS: usize = 400;
/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// What stands for skipped unchanged lines.
pub const GAP: &str = "⋯";

/// One line of a diff: what happened to it, its numbers in the old and
/// new text, and the text (clean, tabs expanded, no newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffRow {
    pub tag: ChangeTag,
    pub old: Option<usize>,
    pub new: Option<usize>,
    pub text: String,
}

/// A shown line, or unchanged (or unshown) lines skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Row(DiffRow),
    Gap,
}

/// The rows of a change from `old` to `new` (a new file: all added), the
/// changes with [`CONTEXT`] lines around them, numbered from `first` (the
/// line where the changed text starts in its file, 1 if unknown).
pub fn diff_rows(old: &str, new: &str, first: usize) -> Vec<DiffLine> {
    let (old, new) = (clean_for_lines(old), clean_for_lines(new));
    let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
    let base = first.max(1);
    let old_len = diff.ops().last().map_or(0, |op| op.old_range().end);
    let mut out = Vec::new();
    let mut shown = 0;
    let groups = diff.grouped_ops(CONTEXT);
    for (i, group) in groups.iter().enumerate() {
        // Skipped lines before this hunk (between hunks, or at the start).
        let starts_late = group
            .first()
            .is_some_and(|op| op.old_range().start > 0 || op.new_range().start > 0);
        if i > 0 || starts_late {
            out.push(DiffLine::Gap);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                if shown == MAX_ROWS {
                    out.push(DiffLine::Gap);
                    return out;
                }
                shown += 1;
                out.push(DiffLine::Row(DiffRow {
                    tag: change.tag(),
                    old: change.old_index().map(|i| i + base),
                    new: change.new_index().map(|i| i + base),
                    text: change.value().trim_end_matches('\n').to_string(),
                }));
            }
        }
    }
    // Unchanged lines after the last hunk.
    let ends_early = groups
        .last()
        .and_then(|g| g.last())
        .is_some_and(|op| op.old_range().end < old_len);
    if ends_early {
        out.push(DiffLine::Gap);
    }
    out
}

pub use crate::tui::measure::diff_stats;

fn marker(p: Palette, tag: ChangeTag) -> (&'static str, ratatui::style::Style) {
    match tag {
        ChangeTag::Delete => ("- ", p.diff_removed()),
        ChangeTag::Insert => ("+ ", p.diff_added()),
        ChangeTag::Equal => ("  ", p.dim()),
    }
}

/// The diff with the old and new line numbers in a gutter, every line
/// wrapped to `width` columns (continuations under the text); numbered
/// from `first` (see [`diff_rows`]).
pub fn numbered_lines(
    p: Palette,
    old: &str,
    new: &str,
    first: usize,
    width: u16,
) -> Vec<Line<'static>> {
    let rows = diff_rows(old, new, first);
    let digits = rows
        .iter()
        .filter_map(|r| match r {
            DiffLine::Row(r) => Some([r.old, r.new]),
            DiffLine::Gap => None,
        })
        .flatten()
        .flatten()
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let num = |n: Option<usize>| n.map_or_else(|| " ".repeat(digits), |n| format!("{n:>digits$}"));
    let gutter_w = 2 * digits + 4;
    let text_w = usize::from(width).saturating_sub(gutter_w).max(1);
    let mut out = Vec::new();
    for row in rows {
        let row = match row {
            DiffLine::Row(row) => row,
            DiffLine::Gap => {
                let lead = " ".repeat(digits.saturating_sub(1));
                out.push(Line::styled(format!("{lead}{GAP}"), p.dim()));
                continue;
            }
        };
        let (mark, style) = marker(p, row.tag);
        let gutter = format!("{} {} ", num(row.old), num(row.new));
        for (i, piece) in hard_wrap(&row.text, text_w).into_iter().enumerate() {
            let (lead, mark) = if i == 0 {
                (gutter.clone(), mark)
            } else {
                (" ".repeat(gutter_w - 2), "  ")
            };
            out.push(Line::from(vec![
                Span::styled(lead, p.dim()),
                Span::styled(mark, style),
                Span::styled(piece, style),
            ]));
        }
    }
    out
}

/// `text` (one clean line) cut into pieces of at most `width` columns,
/// spaces and all; an empty line is one empty piece.
pub fn hard_wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !line.is_empty() {
            out.push(std::mem::take(&mut line));
            used = 0;
        }
        line.push(c);
        used += w;
    }
    out.push(line);
    out
}

/// The model's text for a diff: no escape sequences or controls, tabs expanded.
pub fn clean_for_lines(text: &str) -> std::borrow::Cow<'_, str> {
    let clean = crate::text::clean(text);
    match crate::text::expand_tabs(&clean, 4) {
        std::borrow::Cow::Borrowed(_) => clean,
        std::borrow::Cow::Owned(expanded) => std::borrow::Cow::Owned(expanded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lines_keep_every_character() {
        let lines = numbered_lines(
            Palette::monochrome(),
            "a\nb\n",
            "a\nc and more text\n",
            1,
            12,
        );
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(text[0], "1 1   a");
        assert_eq!(text[1], "2   - b");
        assert_eq!(text[2], "  2 + c and ");
        assert_eq!(text[3], "      more t");
        assert_eq!(text[4], "      ext");
        assert_eq!(hard_wrap("", 3), vec![String::new()]);
    }

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn hunks_keep_three_lines_of_context_and_gaps_between() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 17\n", "line 17\nadded\n");
        let text = texts(&numbered_lines(Palette::monochrome(), &old, &new, 10, 40));
        assert_eq!(
            text,
            [
                "10 10   line 1",
                "11    - line 2",
                "   11 + line two",
                "12 12   line 3",
                "13 13   line 4",
                "14 14   line 5",
                " ⋯",
                "24 24   line 15",
                "25 25   line 16",
                "26 26   line 17",
                "   27 + added",
                "27 28   line 18",
                "28 29   line 19",
                "29 30   line 20",
            ]
        );
        assert_eq!(diff_stats(&old, &new), (2, 1));
        // Unchanged lines before and after a lone change are skipped too.
        let one = old.replace("line 10\n", "ten\n");
        let text = texts(&numbered_lines(Palette::monochrome(), &old, &one, 1, 40));
        assert_eq!(text.first().map(String::as_str), Some(" ⋯"));
        assert_eq!(text.last().map(String::as_str), Some(" ⋯"));
        assert_eq!(text.len(), 2 + 3 + 2 + 3);
    }

    #[test]
    fn colours_mark_added_and_removed_lines() {
        let p = Palette::colored();
        let lines = numbered_lines(p, "a\n", "b\n", 1, 20);
        assert_eq!(lines[0].spans[1].style, p.diff_removed());
        assert_eq!(lines[0].spans[2].style, p.diff_removed());
        assert_eq!(lines[1].spans[1].style, p.diff_added());
        assert_eq!(lines[1].spans[0].style, p.dim());
    }
}
