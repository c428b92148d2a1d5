//! The `@` file picker's state: where the `@` was typed, the query typed
//! after it, the workspace's files (listed once per opening, off the draw
//! path, by the app loop) and the ones matching the query, best first.
//! Invariant: the picker never changes the input by itself; it only
//! follows it, and only `insert` (Tab/Enter) writes the chosen path. The
//! listed paths hold no white space and no control character (they could
//! not be mentioned, nor drawn safely).

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use super::Input;

/// Matches kept for the list, at most.
pub const MAX_MATCHES: usize = 200;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilePicker {
    /// The input's line and character column of the `@`.
    pub at: (usize, usize),
    /// What is typed after the `@`.
    pub query: String,
    /// The workspace's paths (folders end with `/`); `None` while listing.
    pub files: Option<Vec<String>>,
    /// The listing stopped at its cap.
    pub truncated: bool,
    /// Indices into `files` matching the query, best first.
    pub matches: Vec<usize>,
    pub selected: usize,
}

impl FilePicker {
    /// A picker for the `@` at `at`, its files still to be listed.
    pub fn new(at: (usize, usize)) -> Self {
        Self {
            at,
            ..Self::default()
        }
    }

    /// The listing arrived.
    pub fn listed(&mut self, files: Vec<String>, truncated: bool) {
        self.files = Some(files);
        self.truncated = truncated;
        self.refilter();
    }

    fn refilter(&mut self) {
        self.matches = self
            .files
            .as_deref()
            .map(|files| fuzzy_filter(files, &self.query, MAX_MATCHES))
            .unwrap_or_default();
        self.selected = 0;
    }

    /// The chosen path, if any matches.
    pub fn chosen(&self) -> Option<&str> {
        let files = self.files.as_deref()?;
        let i = *self.matches.get(self.selected)?;
        files.get(i).map(String::as_str)
    }

    /// Moves the selection by `by`, wrapping around.
    pub fn step(&mut self, by: isize) {
        let n = self.matches.len();
        if n == 0 {
            return;
        }
        let cur = self.selected as isize + by;
        self.selected = cur.rem_euclid(n as isize) as usize;
    }

    /// Follows the input after a key: `false` when the picker must close
    /// (the `@` was deleted, the cursor left the word, white space typed).
    pub fn follow(&mut self, input: &Input) -> bool {
        let Some(query) = word_after(input, self.at) else {
            return false;
        };
        if query != self.query {
            self.query = query;
            self.refilter();
        }
        true
    }

    /// Replaces `@query` in `input` with `@path` (a file followed by a
    /// space, so typing goes on; a folder's path ends with `/` and the
    /// picker stays open on it). Returns whether the picker stays open.
    pub fn insert(&mut self, input: &mut Input) -> bool {
        let Some(path) = self.chosen().map(str::to_string) else {
            return false;
        };
        let typed = self.query.chars().count();
        let (row, col) = self.at;
        let area = &mut input.area;
        let (Ok(r), Ok(c)) = (u16::try_from(row), u16::try_from(col + 1)) else {
            return false;
        };
        area.move_cursor(ratatui_textarea::CursorMove::Jump(r, c));
        area.delete_str(typed);
        let folder = path.ends_with('/');
        if folder {
            area.insert_str(&path);
        } else {
            area.insert_str(format!("{path} "));
        }
        folder && self.follow(input)
    }
}

/// The text between the `@` at `at` and the cursor, when the cursor is on
/// that line after it, the `@` is still there and nothing between them is
/// white space.
pub fn word_after(input: &Input, at: (usize, usize)) -> Option<String> {
    let cursor = input.area.cursor();
    let (row, col) = (cursor.0, cursor.1);
    if row != at.0 || col <= at.1 {
        return None;
    }
    let line = input.area.lines().get(row)?;
    let mut chars = line.chars().skip(at.1);
    if chars.next() != Some('@') {
        return None;
    }
    let query: String = chars.take(col - at.1 - 1).collect();
    (!query.chars().any(char::is_whitespace)).then_some(query)
}

/// Whether an `@` typed now starts a mention: at the start of the input
/// or after white space. Returns where it would go.
pub fn mention_starts(input: &Input) -> Option<(usize, usize)> {
    let cursor = input.area.cursor();
    let (row, col) = (cursor.0, cursor.1);
    if col == 0 {
        return Some((row, col));
    }
    let before = input.area.lines().get(row)?.chars().nth(col - 1)?;
    before.is_whitespace().then_some((row, col))
}

