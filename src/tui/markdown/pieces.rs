//! Styled pieces of text and their wrapping to a width, for the Markdown
//! renderer: grapheme-aware cuts, hard cuts of words wider than a line,
//! and trimming. Invariant: no piece ever makes a line wider than asked.

use ratatui::style::Style;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::{ELLIPSIS, Piece, ZWJ};

/// Replaces tabs with `tab`; drops escape sequences and controls but `\n`.
pub(super) fn sanitize<'a>(text: &'a str, tab: &str) -> std::borrow::Cow<'a, str> {
    // Whole escape sequences go (not just their ESC); controls other than
    // line breaks and tabs never reach a line.
    let clean = crate::text::clean(text);
    if !clean.contains('\t') {
        return clean;
    }
    std::borrow::Cow::Owned(clean.replace('\t', tab))
}

/// Appends `text` to `pieces`, merging with the last piece when the style matches.
pub(super) fn push_piece(pieces: &mut Vec<Piece>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = pieces.last_mut()
        && last.1 == style
    {
        last.0.push_str(text);
    } else {
        pieces.push((text.to_string(), style));
    }
}

pub(super) fn trim_end(pieces: &mut Vec<Piece>) {
    while let Some(last) = pieces.last_mut() {
        let kept = last.0.trim_end().len();
        last.0.truncate(kept);
        if last.0.is_empty() {
            pieces.pop();
        } else {
            break;
        }
    }
}

/// Cuts `pieces` to at most `max` columns (keeping the left part).
pub(super) fn fit(pieces: Vec<Piece>, max: usize) -> (Vec<Piece>, usize) {
    let mut out = Vec::with_capacity(pieces.len());
    let mut used = 0;
    for (text, style) in pieces {
        let w = text.width();
        if used + w <= max && clusters(&text).map(|(_, c)| c.width()).sum::<usize>() == w {
            used += w;
            out.push((text, style));
            continue;
        }
        let mut kept = String::new();
        for (_, cluster) in clusters(&text) {
            let cw = cluster.width();
            if used + cw > max {
                break;
            }
            used += cw;
            kept.push_str(cluster);
        }
        push_piece(&mut out, &kept, style);
        if used >= max {
            break;
        }
    }
    (out, used)
}

/// A code line (styled `pieces`) cut to `avail` columns: when too wide, the
/// text up to `avail - 1` columns and a dimmed ellipsis.
pub(super) fn cut_pieces(pieces: Vec<Piece>, avail: usize, dim: Style) -> Vec<Piece> {
    let mut used = 0;
    // Where the text must end (piece, byte offset) if it turns out too wide.
    let mut cut = None;
    for (i, (text, _)) in pieces.iter().enumerate() {
        for (start, cluster) in clusters(text) {
            let cw = cluster.width();
            if cut.is_none() && used + cw > avail.saturating_sub(1) {
                cut = Some((i, start));
            }
            used += cw;
            if used > avail {
                let (ci, cb) = cut.unwrap_or((i, start));
                let mut out = Vec::new();
                for (text, style) in &pieces[..ci] {
                    push_piece(&mut out, text, *style);
                }
                if let Some((text, style)) = pieces.get(ci) {
                    push_piece(&mut out, text.get(..cb).unwrap_or_default(), *style);
                }
                push_piece(&mut out, ELLIPSIS, dim);
                return out;
            }
        }
    }
    pieces.into_iter().filter(|(t, _)| !t.is_empty()).collect()
}

/// Splits `text` into (byte offset, cluster) pairs: a base character followed
/// by its zero-width characters, with ZWJ-joined characters kept together.
pub(super) fn clusters(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = rest.next()?;
        let mut end = start + first.len_utf8();
        let mut prev = first;
        while let Some(&(i, c)) = rest.peek() {
            let joins = prev == ZWJ || (!c.is_control() && c.width() == Some(0));
            if !joins {
                break;
            }
            end = i + c.len_utf8();
            prev = c;
            rest.next();
        }
        Some((start, &text[start..end]))
    })
}

/// Greedy word wrap of styled `pieces` into lines of at most `avail` columns.
/// Spaces are break points (collapsed; dropped at line edges), `\n` forces a
/// break, wide characters may break on either side, and words longer than a
/// line are hard-broken. Trailing empty lines are dropped.
pub(super) fn wrap(pieces: &[Piece], avail: usize) -> Vec<Vec<Piece>> {
    let mut w = Wrapper::new(avail, avail, false);
    for (text, style) in pieces {
        w.push(text, *style);
    }
    w.finish()
}

