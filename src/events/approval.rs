//! What approvals are made of: the mode (how much the agent may do
//! without asking), why a call waits for the user, and the user's answer.
//! Plain data that round-trips through serde.

use serde::{Deserialize, Serialize};

/// How much the agent may do without asking. Deny rules apply in every mode.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Plan and read tools only: writes and `bash` are refused.
    ReadOnly,
    /// Research and propose a plan: reads, the plan, read-only MCP tools
    /// and `explore` subagents run; file changes and other tools are
    /// refused; `bash` runs in the sandbox with nothing writable (asked
    /// where there is no sandbox, refused headless). Enforced by the
    /// harness, not the prompt.
    Plan,
    /// Reads run; every `bash` command and every write asks.
    Ask,
    /// Writes in the workspace run; `bash` asks.
    AutoEdit,
    /// Nothing asks; `bash` runs in the sandbox.
    Auto,
    /// Nothing asks and there is no sandbox.
    Yolo,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 6] = [
        ApprovalMode::ReadOnly,
        ApprovalMode::Plan,
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::Auto,
        ApprovalMode::Yolo,
    ];

    /// `read-only`, `plan`, `ask`, `auto-edit`, `auto`, `yolo`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Plan => "plan",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::Auto => "auto",
            ApprovalMode::Yolo => "yolo",
        }
    }

    pub fn parse(text: &str) -> Option<ApprovalMode> {
        let text = text.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// What the model reads when plan mode refuses a call: `what` could not
/// be done (`` `write_file` cannot change files``), and what to do instead.
/// One text for every refusal of plan mode, wherever it is made.
pub fn plan_mode_refusal(what: &str) -> String {
    plan_mode_refusal_for(what, true)
}

/// [`plan_mode_refusal`] for a model with the todo tool (`tool`) or
/// without it (it proposes in its reply: [`PLAN_MODE_WORK_REPLY`]).
pub fn plan_mode_refusal_for(what: &str, tool: bool) -> String {
    let work = if tool {
        PLAN_MODE_WORK
    } else {
        PLAN_MODE_WORK_REPLY
    };
    format!("Refused: Waypoint is in plan mode (read-only): {what}. {work}")
}

/// What plan mode asks of the model: said in its refusals, the system
/// prompt and the note on entering it.
pub const PLAN_MODE_WORK: &str = "Research (read, search, read-only commands), then propose the plan with todo_write; the user approves it before anything changes.";

/// [`PLAN_MODE_WORK`] for a model without the todo tool (`plan_tool =
/// false`): the proposal is the Markdown checklist its reply ends with.
pub const PLAN_MODE_WORK_REPLY: &str = "Research (read, search, read-only commands), then propose the plan: end your reply with it as a Markdown checklist, one line \"- [ ] item\" per item, in order; the user approves it before anything changes.";

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The user's answer to an approval request.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run this call.
    Once,
    /// Run it, and calls like it for the rest of the session (the
    /// command's first words, or this file).
    Always,
    /// Do not run it; the model reads the reason.
    Refuse {
        /// Why, told to the model (left out or null: no reason given).
        reason: Option<String>,
    },
}

/// Why a call waits for the user.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalReason {
    /// The mode asks before this kind of call.
    Mode,
    /// It ran in the sandbox and was stopped by it: run it outside?
    SandboxBlocked {
        /// What the sandbox stopped it at (a path outside the writable
        /// set, or the network).
        what: String,
    },
    /// Deny rules exist and the command cannot be checked against them
    /// (`why`: a program made by an expansion, a shell reading stdin, …).
    Unfollowable {
        /// Why the command cannot be checked, in words.
        why: String,
    },
    /// The running tool asks `question` itself (an MCP server, a subagent).
    Tool {
        /// The tool's question, in its words.
        question: String,
    },
    /// An ask rule names the call: asked whatever allow rules and mode say.
    Rule {
        /// The ask rule, as written in the settings.
        rule: String,
    },
}
