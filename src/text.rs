//! Text from a model, a tool or a server made safe to show on a terminal.
//! Invariant: what these functions return holds no escape sequence and no
//! control character but `\n` and `\t` (one-line forms: neither), so it can
//! neither move the cursor, retitle the window, write the clipboard, switch
//! the terminal's mode nor overwrite what was printed before it.
//!
//! Whole sequences are removed, not just their ESC: CSI (`ESC [ … final`),
//! OSC (`ESC ] … BEL|ST`), DCS/SOS/PM/APC (`ESC P|X|^|_ … ST`), two-byte
//! escapes (`ESC c`, `ESC 7`, `ESC ( B`), and their 8-bit C1 forms. Other
//! C0 controls are made visible as Unicode control pictures (`␇`); a lone
//! `\r` becomes a line break (so nothing printed can be overwritten); other
//! C1 controls are dropped.

use std::borrow::Cow;
use std::fmt::Write as _;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// 8-bit String Terminator.
const ST: char = '\u{9c}';
/// Bytes kept while waiting for the end of a sequence split across pieces.
const MAX_PENDING: usize = 4096;

/// How a sequence starting at some index goes on.
enum Scan {
    /// It ends before this byte index (exclusive).
    Ends(usize),
    /// The text ends inside it.
    Open,
}

/// Where the escape sequence introduced at `text[i..]` ends.
fn sequence_end(text: &str, i: usize) -> Scan {
    let mut chars = text[i..].char_indices().map(|(k, c)| (i + k, c));
    let Some((_, first)) = chars.next() else {
        return Scan::Open;
    };
    // What follows the introducer decides the kind.
    let kind = if first == ESC {
        match chars.next() {
            None => return Scan::Open,
            Some((k, '[')) => Kind::Csi(k + 1),
            Some((k, ']')) => Kind::Str(k + 1, true),
            Some((k, 'P' | 'X' | '^' | '_')) => Kind::Str(k + 1, false),
            Some((k, c)) if ('\u{20}'..='\u{2f}').contains(&c) => Kind::Nf(k + c.len_utf8()),
            // `ESC c`, `ESC 7`, `ESC =` …, or ESC before anything else:
            // the pair goes (a control after ESC is handled on its own).
            Some((k, c)) if !c.is_control() => return Scan::Ends(k + c.len_utf8()),
            Some((k, _)) => return Scan::Ends(k),
        }
    } else {
        let start = i + first.len_utf8();
        match first {
            '\u{9b}' => Kind::Csi(start),
            '\u{9d}' => Kind::Str(start, true),
            _ => Kind::Str(start, false),
        }
    };
    match kind {
        Kind::Csi(from) => {
            for (k, c) in text[from..].char_indices().map(|(k, c)| (from + k, c)) {
                match c {
                    // Parameters and intermediates go on.
                    '\u{20}'..='\u{3f}' => {}
                    '\u{40}'..='\u{7e}' => return Scan::Ends(k + 1),
                    // Malformed: the sequence stops before this character.
                    _ => return Scan::Ends(k),
                }
            }
            Scan::Open
        }
        Kind::Nf(from) => {
            for (k, c) in text[from..].char_indices().map(|(k, c)| (from + k, c)) {
                match c {
                    '\u{20}'..='\u{2f}' => {}
                    '\u{30}'..='\u{7e}' => return Scan::Ends(k + 1),
                    _ => return Scan::Ends(k),
                }
            }
            Scan::Open
        }
        Kind::Str(from, bel_ends) => {
            let mut after_esc = false;
            for (k, c) in text[from..].char_indices().map(|(k, c)| (from + k, c)) {
                match c {
                    '\\' if after_esc => return Scan::Ends(k + 1),
                    ST => return Scan::Ends(k + c.len_utf8()),
                    BEL if bel_ends => return Scan::Ends(k + 1),
                    _ => {}
                }
                after_esc = c == ESC;
            }
            Scan::Open
        }
    }
}

