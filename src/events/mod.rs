//! The seam between the engine and whatever drives it: `Op`s are requests
//! sent in, `Event`s are facts sent out, each in an [`Envelope`] that says
//! whose it is (which thread, which of its turns). Invariant: every `ToolCallBegin`
//! is followed by exactly one `ToolCallEnd` for the same id, even when the
//! turn is interrupted; every `TurnStarted` ends in `TurnComplete` or
//! `TurnAborted`. Both are plain data that round-trip through serde: this
//! module imports nothing from the model clients or the tools.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::Usage;
use crate::todo::{Author, ItemStats, PlanDiff, PlanEdit, TodoItem};

mod approval;
mod catalog;
pub mod checkpoint;
mod durable;
mod hook;
mod jobs;
mod mcp;
mod outcome;
mod thread;
pub use approval::{ApprovalMode, ApprovalReason, Decision, PLAN_MODE_WORK, plan_mode_refusal};
pub use catalog::CatalogEntry;
pub use checkpoint::{CheckpointAnswer, CheckpointOp, PointInfo};
pub use hook::{HookReport, HookResult};
pub use jobs::JobInfo;
pub use mcp::{McpAction, McpStatus, McpWait};
pub use outcome::{Failure, INTERRUPTED, NOT_RUN, Refuser, ToolOutcome, ToolStatus};
pub use thread::ThreadId;

/// A request to the engine. Plain data: it serialises, so a driver may live
/// in another process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message: starts a turn, or is queued until the running turn ends.
    Submit { text: String },
    /// Images the user pasted, sent with the next `Submit` (which names
    /// them in its text as `[image 1: 640x480 png]`).
    Attach {
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
        provider: Option<String>,
        model: String,
    },
    /// Drop the conversation, the plan and the reminder state. A running turn
    /// is interrupted first; the reset applies when it has ended.
    NewSession,
    /// Act on the MCP servers; their tools change at the next turn.
    Mcp { action: McpAction },
    /// Approve this project's `.claude/settings.json` as written now (its
    /// hooks, its rules that allow more); remembered for the project.
    ApproveHooks,
    /// Stop the engine.
    Quit,
    /// Compact the conversation now (summary, plan, last turns), with an
    /// optional focus for the summary.
    Compact { focus: Option<String> },
    /// Checkpoints and undo (refused while a turn runs).
    Checkpoint { action: CheckpointOp },
    /// Continue the stored session whose id starts with `id` (of this
    /// workspace) instead of the current one. A running turn is
    /// interrupted first.
    OpenSession { id: String },
    /// The answer to `ApprovalRequested` for the tool call `id`.
    Approve { id: String, decision: Decision },
    /// Switch the approval mode (from the next tool call on).
    SetApproval { mode: ApprovalMode },
    /// The user changes the plan of `thread` (the root one when left
    /// out; a subagent's while it works): applied at once (a user
    /// revision, sent as `PlanUpdated` from that thread) and told to its
    /// model at its next step; a refused edit, or one for a thread not at
    /// work, is an `Error` of kind `PlanEdit`.
    EditPlan {
        #[serde(default, skip_serializing_if = "ThreadId::is_root")]
        thread: ThreadId,
        edit: PlanEdit,
    },
}

/// Why the model stopped, whatever the provider called it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its reply.
    EndTurn,
    /// It asked for tools.
    ToolUse,
    /// The reply hit the token limit and may be cut off.
    MaxTokens,
    /// A stop sequence ended the reply.
    StopSequence,
    /// The provider refused or filtered the reply.
    Refusal,
    /// It wrote a tool call as text instead of calling the tool (nothing ran).
    TextToolCall,
    /// A reason this version does not know, as the provider said it.
    Other(String),
}

impl StopReason {
    /// The snake_case name (`end_turn`, …); `Other` gives the provider's word.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Refusal => "refusal",
            StopReason::TextToolCall => "text_tool_call",
            StopReason::Other(other) => other,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of failure an `Error` or a failed turn was: drivers decide by
/// this, never by the message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A setting is missing or wrong (also: a model client could not be built).
    Config,
    /// The API refused the credentials (HTTP 401/403).
    Auth,
    /// Too many requests (HTTP 429) after the retries.
    RateLimited,
    /// The API refused the request (another HTTP status).
    Http,
    /// The service failed (HTTP 5xx).
    Server,
    /// The service answered with something unusable or an error event.
    Api,
    /// Every retry of a broken connection or stream failed.
    RetriesExhausted,
    /// Nothing listens at the base URL (a server not started, a wrong URL).
    Unreachable,
    /// An empty message was not sent.
    EmptyMessage,
    /// Resume was asked for before anything was said.
    NothingToResume,
    /// Compaction was asked for before anything was said.
    NothingToCompact,
    /// The model wrote a tool call as text; it was asked to use the tools API.
    TextToolCall,
    /// The session's transcript could not be written (the session goes on).
    SessionSave,
    /// A stored session could not be opened.
    SessionOpen,
    /// A user's plan edit broke a rule (the plan is unchanged).
    PlanEdit,
    /// An image was not attached (the model takes none, or it is no image).
    Image,
    /// The plan file (`--plan-file`) could not be written.
    PlanFile,
    /// A hook's settings could not be read, or wait for approval.
    Hook,
    /// A `UserPromptSubmit` hook blocked the user's prompt: it was not sent.
    PromptBlocked,
    /// A skill or custom command file could not be read (it is skipped).
    Catalog,
    /// An MCP action (`/mcp approve`, `reconnect`, …) could not be done.
    Mcp,
    /// A checkpoint op (undo, rewind, diff) could not be done.
    Checkpoint,
}

