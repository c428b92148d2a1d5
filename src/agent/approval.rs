//! Whether a tool call runs, asks first, or is refused, by the approval
//! mode, the config's rules and what the user allowed for the session; and
//! the wait for the user's answer. Invariants: a deny rule refuses in every
//! mode; nothing runs while an answer is awaited; an interrupt ends the
//! wait; a refusal reaches the model as the call's result and the turn goes on.

use std::collections::HashSet;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::events::{ApprovalMode, ApprovalReason, Decision, Event, ToolSummary};
use crate::safety::{Verdict, shell};
use crate::tools::Access;

/// What happens to a call before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    Run { sandboxed: bool },
    Ask(ApprovalReason),
    Refuse(String),
}

/// The mode and what the user allowed "always" in this session.
#[derive(Clone, Debug)]
pub struct Policy {
    pub mode: ApprovalMode,
    /// Commands allowed for the session, as allow rules (`cargo test`).
    commands: Vec<String>,
    /// Commands allowed to run outside the sandbox for the session.
    unsandboxed: Vec<String>,
    /// Files the user allowed writing for the session.
    files: HashSet<String>,
}

impl Policy {
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode,
            commands: Vec::new(),
            unsandboxed: Vec::new(),
            files: HashSet::new(),
        }
    }
}

