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
use crate::todo::{Author, ItemStats, PlanDiff, TodoItem};

mod agreement;
mod approval;
mod catalog;
pub mod checkpoint;
mod durable;
pub mod goal;
mod hook;
mod jobs;
mod mcp;
mod op;
mod outcome;
mod reasons;
pub mod schema;
mod thread;
pub use agreement::Agreement;
pub use approval::{
    ApprovalMode, ApprovalReason, Decision, PLAN_MODE_WORK, PLAN_MODE_WORK_REPLY,
    plan_mode_refusal, plan_mode_refusal_for,
};
pub use catalog::CatalogEntry;
pub use checkpoint::{CheckpointAnswer, CheckpointOp, PointInfo};
pub use goal::{Budget, Evidence, Goal, GoalAction, GoalReport, GoalState, Spent};
pub use hook::{HookReport, HookResult};
pub use jobs::JobInfo;
pub use mcp::{McpAction, McpStatus, McpWait};
pub use op::Op;
pub use outcome::{Failure, INTERRUPTED, NOT_RUN, Refuser, ToolOutcome, ToolStatus};
pub use reasons::{AbortReason, CompactReason, StopReason};
pub use thread::ThreadId;

/// What kind of failure an `Error` or a failed turn was: drivers decide by
/// this, never by the message text.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// A goal op (`/goal …`) could not be done.
    Goal,
}

/// How a tool call is shown: one line, and what its detail view holds.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// The arguments in one short line (the command, the path).
    pub line: String,
    /// What its detail view shows: the output, the plan, a diff or
    /// another program's call.
    pub detail: ToolDetail,
}

