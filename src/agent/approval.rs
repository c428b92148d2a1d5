//! Whether a tool call runs, asks first, or is refused, by the approval
//! mode, the rules (the config's and Claude Code's settings', see
//! [`super::rule_gate`]) and what the user allowed for the session; and
//! the wait for the user's answer. Invariants: a deny rule refuses in every
//! mode; while deny rules exist, a command they cannot be checked against
//! is refused in the modes that do not ask and asked (with the reason) in
//! those that do; an ask rule asks in every mode but yolo; an allow rule
//! and "always" cover a command only as run in this workspace (its links
//! looked at); nothing runs while an answer is awaited; an interrupt ends
//! the wait; a refusal reaches the model as the call's result and the turn
//! goes on.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use super::policy::{Always, Policy, always_for, first_words};
pub use super::rule_gate::Gate;
use super::rule_gate::{Judge, Ruled};
use super::shared::lock;
use super::voice::Voice;
use crate::events::{ApprovalMode, ApprovalReason, Decision, Event, ToolDetail, ToolSummary};
use crate::safety::Verdict;
use crate::tools::{Access, Refuser, Target};

/// Bytes of a call's arguments an approval shows, at most.
const ARGS_SHOWN: usize = 16 * 1024;

/// A command's line; "" for a tool that names none.
fn command_of(target: Target<'_>) -> &str {
    match target {
        Target::Command(command) => command,
        _ => "",
    }
}

/// A file change's path, as the call names it.
fn file_of(target: Target<'_>) -> Option<&str> {
    match target {
        Target::File(path) => Some(path),
        _ => None,
    }
}

