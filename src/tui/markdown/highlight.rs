//! Syntax highlighting of fenced code blocks (syntect, pure Rust regexes).
//! Invariant: the syntax set is loaded once, lazily, on a thread of its own
//! when a reply first has a fenced block with a language (plain code is
//! drawn until it is there; no frame waits for it), and each block line is
//! highlighted once: a [`CodeCache`] keeps every complete line's styled
//! pieces and the parser state after it, so a block that grows while it
//! streams only highlights its new lines. One render highlights at most
//! [`LINES_PER_RENDER`] new lines (the rest stay plain and the cache says
//! it is `pending`), so no frame waits for a long block. Colours are the
//! terminal's ANSI colours from the [`Palette`]; the monochrome palette
//! never highlights.

use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    Color as SynColor, HighlightIterator, HighlightState, Highlighter, ScopeSelectors,
    StyleModifier, Theme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use super::Piece;
use crate::tui::style::Palette;

/// New lines highlighted per render at most (about 0.1–0.3 ms each on the
/// benchmark machine): a longer block is coloured over a few frames.
pub const LINES_PER_RENDER: usize = 32;

/// What a token is, as far as colours go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Plain = 0,
    Keyword = 1,
    Str = 2,
    Number = 3,
    Function = 4,
    Type = 5,
    Comment = 6,
}

const KINDS: [Kind; 7] = [
    Kind::Plain,
    Kind::Keyword,
    Kind::Str,
    Kind::Number,
    Kind::Function,
    Kind::Type,
    Kind::Comment,
];

/// Scope selectors and their kind (a more specific selector wins).
const RULES: &[(&str, Kind)] = &[
    ("comment, punctuation.definition.comment", Kind::Comment),
    (
        "string, constant.character, punctuation.definition.string",
        Kind::Str,
    ),
    ("constant.numeric, constant.language", Kind::Number),
    (
        "keyword, storage, variable.language, entity.name.tag",
        Kind::Keyword,
    ),
    ("keyword.operator, punctuation", Kind::Plain),
    (
        "entity.name.function, support.function, variable.function, support.macro",
        Kind::Function,
    ),
    (
        "entity.name.type, entity.name.struct, entity.name.enum, entity.name.trait, \
         entity.name.class, support.type, support.class, storage.type.primitive",
        Kind::Type,
    ),
];

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

/// The syntaxes and theme, once loaded (about 25 ms and 8 MB: only when a
/// reply first has a fenced block with a language).
static ASSETS: OnceLock<Assets> = OnceLock::new();
/// A thread is loading them.
static LOADING: AtomicBool = AtomicBool::new(false);

fn load() -> Assets {
    Assets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        theme: theme(),
    }
}

/// The assets if loaded; else starts loading them on a thread (once) and
/// says `None`: the caller draws plain code meanwhile and asks again.
fn assets() -> Option<&'static Assets> {
    if let Some(assets) = ASSETS.get() {
        return Some(assets);
    }
    if !LOADING.swap(true, Ordering::AcqRel) {
        let spawned = std::thread::Builder::new()
            .name("highlight-load".into())
            .spawn(|| {
                ASSETS.get_or_init(load);
            });
        if spawned.is_err() {
            // No thread: load here, once.
            return Some(ASSETS.get_or_init(load));
        }
    }
    ASSETS.get()
}

/// A theme whose "colours" name a [`Kind`] (alpha 0, the kind in red):
/// the real colour comes from the palette.
fn theme() -> Theme {
    let scopes = RULES
        .iter()
        .filter_map(|(selector, kind)| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(selector).ok()?,
                style: StyleModifier {
                    foreground: Some(SynColor {
                        r: *kind as u8,
                        g: 0,
                        b: 0,
                        a: 0,
                    }),
                    background: None,
                    font_style: None,
                },
            })
        })
        .collect();
    Theme {
        settings: ThemeSettings {
            foreground: Some(SynColor {
                r: 0,
                g: 0,
                b: 0,
                a: 0,
            }),
            ..ThemeSettings::default()
        },
        scopes,
        ..Theme::default()
    }
}

/// Loads the syntaxes now, on this thread (tests and benchmarks; the app
/// loads them on a thread when a reply first needs them).
pub fn warm_up() {
    let assets = ASSETS.get_or_init(load);
    // Compiles the Rust syntax's regexes too (they compile on first use).
    if let Some(syntax) = assets.syntaxes.find_syntax_by_token("rust") {
        let mut state = ParseState::new(syntax);
        let _ = state.parse_line("fn main() { let x = \"a\"; }\n", &assets.syntaxes);
    }
}

fn style_of(kind: Kind, p: Palette) -> Style {
    match kind {
        Kind::Plain => p.text(),
        Kind::Keyword => p.syntax(Color::Magenta),
        Kind::Str => p.syntax(Color::Green),
        Kind::Number => p.syntax(Color::Yellow),
        Kind::Function => p.syntax(Color::Blue),
        Kind::Type => p.syntax(Color::Cyan),
        Kind::Comment => p.dim().add_modifier(Modifier::ITALIC),
    }
}

