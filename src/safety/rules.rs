//! `allow` and `deny` rules for shell commands, matched on the parsed words
//! of every simple command in a line (see [`super::shell`]), never on
//! substrings. Invariants: a deny rule wins over everything (allow rules and
//! every mode); when deny rules exist, a line that runs something its text
//! does not show is `Unfollowable`, never `Allowed`; a line is allowed only
//! when every command in it is covered, with no assignment, `env -S`,
//! elevating wrapper or redirection out of the workspace the rule does not
//! name; a line that cannot be parsed is never allowed, though a deny rule
//! is still looked for in what could be read.

use serde::{Deserialize, Serialize};

use super::lexer::{Redirect, RedirectKind, Word};
use super::shell::{self, Reading, Simple, Unparsed, basename};
use super::wrappers::ELEVATING;

/// The rules from the config: `allow = ["cargo test"]`, `deny = ["rm -rf"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// What the rules say about a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A deny rule matches one of its commands.
    Denied { rule: String, command: String },
    /// Deny rules exist, and the line runs something its text does not show
    /// (`why`: a program made by an expansion, a shell reading standard
    /// input, …), so it cannot be checked against them.
    Unfollowable { why: String },
    /// Every command in it matches an allow rule.
    Allowed,
    /// Neither (or the line could not be read: `why`).
    Unknown { why: Option<String> },
}

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

/// Redirection targets that are no file of the user's.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Whether the rule `rule` names the tool `name`: a rule of a tool name
/// (`mcp__github__create_issue`) or of all of a server's tools
/// (`mcp__github__*`); command rules never name a tool.
fn names_tool(rule: &str, name: &str) -> bool {
    let rule = rule.trim();
    if !rule.starts_with("mcp__") {
        return false;
    }
    match rule.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => rule == name,
    }
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// What the rules say about calls of the tool `name` (an MCP server's):
    /// a deny rule naming it wins over an allow rule; else `Unknown`.
    pub fn check_tool(&self, name: &str) -> Verdict {
        if let Some(rule) = self.deny.iter().find(|r| names_tool(r, name)) {
            return Verdict::Denied {
                rule: rule.clone(),
                command: name.to_string(),
            };
        }
        if self.allow.iter().any(|r| names_tool(r, name)) {
            return Verdict::Allowed;
        }
        Verdict::Unknown { why: None }
    }

    pub fn check(&self, line: &str) -> Verdict {
        let reading = match shell::read(line) {
            Ok(reading) => reading,
            Err(Unparsed(why)) => {
                // What a shell would still run is unknown; but a denied
                // command written plainly is caught even so.
                if let Some(denied) = self.denied_in_words(line) {
                    return denied;
                }
                return self.cannot_follow(why);
            }
        };
        for simple in &reading.commands {
            if let Some(rule) = self.deny.iter().find(|rule| denies(rule, simple)) {
                return Verdict::Denied {
                    rule: rule.clone(),
                    command: simple.texts().join(" "),
                };
            }
        }
        if let Some(why) = &reading.unfollowable {
            return self.cannot_follow(why.clone());
        }
        for simple in &reading.commands {
            if let Some(why) = self.deny.iter().find_map(|rule| open_to(rule, simple)) {
                return Verdict::Unfollowable { why };
            }
        }
        if self.covers(&reading) {
            Verdict::Allowed
        } else {
            Verdict::Unknown { why: None }
        }
    }

    /// A line that cannot be followed: `Unfollowable` when deny rules exist.
    fn cannot_follow(&self, why: String) -> Verdict {
        if self.deny.is_empty() {
            Verdict::Unknown { why: Some(why) }
        } else {
            Verdict::Unfollowable { why }
        }
    }

    /// Every command is covered by an allow rule (and there is one).
    fn covers(&self, reading: &Reading) -> bool {
        let rules: Vec<AllowRule> = self.allow.iter().map(|r| AllowRule::parse(r)).collect();
        let mut any = false;
        for simple in &reading.commands {
            if simple.words.is_empty() {
                // Assignments or redirections alone (`> file`).
                if !simple.redirects.iter().all(inside_workspace) {
                    return false;
                }
                continue;
            }
            any = true;
            if !rules.iter().any(|rule| rule.covers(simple)) {
                return false;
            }
        }
        any
    }

    /// For a line that cannot be parsed: each line part split on spaces and
    /// separators, checked against the deny rules.
    fn denied_in_words(&self, line: &str) -> Option<Verdict> {
        line.split(['\n', ';', '&', '|', '(', ')', '`', '$', '\'', '"', '{', '}'])
            .map(|part| Simple {
                words: part.split_whitespace().map(Word::plain).collect(),
                ..Simple::default()
            })
            .find_map(|simple| {
                self.deny
                    .iter()
                    .find(|rule| denies(rule, &simple))
                    .map(|rule| Verdict::Denied {
                        rule: rule.clone(),
                        command: simple.texts().join(" "),
                    })
            })
    }
}