impl Judge<'_> {
    /// The file a write or edit names, resolved in the workspace; `None`
    /// for a path the workspace refuses (the call then fails on its own).
    pub(super) fn file_key(&self, path: &str) -> Option<std::path::PathBuf> {
        self.host.shared.workspace.resolve(path).ok()
    }

    /// What the mode, the rules and the session's answers say about a call.
    pub(super) fn gate(&self, name: &str, input: &Value) -> Gate {
        let Some(spec) = self.tools.spec(name) else {
            // Unknown tools fail on their own.
            return Gate::Run { sandboxed: false };
        };
        let access = spec.access;
        let server = match &spec.origin {
            crate::tools::Origin::Mcp { server } => Some(crate::mcp::name::server_prefix(server)),
            _ => None,
        };
        let server = server.as_deref();
        // A deny rule naming another program's tool (an MCP server's, by
        // name or `mcp__server__*`) refuses it whatever it says it does.
        if let Verdict::Denied { rule, command } =
            self.host.config.tools.rules.check_tool(name, server)
        {
            return Gate::Refuse(
                Refuser::Rules,
                crate::safety::rules::deny_message(&rule, &command),
            );
        }
        let target = self.tools.target(name, input);
        let policy = lock(&self.host.shared.policy);
        let mode = policy.mode;
        let rule_allows = match self.ruled((name, access, target), mode, server) {
            Ruled::Refused(by, why) => return Gate::Refuse(by, why),
            Ruled::Asked(reason) => return Gate::Ask(reason),
            Ruled::Allowed => true,
            Ruled::Nothing => false,
        };
        match access {
            // Plan mode: only an `explore` subagent.
            Access::Read | Access::Plan if mode == ApprovalMode::Plan => {
                super::plan_mode::agent_gate(self.host, &spec.origin, input)
            }
            Access::Read | Access::Plan => Gate::Run { sandboxed: false },
            Access::Write => match mode {
                ApprovalMode::Plan => super::plan_mode::refuse(
                    self.host,
                    &format!(
                        "`{name}` cannot change files; describe the change in the plan instead"
                    ),
                ),
                ApprovalMode::ReadOnly => Gate::Refuse(
                    Refuser::Mode,
                    format!(
                        "Refused: Waypoint is in read-only mode, so `{name}` cannot change files. Say what you would change instead."
                    ),
                ),
                ApprovalMode::Ask
                    if !rule_allows
                        && !file_of(target)
                            .and_then(|path| self.file_key(path))
                            .is_some_and(|f| policy.files.contains(&f)) =>
                {
                    Gate::Ask(ApprovalReason::Mode)
                }
                _ => Gate::Run { sandboxed: false },
            },
            Access::Network => self.network_gate(
                (name, server),
                mode,
                rule_allows || policy.tools.contains(name),
            ),
            Access::External => {
                let allowed = self.host.config.tools.rules.check_tool(name, server)
                    == Verdict::Allowed
                    || rule_allows
                    || policy.tools.contains(name);
                match mode {
                    ApprovalMode::Plan => super::plan_mode::refuse(
                        self.host,
                        &format!(
                            "`{name}` is a tool of an MCP server that does not mark it read-only (readOnlyHint), so it may change things"
                        ),
                    ),
                    ApprovalMode::ReadOnly => Gate::Refuse(
                        Refuser::Mode,
                        format!(
                            "Refused: Waypoint is in read-only mode, and `{name}` is a tool of an MCP server that does not say it only reads. Say what you would do with it instead."
                        ),
                    ),
                    ApprovalMode::Ask | ApprovalMode::AutoEdit if !allowed => {
                        Gate::Ask(ApprovalReason::Mode)
                    }
                    _ => Gate::Run { sandboxed: false },
                }
            }
            Access::Exec => self.exec_gate(command_of(target), &policy),
        }
    }

    /// A command line: refused by a deny rule in every mode, asked by an
    /// ask rule in every mode but yolo, then as the mode and the allow
    /// rules say (what the deny rules cannot follow is refused where
    /// nobody is asked).
    fn exec_gate(&self, command: &str, policy: &Policy) -> Gate {
        let mode = policy.mode;
        let rules = &self.host.config.tools.rules;
        let root = self.host.shared.workspace.root();
        let verdict = rules.check_in(command, Some(root));
        let allowed = verdict == Verdict::Allowed || policy.commands.covers(command, root);
        let unfollowable = match verdict {
            Verdict::Denied { rule, command } => {
                return Gate::Refuse(
                    Refuser::Rules,
                    crate::safety::rules::deny_message(&rule, &command),
                );
            }
            Verdict::Unfollowable { why } => Some(why),
            Verdict::Allowed | Verdict::Unknown { .. } => None,
        };
        if let Some((rule, word)) = self.names_denied_file(command) {
            return Gate::Refuse(
                Refuser::Rules,
                super::rule_gate::access_message(&rule, &word),
            );
        }
        let asked = rules.asks(command).map(|(rule, _)| rule);
        match mode {
            ApprovalMode::Plan => super::plan_mode::command_gate(self.host, asked, unfollowable),
            ApprovalMode::ReadOnly => Gate::Refuse(
                Refuser::Mode,
                "Refused: Waypoint is in read-only mode, so commands cannot run. Use read_file and glob, or say what you would run."
                    .into(),
            ),
            // An ask rule asks even what is allowed.
            ApprovalMode::Ask | ApprovalMode::AutoEdit | ApprovalMode::Auto
                if let Some(rule) = asked =>
            {
                Gate::Ask(ApprovalReason::Rule { rule })
            }
            ApprovalMode::Ask | ApprovalMode::AutoEdit if allowed => Gate::Run { sandboxed: false },
            ApprovalMode::Ask | ApprovalMode::AutoEdit => Gate::Ask(match unfollowable {
                Some(why) => ApprovalReason::Unfollowable { why },
                None => ApprovalReason::Mode,
            }),
            // Nobody is asked: what cannot be checked does not run.
            ApprovalMode::Auto | ApprovalMode::Yolo if let Some(why) = unfollowable => Gate::Refuse(
                Refuser::Rules,
                crate::safety::rules::unfollowable_message(&why),
            ),
            ApprovalMode::Auto if self.host.config.tools.sandbox.is_none() => Gate::Refuse(
                Refuser::Mode,
                "Refused: bash cannot run: Waypoint is in auto mode but this system has no Landlock sandbox to run commands in. The user can start Waypoint with `--approval yolo` to run commands unsandboxed."
                    .into(),
            ),
            ApprovalMode::Auto => Gate::Run {
                sandboxed: !policy.unsandboxed.covers(command, root),
            },
            ApprovalMode::Yolo => Gate::Run { sandboxed: false },
        }
    }

    /// A call that reaches the network: refused in read-only mode and
    /// where the sandbox has no network, asked in ask, auto-edit and plan
    /// unless allowed (an allow rule naming it, or "always").
    fn network_gate(
        &self,
        (name, server): (&str, Option<&str>),
        mode: ApprovalMode,
        allowed: bool,
    ) -> Gate {
        let allowed =
            allowed || self.host.config.tools.rules.check_tool(name, server) == Verdict::Allowed;
        let offline = self
            .host
            .config
            .tools
            .sandbox
            .as_ref()
            .is_some_and(|s| !s.network);
        match mode {
            ApprovalMode::ReadOnly => Gate::Refuse(
                Refuser::Mode,
                format!(
                    "Refused: Waypoint is in read-only mode, so `{name}` cannot reach the network."
                ),
            ),
            _ if offline => Gate::Refuse(
                Refuser::Mode,
                format!(
                    "Refused: the network is off ([sandbox] network = false in the config), so `{name}` cannot run."
                ),
            ),
            ApprovalMode::Ask | ApprovalMode::AutoEdit | ApprovalMode::Plan if !allowed => {
                Gate::Ask(ApprovalReason::Mode)
            }
            _ => Gate::Run { sandboxed: false },
        }
    }
}