/// How a tool call is shown: one line, and what its detail view holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// The arguments in one short line (the command, the path).
    pub line: String,
    pub detail: ToolDetail,
}

/// What a tool call's detail view shows besides its output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDetail {
    /// Just the output.
    #[default]
    Output,
    /// The call changes or shows the plan, which is on screen already.
    Plan,
    /// The call changes a file: `old` becomes `new` (a write of a new file:
    /// `""` becomes the content; an overwrite: the file as it was; an edit
    /// located in its file: its whole lines with up to three unchanged
    /// lines around them, the diff's context).
    Diff {
        path: String,
        old: String,
        new: String,
        /// The line of the file where `old` starts (from 1); 0 when unknown.
        #[serde(default, skip_serializing_if = "is_zero")]
        first: usize,
    },
    /// A call of another program's tool (an MCP server's): who, and the
    /// arguments as indented JSON.
    Call {
        server: String,
        tool: String,
        /// Filled in for an approval only (the call's input is recorded
        /// with it already).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        args: String,
    },
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Why the conversation is compacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    /// The next request would pass `compact_at` of the window.
    Threshold,
    /// The user asked (`/compact`).
    User,
    /// The provider answered that the prompt is too long.
    TooLong,
}

/// Why a turn ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    Interrupted,
    MaxTurns,
    Failed,
    /// A hook said to stop (`continue: false`).
    Hook,
}

/// An event with its address: the thread it is of, the parent's tool call
/// that started that thread (none for the root), and the thread's turn it
/// happened in (from 1; 0 before the first turn). On the wire the event's
/// fields sit beside the address (`{"thread":1,"turn":2,"type":…}`); the
/// root thread's number is left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Envelope {
    #[serde(default, skip_serializing_if = "ThreadId::is_root")]
    pub thread: ThreadId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call: Option<String>,
    #[serde(default)]
    pub turn: u32,
    #[serde(flatten)]
    pub event: Event,
}

mod envelope_de;

impl Envelope {
    /// `event` of the root thread in `turn`.
    pub fn root(turn: u32, event: Event) -> Self {
        Self {
            thread: ThreadId::ROOT,
            parent_call: None,
            turn,
            event,
        }
    }
}