enum Kind {
    /// Control sequence: parameters from this index.
    Csi(usize),
    /// `ESC` + intermediates + a final byte (`ESC ( B`).
    Nf(usize),
    /// A string ended by ST (OSC also by BEL).
    Str(usize, bool),
}

fn starts_sequence(c: char) -> bool {
    matches!(
        c,
        ESC | '\u{90}' | '\u{98}' | '\u{9b}' | '\u{9d}' | '\u{9e}' | '\u{9f}'
    )
}

/// Cleans `text` into `out`; returns the index of an unfinished sequence at
/// its end (kept by the caller when more text may follow), if any.
fn clean_into(text: &str, out: &mut String) -> Option<usize> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if starts_sequence(c) {
            match sequence_end(text, i) {
                Scan::Ends(end) => {
                    while chars.peek().is_some_and(|(k, _)| *k < end) {
                        chars.next();
                    }
                }
                Scan::Open => return Some(i),
            }
            continue;
        }
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => {
                // `\r\n` is one break; a lone `\r` may not overwrite anything.
                if chars.peek().is_none_or(|(_, n)| *n != '\n') {
                    out.push('\n');
                }
            }
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
            '\u{7f}' => out.push('␡'),
            '\u{80}'..='\u{9f}' => {}
            _ => out.push(c),
        }
    }
    None
}

/// Whether `text` is already safe to show (nothing to clean).
pub fn is_clean(text: &str) -> bool {
    !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

/// `text` without escape sequences or controls; `\n` and `\t` stay.
pub fn clean(text: &str) -> Cow<'_, str> {
    if is_clean(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // An unfinished sequence at the very end is dropped whole (a terminal
    // would swallow what follows it).
    clean_into(text, &mut out);
    Cow::Owned(out)
}

/// `text` as one line: cleaned, and line breaks and tabs become spaces.
pub fn clean_line(text: &str) -> Cow<'_, str> {
    let cleaned = clean(text);
    if !cleaned.contains(['\n', '\t']) {
        return cleaned;
    }
    Cow::Owned(cleaned.replace(['\n', '\t'], " "))
}

