//! `allow` and `deny` rules for shell commands, matched on the parsed words
//! of every simple command in a line (see [`super::shell`]), never on
//! substrings. Invariants: a deny rule wins over everything (allow rules and
//! every mode); a line is allowed only when every command in it is; a line
//! that cannot be parsed is never allowed (it is `Unknown`), though a deny
//! rule is still looked for in what could be read.

use serde::{Deserialize, Serialize};

use super::shell::{Unparsed, basename, simple_commands};

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
    /// Every command in it matches an allow rule.
    Allowed,
    /// Neither (or the line could not be read: `why`).
    Unknown { why: Option<String> },
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    pub fn check(&self, line: &str) -> Verdict {
        let commands = match simple_commands(line) {
            Ok(commands) => commands,
            Err(Unparsed(why)) => {
                // What a shell would still run is unknown; but a denied
                // command written plainly is caught even so.
                if let Some(denied) = self.denied_in_words(line) {
                    return denied;
                }
                return Verdict::Unknown { why: Some(why) };
            }
        };
        for words in &commands {
            for rule in &self.deny {
                if denies(rule, words) {
                    return Verdict::Denied {
                        rule: rule.clone(),
                        command: words.join(" "),
                    };
                }
            }
        }
        let allowed = !commands.is_empty()
            && commands
                .iter()
                .all(|words| self.allow.iter().any(|rule| allows(rule, words)));
        if allowed {
            Verdict::Allowed
        } else {
            Verdict::Unknown { why: None }
        }
    }

    /// For a line that cannot be parsed: each line part split on spaces and
    /// separators, checked against the deny rules.
    fn denied_in_words(&self, line: &str) -> Option<Verdict> {
        line.split(['\n', ';', '&', '|', '(', ')', '`', '$', '\'', '"'])
            .map(|part| {
                part.split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .find_map(|words| {
                self.deny
                    .iter()
                    .find(|rule| denies(rule, &words))
                    .map(|rule| Verdict::Denied {
                        rule: rule.clone(),
                        command: words.join(" "),
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

/// A deny rule matches when the program is the rule's (by file name) and
/// every other word of the rule is among the command's arguments; a short
/// option cluster matches by its letters, so `rm -rf` also denies `rm -fr`,
/// `rm -r -f` and `rm -rfv`.
fn denies(rule: &str, words: &[String]) -> bool {
    let mut rule_words = rule.split_whitespace();
    let (Some(program), Some(first)) = (rule_words.next(), words.first()) else {
        return false;
    };
    if basename(first) != basename(program) {
        return false;
    }
    let args = &words[1..];
    let letters: String = args
        .iter()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .flat_map(|a| a.chars().skip(1))
        .collect();
    rule_words.all(|w| {
        if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 {
            w.chars().skip(1).all(|c| letters.contains(c))
        } else {
            args.iter()
                .any(|a| a == w || a.strip_prefix(w).is_some_and(|rest| rest.starts_with('=')))
        }
    })
}

/// An allow rule matches when its words begin the command's words (the
/// program by file name): `cargo test` allows `cargo test --all`, not
/// `cargo install`.
fn allows(rule: &str, words: &[String]) -> bool {
    let rule: Vec<&str> = rule.split_whitespace().collect();
    let Some((program, rest)) = rule.split_first() else {
        return false;
    };
    words.len() > rest.len()
        && basename(&words[0]) == basename(program)
        && rest.iter().zip(&words[1..]).all(|(r, w)| r == w)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(matches!(
            rules().check("cat <<EOF\nhi\nEOF"),
            Verdict::Unknown { why: Some(_) }
        ));
        assert_eq!(
            Rules::default().check("anything"),
            Verdict::Unknown { why: None }
        );
    }
}