/// What the model reads when a deny rule blocks `command`.
pub fn deny_message(rule: &str, command: &str) -> String {
    format!(
        "Blocked by a deny rule: {rule} (in `{command}`). The user does not allow this command; do not try to get around the rule: find another way or ask the user."
    )
}

/// What the model reads when a line cannot be checked against the deny
/// rules and the mode does not ask.
pub fn unfollowable_message(why: &str) -> String {
    format!(
        "Refused: deny rules are configured and this command cannot be checked against them: {why}. Write it so that every program it runs, and their arguments, are in the command itself (no program or options made by an expansion, no shell reading its script from standard input, no eval of generated text, no git alias), or ask the user."
    )
}

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
    if simple.program()? != program {
        return None;
    }
    let args: Vec<&str> = simple.words[1..].iter().map(|w| w.text.as_str()).collect();
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
fn denies(rule: &str, simple: &Simple) -> bool {
    unmet(rule, simple).is_some_and(|missing| missing.is_empty())
}

/// Why `simple` might still be what `rule` denies: its arguments are made
/// by an expansion (or added by `xargs`) where the missing words could be.
fn open_to(rule: &str, simple: &Simple) -> Option<String> {
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

/// A file redirection stays in the workspace: a relative path without
/// `..`, `~` or `.git`, or `/dev/null`. The workspace's own absolute path
/// is not known here, so absolute paths are outside.
fn inside_workspace(redirect: &Redirect) -> bool {
    if redirect.kind != RedirectKind::File {
        return true;
    }
    let target = &redirect.target;
    let path = target.text.as_str();
    if HARMLESS_TARGETS.contains(&path) {
        return true;
    }
    target.literal()
        && !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('~')
        && !path.split('/').any(|part| part == ".." || part == ".git")
}

/// An allow rule read like a command: its words, and the assignments,
/// `env -S`, wrappers and redirection targets it names.
struct AllowRule {
    words: Vec<String>,
    assignments: Vec<String>,
    wrappers: Vec<String>,
    split_string: bool,
    targets: Vec<String>,
}

impl AllowRule {
    fn parse(text: &str) -> Self {
        if let Ok(reading) = shell::read(text)
            && reading.unfollowable.is_none()
            && let [simple] = reading.commands.as_slice()
            && !simple.words.is_empty()
        {
            return Self {
                words: simple.texts(),
                assignments: simple.assignments.clone(),
                wrappers: simple.wrappers.clone(),
                split_string: simple.split_string,
                targets: simple
                    .redirects
                    .iter()
                    .map(|r| r.target.text.clone())
                    .collect(),
            };
        }
        Self {
            words: text.split_whitespace().map(str::to_string).collect(),
            assignments: Vec::new(),
            wrappers: Vec::new(),
            split_string: false,
            targets: Vec::new(),
        }
    }

    /// The rule's words begin the command's (the program by file name):
    /// `cargo test` covers `cargo test --all`, not `cargo install`; and
    /// what else the command carries is named by the rule.
    fn covers(&self, simple: &Simple) -> bool {
        let words = simple.texts();
        let Some((program, rest)) = self.words.split_first() else {
            return false;
        };
        words.len() > rest.len()
            && basename(&words[0]) == basename(program)
            && rest.iter().zip(&words[1..]).all(|(r, w)| r == w)
            && simple
                .assignments
                .iter()
                .all(|a| self.assignments.contains(a))
            && (!simple.split_string || self.split_string)
            && simple
                .wrappers
                .iter()
                .all(|w| !ELEVATING.contains(&w.as_str()) || self.wrappers.contains(w))
            && simple
                .redirects
                .iter()
                .all(|r| inside_workspace(r) || self.targets.contains(&r.target.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_rules_name_a_tool_or_all_of_a_server_and_command_rules_none() {
        let rules = Rules {
            allow: vec!["mcp__docs__search".into(), "ls".into()],
            deny: vec!["mcp__github__*".into(), "rm".into()],
        };
        assert!(matches!(
            rules.check_tool("mcp__github__create_issue"),
            Verdict::Denied { rule, .. } if rule == "mcp__github__*"
        ));
        assert_eq!(rules.check_tool("mcp__docs__search"), Verdict::Allowed);
        assert_eq!(
            rules.check_tool("mcp__docs__searchx"),
            Verdict::Unknown { why: None }
        );
        // `rm` and `ls` are command rules: no tool name is one.
        assert_eq!(rules.check_tool("rm"), Verdict::Unknown { why: None });
        assert_eq!(
            rules.check_tool("mcp__githubx__a"),
            Verdict::Unknown { why: None }
        );
    }

    fn rules() -> Rules {
        Rules {
            allow: vec!["cargo test".into(), "git status".into(), "ls".into()],
            deny: vec!["rm -rf".into(), "git push".into()],
        }
    }

    #[test]
    fn deny_finds_the_command_wherever_the_line_hides_it() {
        let denied = [
            "rm -rf /",
            "rm -fr /",
            "rm -r -f build",
            "/bin/rm -rfv x",
            "cargo test; rm -rf /",
            "cargo test && rm -rf /",
            "false || rm -rf /",
            "ls | rm -rf x",
            "bash -c 'rm -rf /'",
            "sh -c \"cd / && rm -rf x\"",
            "env FOO=1 rm -rf x",
            "sudo rm -rf /",
            "echo $(rm -rf ~)",
            "echo `rm -rf ~`",
            "ls\nrm -rf x",
            "git -C repo push origin main",
            "git push --force",
            "find . -exec rm -rf {} +",
            "ls | xargs rm -rf",
            "echo 'unclosed ; rm -rf /",
        ];
        for line in denied {
            assert!(
                matches!(rules().check(line), Verdict::Denied { .. }),
                "{line}: {:?}",
                rules().check(line)
            );
        }
        let Verdict::Denied { rule, command } = rules().check("cargo test; git push origin") else {
            panic!()
        };
        assert_eq!(
            (rule.as_str(), command.as_str()),
            ("git push", "git push origin")
        );
    }

    #[test]
    fn quoting_and_lookalikes_are_not_denied() {
        for line in [
            "echo 'rm -rf /'",
            "grep -r 'git push' .",
            "rm -r build",
            "rmdir -p x",
            "git pull",
            "echo rm -rf",
        ] {
            assert!(
                !matches!(rules().check(line), Verdict::Denied { .. }),
                "{line}: {:?}",
                rules().check(line)
            );
        }
    }

    #[test]
    fn allowed_only_when_every_command_is() {
        assert_eq!(rules().check("cargo test --all"), Verdict::Allowed);
        assert_eq!(rules().check("cargo test && git status"), Verdict::Allowed);
        assert_eq!(rules().check("ls -la | ls"), Verdict::Allowed);
        for line in [
            "cargo install x",
            "cargo test; make",
            "cargo",
            "echo $(cargo test)",
        ] {
            assert_eq!(
                rules().check(line),
                Verdict::Unknown { why: None },
                "{line}"
            );
        }
        // Here-documents are read now: the body is data for `cat`.
        assert_eq!(
            rules().check("cat <<EOF\nhi\nEOF"),
            Verdict::Unknown { why: None }
        );
        assert!(matches!(
            rules().check("echo 'open"),
            Verdict::Unfollowable { .. }
        ));
        let allow_only = Rules {
            deny: Vec::new(),
            ..rules()
        };
        assert!(matches!(
            allow_only.check("echo 'open"),
            Verdict::Unknown { why: Some(_) }
        ));
        assert_eq!(
            Rules::default().check("anything"),
            Verdict::Unknown { why: None }
        );
    }
}
