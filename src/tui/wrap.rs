//! Plain-text wrapping by display width, with prefixes (a marker on the
//! first line, a hanging indent after). Invariant: no line is wider than
//! the width asked for, whatever the text (wide characters, tabs, controls).
//! The wrapping itself is the Markdown renderer's ([`wrap_text`]): one
//! implementation of where lines break.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use crate::tui::markdown::wrap_text;

/// Wraps `text` (its `\n`s kept) into lines of at most `width` columns;
/// `first` starts the first line, `rest` every other (hanging indent).
pub fn wrap(
    text: &str,
    width: u16,
    style: Style,
    first: Span<'static>,
    rest: Span<'static>,
) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    // A prefix that leaves no room for text is dropped.
    let fit = |p: Span<'static>| if p.width() >= width { Span::raw("") } else { p };
    let (first, rest) = (fit(first), fit(rest));
    // No escape sequence or control reaches the screen (`\n`, `\t` stay).
    let text = crate::text::clean(text);
    let text = crate::text::expand_tabs(&text, 8);
    let rows = wrap_text(&text, style, width - first.width(), width - rest.width());
    if rows.is_empty() {
        return vec![Line::from(vec![first])];
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let prefix = if i == 0 { first.clone() } else { rest.clone() };
            let mut spans = vec![prefix];
            spans.extend(row.into_iter().map(|(t, s)| Span::styled(t, s)));
            Line::from(spans)
        })
        .collect()
}

pub fn str_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` as one clean line (no escape sequences, controls or line breaks),
/// cut to at most `width` columns, with `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    let s = crate::text::clean_line(s);
    if str_width(&s) <= width {
        return s.into_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > width {
            break;
        }
        out.push(c);
        used += cw;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// The text of each line, for tests.
#[cfg(test)]
pub(crate) fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_words_with_a_hanging_indent() {
        let lines = wrap(
            "the quick brown fox jumps",
            12,
            Style::new(),
            Span::raw("› "),
            Span::raw("  "),
        );
        assert_eq!(plain(&lines), ["› the quick", "  brown fox", "  jumps"]);
    }

    #[test]
    fn never_exceeds_the_width() {
        let text =
            "héllo 😀😀😀 日本語のテキスト averyveryverylongwordthatneverends\tтаб\nsecond line";
        for w in 1..30u16 {
            for line in wrap(text, w, Style::new(), Span::raw("• "), Span::raw("  ")) {
                assert!(line.width() <= usize::from(w), "width {w}: {line:?}");
            }
        }
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("ab", 4), "ab");
        assert_eq!(truncate("a\x1b]0;pwned\x07b\nc", 10), "ab c");
    }

    #[test]
    fn escape_sequences_never_reach_a_line() {
        let lines = wrap(
            "safe\x1b]0;pwned\x07 text\x1b[2J\tend",
            40,
            Style::new(),
            Span::raw(""),
            Span::raw(""),
        );
        // The tab goes to its stop (column 16).
        assert_eq!(plain(&lines), ["safe text       end"]);
    }

    #[test]
    fn keeps_a_run_of_spaces_and_fits_each_prefix() {
        let lines = wrap("a  b    c", 40, Style::new(), Span::raw(""), Span::raw(""));
        assert_eq!(plain(&lines), ["a  b    c"]);
        // A wide first prefix leaves the first line less room than the rest.
        let lines = wrap(
            "one two three four",
            12,
            Style::new(),
            Span::raw("queued › "),
            Span::raw("  "),
        );
        assert_eq!(plain(&lines), ["queued › one", "  two three", "  four"]);
    }

    #[test]
    fn keeps_empty_lines() {
        let lines = wrap("a\n\nb", 10, Style::new(), Span::raw(""), Span::raw(""));
        assert_eq!(plain(&lines), ["a", "", "b"]);
    }
}