/// What a tool call's detail view shows besides its output.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
        /// The file, as the call named it.
        path: String,
        /// The text before (`""` for a new file).
        old: String,
        /// The text after.
        new: String,
        /// The line of the file where `old` starts (from 1); 0 when unknown.
        #[serde(default, skip_serializing_if = "is_zero")]
        first: usize,
    },
    /// A call of another program's tool (an MCP server's): who, and the
    /// arguments as indented JSON.
    Call {
        /// The MCP server's name, as the settings name it.
        server: String,
        /// The tool's name on that server.
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

/// An event with its address: the thread it is of, the parent's tool call
/// that started that thread (none for the root), and the thread's turn it
/// happened in (from 1; 0 before the first turn). On the wire the event's
/// fields sit beside the address (`{"thread":1,"turn":2,"type":…}`); the
/// root thread's number is left out.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Serialize)]
pub struct Envelope {
    /// The thread the event is of: 0, the root (left out), is the one the
    /// user talks to; a subagent's has a number of its own.
    #[serde(default, skip_serializing_if = "ThreadId::is_root")]
    pub thread: ThreadId,
    /// The id of the parent's tool call that started this thread (left
    /// out for the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call: Option<String>,
    /// The thread's turn the event happened in, from 1; 0 before the first.
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
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A turn began (a user message or a resume).
    TurnStarted {
        /// It continues an interrupted turn (`Resume`) instead of a message.
        resumed: bool,
    },
    /// A model request began; `round` counts requests within the turn from 1.
    RoundStarted {
        /// Which request of the turn this is, from 1.
        round: u32,
    },
    /// A piece of the model's visible reply.
    TextDelta {
        /// The next piece of the reply, to append to what came before.
        text: String,
    },
    /// A piece of the model's reasoning (thinking), shown dimmed; not part
    /// of the reply.
    ReasoningDelta {
        /// The next piece of the reasoning, to append to what came before.
        text: String,
    },
    /// The request is being retried; text streamed since `RoundStarted` is void.
    Retrying {
        /// Which retry this is, from 1.
        attempt: u32,
        /// How long it waits before the retry.
        delay_ms: u64,
        /// What failed.
        reason: String,
    },
    /// A tool call starts (after its approval, if it needed one).
    ToolCallBegin {
        /// The call's id, as the model gave it: its other events name it.
        id: String,
        /// The tool's name (`bash`, `edit_file`, `mcp__SERVER__TOOL`).
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
    /// A piece of a running call's output, as it comes (a command's).
    ToolCallOutputDelta {
        /// The call's id, as `ToolCallBegin` gave it.
        id: String,
        /// The next piece of output, to append to what came before.
        chunk: String,
    },
    /// How a running call is getting on, in its tool's words (one line;
    /// the latest replaces the one before).
    ToolCallProgress {
        /// The call's id, as `ToolCallBegin` gave it.
        id: String,
        /// The latest progress line.
        message: String,
    },
    /// A tool call ended (ran, failed, was refused or interrupted).
    ToolCallEnd {
        /// The call's id, as `ToolCallBegin` gave it.
        id: String,
        /// The tool's name, as `ToolCallBegin` gave it.
        name: String,
        /// The coarse status (`outcome.status()`).
        status: ToolStatus,
        /// How it ended, typed.
        outcome: ToolOutcome,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
        /// The result as the model gets it (fitted to the context window).
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
        /// The whole plan now, in order.
        items: Vec<TodoItem>,
        /// The plan as text: a line per item (`[x]` completed, `[>] … <-
        /// activeForm` in progress, `[ ]` pending), then `(k/n completed)`;
        /// `No todos.` when empty.
        rendered: String,
        /// What changed from the plan before.
        diff: PlanDiff,
        /// This revision's number, from 1 in the session.
        #[serde(default)]
        revision: u32,
        /// Who made it.
        #[serde(default)]
        author: Author,
        /// When it was made, in unix milliseconds.
        #[serde(default)]
        at: u64,
        /// A user's revision in one line (`added "Update the README"
        /// after item 3`); none for the model's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// The model proposed the plan of revision `revision` in plan mode: it
    /// waits for the user's approval (`ApprovePlan`), edits or words.
    PlanProposed {
        /// The plan revision that is the proposal.
        revision: u32,
    },
    /// The user approved the proposed plan: revision `revision` (by
    /// `approved`) is the live plan, carried out in `mode`.
    PlanApproved {
        /// The approved plan's revision.
        revision: u32,
        /// The approval mode it runs in.
        mode: ApprovalMode,
        /// The conversation restarted from the task, the research's
        /// summary and the plan.
        #[serde(default)]
        fresh: bool,
    },
    /// The model's plan write would change the approved plan's scope
    /// (`plan_changes = "ask"`): it waits for the user's sign-off.
    PlanChangeRequested {
        /// The changes, one per line: `+ added`, `- dropped`, `~ old -> new`.
        lines: Vec<String>,
    },
    /// A change to the approved plan was made: signed off by the user
    /// (`asked`) or told (`plan_changes = "tell"`); it is part of the
    /// agreement from now on.
    PlanChangeAccepted {
        /// The changes, one per line.
        lines: Vec<String>,
        /// The user signed it off (else it was only told).
        #[serde(default)]
        asked: bool,
    },
    /// The user set the session's goal (see [`goal`]): Waypoint keeps the
    /// agent going until the evidence says it is met or a budget stops it.
    GoalSet { goal: Goal },
    /// The goal's state changed (and, at its end, its whole report).
    GoalUpdated { report: GoalReport },
    /// A goal's budget is 80% spent (`share` percent of its `limit`).
    GoalBudget { share: u32, limit: String },
    /// Plan item `n` (1-based) was checked: its check's evidence (no
    /// command: the user accepted it without evidence).
    ItemChecked { n: usize, evidence: Evidence },
    /// A change to the approved plan was refused (by the user, or headless
    /// where nobody can sign it off): the plan stays as agreed.
    PlanChangeRefused {
        /// The changes, one per line.
        lines: Vec<String>,
    },
    /// What each plan item has cost so far: time in progress, tool calls,
    /// tokens and money, in plan order (then removed items that did work).
    /// `running` is the item whose clock runs now (the driver adds the time
    /// since this event to it).
    PlanStats {
        /// Each item's account, in plan order, then removed items that did
        /// work.
        items: Vec<ItemStats>,
        /// The id of the item whose clock runs now; left out when none does.
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
        /// The id of the parent's tool call that ran the subagent.
        id: String,
        /// The subagent's thread (the `thread` of its events).
        child: ThreadId,
        /// The plan item it worked for (a background task's may no longer
        /// be the one in progress); none: the one in progress.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item: Option<String>,
        /// The model the subagent used.
        model: String,
        /// The tokens of all its requests, added up.
        usage: Usage,
        /// How many tool calls it made.
        tool_calls: u32,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// How full the context window is after a request: the prompt's tokens
    /// (cached ones included) against the model's window.
    ContextUsage {
        /// The last request's prompt, in tokens (cached ones included).
        used: u64,
        /// The model's context window, in tokens (the settings' `context_window`,
        /// else the known model's, else a default).
        window: u64,
    },
    /// The conversation is being compacted (summarised, then rebuilt).
    CompactionBegin {
        /// What started it.
        reason: CompactReason,
    },
    /// A piece of the summary being written.
    SummaryDelta {
        /// The next piece of the summary, to append to what came before.
        text: String,
    },
    /// Compaction ended. `fallback`: summarising failed, so the oldest tool
    /// outputs were dropped instead.
    CompactionEnd {
        /// The prompt's estimated size before, in tokens.
        before_tokens: u64,
        /// The prompt's estimated size after, in tokens.
        after_tokens: u64,
        /// Summarising failed, so the oldest tool outputs were dropped
        /// instead.
        fallback: bool,
    },
    /// A message was queued while a turn runs; it starts the next turn.
    Queued {
        /// The queued message.
        text: String,
    },
    /// The model stopped asking for tools. `open_items` counts unfinished plan items.
    TurnComplete {
        /// Why the model's last reply ended.
        stop_reason: StopReason,
        /// How many plan items are not completed.
        open_items: usize,
    },
    /// The turn ended early: interrupted, out of `max_turns`, failed or
    /// stopped by a hook.
    TurnAborted {
        /// Why it ended early.
        reason: AbortReason,
        /// What happened, for a person.
        message: String,
        /// What failed, when `reason` is `Failed`.
        error: Option<ErrorKind>,
    },
    /// The answer to an `Op::Checkpoint`.
    Checkpoint {
        /// What the op asked for: the points, a preview, a done undo or a
        /// diff.
        answer: CheckpointAnswer,
    },
    /// Something the user must see (the turn may go on or end).
    Error {
        /// What kind of failure it is (decide by this).
        kind: ErrorKind,
        /// What happened, for a person.
        message: String,
    },
    /// A new model client is in place (after `ReloadSettings` or `SetModel`).
    ModelChanged {
        /// The provider now in use (`anthropic`, `openai`, …).
        provider: String,
        /// The model now in use.
        model: String,
    },
    /// `NewSession` took effect: no conversation, no plan.
    SessionReset,
    /// The session being recorded: sent first, and again when `NewSession`
    /// or `OpenSession` switches to another. `path` is where its transcript
    /// is (or will be, once something happened); `notes` say what loading
    /// a resumed one skipped or repaired.
    SessionStarted {
        /// The session's id (a UUID; `OpenSession` takes it, or its start).
        id: String,
        /// The transcript's file.
        path: String,
        /// It continues a stored session (its `History` follows).
        resumed: bool,
        /// What loading a resumed session skipped or repaired, one note
        /// each; left out when nothing.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
    },
    /// A resumed session's past, as the events a driver saw live (in
    /// order, user messages included, each with its address); follows its
    /// `SessionStarted`.
    History {
        /// The past events, oldest first, each in its envelope.
        events: Vec<Envelope>,
    },
    /// A user message from a resumed session's history (live messages are
    /// shown by the driver that sent them).
    UserMessage {
        /// The message as the user wrote it.
        text: String,
    },
    /// A tool call waits for the user's `Op::Approve` (nothing runs
    /// meanwhile; further calls of the turn wait behind it). `command` and
    /// `cwd` are set for `bash`; an edit's diff is in `summary`.
    ApprovalRequested {
        /// The waiting call's id: answer with `Op::Approve` for it.
        id: String,
        /// The tool's name (`bash`, `edit_file`, `mcp__SERVER__TOOL`).
        name: String,
        /// How to show the call (a line, and a diff for an edit).
        summary: ToolSummary,
        /// The command it would run (for `bash`); null for other calls.
        command: Option<String>,
        /// The directory it would run in.
        cwd: String,
        /// Why it waits for the user.
        reason: ApprovalReason,
    },
    /// The approval mode in force (sent first and on every change), and
    /// whether `bash` runs in the sandbox in it.
    ApprovalMode {
        /// The mode now in force.
        mode: ApprovalMode,
        /// `bash` commands run in the sandbox.
        sandboxed: bool,
    },
    /// An MCP server's state, as it changes: its tools join the ones
    /// offered at the next model request after it is ready, after them.
    McpServer {
        /// The server's name, as the settings name it.
        name: String,
        /// Its state now.
        status: McpStatus,
    },
    /// The task given at start waits for the MCP servers still starting.
    McpWait {
        /// Still waiting (for which), or over (how).
        wait: McpWait,
    },
    /// The MCP tools of the requests from now on: `offered` of them are
    /// sent in full; past the context budget (`budget` tokens, against
    /// `tokens` for all of them) only `mcp_search` is, and the model loads
    /// the ones it needs with it (`deferred` of them wait).
    McpTools {
        /// How many MCP tools each request sends in full (`mcp_search`
        /// included when it is offered).
        offered: usize,
        /// How many wait for the model to load them with `mcp_search` (0:
        /// all are sent).
        deferred: usize,
        /// What the definitions of all the MCP tools cost, in tokens (an
        /// estimate).
        tokens: u64,
        /// What their definitions may cost before they are deferred, in
        /// tokens (a share of the context window).
        budget: u64,
    },
    /// The session's background jobs, when one starts or ends.
    Jobs {
        /// Every background job of the session, running or ended.
        jobs: Vec<JobInfo>,
    },
    /// The session's skills and custom commands (typed as `/NAME`): sent
    /// at the start when there are any.
    Catalog {
        /// The skills and custom commands.
        entries: Vec<CatalogEntry>,
    },
    /// The hooks that run (one line each), and the project's that wait
    /// for the user's approval: sent at the start and when they change.
    Hooks {
        /// The hooks that run, one line each: event, matcher, timeout,
        /// command and the file it is from.
        active: Vec<String>,
        /// The project's hooks that wait for the user's approval
        /// (`ApproveHooks`), one line each; empty when none wait.
        waiting: Vec<String>,
    },
    /// A hook ran (its event, command, how it ended and how long it
    /// took); recorded, and shown in the trace.
    Hook {
        /// The run.
        report: HookReport,
    },
    /// The engine waits for the next op: every op taken so far is handled,
    /// the work it started (a turn, the queued messages) has ended.
    Idle {
        /// How many ops the engine has taken since it started: a driver
        /// that has sent as many knows this is no earlier wait.
        #[serde(default)]
        ops: u64,
    },
}