/// The same wrap for plain text in one style, as written rather than as
/// Markdown: a run of spaces inside a line is kept (a user's alignment),
/// and the first line may have another width than the rest (a prefix).
pub fn wrap_text(text: &str, style: Style, first: usize, rest: usize) -> Vec<Vec<Piece>> {
    let mut w = Wrapper::new(first, rest, true);
    w.push(text, style);
    w.finish()
}

pub(super) struct Wrapper {
    /// The first line's columns, and every other line's.
    first: usize,
    rest: usize,
    /// Runs of spaces are kept as they are (plain text), not collapsed.
    keep_spaces: bool,
    /// How many spaces the pending run holds.
    spaces: usize,
    lines: Vec<Vec<Piece>>,
    line: Vec<Piece>,
    line_w: usize,
    word: Vec<Piece>,
    word_w: usize,
    /// Collapsed whitespace seen since the last word, with its style.
    space: Option<Style>,
}

impl Wrapper {
    fn new(first: usize, rest: usize, keep_spaces: bool) -> Wrapper {
        Wrapper {
            first: first.max(1),
            rest: rest.max(1),
            keep_spaces,
            spaces: 0,
            lines: Vec::new(),
            line: Vec::new(),
            line_w: 0,
            word: Vec::new(),
            word_w: 0,
            space: None,
        }
    }

    /// The columns of the line being filled.
    fn avail(&self) -> usize {
        if self.lines.is_empty() {
            self.first
        } else {
            self.rest
        }
    }

    fn push(&mut self, text: &str, style: Style) {
        for (i, segment) in text.split('\n').enumerate() {
            if i > 0 {
                self.finish_word();
                self.end_line();
            }
            for (_, cluster) in clusters(segment) {
                if cluster == " " {
                    self.finish_word();
                    self.space.get_or_insert(style);
                    self.spaces += 1;
                    continue;
                }
                let cw = cluster.width();
                if cw >= 2 {
                    // Wide (CJK, emoji): a break is allowed on either side.
                    self.finish_word();
                    push_piece(&mut self.word, cluster, style);
                    self.word_w = cw;
                    self.finish_word();
                } else {
                    push_piece(&mut self.word, cluster, style);
                    self.word_w += cw;
                }
            }
        }
    }

    fn finish_word(&mut self) {
        if self.word.is_empty() {
            return;
        }
        let word = std::mem::take(&mut self.word);
        let word_w = std::mem::take(&mut self.word_w);
        let join = match self.space {
            Some(style) if self.line_w > 0 => Some(style),
            _ => None,
        };
        let join_w = match join {
            Some(_) if self.keep_spaces => self.spaces,
            Some(_) => 1,
            None => 0,
        };
        if self.line_w + join_w + word_w <= self.avail() {
            if let Some(style) = join {
                push_piece(&mut self.line, &" ".repeat(join_w), style);
            }
            self.append(word, join_w + word_w);
        } else if word_w <= self.avail() {
            self.end_line();
            self.append(word, word_w);
        } else {
            if self.line_w > 0 {
                self.end_line();
            }
            for (text, style) in word {
                for (_, cluster) in clusters(&text) {
                    let (cluster, cw) = match cluster.width() {
                        cw if cw > self.avail() => (ELLIPSIS, 1),
                        cw => (cluster, cw),
                    };
                    if self.line_w + cw > self.avail() {
                        self.end_line();
                    }
                    push_piece(&mut self.line, cluster, style);
                    self.line_w += cw;
                }
            }
        }
        self.space = None;
        self.spaces = 0;
    }

    fn append(&mut self, word: Vec<Piece>, width: usize) {
        for (text, style) in word {
            push_piece(&mut self.line, &text, style);
        }
        self.line_w += width;
    }

    fn end_line(&mut self) {
        self.lines.push(std::mem::take(&mut self.line));
        self.line_w = 0;
        self.space = None;
        self.spaces = 0;
    }

    fn finish(mut self) -> Vec<Vec<Piece>> {
        self.finish_word();
        if !self.line.is_empty() {
            self.end_line();
        }
        while self.lines.last().is_some_and(|line| line.is_empty()) {
            self.lines.pop();
        }
        self.lines
    }
}