fn kind_of(c: SynColor) -> Kind {
    if c.a != 0 {
        return Kind::Plain;
    }
    KINDS.get(usize::from(c.r)).copied().unwrap_or(Kind::Plain)
}

/// One highlighted block: its complete lines (source and pieces) and the
/// parser and highlighter states after the last of them.
#[derive(Debug)]
struct Block {
    lang: String,
    lines: Vec<(String, Vec<Piece>)>,
    parse: ParseState,
    highlight: HighlightState,
}

/// The highlighted code blocks of one text, by their order in it.
#[derive(Debug, Default)]
pub struct CodeCache {
    blocks: Vec<Option<Block>>,
    /// New lines the current render may still highlight.
    budget: usize,
    /// The last render left lines plain (out of budget): render again.
    pending: bool,
}

impl CodeCache {
    pub fn clear(&mut self) {
        // Called for every off-screen entry each frame: usually a no-op.
        if self.pending || !self.blocks.is_empty() {
            *self = Self::default();
        }
    }

    /// Whether the last render left lines to highlight.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// Nothing to render again for now (the entry left the screen); the
    /// highlighted lines stay.
    pub fn settle(&mut self) {
        self.pending = false;
    }

    /// A render begins: its budget is whole again.
    pub(super) fn begin(&mut self) {
        self.budget = LINES_PER_RENDER;
        self.pending = false;
    }
}

/// The syntax for a fence's language (`rust`, `rs`, `Python`…), if known.
fn syntax_for<'a>(syntaxes: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    if lang.is_empty() {
        return None;
    }
    syntaxes
        .find_syntax_by_token(lang)
        .filter(|s| s.name != "Plain Text")
}

/// The styled pieces of the first lines of block `index` (fenced as
/// `lang`), whose clean lines are `lines`: all of them unless the render's
/// budget ran out. `complete` says whether the last line ended (a
/// streaming block's last line is highlighted but not kept). `None`: no
/// highlighting (unknown language, monochrome, parse error).
pub fn highlight(
    cache: &mut CodeCache,
    index: usize,
    lang: &str,
    lines: &[&str],
    complete: bool,
    p: Palette,
) -> Option<Vec<Vec<Piece>>> {
    if !p.is_colored() || lang.is_empty() {
        return None;
    }
    let Some(assets) = assets() else {
        // Loading: plain for now, coloured on a later frame.
        cache.pending = true;
        return None;
    };
    let highlighter = Highlighter::new(&assets.theme);
    if cache.blocks.len() <= index {
        cache.blocks.resize_with(index + 1, || None);
    }
    let slot = cache.blocks.get_mut(index)?;
    // Keep the cached block only if its lines are this block's first lines
    // (each block starts from a fresh state, so equal lines style alike).
    let reusable = slot.as_ref().is_some_and(|b| {
        b.lang == lang
            && b.lines.len() <= lines.len()
            && b.lines.iter().zip(lines).all(|((s, _), l)| s == l)
    });
    if !reusable {
        *slot = None;
        let syntax = syntax_for(&assets.syntaxes, lang)?;
        *slot = Some(Block {
            lang: lang.to_string(),
            lines: Vec::new(),
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(&highlighter, ScopeStack::new()),
        });
    }
    let block = slot.as_mut()?;
    let done = if complete {
        lines.len()
    } else {
        lines.len().saturating_sub(1)
    };
    let from = block.lines.len().min(done);
    let upto = done.min(from + cache.budget);
    cache.budget -= upto - from;
    if upto < done {
        cache.pending = true;
    }
    for line in &lines[from..upto] {
        let pieces = line_pieces(
            line,
            &mut block.parse,
            &mut block.highlight,
            &highlighter,
            &assets.syntaxes,
            p,
        );
        match pieces {
            Some(pieces) => block.lines.push(((*line).to_string(), pieces)),
            None => {
                *slot = None;
                return None;
            }
        }
    }
    let mut out: Vec<Vec<Piece>> = block.lines.iter().map(|(_, l)| l.clone()).collect();
    if upto == done && done < lines.len() {
        // The streaming line: highlighted from a copy of the state.
        let (mut parse, mut state) = (block.parse.clone(), block.highlight.clone());
        let last = lines[done];
        out.push(line_pieces(
            last,
            &mut parse,
            &mut state,
            &highlighter,
            &assets.syntaxes,
            p,
        )?);
    }
    Some(out)
}

