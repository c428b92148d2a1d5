//! Code blocks in a reply: one output line per source line, cut (never
//! wrapped) with a dim `…`, behind a margin and a bar, one column short of
//! the right edge. Invariant: the text is sanitised (escape sequences and
//! controls gone, tabs expanded) before it is highlighted or measured, and
//! highlighting only changes styles, so a block is as tall highlighted as
//! plain.

use super::pieces::{cut_pieces, sanitize};
use super::{CODE_BAR, Piece, PrefixKind, Renderer, highlight};

/// Lines narrower than this keep their last column.
const RIGHT_MARGIN_FROM: usize = 8;

impl Renderer<'_> {
    pub(super) fn code_block(&mut self, code: &str) {
        if code.is_empty() {
            return;
        }
        // A block still streaming ends mid-line: that line is not kept.
        let complete = code.ends_with('\n');
        let body = code.strip_suffix('\n').unwrap_or(code);
        let clean: Vec<std::borrow::Cow<'_, str>> =
            body.split('\n').map(|raw| sanitize(raw, "    ")).collect();
        let lines: Vec<&str> = clean.iter().map(|l| l.as_ref()).collect();
        let index = self.code_blocks;
        self.code_blocks += 1;
        let palette = self.palette;
        let styled = match self.highlight.as_deref_mut() {
            Some(cache) => {
                highlight::highlight(cache, index, &self.code_lang, &lines, complete, palette)
            }
            None => None,
        };
        self.begin_leaf();
        let bar: Piece = (CODE_BAR.to_string(), palette.dim());
        for (i, line) in lines.iter().enumerate() {
            let (prefix, used) = self.prefix(PrefixKind::Content, Some(bar.clone()));
            let avail = self.width - used;
            let avail = if avail >= RIGHT_MARGIN_FROM {
                avail - 1
            } else {
                avail
            };
            let pieces = match styled.as_ref().and_then(|s| s.get(i)) {
                Some(pieces) => pieces.clone(),
                None => vec![((*line).to_string(), palette.code())],
            };
            let content = cut_pieces(pieces, avail, palette.dim());
            self.push_line(prefix, content, PrefixKind::Content);
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Color;
    use ratatui::text::Line;

    use super::super::{CodeCache, render, render_highlighted, warm_up};
    use crate::tui::style::Palette;

    use crate::tui::wrap::plain;

    fn fg_of(lines: &[Line<'_>], needle: &str) -> Option<Color> {
        lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content.contains(needle))
            .and_then(|s| s.style.fg)
    }

    const RUST: &str = "Look:\n\n```rust\nfn main() {\n    let n = 42; // the answer\n    println!(\"{n}\");\n}\n```\n";

    #[test]
    fn known_languages_are_highlighted_with_the_same_text() {
        warm_up();
        let p = Palette::colored();
        let mut cache = CodeCache::default();
        let lines = render_highlighted(RUST, 40, p, &mut cache);
        assert_eq!(plain(&lines), plain(&render(RUST, 40, p)));
        assert_eq!(fg_of(&lines, "fn"), Some(Color::Magenta));
        assert_eq!(fg_of(&lines, "42"), Some(Color::Yellow));
        assert_ne!(fg_of(&lines, "fn"), fg_of(&lines, "Look"));
        // Unknown or no language: the plain code style, as without a cache.
        for text in ["```nolang\nfn x\n```", "```\nfn x\n```", "    fn x\n"] {
            let lines = render_highlighted(text, 40, p, &mut CodeCache::default());
            assert_eq!(lines, render(text, 40, p), "{text}");
        }
        // Monochrome stays without colours.
        let mono = render_highlighted(RUST, 40, Palette::monochrome(), &mut cache);
        assert!(
            mono.iter()
                .flat_map(|l| l.spans.iter())
                .all(|s| s.style.fg.is_none())
        );
    }

    #[test]
    fn highlighted_code_stays_clean_and_inside_the_width() {
        warm_up();
        let p = Palette::colored();
        let hostile = "```rust\nlet a = \"\u{1b}]0;pwned\u{7}\u{1b}[2J\";\t// \u{1b}[31mred 中文字符 tail\n```";
        for width in [1u16, 4, 9, 13, 20, 40] {
            let lines = render_highlighted(hostile, width, p, &mut CodeCache::default());
            for line in &lines {
                assert!(line.width() <= usize::from(width), "{line:?} at {width}");
                for span in &line.spans {
                    assert!(!span.content.chars().any(char::is_control), "{span:?}");
                    assert!(!span.content.contains("pwned"), "{span:?}");
                }
            }
        }
    }

    #[test]
    fn a_streaming_block_highlights_only_its_new_lines() {
        warm_up();
        let p = Palette::colored();
        let mut cache = CodeCache::default();
        let mut text = String::from("```rust\n");
        for i in 0..50 {
            text.push_str(&format!("let v{i} = {i};\n"));
            // Half a line, as a stream would cut it.
            let half = format!("{text}let w = \"op");
            let lines = render_highlighted(&half, 60, p, &mut cache);
            assert_eq!(lines.len(), i + 2);
            assert_eq!(fg_of(&lines, "\"op"), Some(Color::Green));
        }
        let lines = render_highlighted(&text, 60, p, &mut cache);
        assert_eq!(fg_of(&lines, "let"), Some(Color::Magenta));
        assert_eq!(lines.len(), 50);
    }
}
