//! `allow`, `deny` and `ask` rules for shell commands, matched on the
//! parsed words of every simple command in a line (see [`super::shell`];
//! how one rule matches one command is [`super::deny`] and
//! [`super::allow`]), never on substrings; and the same rules naming
//! other programs' tools (`mcp__server__*`). Invariants: a deny rule wins
//! over everything (allow rules and every mode); when deny rules exist, a
//! line that runs something its text does not show is `Unfollowable`,
//! never `Allowed`; a line is allowed only when every command in it is
//! covered, with no assignment, `env -S`, named wrapper, evaluating
//! expansion or file written out of the workspace the rule does not name;
//! a line that cannot be parsed is never allowed, though a deny rule is
//! still looked for in what could be read; a server's rule names the
//! server whole.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::access::Access;
use super::allow::{AllowRule, Place, redirect_inside};
use super::deny::{denies, open_to};
use super::lexer::Word;
use super::shell::{self, Reading, Simple, Unparsed};

/// The rules from the config (`allow = ["cargo test"]`, `deny = ["rm
/// -rf"]`) and from Claude Code's settings (`ask`, exact commands, files
/// and hosts).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// Commands and tools asked about in every mode that can ask, even
    /// when allowed (Claude Code's `ask`).
    #[serde(default)]
    pub ask: Vec<String>,
    /// Commands allowed only word for word (Claude Code's `Bash(cmd)`).
    #[serde(default)]
    pub exact: Vec<String>,
    /// The files tools read and edit and the hosts `web_fetch` reaches.
    #[serde(default)]
    pub access: Access,
    /// A project's rules that allow more, kept apart until the user
    /// approves them (they never apply before).
    #[serde(default)]
    pub waiting: Option<Box<Waiting>>,
}

/// A project's allow rules waiting for the user's approval.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// The files they are written in.
    pub files: Vec<String>,
    /// The fingerprint of the project's rules as written, which an
    /// approval keeps (the SHA-256 hex of their canonical JSON).
    pub print: String,
    pub rules: Rules,
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