/// The indices of `files` that match `query` fuzzily (its letters in
/// order, as paths match: after a `/` scores best), best first, at most
/// `max`; equal scores keep the shorter path first, then the listing's
/// order. An empty query keeps the listing's order.
pub fn fuzzy_filter(files: &[String], query: &str, max: usize) -> Vec<usize> {
    if query.is_empty() {
        return (0..files.len().min(max)).collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let atom = fuzzy(query);
    let mut buf = Vec::new();
    let mut scored: Vec<(u16, usize, usize)> = files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let score = atom.score(Utf32Str::new(f, &mut buf), &mut matcher)?;
            Some((score, f.len(), i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().take(max).map(|(_, _, i)| i).collect()
}

/// Whether `path` can be listed: a mention ends at white space, and
/// control characters must never reach the screen.
pub fn listable(path: &str) -> bool {
    !path.is_empty() && !path.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `query` as a fuzzy pattern (smart case, smart normalisation): how
/// every picker of the app matches what is typed.
pub fn fuzzy(query: &str) -> Atom {
    Atom::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<String> {
        [
            "Cargo.toml",
            "README.md",
            "src/",
            "src/main.rs",
            "src/tui/",
            "src/tui/app.rs",
            "tests/tui_e2e.rs",
        ]
        .map(String::from)
        .to_vec()
    }

    fn names(files: &[String], found: &[usize]) -> Vec<String> {
        found.iter().map(|&i| files[i].clone()).collect()
    }

    #[test]
    fn the_filter_matches_letters_in_order_best_first() {
        let f = files();
        let found = names(&f, &fuzzy_filter(&f, "main", 10));
        assert_eq!(found, ["src/main.rs"]);
        let found = names(&f, &fuzzy_filter(&f, "tuiapp", 10));
        assert_eq!(found, ["src/tui/app.rs"]);
        // Smart case: lower case matches upper case.
        let found = names(&f, &fuzzy_filter(&f, "readme", 10));
        assert_eq!(found, ["README.md"]);
        assert!(fuzzy_filter(&f, "zzz", 10).is_empty());
        // Nothing typed: the listing's order, capped.
        assert_eq!(fuzzy_filter(&f, "", 3), [0, 1, 2]);
        // Pattern syntax is not interpreted: `!` is a letter to match.
        assert!(fuzzy_filter(&f, "!main", 10).is_empty());
    }

    #[test]
    fn the_filter_prefers_shorter_paths_on_equal_scores() {
        let f = ["src/tui/", "src/"].map(String::from).to_vec();
        let found = names(&f, &fuzzy_filter(&f, "src", 10));
        assert_eq!(found[0], "src/");
    }

    #[test]
    fn paths_with_white_space_or_controls_are_not_listed() {
        assert!(listable("src/main.rs"));
        assert!(!listable("my file.txt"));
        assert!(!listable("evil\u{1b}[2J.rs"));
        assert!(!listable(""));
    }

    #[test]
    fn the_picker_follows_the_input_and_inserts_the_choice() {
        let mut input = Input::default();
        input.set_text("see ");
        let at = mention_starts(&input).unwrap();
        input.area.insert_str("@ma");
        let mut p = FilePicker::new(at);
        p.listed(files(), false);
        assert!(p.follow(&input));
        assert_eq!(p.query, "ma");
        assert_eq!(p.chosen(), Some("src/main.rs"));
        assert!(!p.insert(&mut input));
        assert_eq!(input.text(), "see @src/main.rs ");
        // A folder keeps the picker open on its path.
        input.set_text("@tu");
        let mut p = FilePicker::new((0, 0));
        p.listed(vec!["src/tui/".into(), "src/tui/app.rs".into()], false);
        assert!(p.follow(&input));
        assert!(p.insert(&mut input));
        assert_eq!(input.text(), "@src/tui/");
        assert_eq!(p.query, "src/tui/");
        // White space closes it.
        input.area.insert_char(' ');
        assert!(!p.follow(&input));
    }

    #[test]
    fn an_at_sign_inside_a_word_starts_no_mention() {
        let mut input = Input::default();
        input.set_text("mail me");
        assert!(mention_starts(&input).is_none());
        input.set_text("");
        assert_eq!(mention_starts(&input), Some((0, 0)));
    }
}