/// A line's "always" rules: for each of its commands, the program and its
/// first argument (`cargo test`, `git status`), or the whole command when
/// that argument is an option (`ls -la`, `cargo --version`), so "always"
/// never covers a whole program. Empty when the line cannot be read.
pub fn first_words(command: &str) -> Vec<String> {
    let Ok(commands) = shell::simple_commands(command) else {
        return Vec::new();
    };
    commands
        .iter()
        .filter_map(|words| {
            let program = shell::basename(words.first()?);
            Some(match words.get(1) {
                Some(arg) if !arg.starts_with('-') => format!("{program} {arg}"),
                Some(_) => std::iter::once(program)
                    .chain(words[1..].iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                None => program.to_string(),
            })
        })
        .collect()
}

fn command_of(input: &Value) -> &str {
    input
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn path_of(input: &Value) -> &str {
    input
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Session {
    /// What the mode, the rules and the session's answers say about a call.
    pub(super) fn gate(&self, name: &str, input: &Value) -> Gate {
        let Some(access) = self.tools.get(name).map(|t| t.access()) else {
            // Unknown tools fail on their own.
            return Gate::Run { sandboxed: false };
        };
        let mode = self.policy.mode;
        match access {
            Access::Read | Access::Plan => Gate::Run { sandboxed: false },
            Access::Write => match mode {
                ApprovalMode::ReadOnly => Gate::Refuse(format!(
                    "Refused: Waypoint is in read-only mode, so `{name}` cannot change files. Say what you would change instead."
                )),
                ApprovalMode::Ask if !self.policy.files.contains(path_of(input)) => {
                    Gate::Ask(ApprovalReason::Mode)
                }
                _ => Gate::Run { sandboxed: false },
            },
            Access::Exec => {
                let command = command_of(input);
                let rules = &self.config.tools.rules;
                let verdict = rules.check(command);
                if let Verdict::Denied { rule, command } = &verdict {
                    return Gate::Refuse(crate::safety::rules::deny_message(rule, command));
                }
                let session = crate::safety::Rules {
                    allow: self.policy.commands.clone(),
                    deny: Vec::new(),
                };
                let allowed =
                    verdict == Verdict::Allowed || session.check(command) == Verdict::Allowed;
                match mode {
                    ApprovalMode::ReadOnly => Gate::Refuse(
                        "Refused: Waypoint is in read-only mode, so commands cannot run. Use read_file and glob, or say what you would run."
                            .into(),
                    ),
                    ApprovalMode::Ask | ApprovalMode::AutoEdit if allowed => {
                        Gate::Run { sandboxed: false }
                    }
                    ApprovalMode::Ask | ApprovalMode::AutoEdit => Gate::Ask(ApprovalReason::Mode),
                    ApprovalMode::Auto if self.config.tools.sandbox.is_none() => Gate::Refuse(
                        "Refused: bash cannot run: Waypoint is in auto mode but this system has no Landlock sandbox to run commands in. The user can start Waypoint with `--approval yolo` to run commands unsandboxed."
                            .into(),
                    ),
                    ApprovalMode::Auto => {
                        let outside = crate::safety::Rules {
                            allow: self.policy.unsandboxed.clone(),
                            deny: Vec::new(),
                        };
                        Gate::Run {
                            sandboxed: outside.check(command) != Verdict::Allowed,
                        }
                    }
                    ApprovalMode::Yolo => Gate::Run { sandboxed: false },
                }
            }
        }
    }

    /// Asks the user about the call `id` (shown as `summary`, the one its
    /// `ToolCallBegin` had) and waits; `None` when interrupted. The wait is
    /// counted apart from the call's duration.
    pub(super) async fn ask(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        summary: ToolSummary,
        reason: ApprovalReason,
        cancel: &CancellationToken,
    ) -> Option<Decision> {
        let asked = std::time::Instant::now();
        let command = (name == "bash").then(|| command_of(input).to_string());
        self.emit(Event::ApprovalRequested {
            id: id.to_string(),
            name: name.to_string(),
            summary,
            command,
            cwd: self.workspace.root().display().to_string(),
            reason: reason.clone(),
        });
        let decision = self.answer_to(id, name, input, &reason, cancel).await;
        self.approval_wait += asked.elapsed();
        decision
    }

    /// The user's answer to the request for call `id`.
    async fn answer_to(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        reason: &ApprovalReason,
        cancel: &CancellationToken,
    ) -> Option<Decision> {
        loop {
            let answer = tokio::select! {
                a = self.approvals.recv() => a,
                _ = cancel.cancelled() => return None,
            };
            match answer {
                // An answer to an older request (already settled): skip it.
                Some((answered, _)) if answered != id => continue,
                Some((_, decision)) => {
                    if decision == Decision::Always {
                        self.remember(name, input, reason);
                    }
                    return Some(decision);
                }
                // No one can answer any more.
                None => {
                    return Some(Decision::Refuse {
                        reason: Some("nobody is there to approve it".into()),
                    });
                }
            }
        }
    }

    /// "Always": calls like this one run without asking for the session.
    fn remember(&mut self, name: &str, input: &Value, reason: &ApprovalReason) {
        match self.tools.get(name).map(|t| t.access()) {
            Some(Access::Exec) => {
                let rules = first_words(command_of(input));
                match reason {
                    ApprovalReason::Mode => self.policy.commands.extend(rules),
                    ApprovalReason::SandboxBlocked { .. } => self.policy.unsandboxed.extend(rules),
                }
            }
            Some(Access::Write) => {
                self.policy.files.insert(path_of(input).to_string());
            }
            _ => {}
        }
    }

    /// Takes a mode switch asked for with `Op::SetApproval`.
    pub(super) fn apply_mode_request(&mut self) {
        let asked = self
            .mode_request
            .lock()
            .ok()
            .and_then(|mut slot| slot.take());
        if let Some(mode) = asked {
            self.policy.mode = mode;
            self.announce_mode();
        }
    }

    /// Tells the driver the mode in force.
    pub(super) fn announce_mode(&mut self) {
        let sandboxed =
            self.policy.mode == ApprovalMode::Auto && self.config.tools.sandbox.is_some();
        self.emit(Event::ApprovalMode {
            mode: self.policy.mode,
            sandboxed,
        });
    }
}

/// What the model reads when the user refuses a call.
pub fn refusal(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("Refused by the user: {reason}"),
        None => "Refused by the user (no reason given). Do not run it again; ask the user or find another way.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_remembers_the_first_words() {
        assert_eq!(first_words("cargo test --all"), ["cargo test"]);
        assert_eq!(first_words("ls -la"), ["ls -la"]);
        assert_eq!(first_words("cargo --version"), ["cargo --version"]);
        assert_eq!(first_words("make"), ["make"]);
        assert_eq!(
            first_words("cd x && /usr/bin/git status"),
            ["cd x", "git status"]
        );
        assert!(first_words("echo 'open").is_empty());
        assert_eq!(refusal(Some("  not now ")), "Refused by the user: not now");
        assert!(refusal(None).starts_with("Refused by the user"));
    }
}