/// A fact from the engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A turn began (a user message or a resume).
    TurnStarted {
        resumed: bool,
    },
    /// A model request began; `round` counts requests within the turn from 1.
    RoundStarted {
        round: u32,
    },
    /// A piece of the model's visible reply.
    TextDelta {
        text: String,
    },
    /// A piece of the model's reasoning (thinking), shown dimmed; not part
    /// of the reply.
    ReasoningDelta {
        text: String,
    },
    /// The request is being retried; text streamed since `RoundStarted` is void.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    ToolCallBegin {
        id: String,
        name: String,
        /// How to show the call (a line, and a diff for an edit).
        summary: ToolSummary,
        /// The call's input (a transcript leaves it out: the reply it came
        /// in holds it).
        #[serde(default, skip_serializing_if = "Value::is_null")]
        input: Value,
        /// Stable id of the plan item in progress when the call started.
        plan_item_id: Option<String>,
        /// Its content, for display.
        plan_item: Option<String>,
    },
    ToolCallOutputDelta {
        id: String,
        chunk: String,
    },
    /// How a running call is getting on, in its tool's words (one line;
    /// the latest replaces the one before).
    ToolCallProgress {
        id: String,
        message: String,
    },
    ToolCallEnd {
        id: String,
        name: String,
        /// The coarse status (`outcome.status()`).
        status: ToolStatus,
        /// How it ended, typed.
        outcome: ToolOutcome,
        duration_ms: u64,
        output: String,
        /// A command's exit code (non-zero: it failed, though the call
        /// itself worked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// The plan store changed: the whole new list, its rendering and the
    /// diff; `revision` counts accepted revisions from 1 in the session,
    /// `author` made it at `at` (unix ms).
    PlanUpdated {
        items: Vec<TodoItem>,
        rendered: String,
        diff: PlanDiff,
        #[serde(default)]
        revision: u32,
        #[serde(default)]
        author: Author,
        #[serde(default)]
        at: u64,
        /// A user's revision in one line (`added "Update the README"
        /// after item 3`); none for the model's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// What each plan item has cost so far: time in progress, tool calls,
    /// tokens and money, in plan order (then removed items that did work).
    /// `running` is the item whose clock runs now (the driver adds the time
    /// since this event to it).
    PlanStats {
        items: Vec<ItemStats>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        running: Option<String>,
    },
    /// Token usage of the last request, and totals for the session.
    Usage {
        /// The model that answered.
        model: String,
        /// What the request cost.
        request: Usage,
        /// What every request of this process cost so far (they only grow).
        totals: Usage,
    },
    /// A subagent that call `id` ran has finished: its thread and what it
    /// spent, which the plan item the call served is charged with (its
    /// requests were reported by its own thread's `Usage` events).
    TaskDone {
        id: String,
        child: ThreadId,
        /// The plan item it worked for (a background task's may no longer
        /// be the one in progress); none: the one in progress.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item: Option<String>,
        model: String,
        usage: Usage,
        tool_calls: u32,
        duration_ms: u64,
    },
    /// How full the context window is after a request: the prompt's tokens
    /// (cached ones included) against the model's window.
    ContextUsage {
        used: u64,
        window: u64,
    },
    /// The conversation is being compacted (summarised, then rebuilt).
    CompactionBegin {
        reason: CompactReason,
    },
    /// A piece of the summary being written.
    SummaryDelta {
        text: String,
    },
    /// Compaction ended. `fallback`: summarising failed, so the oldest tool
    /// outputs were dropped instead.
    CompactionEnd {
        before_tokens: u64,
        after_tokens: u64,
        fallback: bool,
    },
    /// A message was queued while a turn runs; it starts the next turn.
    Queued {
        text: String,
    },
    /// The model stopped asking for tools. `open_items` counts unfinished plan items.
    TurnComplete {
        stop_reason: StopReason,
        open_items: usize,
    },
    TurnAborted {
        reason: AbortReason,
        message: String,
        /// What failed, when `reason` is `Failed`.
        error: Option<ErrorKind>,
    },
    Checkpoint {
        answer: CheckpointAnswer,
    },
    /// Something the user must see (the turn may go on or end).
    Error {
        kind: ErrorKind,
        message: String,
    },
    /// A new model client is in place (after `ReloadSettings` or `SetModel`).
    ModelChanged {
        provider: String,
        model: String,
    },
    /// `NewSession` took effect: no conversation, no plan.
    SessionReset,
    /// The session being recorded: sent first, and again when `NewSession`
    /// or `OpenSession` switches to another. `path` is where its transcript
    /// is (or will be, once something happened); `notes` say what loading
    /// a resumed one skipped or repaired.
    SessionStarted {
        id: String,
        path: String,
        resumed: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
    },
    /// A resumed session's past, as the events a driver saw live (in
    /// order, user messages included, each with its address); follows its
    /// `SessionStarted`.
    History {
        events: Vec<Envelope>,
    },
    /// A user message from a resumed session's history (live messages are
    /// shown by the driver that sent them).
    UserMessage {
        text: String,
    },
    /// A tool call waits for the user's `Op::Approve` (nothing runs
    /// meanwhile; further calls of the turn wait behind it). `command` and
    /// `cwd` are set for `bash`; an edit's diff is in `summary`.
    ApprovalRequested {
        id: String,
        name: String,
        summary: ToolSummary,
        command: Option<String>,
        cwd: String,
        reason: ApprovalReason,
    },
    /// The approval mode in force (sent first and on every change), and
    /// whether `bash` runs in the sandbox in it.
    ApprovalMode {
        mode: ApprovalMode,
        sandboxed: bool,
    },
    /// An MCP server's state, as it changes: its tools join the ones
    /// offered at the next model request after it is ready, after them.
    McpServer {
        name: String,
        status: McpStatus,
    },
    /// The task given at start waits for the MCP servers still starting.
    McpWait {
        wait: McpWait,
    },
    /// The MCP tools of the requests from now on: `offered` of them are
    /// sent in full; past the context budget (`budget` tokens, against
    /// `tokens` for all of them) only `mcp_search` is, and the model loads
    /// the ones it needs with it (`deferred` of them wait).
    McpTools {
        offered: usize,
        deferred: usize,
        tokens: u64,
        budget: u64,
    },
    /// The session's background jobs, when one starts or ends.
    Jobs {
        jobs: Vec<JobInfo>,
    },
    /// The session's skills and custom commands (typed as `/NAME`): sent
    /// at the start when there are any.
    Catalog {
        entries: Vec<CatalogEntry>,
    },
    /// The hooks that run (one line each), and the project's that wait
    /// for the user's approval: sent at the start and when they change.
    Hooks {
        active: Vec<String>,
        waiting: Vec<String>,
    },
    /// A hook ran (its event, command, how it ended and how long it
    /// took); recorded, and shown in the trace.
    Hook {
        report: HookReport,
    },
    /// The engine waits for the next op.
    Idle,
}
