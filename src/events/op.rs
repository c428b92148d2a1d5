//! The ops: what a driver asks of the engine. Plain data, like every
//! event: it serialises, so a driver may live in another process.

use serde::{Deserialize, Serialize};

use super::approval::{ApprovalMode, Decision};
use super::checkpoint::CheckpointOp;
use super::mcp::McpAction;
use super::thread::ThreadId;
use crate::todo::PlanEdit;

/// A request to the engine. Plain data: it serialises, so a driver may live
/// in another process.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message: starts a turn, or is queued until the running turn ends.
    Submit {
        /// The message as the user wrote it.
        text: String,
    },
    /// Images the user pasted, sent with the next `Submit` (which names
    /// them in its text as `[image 1: 640x480 png]`).
    Attach {
        /// The images, added to those kept for the next `Submit`.
        images: Vec<crate::chat::ImageSource>,
    },
    /// Stop the running turn now: cancel the request, kill the running tool.
    Interrupt,
    /// Continue an interrupted (or stopped) turn where it left off.
    Resume,
    /// Read the settings again (the config file too) and rebuild the model
    /// client; it is used from the next turn on.
    ReloadSettings,
    /// Switch to `model` (and `provider`, when given) from the next turn on.
    SetModel {
        /// The provider (`anthropic`, `openai`, …); left out: the model's
        /// own when it is a known one, else as the settings say.
        provider: Option<String>,
        /// The model's name, as its provider spells it.
        model: String,
    },
    /// Drop the conversation, the plan and the reminder state. A running turn
    /// is interrupted first; the reset applies when it has ended.
    NewSession,
    /// Act on the MCP servers; their tools change at the next turn.
    Mcp {
        /// What to do, and to which server.
        action: McpAction,
    },
    /// Approve this project's `.claude/settings.json` as written now (its
    /// hooks, its rules that allow more); remembered for the project.
    ApproveHooks,
    /// Stop the engine.
    Quit,
    /// Compact the conversation now (summary, plan, last turns), with an
    /// optional focus for the summary.
    Compact {
        /// What the summary should keep above all, in the user's words
        /// (left out: no focus).
        focus: Option<String>,
    },
    /// Checkpoints and undo (refused while a turn runs).
    Checkpoint {
        /// What to do: list, undo, or show the diff.
        action: CheckpointOp,
    },
    /// Continue the stored session whose id starts with `id` (of this
    /// workspace) instead of the current one. A running turn is
    /// interrupted first.
    OpenSession {
        /// The session's id, or enough of its start to name one session.
        id: String,
    },
    /// The answer to `ApprovalRequested` for the tool call `id`.
    Approve {
        /// The waiting tool call's id, as `ApprovalRequested` gave it.
        id: String,
        /// Run it (once, or always), or refuse it.
        decision: Decision,
    },
    /// Approve the plan the model proposed in plan mode: it becomes the
    /// live plan (a revision by `approved`), the approval mode becomes
    /// `mode`, and a turn starts carrying it out. Refused while a turn
    /// runs or when no plan is proposed (an `Error` of kind `PlanEdit`).
    ApprovePlan {
        /// The mode to run it in; none: the mode before plan mode.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<ApprovalMode>,
        /// Restart the conversation from the task, the research's summary
        /// (the model's last reply) and the approved plan.
        #[serde(default)]
        fresh: bool,
        /// The plan as the user edited it (a plan file's items): it
        /// becomes the proposal first, as a user revision. Items whose text
        /// matches a proposed item's keep its id (and its scope unless they
        /// declare one); the rest get fresh ids. Left out: the proposal as
        /// it stands.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        items: Option<Vec<crate::todo::TodoItem>>,
    },
    /// Set, pause, resume, clear the session's goal, or accept an item
    /// without evidence (see [`super::goal`]).
    Goal {
        /// What to do.
        #[serde(flatten)]
        action: super::goal::GoalAction,
    },
    /// Switch the approval mode (from the next tool call on).
    SetApproval {
        /// The new mode.
        mode: ApprovalMode,
    },
    /// The user changes the plan of `thread` (the root one when left
    /// out; a subagent's while it works): applied at once (a user
    /// revision, sent as `PlanUpdated` from that thread) and told to its
    /// model at its next step; a refused edit, or one for a thread not at
    /// work, is an `Error` of kind `PlanEdit`.
    EditPlan {
        /// The thread whose plan it is (0, the root, when left out).
        #[serde(default, skip_serializing_if = "ThreadId::is_root")]
        thread: ThreadId,
        /// The change.
        edit: PlanEdit,
    },
}
