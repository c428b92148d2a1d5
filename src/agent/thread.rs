//! The two halves of what a turn works on. A [`Thread`] is one agent: its
//! conversation, plan, reminders, account, model client and tools; a child
//! agent (a subagent) gets a thread of its own. The [`Host`] is what the
//! threads run in: the workspace and settings, the transcript and the
//! session store, the approval policy and the user's answers, and the
//! outbox to the driver. Invariant: a thread holds nothing of the host's,
//! so a second thread can run in the same host.

use std::sync::{Arc, Mutex};

use super::policy::SharedPolicy;
use super::reminders::Reminders;
use super::shared::{Answers, Log};
use super::{AgentConfig, Outbox};
use crate::chat::Conversation;
use crate::events::ApprovalMode;
use crate::llm::{ModelClient, Usage};
use crate::session::SessionStore;
use crate::todo::{Author, SharedPlan, TodoItem};
use crate::tools::{ToolDef, ToolRegistry, Workspace};

/// A run of plan changes by one hand that the model has not heard of:
/// whose, the plan before them and after.
pub(super) type Unsaid = (Author, Vec<TodoItem>, Vec<TodoItem>);

/// One agent's own state.
pub(super) struct Thread {
    pub client: Arc<dyn ModelClient>,
    pub conversation: Conversation,
    /// The plan, shared with the dispatcher (the user edits it mid-turn).
    pub plan: SharedPlan,
    /// What the thread does because something was recorded (its plan's
    /// account among them): see [`super::observers`].
    pub observers: Mutex<super::observers::Observers>,
    /// What waits for the model's next step (see [`Left`]).
    pub left: Mutex<Left>,
    pub reminders: Reminders,
    /// Tokens spent by this process (a new session does not reset them).
    pub totals: Usage,
    pub tools: ToolRegistry,
    /// What requests offer of them.
    pub offered: Offered,
    /// The last request's prompt tokens and the conversation's bytes then.
    pub last_prompt: Option<(u64, usize)>,
    /// The estimate right after the last compaction.
    pub compacted_to: Option<u64>,
    /// What its turns have done so far (and, for a subagent, its limits).
    pub run: RunFacts,
}

/// What waits for a thread's next step: the user's plan changes the model
/// has not heard of (runs of them by one hand: the plan before and after);
/// why a hook said to stop (`continue: false`; the turn ends after this
/// round); what `SessionStart` hooks said for the model (added before the
/// next prompt), and why `SessionStart` runs again before then (`clear`,
/// `compact`), when it does; and what the plan's hooks said of a reply's
/// `Done: N` lines (read after the plan the model is sent next).
#[derive(Debug, Default)]
pub(super) struct Left {
    pub unsaid: Vec<Unsaid>,
    pub stop: Option<String>,
    pub notes: Vec<String>,
    pub source: Option<&'static str>,
    pub plan_notes: Vec<String>,
}

/// What a thread's turns have done: the time its calls waited for the
/// user, its tool calls, how its last turn stopped; a subagent's limits;
/// and the accounts of the subagents its calls ran, until recorded.
#[derive(Default)]
pub(super) struct RunFacts {
    /// The images the current reply's calls may still show.
    pub images: crate::tools::image_budget::ImageBudget,
    /// Time spent waiting for the user's approvals (not counted in a
    /// call's duration).
    pub approval_wait: std::time::Duration,
    pub tool_calls: u32,
    /// Why the last turn stopped early, when it did.
    pub stopped: Option<crate::tools::task::TaskEnd>,
    pub budget: Option<super::subagent::Budget>,
    /// The accounts of finished subagents, by the call that ran them.
    pub tasks: Mutex<Vec<(String, super::subagent::Finished)>>,
    /// The undo last previewed (the root's): what `confirm` applies.
    pub undo: Option<(
        crate::events::CheckpointOp,
        crate::checkpoint::restore::Preview,
    )>,
}

