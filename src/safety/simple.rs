//! One simple command of a shell line (its words, assignments and
//! redirections, and what reading it through wrappers added), and the
//! rules for its words that [`super::shell`] and [`super::wrappers`] both
//! follow.

use super::lexer::{Redirect, Word};

/// One simple command of a line, wrappers looked through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Simple {
    /// The program, then its arguments.
    pub words: Vec<Word>,
    /// `NAME=value` before the program or given to `env`.
    pub assignments: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Its standard input is a pipe.
    pub piped: bool,
    /// The wrappers it ran through (`sudo`, `env`, `timeout`).
    pub wrappers: Vec<String>,
    /// `env -S` split a string into its words.
    pub split_string: bool,
    /// More arguments are added that the line does not show (`xargs`).
    pub appended: bool,
    /// Files its wrappers write by their options (`time -o FILE`).
    pub written: Vec<Word>,
}

impl Simple {
    /// The words' texts.
    pub fn texts(&self) -> Vec<String> {
        self.words.iter().map(|w| w.text.clone()).collect()
    }

    /// The program's file name, when there is one.
    pub fn program(&self) -> Option<&str> {
        self.words.first().map(|w| basename(&w.text))
    }
}

/// Programs that never run their arguments as commands: a denied
/// command among their words is text (`echo rm -rf`).
pub const INERT: &[&str] = &[
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "man",
    "info",
    "which",
    "type",
    "whereis",
    "whatis",
    "apropos",
    "help",
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "less",
    "more",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "file",
    "stat",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "test",
    "[",
    "[[",
    ":",
    "true",
    "false",
    "git",
    "alias",
    "trap",
    "declare",
    "local",
    "export",
    "readonly",
    "typeset",
    "let",
    "read",
    "unset",
    "mapfile",
    "readarray",
    "printenv",
    "hash",
    "complete",
    "compgen",
    "history",
    "fc",
];

/// The string `xargs -I R`, `-i[R]` or `--replace[=R]` replaces.
pub fn replace_string(options: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = options.get(i) {
        i += 1;
        let t = w.text.as_str();
        if t == "-I" {
            return options.get(i).map(|r| r.text.clone());
        }
        if let Some(r) = t.strip_prefix("-I") {
            return Some(r.to_string());
        }
        if t == "-i" || t == "--replace" {
            return Some("{}".into());
        }
        if let Some(r) = t
            .strip_prefix("-i")
            .or_else(|| t.strip_prefix("--replace="))
        {
            return Some(r.to_string());
        }
    }
    None
}

/// `word` holds `replaced`, which is made from input when the line runs.
pub fn made_from_input(word: &mut Word, replaced: &str) {
    if let Some(at) = word.text.find(replaced) {
        if word.literal() {
            word.lead = word.text[..at].chars().count();
        }
        word.expanded = true;
    }
}

/// The program's file name: `/usr/bin/rm` is `rm`.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// `NAME=value` (also `NAME+=value`, `NAME[i]=value`), the name unquoted.
pub fn is_assignment(word: &Word) -> bool {
    let raw = word.raw.as_str();
    let name_end = raw
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(raw.len());
    let name = &raw[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let rest = &raw[name_end..];
    let rest = match rest.strip_prefix('[') {
        Some(index) => index.split_once(']').map_or("", |(_, after)| after),
        None => rest,
    };
    rest.starts_with('=') || rest.starts_with("+=")
}