/// `text` with each tab expanded to the next multiple of `stop` columns
/// of its line (display width), as a terminal shows it: columns a command
/// aligned with tabs stay aligned.
pub fn expand_tabs(text: &str, stop: usize) -> Cow<'_, str> {
    if !text.contains('\t') {
        return Cow::Borrowed(text);
    }
    let stop = stop.max(1);
    let mut out = String::with_capacity(text.len() + 16);
    let mut column = 0;
    for c in text.chars() {
        match c {
            '\t' => {
                let n = stop - column % stop;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
            }
            '\n' => {
                out.push(c);
                column = 0;
            }
            c => {
                out.push(c);
                column += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    Cow::Owned(out)
}

/// `text` for a file: every control character but `\n` and `\t` written
/// as a visible escape (`\x1b`, `\u{9b}`), so nothing is lost and nothing
/// acts when the file is later shown on a terminal (`cat`, `less -R`).
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if is_clean(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if u32::from(c) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON text with the controls JSON leaves raw (DEL and the C1 range,
/// which some terminals act on) written as `\u00XX` escapes: the same
/// JSON values, safe to show. Outside strings they cannot occur in JSON.
pub fn escape_json_controls(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Cleans text that arrives in pieces (a streamed reply): a sequence split
/// between two pieces is still removed whole.
#[derive(Debug, Default)]
pub struct StreamCleaner {
    pending: String,
}

impl StreamCleaner {
    /// The clean text of `piece`, minus an unfinished sequence at its end,
    /// which waits for the next piece.
    pub fn push(&mut self, piece: &str) -> String {
        let text = if self.pending.is_empty() {
            Cow::Borrowed(piece)
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.push_str(piece);
            Cow::Owned(joined)
        };
        let mut out = String::with_capacity(text.len());
        if let Some(open) = clean_into(&text, &mut out)
            && text.len() - open <= MAX_PENDING
        {
            self.pending = text[open..].to_string();
        }
        out
    }

    /// The text is over: an unfinished sequence is dropped.
    pub fn finish(&mut self) {
        self.pending.clear();
    }
}

/// A `file://` URL's path with its `%XX` escapes decoded (a byte each).
pub fn percent_decoded(url: &str) -> String {
    let bytes = url.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_expand_to_their_stops() {
        assert_eq!(expand_tabs("a\tb\nabcd\tc", 4), "a   b\nabcd    c");
        assert_eq!(
            expand_tabs("name\tsize\nx\t1", 8),
            "name    size\nx       1"
        );
        assert_eq!(expand_tabs("é\tx", 4), "é   x");
        assert!(matches!(expand_tabs("no tabs", 8), Cow::Borrowed(_)));
    }

    #[test]
    fn a_file_gets_controls_escaped_and_json_its_c1_range() {
        let text = "title\u{1b}]0;pwned\u{7}\tok\n\u{9b}2J\r";
        assert_eq!(
            escape_controls(text),
            "title\\x1b]0;pwned\\x07\tok\n\\u{9b}2J\\x0d"
        );
        assert!(matches!(escape_controls("plain\n"), Cow::Borrowed(_)));
        let json = serde_json::json!({"t": "a\u{1b}b\u{9b}c\u{7f}"}).to_string();
        let safe = escape_json_controls(&json);
        assert!(is_clean(&safe), "{safe:?}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["t"], "a\u{1b}b\u{9b}c\u{7f}");
    }

    #[test]
    fn whole_sequences_go_not_just_their_escape() {
        assert_eq!(clean("a\x1b]0;pwned\x07b\x1b[2Jc"), "abc");
        assert_eq!(clean("\x1b]52;c;aGVsbG8=\x1b\\copied"), "copied");
        assert_eq!(clean("\x1b[1;31mred\x1b[0m"), "red");
        assert_eq!(clean("\x1bPq#0;2;0;0;0#1~~\x1b\\x"), "x");
        assert_eq!(clean("\x1bcreset \x1b(Bok \x1b7saved"), "reset ok saved");
        assert_eq!(clean("\u{9b}2J8bit \u{9d}0;t\u{9c}done"), "8bit done");
        // An unterminated OSC swallows the rest, as the terminal would.
        assert_eq!(clean("before\x1b]0;title without end"), "before");
    }

    #[test]
    fn controls_are_visible_and_nothing_can_be_overwritten() {
        assert_eq!(clean("bell\x07 back\x08"), "bell␇ back␈");
        assert_eq!(clean("ok\r\nnext\rover"), "ok\nnext\nover");
        assert_eq!(clean("tab\there\nline"), "tab\there\nline");
        assert_eq!(clean("del\x7f c1\u{85}"), "del␡ c1");
        assert!(matches!(clean("plain ünïcode 日本"), Cow::Borrowed(_)));
        assert_eq!(clean_line("one\ntwo\tthree\r"), "one two three ");
    }

    #[test]
    fn a_sequence_split_between_pieces_is_removed_whole() {
        let text = "hi \x1b]0;pwned\x07there \x1b[2J\x1b[31mred\x1b[0m!";
        // Every split point, in two and three pieces.
        for a in 0..=text.len() {
            if !text.is_char_boundary(a) {
                continue;
            }
            for b in a..=text.len() {
                if !text.is_char_boundary(b) {
                    continue;
                }
                let mut c = StreamCleaner::default();
                let out = c.push(&text[..a]) + &c.push(&text[a..b]) + &c.push(&text[b..]);
                assert_eq!(out, "hi there red!", "split at {a}, {b}");
            }
        }
    }

    #[test]
    fn a_sequence_that_never_ends_is_not_held_forever() {
        let mut c = StreamCleaner::default();
        assert_eq!(c.push("x\x1b]0;"), "x");
        let long = "y".repeat(MAX_PENDING + 10);
        // Past the bound the open sequence is given up (dropped).
        assert_eq!(c.push(&long), "");
        assert_eq!(c.push("after"), "after");
    }
}