/// The user's side of the gate for one thread's calls: asking, and what
/// an "always" answer lets through afterwards.
pub(super) struct Asking<'a> {
    voice: Voice<'a>,
}

/// The user's answer to a question about a call (`None` when interrupted),
/// and how long it was waited for (not counted in the call's duration).
pub(super) struct Asked {
    pub decision: Option<Decision>,
    pub waited: std::time::Duration,
}

impl<'a> Asking<'a> {
    pub fn new(voice: Voice<'a>) -> Self {
        Self { voice }
    }

    /// Asks the user about the call `id` (shown as `summary`, the one its
    /// `ToolCallBegin` had) and waits.
    pub async fn ask(
        &self,
        (id, name, input): (&str, &str, &Value),
        summary: ToolSummary,
        reason: ApprovalReason,
        cancel: &CancellationToken,
    ) -> Asked {
        let asked = std::time::Instant::now();
        let Voice { host, thread } = self.voice;
        let command = match thread.tools.target(name, input) {
            Target::Command(command) => Some(command.to_string()),
            _ => None,
        };
        // A sandbox-blocked call ran already: only a first ask waits (a
        // call waiting when the process dies never ran).
        let first = !matches!(reason, ApprovalReason::SandboxBlocked { .. });
        if first {
            self.voice.settle_user_changes();
            self.record_wait(id, true);
        }
        let mut summary = summary;
        if let ToolDetail::Call { args, .. } = &mut summary.detail {
            // Another program's tool: the user sees every argument.
            *args = crate::json::pretty(input, ARGS_SHOWN);
        }
        // Waiting before asking: an answer can never come too early.
        let answer = host.shared.approvals.wait(id);
        self.voice.emit(Event::ApprovalRequested {
            id: id.to_string(),
            name: name.to_string(),
            summary,
            command,
            cwd: host.shared.workspace.root().display().to_string(),
            reason: reason.clone(),
        });
        let decision = tokio::select! {
            answer = answer => Some(answer.unwrap_or(Decision::Refuse {
                reason: Some("nobody is there to approve it".into()),
            })),
            _ = cancel.cancelled() => {
                host.shared.approvals.withdraw(id);
                None
            }
        };
        if decision == Some(Decision::Always) {
            self.remember(name, input, &reason);
        }
        if decision.is_some() && first {
            self.record_wait(id, false);
        }
        Asked {
            decision,
            waited: asked.elapsed(),
        }
    }