fn line_pieces(
    line: &str,
    parse: &mut ParseState,
    state: &mut HighlightState,
    highlighter: &Highlighter<'_>,
    syntaxes: &SyntaxSet,
    p: Palette,
) -> Option<Vec<Piece>> {
    let with_newline = format!("{line}\n");
    let ops = parse.parse_line(&with_newline, syntaxes).ok()?;
    let mut pieces: Vec<Piece> = Vec::new();
    for (style, text) in HighlightIterator::new(state, &ops, &with_newline, highlighter) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        super::pieces::push_piece(&mut pieces, text, style_of(kind_of(style.foreground), p));
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(code: &str, lang: &str) -> Vec<(String, Style)> {
        warm_up();
        let lines: Vec<&str> = code.split('\n').collect();
        let mut cache = CodeCache::default();
        cache.begin();
        highlight(&mut cache, 0, lang, &lines, true, Palette::colored())
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect()
    }

    fn style_of_text(pieces: &[(String, Style)], needle: &str) -> Style {
        pieces
            .iter()
            .find(|(t, _)| t.contains(needle))
            .map(|(_, s)| *s)
            .unwrap_or_else(|| panic!("no piece {needle:?} in {pieces:?}"))
    }

    #[test]
    fn rust_keywords_strings_and_comments_get_their_colours() {
        let p = Palette::colored();
        let pieces = kinds("fn main() {\n    let s = \"hi\"; // note\n}", "rust");
        assert_eq!(style_of_text(&pieces, "fn"), style_of(Kind::Keyword, p));
        assert_eq!(style_of_text(&pieces, "let"), style_of(Kind::Keyword, p));
        assert_eq!(style_of_text(&pieces, "hi"), style_of(Kind::Str, p));
        assert_eq!(style_of_text(&pieces, "note"), style_of(Kind::Comment, p));
        assert_eq!(style_of_text(&pieces, "main"), style_of(Kind::Function, p));
        // Every colour is an ANSI one.
        for (_, s) in &pieces {
            assert!(!matches!(s.fg, Some(Color::Rgb(..) | Color::Indexed(_))));
        }
    }

    #[test]
    fn unknown_language_and_monochrome_are_not_highlighted() {
        warm_up();
        let mut cache = CodeCache::default();
        let lines = ["x = 1"];
        assert!(
            highlight(
                &mut cache,
                0,
                "no-such-lang",
                &lines,
                true,
                Palette::colored()
            )
            .is_none()
        );
        assert!(highlight(&mut cache, 0, "", &lines, true, Palette::colored()).is_none());
        assert!(highlight(&mut cache, 0, "rust", &lines, true, Palette::monochrome()).is_none());
    }

    #[test]
    fn a_long_block_is_highlighted_a_budget_at_a_time() {
        warm_up();
        let p = Palette::colored();
        let owned: Vec<String> = (0..100).map(|i| format!("let v{i} = {i};")).collect();
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let mut cache = CodeCache::default();
        for round in 1..=3 {
            cache.begin();
            let out = highlight(&mut cache, 0, "rust", &lines, true, p).unwrap_or_default();
            let want = (round * LINES_PER_RENDER).min(100);
            assert_eq!((out.len(), kept(&cache)), (want, want));
            assert_eq!(cache.pending(), want < 100);
        }
        // Two blocks share one render's budget.
        let mut cache = CodeCache::default();
        cache.begin();
        let half = LINES_PER_RENDER * 3 / 4;
        let first = highlight(&mut cache, 0, "rust", &lines[..half], true, p);
        let second = highlight(&mut cache, 1, "rust", &lines[..half], true, p);
        assert_eq!(first.map(|l| l.len()), Some(half));
        assert_eq!(second.map(|l| l.len()), Some(LINES_PER_RENDER - half));
        assert!(cache.pending());
    }

    fn kept(cache: &CodeCache) -> usize {
        cache.blocks[0].as_ref().map_or(0, |b| b.lines.len())
    }

    #[test]
    fn a_growing_block_keeps_its_highlighted_lines() {
        warm_up();
        let p = Palette::colored();
        let mut cache = CodeCache::default();
        cache.begin();
        let first = highlight(&mut cache, 0, "rs", &["/* open", "still"], false, p);
        assert_eq!(kept(&cache), 1);
        let more = highlight(
            &mut cache,
            0,
            "rs",
            &["/* open", "still */", "let"],
            true,
            p,
        );
        assert_eq!(kept(&cache), 3);
        // The comment state carried over from the kept line.
        let more = more.unwrap_or_default();
        assert_eq!(more[1][0].1, style_of(Kind::Comment, p));
        assert_eq!(more[2][0].1, style_of(Kind::Keyword, p));
        assert_eq!(first.unwrap_or_default()[0], more[0]);
        // A changed first line starts again.
        highlight(&mut cache, 0, "rs", &["let x"], true, p);
        let first = cache.blocks[0].as_ref().map(|b| b.lines[0].0.clone());
        assert_eq!(first.as_deref(), Some("let x"));
    }
}
