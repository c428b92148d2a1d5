//! What the rules from Claude Code's settings say about a call before the
//! mode does: `Read(…)` and `Edit(…)` rules on the files tools read and
//! change, `WebFetch(domain:…)` rules on the hosts `web_fetch` reaches,
//! and `ask` rules on other programs' tools (commands' ask rules are
//! looked at with their deny rules, in [`super::approval`]); a command
//! that names a file a read rule denies, plainly (`cat .env`, `< .env`),
//! is refused too, though one that builds the name is not caught.
//! Invariants: a deny rule refuses in every mode; an ask rule asks in
//! every mode but yolo, and no "always" silences it; an allow rule only
//! spares a question the mode would ask.

use crate::events::{ApprovalMode, ApprovalReason};
use crate::safety::access::Says;
use crate::tools::{Access, Refuser, Target};

/// What happens to a call before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    Run {
        sandboxed: bool,
    },
    Ask(ApprovalReason),
    /// Not run: `by` refused it, and the model reads why.
    Refuse(Refuser, String),
}

/// The approval gate: what the mode, the rules and the session's answers
/// say about a call, judged on the host's settings and the calling
/// thread's tools (nothing of the session is changed).
pub(super) struct Judge<'a> {
    pub host: &'a super::thread::Host,
    pub tools: &'a crate::tools::ToolRegistry,
}

/// What the rules say about a call.
pub(super) enum Ruled {
    /// Refused whatever the mode; the model reads why.
    Refused(Refuser, String),
    /// Asked whatever the mode (but yolo).
    Asked(ApprovalReason),
    /// An allow rule names it: what the mode would ask about runs.
    Allowed,
    Nothing,
}

/// What the model reads when a rule on files or hosts refuses a call.
pub fn access_message(rule: &str, what: &str) -> String {
    format!(
        "Blocked by a rule: {rule} (`{what}`). The user does not allow this; do not try to get around the rule (another tool, a command, another path to the same file): find another way or ask the user."
    )
}

impl Judge<'_> {
    /// The read rule that denies a file `command` names as a word or a
    /// redirection (`cat .env`, `--file=.env`, `< .env`), and the word.
    pub(super) fn names_denied_file(&self, command: &str) -> Option<(String, String)> {
        let read = &self.host.config.tools.rules.access.read;
        if read.is_empty() {
            return None;
        }
        let root = self.host.shared.workspace.root();
        let reading = crate::safety::shell::read(command).ok()?;
        let words = reading.commands.iter().flat_map(|s| {
            s.words
                .iter()
                .skip(1)
                .chain(s.redirects.iter().map(|r| &r.target))
        });
        for word in words.filter(|w| w.literal() && !w.text.is_empty()) {
            let value = word.text.split_once('=').map(|(_, v)| v);
            for text in std::iter::once(word.text.as_str()).chain(value) {
                let path = crate::fsx::lexical(&root.join(text));
                if let Says::Deny(rule) = read.says_path(&path) {
                    return Some((rule.to_string(), word.text.clone()));
                }
            }
        }
        None
    }

    /// What the rules on files, hosts and tools say about a call of `name`
    /// (a tool of the server whose names begin with `server`, if any).
    pub(super) fn ruled(
        &self,
        (name, access, target): (&str, Access, Target<'_>),
        mode: ApprovalMode,
        server: Option<&str>,
    ) -> Ruled {
        let rules = &self.host.config.tools.rules;
        let (says, what) = match target {
            Target::Read(path) => (
                self.host
                    .shared
                    .workspace
                    .resolve(path)
                    .map_or(Says::Nothing, |p| rules.access.read.says_path(&p)),
                path,
            ),
            Target::File(path) if access == Access::Write => (
                self.host
                    .shared
                    .workspace
                    .resolve(path)
                    .map_or(Says::Nothing, |p| rules.access.edit.says_path(&p)),
                path,
            ),
            Target::Url(url) => {
                let host = reqwest::Url::parse(url)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_string));
                match host {
                    Some(host) => (rules.access.fetch.says_host(&host), url),
                    None => (Says::Nothing, url),
                }
            }
            _ => match rules.asks_tool(name, server) {
                Some(rule) => (Says::Ask(rule), name),
                None => (Says::Nothing, name),
            },
        };
        match says {
            Says::Deny(rule) => Ruled::Refused(Refuser::Rules, access_message(rule, what)),
            // Read-only and plan modes refuse what changes anything on
            // their own (a yes must not let it run); a read they would let
            // through is asked.
            Says::Ask(_) if mode == ApprovalMode::Yolo => Ruled::Nothing,
            Says::Ask(_)
                if matches!(mode, ApprovalMode::ReadOnly | ApprovalMode::Plan)
                    && access != Access::Read =>
            {
                Ruled::Nothing
            }
            Says::Ask(rule) => Ruled::Asked(ApprovalReason::Rule {
                rule: rule.to_string(),
            }),
            Says::Allow(_) => Ruled::Allowed,
            Says::Nothing => Ruled::Nothing,
        }
    }
}