    /// Records that call `id` waits for the user's answer, or got it (the
    /// wait is not its plan item's time).
    fn record_wait(&self, id: &str, waiting: bool) {
        let record = crate::session::Record::Approval {
            id: std::borrow::Cow::Borrowed(id),
            waiting,
            at: crate::session::now_ms(),
        };
        self.voice.observe(&record);
    }

    /// "Always": calls like this one run without asking for the session.
    fn remember(&self, name: &str, input: &Value, reason: &ApprovalReason) {
        let Voice { host, thread } = self.voice;
        let tools = &thread.tools;
        let file = match tools.target(name, input) {
            Target::File(path) => Judge { host, tools }.file_key(path),
            _ => None,
        };
        let mut policy = lock(&host.shared.policy);
        match tools.target(name, input) {
            Target::Command(command) => match reason {
                ApprovalReason::Mode => policy.commands.add(always_for(command)),
                // What cannot be checked is allowed as exactly this line.
                ApprovalReason::Unfollowable { .. } => {
                    policy.commands.add(Always::Line(command.to_string()))
                }
                ApprovalReason::SandboxBlocked { .. } => {
                    policy.unsandboxed.add(always_for(command))
                }
                // Remembered where it is asked (the pipeline serves it);
                // an ask rule asks every time.
                ApprovalReason::Tool { .. } | ApprovalReason::Rule { .. } => {}
            },
            _ if matches!(reason, ApprovalReason::Rule { .. }) => {}
            Target::File(_) => {
                if let Some(file) = file {
                    policy.files.insert(file);
                }
            }
            Target::Nothing | Target::Read(_) | Target::Url(_) => {
                let external = tools
                    .spec(name)
                    .is_some_and(|s| matches!(s.access, Access::External | Access::Network));
                if external {
                    policy.tools.insert(name.to_string());
                }
            }
        }
    }
}

/// Takes a mode switch asked for with `Op::SetApproval`, and tells it.
pub(super) fn apply_mode_request(voice: Voice<'_>) {
    let asked = lock(&voice.host.requests.mode).take();
    if let Some(mode) = asked {
        lock(&voice.host.shared.policy).set_mode(mode);
        announce_mode(voice);
    }
}

/// Tells the driver the mode in force.
pub(super) fn announce_mode(voice: Voice<'_>) {
    let host = voice.host;
    let mode = lock(&host.shared.policy).mode;
    let sandboxed = matches!(mode, ApprovalMode::Auto | ApprovalMode::Plan)
        && host.config.tools.sandbox.is_some();
    voice.emit(Event::ApprovalMode { mode, sandboxed });
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
        // A bare command is allowed as exactly that line: `make` must not
        // allow `make -f /tmp/evil.mk`.
        assert_eq!(always_for("make"), Always::Line("make".into()));
        assert_eq!(
            always_for("cd x && make"),
            Always::Line("cd x && make".into())
        );
        assert!(first_words("make").is_empty());
        assert_eq!(
            always_for("echo a | bash"),
            Always::Line("echo a | bash".into())
        );
        assert_eq!(
            first_words("cd x && /usr/bin/git status"),
            ["cd x", "git status"]
        );
        assert!(first_words("echo 'open").is_empty());
        assert_eq!(always_for("echo 'open"), Always::Line("echo 'open".into()));
        assert_eq!(refusal(Some("  not now ")), "Refused by the user: not now");
        assert!(refusal(None).starts_with("Refused by the user"));
    }
}