/// Whether the rule `rule` names the tool `name` of the server whose
/// names begin with `server` (`mcp__github__`): a rule of the tool's name
/// (`mcp__github__create_issue`), of tools of the server by a pattern
/// (`mcp__github__*`, `mcp__github__get_*`), or of the whole server
/// (`mcp__github`, Claude Code's form). The server is matched whole: a
/// server named `github__evil` is not `github`. Command rules, and tools of
/// no server, never match.
fn names_tool(rule: &str, name: &str, server: Option<&str>) -> bool {
    let rule = rule.trim();
    let Some(server) = server else {
        return false;
    };
    if !rule.starts_with("mcp__") {
        return false;
    }
    if server.strip_suffix("__") == Some(rule) || rule == name {
        return true;
    }
    let Some(tool_part) = rule.strip_prefix(server) else {
        return false;
    };
    // A pattern names the server's tools only: no `__` may follow. (A
    // long name is cut and hashed: only `mcp__server__*` names it then.)
    tool_part.strip_suffix('*').is_some_and(|prefix| {
        !tool_part.contains("__")
            && name
                .strip_prefix(server)
                .map_or(prefix.is_empty(), |tool| tool.starts_with(prefix))
    })
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
            && self.deny.is_empty()
            && self.ask.is_empty()
            && self.exact.is_empty()
            && self.access.is_empty()
    }

    /// Adds `other`'s rules to these (each once); its waiting rules wait.
    pub fn extend(&mut self, other: Rules) {
        let add = |to: &mut Vec<String>, from: Vec<String>| {
            for rule in from {
                if !to.contains(&rule) {
                    to.push(rule);
                }
            }
        };
        add(&mut self.allow, other.allow);
        add(&mut self.deny, other.deny);
        add(&mut self.ask, other.ask);
        add(&mut self.exact, other.exact);
        self.access.extend(other.access);
        if let Some(waiting) = other.waiting {
            match &mut self.waiting {
                Some(mine) => {
                    mine.files.extend(waiting.files);
                    mine.rules.extend(waiting.rules);
                }
                None => self.waiting = Some(waiting),
            }
        }
    }

    /// The waiting rules were approved: they apply from now on.
    pub fn approve_waiting(&mut self) {
        if let Some(waiting) = self.waiting.take() {
            self.extend(waiting.rules);
        }
    }

    /// What the rules say about calls of the tool `name` of the server
    /// whose tool names begin with `server` (`mcp__github__`; `None` for a
    /// tool of no server): a deny rule naming it wins over an allow rule;
    /// else `Unknown`.
    pub fn check_tool(&self, name: &str, server: Option<&str>) -> Verdict {
        if let Some(rule) = self.deny.iter().find(|r| names_tool(r, name, server)) {
            return Verdict::Denied {
                rule: rule.clone(),
                command: name.to_string(),
            };
        }
        if self.allow.iter().any(|r| names_tool(r, name, server)) {
            return Verdict::Allowed;
        }
        Verdict::Unknown { why: None }
    }

    /// The ask rule naming the tool `name`, if any.
    pub fn asks_tool(&self, name: &str, server: Option<&str>) -> Option<&str> {
        self.ask
            .iter()
            .find(|r| names_tool(r, name, server))
            .map(String::as_str)
    }

    /// The ask rule one of the line's commands matches (as a deny rule
    /// would), and that command.
    pub fn asks(&self, line: &str) -> Option<(String, String)> {
        if self.ask.is_empty() {
            return None;
        }
        let commands = match shell::read(line) {
            Ok(reading) => reading.commands,
            Err(Unparsed(_)) => words_of(line),
        };
        commands.iter().find_map(|simple| {
            self.ask
                .iter()
                .find(|rule| denies(rule, simple))
                .map(|rule| (rule.clone(), simple.texts().join(" ")))
        })
    }

    /// What the rules say about `line`, with no workspace to look at: a
    /// file it writes is never covered by an allow rule.
    pub fn check(&self, line: &str) -> Verdict {
        self.check_in(line, None)
    }

    /// What the rules say about `line` run in the workspace `root`.
    pub fn check_in(&self, line: &str, root: Option<&Path>) -> Verdict {
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
        if self.covers(&reading, root) {
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
    fn covers(&self, reading: &Reading, root: Option<&Path>) -> bool {
        let rules: Vec<AllowRule> = self
            .allow
            .iter()
            .map(|r| AllowRule::parse(r, false))
            .chain(self.exact.iter().map(|r| AllowRule::parse(r, true)))
            .collect();
        // After `cd`, relative paths are no longer the workspace's.
        let moved = reading
            .commands
            .iter()
            .any(|c| matches!(c.program(), Some("cd" | "pushd" | "popd")));
        let place = Place { root, moved };
        let mut any = false;
        for simple in &reading.commands {
            if simple.words.is_empty() {
                // Assignments or redirections alone (`> file`).
                if !simple.redirects.iter().all(|r| redirect_inside(r, place)) {
                    return false;
                }
                continue;
            }
            any = true;
            if !rules.iter().any(|rule| rule.covers(simple, place)) {
                return false;
            }
        }
        any
    }

    /// For a line that cannot be parsed: each line part split on spaces and
    /// separators, checked against the deny rules.
    fn denied_in_words(&self, line: &str) -> Option<Verdict> {
        words_of(line).into_iter().find_map(|simple| {
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

/// A line that cannot be parsed, split on spaces and separators.
fn words_of(line: &str) -> Vec<Simple> {
    line.split(['\n', ';', '&', '|', '(', ')', '`', '$', '\'', '"', '{', '}'])
        .map(|part| Simple {
            words: part.split_whitespace().map(Word::plain).collect(),
            ..Simple::default()
        })
        .collect()
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
        "Refused: deny rules are configured and this command cannot be checked against them: {why}. Write it so that every program it runs, and their arguments, are in the command itself (no program or options made by an expansion, no shell reading its script from standard input, no eval of generated text, no variable evaluated as arithmetic, no git alias), or ask the user."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_rules_name_a_tool_or_all_of_a_server_and_command_rules_none() {
        let rules = Rules {
            allow: vec!["mcp__docs__search".into(), "ls".into()],
            deny: vec!["mcp__github__*".into(), "rm".into()],
            ..Rules::default()
        };
        let (github, docs) = (Some("mcp__github__"), Some("mcp__docs__"));
        assert!(matches!(
            rules.check_tool("mcp__github__create_issue", github),
            Verdict::Denied { rule, .. } if rule == "mcp__github__*"
        ));
        assert_eq!(
            rules.check_tool("mcp__docs__search", docs),
            Verdict::Allowed
        );
        assert_eq!(
            rules.check_tool("mcp__docs__searchx", docs),
            Verdict::Unknown { why: None }
        );
        // `rm` and `ls` are command rules: no tool name is one.
        assert_eq!(rules.check_tool("rm", None), Verdict::Unknown { why: None });
        assert_eq!(
            rules.check_tool("mcp__githubx__a", Some("mcp__githubx__")),
            Verdict::Unknown { why: None }
        );
        // A tool of no server is never an MCP rule's.
        assert_eq!(
            rules.check_tool("mcp__github__x", None),
            Verdict::Unknown { why: None }
        );
    }

    fn rules() -> Rules {
        Rules {
            allow: vec!["cargo test".into(), "git status".into(), "ls".into()],
            deny: vec!["rm -rf".into(), "git push".into()],
            ..Rules::default()
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