impl Thread {
    pub(super) fn new(
        client: Arc<dyn ModelClient>,
        tools: ToolRegistry,
        plan: SharedPlan,
        config: &AgentConfig,
    ) -> Self {
        let mut thread = Self {
            client,
            conversation: Conversation::default(),
            plan,
            observers: Mutex::new(super::observers::Observers::new()),
            left: Mutex::default(),
            reminders: Reminders::new(config.nag_every, config.nag_max),
            totals: Usage::default(),
            tools,
            offered: Offered {
                defs: Vec::new(),
                bytes: 0,
                generation: u64::MAX,
            },
            last_prompt: None,
            compacted_to: None,
            run: RunFacts::default(),
        };
        thread.offer_tools();
        thread
    }

    /// Rebuilds the definitions sent with requests when the registry
    /// changed since they were built (tools added later come last, so the
    /// provider's cache of the earlier ones holds).
    pub(super) fn offer_tools(&mut self) {
        if self.offered.generation == self.tools.generation() {
            return;
        }
        let defs = self.tools.definitions();
        self.offered = Offered {
            bytes: serde_json::to_string(&defs).map_or(0, |s| s.len()),
            defs,
            generation: self.tools.generation(),
        };
    }
}

/// The tool definitions sent with every request, as built from the
/// registry at `generation`.
pub(super) struct Offered {
    pub defs: Vec<ToolDef>,
    /// Their size in bytes, for the token estimate.
    pub bytes: usize,
    pub generation: u64,
}

/// What the user asks of a running turn, shared by the dispatcher (which
/// sets them) and the session (which takes them up where it can).
#[derive(Clone, Default)]
pub(super) struct Requests {
    /// A mode switch (`Op::SetApproval`) for the next tool call (shared
    /// with the subagents: the mode is the session's).
    pub mode: Arc<Mutex<Option<ApprovalMode>>>,
    /// A `/compact` asked for mid-turn: done at the next round boundary
    /// (a subagent has its own, never set).
    pub compact: Arc<Mutex<Option<Option<String>>>>,
    /// The session's goal (a subagent has none of its own).
    pub goal: super::goal::SharedGoal,
}

impl Requests {
    /// A subagent's: the session's mode switch, a `/compact` of its own.
    pub fn for_child(&self) -> Self {
        Self {
            mode: self.mode.clone(),
            compact: Arc::default(),
            goal: super::goal::SharedGoal::default(),
        }
    }
}

/// What a thread runs in: what every thread of the session shares (one
/// handle), and what is its own (its settings, its outbox and transcript,
/// its requests and MCP servers).
pub(super) struct Host {
    /// What the session's threads share.
    pub shared: Arc<Shared>,
    pub config: AgentConfig,
    /// Where events go out to the driver, addressed.
    pub events: Outbox,
    /// Where the session is recorded (under this thread's id).
    pub transcript: Log,
    /// Where sessions live, when they are kept (a new or opened session's
    /// transcript goes there; the root thread's only).
    pub store: Option<SessionStore>,
    /// What the user asked for mid-turn, for the session to take up.
    pub requests: Requests,
    /// The MCP servers: starting, and those whose tools were attached
    /// (none for an explore subagent).
    pub mcp: crate::mcp::Servers,
}

/// What every thread of a session shares: a child thread's host holds the
/// same handle.
pub(super) struct Shared {
    pub workspace: Workspace,
    /// The approval mode and what the user allowed for the session.
    pub policy: SharedPolicy,
    /// The user's answers to approval requests (from `Op::Approve`).
    pub approvals: Answers,
    /// What the session's subagents share: places, thread numbers, budget.
    pub tasks: Arc<super::subagent::TaskPool>,
    /// The session's checkpoints (a subagent's writes are kept too).
    pub checkpoints: Arc<crate::checkpoint::live::Checkpoints>,
}

impl Host {
    /// A call that writes or runs commands waits for the other agents'
    /// (the parent's and its subagents') to end: its turn, held until
    /// dropped; `Err` when cancelled first. Uncontended unless subagents
    /// run beside it.
    pub(super) async fn turn_to_write(
        &self,
        writes: bool,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Option<tokio::sync::MutexGuard<'_, ()>>, ()> {
        if !writes {
            return Ok(None);
        }
        tokio::select! {
            turn = self.shared.tasks.writes.lock() => Ok(Some(turn)),
            () = cancel.cancelled() => Err(()),
        }
    }
}
