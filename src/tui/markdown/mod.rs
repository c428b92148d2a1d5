//! Markdown → wrapped ratatui lines for the conversation pane: owns parsing (pulldown-cmark events), block layout and word wrapping. Invariant: pure (no I/O, no global state), never panics on any input (including half-streamed text), and no emitted line is wider than `width` display columns.
//!
//! Widths are measured per "cluster" (a base character plus the zero-width
//! characters and ZWJ-joined characters after it) with `unicode-width`, which
//! never under-counts compared with how ratatui measures a span.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::style::Palette;

mod code;
mod highlight;
mod pieces;
mod table;

pub use pieces::wrap_text;

pub use highlight::{CodeCache, warm_up};

use pieces::{fit, push_piece, sanitize, trim_end, wrap};

/// A run of text in one style.
type Piece = (String, Style);

const BULLET: &str = "• ";
const QUOTE_BAR: &str = "▌ ";
/// A code line starts with a margin and a bar, and ends one column short.
const CODE_BAR: &str = " │ ";
const RULE: &str = "─";
const ELLIPSIS: &str = "…";
const ZWJ: char = '\u{200D}';

/// Renders Markdown `text` into lines no wider than `width` display columns
/// (width ≥ 1; treat 0 as 1), code blocks in the plain code style.
pub fn render(text: &str, width: u16, palette: Palette) -> Vec<Line<'static>> {
    render_with(text, width, palette, None)
}

/// [`render`] with fenced code blocks of a known language highlighted,
/// their styled lines kept in `cache` (highlighted once, reused each time
/// the same text is laid out again, e.g. while it streams). A long block
/// may come out partly plain: then `cache.pending()`, render it again.
pub fn render_highlighted(
    text: &str,
    width: u16,
    palette: Palette,
    cache: &mut CodeCache,
) -> Vec<Line<'static>> {
    cache.begin();
    render_with(text, width, palette, Some(cache))
}

fn render_with(
    text: &str,
    width: u16,
    palette: Palette,
    cache: Option<&mut CodeCache>,
) -> Vec<Line<'static>> {
    let mut renderer = Renderer::new(usize::from(width.max(1)), palette, cache);
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_TABLES;
    // Escape sequences go before parsing: the parser may split one (at its
    // `[`) into pieces that no longer look like a sequence.
    let text = crate::text::clean(text);
    for event in Parser::new_ext(&text, options) {
        renderer.event(event);
    }
    renderer.finish()
}

enum Container {
    Quote,
    Item {
        marker: String,
        indent: usize,
        /// The marker has not been shown yet: the item's first line gets it.
        pending: bool,
    },
}

struct ListState {
    /// Next number for an ordered list; `None` for a bullet list.
    next: Option<u64>,
    /// Items hold paragraphs (blank lines between items).
    loose: bool,
}

struct LinkState {
    url: String,
    text: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PrefixKind {
    /// A line with content: pending list markers are shown (and consumed).
    Content,
    /// A separator line: only quote bars, markers stay pending.
    Blank,
}

struct Renderer<'c> {
    width: usize,
    palette: Palette,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    lists: Vec<ListState>,
    styles: Vec<Style>,
    links: Vec<LinkState>,
    /// Inline text of the current leaf block, not yet wrapped.
    inline: Vec<Piece>,
    /// Raw text of the code block being read.
    code: Option<String>,
    /// Its fence's language (first word of the info string), if any.
    code_lang: String,
    /// Code blocks met so far (they are cached by their order).
    code_blocks: usize,
    /// Where highlighted code blocks are kept; `None`: no highlighting.
    highlight: Option<&'c mut CodeCache>,
    /// A blank line goes before the next block (never at the very start).
    pending_blank: bool,
    /// The table being read.
    table: Option<table::Table>,
}

