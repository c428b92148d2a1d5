//! Ctrl+R's search of earlier prompts, like a shell's reverse search:
//! this session's history and the stored sessions' prompts (read once
//! when the search opens, by the app loop: this workspace's first), matched
//! fuzzily against what is typed, best first. Invariant: the input box is
//! untouched until Enter puts the chosen prompt in it; Esc gives back
//! exactly what was typed.

use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Prompts kept for the search, at most.
pub const PROMPTS_CAP: usize = 2_000;

/// One earlier prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    /// Sent in this workspace (this project's come first at equal score).
    pub here: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistorySearch {
    /// What is typed to search.
    pub query: String,
    /// Every prompt, newest first, this session's and this workspace's
    /// first, deduplicated.
    pub prompts: Vec<Prompt>,
    /// The stored sessions' prompts have been read.
    pub loaded: bool,
    /// Why they could not be, if they could not.
    pub error: Option<String>,
    /// Indices into `prompts` matching the query, best first.
    pub matches: Vec<usize>,
    pub selected: usize,
}

impl HistorySearch {
    /// A search over this session's `history` (oldest first, as the input
    /// keeps it), the query `typed` (what the input holds).
    pub fn new(history: &[String], typed: &str) -> Self {
        let mut search = Self {
            query: crate::text::clean_line(typed).trim().to_string(),
            ..Self::default()
        };
        search.add(history.iter().rev().map(|t| Prompt {
            text: t.clone(),
            here: true,
        }));
        search
    }

    /// The stored sessions' prompts arrived (newest first).
    pub fn loaded(&mut self, prompts: Result<Vec<Prompt>, String>) {
        self.loaded = true;
        match prompts {
            Ok(prompts) => self.add(prompts),
            Err(e) => self.error = Some(e),
        }
    }

    /// Adds `more` after what is held, leaving out blank prompts and those
    /// already held, up to [`PROMPTS_CAP`]; then this workspace's first.
    fn add(&mut self, more: impl IntoIterator<Item = Prompt>) {
        let mut seen: std::collections::HashSet<String> =
            self.prompts.iter().map(|p| p.text.clone()).collect();
        for p in more {
            if self.prompts.len() >= PROMPTS_CAP {
                break;
            }
            if !p.text.trim().is_empty() && seen.insert(p.text.clone()) {
                self.prompts.push(p);
            }
        }
        // Stable: newest first within each group.
        self.prompts.sort_by_key(|p| !p.here);
        self.refilter();
    }

    pub fn push(&mut self, c: char) {
        self.query.push(c);
        self.refilter();
    }

    pub fn pop(&mut self) {
        self.query.pop();
        self.refilter();
    }

    fn refilter(&mut self) {
        self.matches = rank(&self.prompts, &self.query);
        self.selected = 0;
    }

    /// The highlighted prompt.
    pub fn chosen(&self) -> Option<&str> {
        let i = *self.matches.get(self.selected)?;
        self.prompts.get(i).map(|p| p.text.as_str())
    }

    /// To the next (further down) or previous match, stopping at either end.
    pub fn step(&mut self, next: bool) {
        let last = self.matches.len().saturating_sub(1);
        self.selected = match next {
            true => (self.selected + 1).min(last),
            false => self.selected.saturating_sub(1),
        };
    }
}

/// The indices of `prompts` matching `query` fuzzily, best first; equal
/// scores keep their order (this workspace's, then newest, first). An
/// empty query keeps them all in order.
pub fn rank(prompts: &[Prompt], query: &str) -> Vec<usize> {
    let query = query.trim();
    if query.is_empty() {
        return (0..prompts.len()).collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT);
    let atom = super::files::fuzzy(query);
    let mut buf = Vec::new();
    let mut scored: Vec<(u16, usize)> = prompts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            Some((
                atom.score(Utf32Str::new(&p.text, &mut buf), &mut matcher)?,
                i,
            ))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(text: &str, here: bool) -> Prompt {
        Prompt {
            text: text.into(),
            here,
        }
    }

    #[test]
    fn the_query_narrows_and_this_project_comes_first() {
        let history = vec!["fix the parser".to_string(), "add a test".to_string()];
        let mut s = HistorySearch::new(&history, "");
        assert_eq!(s.query, "");
        s.loaded(Ok(vec![
            prompt("fix the parser", false),
            prompt("fix the lexer", false),
            prompt("refactor the parser", true),
        ]));
        let texts = |s: &HistorySearch| -> Vec<String> {
            s.matches
                .iter()
                .map(|&i| s.prompts[i].text.clone())
                .collect()
        };
        // Nothing typed: this session's newest first, then this
        // workspace's, then the others; the duplicate once.
        assert_eq!(
            texts(&s),
            [
                "add a test",
                "fix the parser",
                "refactor the parser",
                "fix the lexer"
            ]
        );
        "parser".chars().for_each(|c| s.push(c));
        assert_eq!(texts(&s), ["fix the parser", "refactor the parser"]);
        s.step(true);
        assert_eq!(s.chosen(), Some("refactor the parser"));
        s.step(true);
        assert_eq!(s.chosen(), Some("refactor the parser"));
        s.step(false);
        assert_eq!(s.chosen(), Some("fix the parser"));
        "zzz".chars().for_each(|c| s.push(c));
        assert_eq!(s.chosen(), None);
    }

    #[test]
    fn equal_scores_keep_this_project_first_and_the_cap_holds() {
        let mut s = HistorySearch::new(&[], "lex");
        s.loaded(Ok(vec![prompt("lexer", false), prompt("lexer!", true)]));
        assert_eq!(s.chosen(), Some("lexer!"));
        let many = (0..PROMPTS_CAP + 10).map(|i| prompt(&format!("p{i}"), false));
        let mut s = HistorySearch::new(&[], "");
        s.loaded(Ok(many.collect()));
        assert_eq!(s.prompts.len(), PROMPTS_CAP);
    }
}
