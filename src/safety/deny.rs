//! How a deny rule (`rm -rf`, `git push`) matches one simple command: the
//! program by file name, every other word among the arguments, options by
//! their letters (`rm -fr`, `rm --recursive --force`), git's commands by
//! every name (`git-push`, `send-pack`); and why a command might still be
//! what a rule denies although its words do not show it (arguments made
//! by an expansion, a word that may be a git alias, a program that runs
//! its arguments as a command).

use super::git;
use super::lexer::Word;
use super::simple::{INERT, Simple, basename};

/// Long options that are a short one, per program (GNU spellings; any
/// unambiguous beginning of them is accepted, as getopt does).
const LONG_OPTIONS: &[(&str, &str, char)] = &[
    ("rm", "recursive", 'r'),
    ("rm", "force", 'f'),
    ("rm", "dir", 'd'),
    ("rm", "verbose", 'v'),
    ("cp", "recursive", 'r'),
    ("cp", "force", 'f'),
    ("mv", "force", 'f'),
    ("chmod", "recursive", 'R'),
    ("chown", "recursive", 'R'),
    ("chgrp", "recursive", 'R'),
    ("shred", "remove", 'u'),
    ("shred", "force", 'f'),
    ("git", "force", 'f'),
    ("git", "delete", 'd'),
];

/// Short options that are the same option, per program: only where the
/// program documents them as one (`rm -R` is `rm -r`; `chmod -r` is not
/// `chmod -R`).
const SAME_LETTERS: &[(&str, char, char)] = &[("rm", 'R', 'r'), ("cp", 'R', 'r')];

/// The option letters a command's arguments give (before `--`), long
/// options and same-meaning letters mapped as the tables say.
fn letters(program: &str, args: &[&str]) -> Vec<char> {
    let mut out = Vec::new();
    for arg in args {
        if *arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if !name.is_empty() {
                out.extend(
                    LONG_OPTIONS
                        .iter()
                        .filter(|(p, full, _)| *p == program && full.starts_with(name))
                        .map(|(_, _, c)| *c),
                );
            }
        } else if let Some(short) = arg.strip_prefix('-') {
            out.extend(short.chars().map(|c| same_letter(program, c)));
        } else if program == "git" && arg.len() > 1 && arg.starts_with('+') {
            // `git push +main` forces, as `-f` does.
            out.push('f');
        }
    }
    out
}

fn same_letter(program: &str, c: char) -> char {
    SAME_LETTERS
        .iter()
        .find(|(p, from, _)| *p == program && *from == c)
        .map_or(c, |(_, _, to)| *to)
}

/// The words of a deny rule the command lacks (`-x` for a letter), or
/// `None` when it runs another program.
fn unmet(rule: &str, simple: &Simple) -> Option<Vec<String>> {
    let mut rule_words = rule.split_whitespace();
    let program = basename(rule_words.next()?);
    if program == "*" {
        // Every command (Claude Code's `Bash` alone).
        return simple.program().map(|_| Vec::new());
    }
    if simple.program()? != program {
        return None;
    }
    let mut args: Vec<&str> = simple.words[1..].iter().map(|w| w.text.as_str()).collect();
    if program == "git"
        && let Some(same) =
            git::command_at(&simple.words[1..]).and_then(|at| git::same_as(args[at]))
    {
        // `git send-pack` pushes: a rule on `git push` names it.
        args.push(same);
    }
    let have = letters(program, &args);
    let mut missing = Vec::new();
    for word in rule_words {
        let needed = letters(program, &[word]);
        if word.starts_with('-') && !needed.is_empty() {
            missing.extend(
                needed
                    .into_iter()
                    .filter(|c| !have.contains(c))
                    .map(|c| format!("-{c}")),
            );
        } else if !args.iter().any(|a| {
            *a == word
                || a.strip_prefix(word)
                    .is_some_and(|rest| rest.starts_with('='))
        }) {
            missing.push(word.to_string());
        }
    }
    Some(missing)
}

/// A deny rule matches when the program is the rule's (by file name) and
/// every other word of the rule is among the command's arguments; options
/// match by their letters, so `rm -rf` also denies `rm -fr`, `rm -r -f`,
/// `rm -rfv`, `rm -Rf` and `rm --recursive --force`.
pub fn denies(rule: &str, simple: &Simple) -> bool {
    unmet(rule, simple).is_some_and(|missing| missing.is_empty())
}

/// Why `simple` might still be what `rule` denies: its arguments are made
/// by an expansion (or added by `xargs`) where the missing words could
/// be, its git command may be an alias, or a program that may run its
/// arguments is given the denied command.
pub fn open_to(rule: &str, simple: &Simple) -> Option<String> {
    if let Some(why) = runs_denied(rule, simple).or_else(|| git_alias(rule, simple)) {
        return Some(why);
    }
    let missing = unmet(rule, simple)?;
    if missing.is_empty() {
        return None;
    }
    let program = simple.program().unwrap_or_default();
    let args = &simple.words[1..];
    let end_of_options = args.iter().position(|w| w.text == "--");
    let can_supply = |at: Option<usize>, word: &Word| {
        let lead = word.leading();
        let before = at.is_some_and(|at| end_of_options.is_none_or(|end| at < end));
        missing.iter().any(|m| {
            if m.starts_with('-') {
                before && lead.chars().all(|c| c == '-')
            } else {
                lead.is_empty()
            }
        })
    };
    if let Some(word) = args
        .iter()
        .enumerate()
        .find(|(at, w)| !w.literal() && can_supply(Some(*at), w))
        .map(|(_, w)| w)
    {
        return Some(format!(
            "the arguments of `{program}` are made by an expansion (`{}`), so the deny rule `{rule}` cannot be checked",
            word.raw
        ));
    }
    let appended_options = end_of_options.is_none() && missing.iter().any(|m| m.starts_with('-'));
    if simple.appended && (appended_options || missing.iter().any(|m| !m.starts_with('-'))) {
        return Some(format!(
            "`xargs` adds arguments to `{program}` from its input, so the deny rule `{rule}` cannot be checked"
        ));
    }
    None
}

/// A program no table knows, given the denied command as its arguments
/// (`strace -f rm -rf x`, a wrapper no table lists): it may run it.
fn runs_denied(rule: &str, simple: &Simple) -> Option<String> {
    let program = simple.program()?;
    let rule_program = basename(rule.split_whitespace().next()?);
    if INERT.contains(&program) || program == rule_program {
        return None;
    }
    simple
        .words
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, w)| w.literal() && basename(&w.text) == rule_program)
        .find(|(at, _)| {
            let inner = Simple {
                words: simple.words[*at..].to_vec(),
                ..Simple::default()
            };
            denies(rule, &inner)
        })
        .map(|(at, _)| {
            let texts: Vec<&str> = simple.words[at..].iter().map(|w| w.text.as_str()).collect();
            format!(
                "`{program}` is given `{}` as its arguments and may run it, which the deny rule `{rule}` names",
                texts.join(" ")
            )
        })
}

/// A git command that is no git command is an alias (the user's, or one
/// the repository's configuration defines), which may be the denied one.
fn git_alias(rule: &str, simple: &Simple) -> Option<String> {
    if simple.program()? != "git" || basename(rule.split_whitespace().next()?) != "git" {
        return None;
    }
    let args = &simple.words[1..];
    let command = &args[git::command_at(args)?];
    (command.literal() && !git::is_command(&command.text)).then(|| {
        format!(
            "`git {}` is no git command: it may be an alias, so the deny rule `{rule}` cannot be checked",
            command.text
        )
    })
}