impl<'c> Renderer<'c> {
    fn new(width: usize, palette: Palette, highlight: Option<&'c mut CodeCache>) -> Self {
        Self {
            width,
            palette,
            out: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            inline: Vec::new(),
            code: None,
            code_lang: String::new(),
            code_blocks: 0,
            highlight,
            pending_blank: false,
            table: None,
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        // A table cut mid-stream is drawn as far as it came.
        if let Some(table) = self.table.take() {
            self.inline.clear();
            self.table(table);
        }
        self.flush();
        if let Some(code) = self.code.take() {
            self.code_block(&code);
        }
        self.out
    }

    fn style(&self) -> Style {
        self.styles
            .last()
            .copied()
            .unwrap_or_else(|| self.palette.text())
    }

    fn push_style(&mut self, patch: Style) {
        let style = self.style().patch(patch);
        self.styles.push(style);
    }

    fn pop_style(&mut self) {
        self.styles.pop();
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Html(text) => {
                if let Some(code) = &mut self.code {
                    code.push_str(&text);
                } else {
                    self.text(&text, self.style());
                }
            }
            Event::Code(text) => {
                let style = self.style().patch(self.palette.code());
                self.text(&text, style);
            }
            Event::InlineMath(text) | Event::DisplayMath(text) | Event::InlineHtml(text) => {
                self.text(&text, self.style());
            }
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]"), self.style()),
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.text("\n", self.style()),
            Event::Rule => {
                self.flush();
                self.begin_leaf();
                let (prefix, used) = self.prefix(PrefixKind::Content, None);
                let rule = (RULE.repeat(self.width - used), self.palette.dim());
                self.push_line(prefix, vec![rule], PrefixKind::Content);
                self.pending_blank = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, self.style());
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.flush();
                if matches!(self.containers.last(), Some(Container::Item { .. }))
                    && let Some(list) = self.lists.last_mut()
                {
                    list.loose = true;
                }
            }
            Tag::Heading { level, .. } => {
                // The heading's style marks it and its level; its `#`s are
                // not shown.
                self.flush();
                self.push_style(self.palette.heading_at(level as u8));
            }
            Tag::Table(alignments) => {
                self.flush();
                self.table = Some(table::Table::aligned(alignments));
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.start_row();
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::BlockQuote(_) => {
                self.flush();
                // The separating blank line belongs outside the quote.
                self.begin_leaf();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.code = Some(String::new());
                self.code_lang = match kind {
                    pulldown_cmark::CodeBlockKind::Fenced(info) => {
                        // `rust,ignore`, `python {.numberLines}`: the first word.
                        let lang = info.split([' ', '\t', ',', '{']).next();
                        lang.unwrap_or_default().to_string()
                    }
                    pulldown_cmark::CodeBlockKind::Indented => String::new(),
                };
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(ListState {
                    next: start,
                    loose: false,
                });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(ListState { next: Some(n), .. }) => {
                        let marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                        marker
                    }
                    _ => BULLET.to_string(),
                };
                let indent = marker.width();
                self.containers.push(Container::Item {
                    marker,
                    indent,
                    pending: true,
                });
            }
            Tag::HtmlBlock => self.flush(),
            Tag::Emphasis => self.push_style(self.palette.emphasis()),
            Tag::Strong => self.push_style(self.palette.strong()),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.push_style(self.palette.link());
                self.links.push(LinkState {
                    url: dest_url.to_string(),
                    text: String::new(),
                });
            }
            // Footnotes, definition lists… are not enabled; any text inside
            // unknown tags still flows through as plain text.
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                if matches!(self.containers.last(), Some(Container::Quote)) {
                    self.containers.pop();
                }
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(&code);
                }
                self.pending_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                let in_tight_item = matches!(self.containers.last(), Some(Container::Item { .. }))
                    && !self.lists.last().is_some_and(|list| list.loose);
                if !in_tight_item {
                    self.pending_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                if matches!(
                    self.containers.last(),
                    Some(Container::Item { pending: true, .. })
                ) {
                    // An empty item (e.g. "- " mid-stream): show its marker.
                    self.begin_leaf();
                    let (prefix, _) = self.prefix(PrefixKind::Content, None);
                    self.push_line(prefix, Vec::new(), PrefixKind::Content);
                }
                if matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.containers.pop();
                }
            }
            TagEnd::TableCell => {
                let mut cell = std::mem::take(&mut self.inline);
                pieces::trim_end(&mut cell);
                if let Some(table) = &mut self.table {
                    table.end_cell(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.end_head();
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table(table);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(link) = self.links.pop() {
                    let url = link.url.as_str();
                    let shown = link.text.trim();
                    let same = url == shown || url.strip_prefix("mailto:") == Some(shown);
                    if !url.is_empty() && !same {
                        self.text(" ", self.style());
                        let dim = self.style().patch(self.palette.dim());
                        self.text(&format!("({url})"), dim);
                    }
                }
            }
            _ => {}
        }
    }

    /// Appends inline text (sanitised: tabs → spaces, control characters dropped).
    fn text(&mut self, text: &str, style: Style) {
        for link in &mut self.links {
            link.text.push_str(text);
        }
        let clean = sanitize(text, " ");
        push_piece(&mut self.inline, &clean, style);
    }

    /// Wraps and emits the pending inline text as one block.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let pieces = std::mem::take(&mut self.inline);
        let (_, used) = self.prefix(PrefixKind::Content, None);
        let lines = wrap(&pieces, self.width - used);
        if lines.is_empty() {
            return;
        }
        self.begin_leaf();
        for content in lines {
            let (prefix, _) = self.prefix(PrefixKind::Content, None);
            self.push_line(prefix, content, PrefixKind::Content);
        }
    }

    /// Emits the separating blank line if one is due and something precedes it.
    fn begin_leaf(&mut self) {
        if self.pending_blank && !self.out.is_empty() {
            let (prefix, _) = self.prefix(PrefixKind::Blank, None);
            self.push_line(prefix, Vec::new(), PrefixKind::Blank);
        }
        self.pending_blank = false;
    }

    /// The container prefix for the next line (plus `extra`), cut so content
    /// keeps at least about half the width. Returns it with its width.
    fn prefix(&self, kind: PrefixKind, extra: Option<Piece>) -> (Vec<Piece>, usize) {
        let mut pieces: Vec<Piece> = Vec::new();
        for container in &self.containers {
            match container {
                Container::Quote => pieces.push((QUOTE_BAR.to_string(), self.palette.dim())),
                Container::Item {
                    marker,
                    indent,
                    pending,
                } => {
                    let text = if kind == PrefixKind::Content && *pending {
                        marker.clone()
                    } else {
                        " ".repeat(*indent)
                    };
                    push_piece(&mut pieces, &text, self.palette.text());
                }
            }
        }
        pieces.extend(extra);
        let min_content = (self.width / 2).max(2).min(self.width);
        fit(pieces, self.width - min_content)
    }

    fn push_line(&mut self, mut prefix: Vec<Piece>, content: Vec<Piece>, kind: PrefixKind) {
        if content.is_empty() {
            trim_end(&mut prefix);
        }
        let spans: Vec<Span<'static>> = prefix
            .into_iter()
            .chain(content)
            .filter(|(text, _)| !text.is_empty())
            .map(|(text, style)| Span::styled(text, style))
            .collect();
        self.out.push(Line::from(spans));
        if kind == PrefixKind::Content {
            for container in &mut self.containers {
                if let Container::Item { pending, .. } = container {
                    *pending = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pieces::clusters;
    use super::*;
    use ratatui::style::Color;

    use crate::tui::wrap::plain;

    fn md(text: &str, width: u16) -> Vec<String> {
        plain(&render(text, width, Palette::colored()))
    }

    /// The style of the first span whose text contains `needle`.
    fn style_of(lines: &[Line<'_>], needle: &str) -> Style {
        lines
            .iter()
            .flat_map(|line| line.spans.iter())
            .find(|span| span.content.contains(needle))
            .map(|span| span.style)
            .unwrap_or_else(|| panic!("no span contains {needle:?}"))
    }

    /// Width as ratatui measures it and as a sum of clusters: both bounded.
    fn assert_fits(lines: &[Line<'_>], width: u16, input: &str) {
        for line in lines {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let by_clusters: usize = clusters(&text).map(|(_, c)| c.width()).sum();
            assert!(
                line.width() <= usize::from(width.max(1))
                    && by_clusters <= usize::from(width.max(1)),
                "line {text:?} ({} cols) wider than {width} for input {input:?}",
                line.width()
            );
        }
    }

    #[test]
    fn empty_input_renders_no_lines() {
        assert!(md("", 40).is_empty());
        assert!(md("   \n\n  \n", 40).is_empty());
    }

    #[test]
    fn headings_are_styled_without_their_marks() {
        let palette = Palette::colored();
        let lines = render("# Title\n\n## Sub *em*\n\nbody", 40, palette);
        assert_eq!(plain(&lines), ["Title", "", "Sub em", "", "body"]);
        assert_eq!(style_of(&lines, "Title"), palette.heading_at(1));
        assert_eq!(
            style_of(&lines, "em"),
            palette.heading_at(2).patch(palette.emphasis())
        );
        assert_eq!(style_of(&lines, "body"), palette.text());
    }

    /// `#`, `##`, `###` and `####` look different from each other, with
    /// color and without.
    #[test]
    fn heading_levels_look_different() {
        for palette in [Palette::colored(), Palette::monochrome()] {
            let lines = render("# One\n\n## Two\n\n### Three\n\n#### Four", 40, palette);
            let styles: Vec<Style> = ["One", "Two", "Three", "Four"]
                .iter()
                .map(|w| style_of(&lines, w))
                .collect();
            for (i, a) in styles.iter().enumerate() {
                for b in &styles[i + 1..] {
                    assert_ne!(a.add_modifier, b.add_modifier, "{styles:?}");
                }
            }
        }
    }

    #[test]
    fn paragraphs_soft_and_hard_breaks() {
        assert_eq!(md("a\nb\n\nc", 40), ["a b", "", "c"]);
        assert_eq!(md("a  \nb", 40), ["a", "b"]);
        assert_eq!(md("a\\\nb", 40), ["a", "b"]);
    }

    #[test]
    fn bullet_lists_nest() {
        let text = "- one\n- two\n  - inner\n    - deeper\n- three";
        assert_eq!(
            md(text, 40),
            ["• one", "• two", "  • inner", "    • deeper", "• three"]
        );
        assert_eq!(md("- - a", 40), ["• • a"]);
    }

    #[test]
    fn ordered_lists_number_from_start() {
        assert_eq!(md("1. a\n2. b\n3. c", 40), ["1. a", "2. b", "3. c"]);
        assert_eq!(md("9. x\n10. y", 40), ["9. x", "10. y"]);
        assert_eq!(md("1. a\n   - b\n2. c", 40), ["1. a", "   • b", "2. c"]);
    }

    #[test]
    fn wrapped_list_items_hang() {
        assert_eq!(
            md("- alpha beta gamma delta", 12),
            ["• alpha beta", "  gamma", "  delta"]
        );
        assert_eq!(
            md("10. alpha beta gamma", 10),
            ["10. alpha", "    beta", "    gamma"]
        );
        assert_eq!(
            md("- a\n  - bbb ccc ddd", 10),
            ["• a", "  • bbb", "    ccc", "    ddd"]
        );
    }

    #[test]
    fn blank_lines_separate_blocks_but_not_tight_items() {
        assert_eq!(
            md("intro\n- a\n- b\n\nafter", 40),
            ["intro", "", "• a", "• b", "", "after"]
        );
        // Loose list: blank lines between items.
        assert_eq!(md("- a\n\n- b", 40), ["• a", "", "• b"]);
        assert_eq!(
            md("- item\n\n  ```\n  code\n  ```", 40),
            ["• item", "", "   │ code"]
        );
    }

    #[test]
    fn task_lists_show_boxes() {
        assert_eq!(
            md("- [x] done\n- [ ] todo", 40),
            ["• [x] done", "• [ ] todo"]
        );
    }

    #[test]
    fn inline_code_is_styled_without_backticks() {
        let palette = Palette::colored();
        let lines = render("use `foo()` now", 40, palette);
        assert_eq!(plain(&lines), ["use foo() now"]);
        assert_eq!(style_of(&lines, "foo()"), palette.code());
        assert_eq!(style_of(&lines, "use"), palette.text());
    }

    #[test]
    fn fenced_code_is_cut_not_wrapped() {
        let palette = Palette::colored();
        let text = "```rust\nfn main() { let x = 1; }\n    indented\n\tt\n\n```";
        let lines = render(text, 12, palette);
        assert_eq!(
            plain(&lines),
            [" │ fn main…", " │     ind…", " │     t", " │"]
        );
        assert_fits(&lines, 12, text);
        assert_eq!(style_of(&lines, "fn main"), palette.code());
        assert_eq!(style_of(&lines, "│"), palette.dim());
        assert_eq!(style_of(&lines, "…"), palette.dim());
        // A margin, then lines that fit exactly (one column short of the
        // edge) are not cut; very narrow panes keep that last column.
        assert_eq!(md("```\n1234567890\n```", 14), [" │ 1234567890"]);
        assert_eq!(md("```\n1234567890\n```", 13), [" │ 12345678…"]);
        assert_eq!(md("```\n1234567\n```", 7), [" │ 123…"]);
    }

    #[test]
    fn indented_code_blocks() {
        assert_eq!(
            md("para\n\n    let a = 1;\n      nested\n", 40),
            ["para", "", " │ let a = 1;", " │   nested"]
        );
    }

    #[test]
    fn emphasis_styles_land_on_the_right_spans() {
        let palette = Palette::colored();
        let lines = render("plain *it* **bo** ~~st~~ ***both***", 80, palette);
        assert_eq!(plain(&lines), ["plain it bo st both"]);
        assert_eq!(style_of(&lines, "plain"), palette.text());
        assert!(
            style_of(&lines, "it")
                .add_modifier
                .contains(Modifier::ITALIC)
        );
        assert!(!style_of(&lines, "it").add_modifier.contains(Modifier::BOLD));
        assert!(style_of(&lines, "bo").add_modifier.contains(Modifier::BOLD));
        assert!(
            !style_of(&lines, "bo")
                .add_modifier
                .contains(Modifier::ITALIC)
        );
        assert!(
            style_of(&lines, "st")
                .add_modifier
                .contains(Modifier::CROSSED_OUT)
        );
        let both = style_of(&lines, "both").add_modifier;
        assert!(both.contains(Modifier::BOLD | Modifier::ITALIC));
    }

    #[test]
    fn styles_survive_wrapping() {
        let lines = render("**bold words that wrap**", 6, Palette::colored());
        assert_eq!(plain(&lines), ["bold", "words", "that", "wrap"]);
        for span in lines.iter().flat_map(|l| l.spans.iter()) {
            assert!(span.style.add_modifier.contains(Modifier::BOLD), "{span:?}");
        }
    }

    #[test]
    fn links_show_url_when_different() {
        let palette = Palette::colored();
        let lines = render("see [site](https://x.y) now", 80, palette);
        assert_eq!(plain(&lines), ["see site (https://x.y) now"]);
        assert_eq!(style_of(&lines, "site"), palette.link());
        assert_eq!(style_of(&lines, "(https://x.y)"), palette.dim());
        assert_eq!(md("<https://x.y>", 80), ["https://x.y"]);
        assert_eq!(md("<a@b.c>", 80), ["a@b.c"]);
        assert_eq!(md("![alt](p.png)", 80), ["alt (p.png)"]);
    }

    #[test]
    fn block_quotes_get_bars() {
        let palette = Palette::colored();
        let lines = render("> quoted\n> more\n>\n> next", 40, palette);
        assert_eq!(plain(&lines), ["▌ quoted more", "▌", "▌ next"]);
        assert_eq!(style_of(&lines, "▌"), palette.dim());
        assert_eq!(md("a\n\n> q\n\nb", 40), ["a", "", "▌ q", "", "b"]);
        assert_eq!(md("> - x\n> - y", 40), ["▌ • x", "▌ • y"]);
        assert_eq!(md("> aaa bbb", 6), ["▌ aaa", "▌ bbb"]);
    }

    #[test]
    fn rules_span_the_width() {
        let palette = Palette::colored();
        let lines = render("a\n\n---\n\nb", 10, palette);
        assert_eq!(plain(&lines), ["a", "", "─".repeat(10).as_str(), "", "b"]);
        assert_eq!(style_of(&lines, "─"), palette.dim());
    }

    #[test]
    fn html_renders_raw() {
        assert_eq!(md("<div>\nhi\n</div>", 40), ["<div>", "hi", "</div>"]);
        assert_eq!(md("a <b>x</b>", 40), ["a <b>x</b>"]);
    }

    #[test]
    fn wraps_at_exact_width() {
        assert_eq!(md("aaaa bbbb", 9), ["aaaa bbbb"]);
        assert_eq!(md("aaaa bbbb", 8), ["aaaa", "bbbb"]);
        assert_eq!(md("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(md("x abcdefghij", 4), ["x", "abcd", "efgh", "ij"]);
        assert_eq!(md("中文字符", 4), ["中文", "字符"]);
        assert_eq!(md("中文字符", 5), ["中文", "字符"]);
        assert_eq!(md("ab 中文", 5), ["ab 中", "文"]);
        assert_eq!(md("😀😀😀", 4), ["😀😀", "😀"]);
        assert_eq!(md("中", 1), ["…"]);
        assert_eq!(md("anything", 0), md("anything", 1));
    }

    const MIXED: &str = "# Überschrift 見出し 🚀\n\n\
        Some *emphasis* and **strong** text with `inline code` and a \
        [link](https://example.com/a/very/long/path) plus 中文字符混合 text, \
        emoji 👨‍👩‍👧 ❤️ 👍🏽 🇫🇷 and combining e\u{301}\u{301} marks. \
        Averyveryverylongwordwithoutanyspacesatall.\n\n\
        - item one 一二三四五六\n  - nested 🙂🙂🙂🙂 item\n    1. deep ordered item\n\n\
        > quoted 引用 text\n> > nested quote\n\n\
        ```\n\tcode with tab 中文 and a long line that goes on\n```\n\n---\n\nend";

    #[test]
    fn no_line_wider_than_width() {
        for width in 1..=40 {
            let lines = render(MIXED, width, Palette::colored());
            assert!(!lines.is_empty());
            assert_fits(&lines, width, MIXED);
        }
    }

    #[test]
    fn unclosed_fence_renders_as_code() {
        assert_eq!(
            md("text\n\n```rust\nlet x = 1;\nlet y", 40),
            ["text", "", " │ let x = 1;", " │ let y"]
        );
        assert_eq!(md("text\n\n```", 40), ["text"]);
    }

    #[test]
    fn half_streamed_markup_is_literal() {
        assert_eq!(md("a **bol", 40), ["a **bol"]);
        assert_eq!(md("see [link](http://x", 40), ["see [link](http://x"]);
        assert_eq!(md("- a\n-", 40), ["• a", "•"]);
    }

    #[test]
    fn monochrome_has_no_colours() {
        let lines = render(MIXED, 30, Palette::monochrome());
        for span in lines.iter().flat_map(|l| l.spans.iter()) {
            assert!(
                span.style.fg.is_none() && span.style.bg.is_none(),
                "{span:?}"
            );
        }
        let colored = render("# H", 30, Palette::colored());
        assert_eq!(colored[0].spans[0].style.fg, Some(Color::Magenta));
    }

    #[test]
    fn control_characters_are_dropped_or_shown() {
        // The whole sequence goes, not just its ESC; a bell is shown, not rung.
        assert_eq!(md("a\u{1b}[31mb\u{7}", 40), ["ab␇"]);
        // `ESC b` is a two-byte escape: both go.
        assert_eq!(md("```\na\u{1b}bc\r\n```", 40), [" │ ac"]);
    }

    #[test]
    fn escape_sequences_are_removed_whole_even_where_markdown_splits_them() {
        let lines = render(
            "title \x1b]0;pwned\x07 and \x1b[2J[link](x) \x1b[31mred",
            60,
            Palette::monochrome(),
        );
        let text: String = lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
            .collect();
        assert!(
            !text.contains("pwned") && !text.contains("[2J") && !text.contains("[31m"),
            "{text}"
        );
        assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
    }

    #[test]
    fn tricky_inputs_never_panic() {
        let tricky = [
            "",
            "\n",
            "#",
            "######",
            "####### x",
            "```",
            "````\n```",
            "~~~\n\t\t\t",
            "**",
            "***a",
            "_*_*_*",
            "~~",
            "[",
            "[]()",
            "[x](",
            "![](",
            "<",
            "<http://",
            "> ",
            ">>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>> deep",
            "- - - - - - - - - - - - - - - - - - - - - - x",
            "1.",
            "99999999999999999999. x",
            "999999999. x\n1000000000. y",
            "- [ ]",
            "* * *",
            "a\r\nb\r\n\r\nc",
            "\u{0}\u{1}\u{7f}\u{85}",
            "\u{200D}\u{200D}\u{301}",
            "\u{301}a",
            "👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦",
            "|a|b|\n|-|-|\n|1|2|",
            "[^1]\n\n[^1]: note",
            "<div>\n<p>",
            "    \t  code",
            "\t- x",
            "a  ",
            "  \n  \n",
            "$x$ $$y$$",
            "\u{FEFF}bom",
            "-\n  ```\n  x",
        ];
        let widths = [0, 1, 2, 3, 4, 5, 7, 13, 40, 200, u16::MAX];
        for input in tricky {
            for width in widths {
                let lines = render(input, width, Palette::colored());
                if width <= 200 {
                    assert_fits(&lines, width, input);
                }
            }
        }
        // Every prefix of a rich document, as a stream would deliver it.
        let cuts: Vec<usize> = MIXED.char_indices().map(|(i, _)| i).collect();
        for (n, cut) in cuts.into_iter().enumerate() {
            let width = [1, 3, 8, 21, 80][n % 5];
            let input = &MIXED[..cut];
            assert_fits(&render(input, width, Palette::colored()), width, input);
        }
    }

    #[test]
    fn long_reply_renders_every_line() {
        let mut text = String::new();
        for i in 0..2_500 {
            text.push_str(&format!(
                "Line {i} with *some* `code` words.\n\n- item {i}\n\n"
            ));
        }
        text.push_str("```\n");
        for i in 0..5_000 {
            text.push_str(&format!("let v{i} = {i};\n"));
        }
        let lines = render(&text, 80, Palette::colored());
        assert_eq!(lines.len(), 2_500 * 4 + 5_000);
        assert_eq!(plain(&lines[lines.len() - 1..]), [" │ let v4999 = 4999;"]);
    }

    const TABLE: &str = "| Tool | What it does | Asks |\n|---|---|:-:|\n| `bash` | runs a command in the workspace | yes |\n| read_file | reads | no |\n";

    #[test]
    fn tables_align_their_columns_and_wrap_cells() {
        assert_eq!(
            md(TABLE, 60),
            [
                "Tool      │ What it does                    │ Asks",
                "──────────┼─────────────────────────────────┼─────",
                "bash      │ runs a command in the workspace │ yes",
                // `:-:` centres the last column.
                "read_file │ reads                           │  no",
            ]
        );
        // Narrow: the widest column wraps inside itself.
        let narrow = md(TABLE, 32);
        assert_eq!(narrow[0], "Tool      │ What it does  │ Asks");
        assert_eq!(narrow[2], "bash      │ runs a        │ yes");
        assert_eq!(narrow[3], "          │ command in    │");
        assert_eq!(narrow[4], "          │ the workspace │");
        // Too narrow for columns: rows as lines; never wider than the pane.
        for width in [1, 3, 5, 8, 12, 20, 32, 60] {
            assert_fits(&render(TABLE, width, Palette::colored()), width, TABLE);
        }
        assert!(md(TABLE, 5).iter().any(|l| l.contains('|')));
        // `---:` right-aligns a column, `:-:` centres it.
        let aligned = md(
            "| Item | Cost | Mark |\n|:--|---:|:-:|\n| tea | 3 | x |\n| bread | 12.50 | yes |\n",
            60,
        );
        assert_eq!(
            aligned,
            [
                "Item  │  Cost │ Mark",
                "──────┼───────┼─────",
                "tea   │     3 │  x",
                "bread │ 12.50 │ yes",
            ]
        );
        // Half a table (mid-stream) still draws.
        assert_eq!(md("| a | b |\n|---|---|\n| 1 |", 20)[0], "a │ b");
    }
}
