//! A file change as coloured `-`/`+` lines, for the trace's expanded view
//! and (with line numbers, wrapped) for the approval prompt. Invariant:
//! the model's text is cleaned before it is cut into lines, and the
//! numbered form never drops a character: long lines wrap.

use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};
use unicode_width::UnicodeWidthChar;

use crate::tui::style::Palette;

/// Changed lines shown at most.
const MAX_ROWS: usize = 400;

/// One line of a diff: what happened to it, its numbers in the old and
/// new text, and the text (clean, tabs expanded, no newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffRow {
    pub tag: ChangeTag,
    pub old: Option<usize>,
    pub new: Option<usize>,
    pub text: String,
}

/// The rows of a change from `old` to `new` (a new file: all added).
pub fn diff_rows(old: &str, new: &str) -> Vec<DiffRow> {
    let (old, new) = (clean_for_lines(old), clean_for_lines(new));
    let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
    diff.iter_all_changes()
        .take(MAX_ROWS)
        .map(|change| DiffRow {
            tag: change.tag(),
            old: change.old_index().map(|i| i + 1),
            new: change.new_index().map(|i| i + 1),
            text: change.value().trim_end_matches('\n').to_string(),
        })
        .collect()
}

fn marker(p: Palette, tag: ChangeTag) -> (&'static str, ratatui::style::Style) {
    match tag {
        ChangeTag::Delete => ("- ", p.diff_removed()),
        ChangeTag::Insert => ("+ ", p.diff_added()),
        ChangeTag::Equal => ("  ", p.dim()),
    }
}

/// `-`/`+` lines for a change from `old` to `new` (a new file: all added).
pub fn diff_lines(p: Palette, old: &str, new: &str) -> Vec<Line<'static>> {
    diff_rows(old, new)
        .into_iter()
        .map(|row| {
            let (mark, style) = marker(p, row.tag);
            Line::styled(format!("{mark}{}", row.text), style)
        })
        .collect()
}

/// The diff with the old and new line numbers in a gutter, every line
/// wrapped to `width` columns (continuations under the text).
pub fn numbered_lines(p: Palette, old: &str, new: &str, width: u16) -> Vec<Line<'static>> {
    let rows = diff_rows(old, new);
    let digits = rows
        .iter()
        .flat_map(|r| [r.old, r.new])
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
        let (mark, style) = marker(p, row.tag);
        let gutter = format!("{} {} {mark}", num(row.old), num(row.new));
        for (i, piece) in hard_wrap(&row.text, text_w).into_iter().enumerate() {
            let lead = if i == 0 {
                gutter.clone()
            } else {
                " ".repeat(gutter_w)
            };
            out.push(Line::from(vec![
                Span::styled(lead, p.dim()),
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
    if clean.contains('\t') {
        std::borrow::Cow::Owned(clean.replace('\t', "    "))
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lines_keep_every_character() {
        let lines = numbered_lines(Palette::monochrome(), "a\nb\n", "a\nc and more text\n", 12);
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
}
