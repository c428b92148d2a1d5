//! The engine: a background task that owns the conversation and the plan,
//! takes `Op`s and emits `Event`s. Invariants: it never blocks on its
//! consumer (events go through an unbounded channel); after any interrupt or
//! failure the conversation is still a valid request; and every `Op` is
//! answered by one dispatcher, [`Control::dispatch`], whether a turn runs or
//! not. A turn borrows only the [`Session`]; a change of client or a reset
//! asked for mid-turn waits in the [`Control`] until the turn has ended.

pub mod approval;
mod builder;
mod children;
mod client;
pub mod compact;
mod control;
mod goal;
mod hook_run;
mod hooks;
mod invoke;
mod lifecycle;
pub mod mentions;
mod observers;
mod outbox;
mod phases;
mod pipeline;
mod plan;
mod plan_edit;
mod plan_mode;
mod points;
mod policy;
pub mod proposal;
mod questions;
mod record;
pub mod reminders;
mod reply_done;
mod reply_proposal;
mod rule_gate;
mod shared;
mod stages;
mod subagent;
mod thread;
mod tool_host;
mod turn;
mod undo;
mod user_plan;
mod voice;

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::chat::Conversation;
use crate::events::{ApprovalMode, CompactReason, Envelope, ErrorKind, Event, Op};
use crate::llm::ModelClient;
use crate::todo::TodoItem;
use crate::tools::{ToolConfig, Workspace};
pub use builder::AgentBuilder;
pub use client::{ClientFactory, FixedClient, ModelChoice};
use control::{Control, Phase, Step};
pub use lifecycle::{SessionSetup, resume_note};
pub(crate) use outbox::Outbox;
use thread::{Host, Thread};

pub const DEFAULT_SYSTEM_PROMPT: &str = include_str!("../../assets/system_prompt.md");
pub const INTERRUPTED_NOTE: &str = "[The user interrupted the previous response.]";
pub const RESUME_NOTE: &str = "[The user asks you to continue where you stopped. Re-run an interrupted command only if it is still needed.]";

#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub system_prompt: String,
    pub max_tokens: u32,
    /// Tool rounds without a plan update before the nag; 0 disables it.
    pub nag_every: u32,
    /// Nags in a row without a plan update before they stop; 0 = no limit.
    pub nag_max: u32,
    /// Model requests allowed per turn before it is stopped.
    pub max_rounds: u32,
    pub tools: ToolConfig,
    /// The context window in tokens; `None` takes the model's (or 128k).
    pub context_window: Option<u64>,
    /// The share of the window past which the conversation is compacted.
    pub compact_at: f64,
    /// What tool calls may do without asking (`yolo` unless a driver says).
    pub approval: ApprovalMode,
    /// Turns that end with plan items open are continued up to this many
    /// times (stopping when a continued turn leaves the plan unchanged).
    pub auto_continue: u32,
    /// The plan file, and what changes to an approved plan need.
    pub plan: PlanSettings,
    /// The config's `[prices]`, for what each plan item cost.
    pub prices: std::collections::BTreeMap<String, crate::pricing::Price>,
}

/// The settings of the plan itself.
#[derive(Clone, Debug)]
pub struct PlanSettings {
    /// A Markdown copy of the live plan, kept in the workspace (relative
    /// to its root); the user's edits to it are read back.
    pub file: Option<std::path::PathBuf>,
    /// What the model's changes to an approved plan need.
    pub changes: crate::config::PlanChanges,
    /// Whether the model gets the todo tools; without them the plan is
    /// re-sent each turn and advances by the reply's `Done: N` lines.
    pub tool: bool,
}

impl Default for PlanSettings {
    fn default() -> Self {
        Self {
            file: None,
            changes: crate::config::PlanChanges::default(),
            tool: true,
        }
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        use crate::config::defaults;
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            max_tokens: defaults::MAX_TOKENS,
            nag_every: defaults::NAG_EVERY,
            nag_max: defaults::NAG_MAX,
            max_rounds: defaults::MAX_TURNS,
            tools: ToolConfig::default(),
            context_window: None,
            compact_at: defaults::COMPACT_AT,
            approval: ApprovalMode::Yolo,
            auto_continue: 0,
            plan: PlanSettings::default(),
            prices: std::collections::BTreeMap::new(),
        }
    }
}

/// How a turn ended, as the session loop needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TurnEnd {
    Complete,
    Interrupted,
    Stopped,
}

/// What a turn works on: the root thread, in its host; and the stages
/// every call passes (shared with its subagents: their calls pass the
/// same).
struct Session {
    thread: Thread,
    host: Host,
    stages: Arc<stages::Stages>,
}

impl Session {
    /// Adds the user's `prompt` (with what its `@` mentions attach, the
    /// user's plan changes and the hooks' notes) for a turn to answer;
    /// false when a `UserPromptSubmit` hook blocked it (nothing is added).
    async fn start_prompt(&mut self, text: String, pasted: Vec<crate::chat::ImageSource>) -> bool {
        let first = self.thread.conversation.is_empty();
        let started = hooks::Moments(self.voice()).notes().await;
        let hooked = match hooks::Moments(self.voice()).prompt(&text).await {
            Ok(notes) => notes,
            Err(why) => {
                // Kept for the prompt that is sent.
                shared::lock(&self.thread.left).notes = started;
                self.emit(Event::Error {
                    kind: ErrorKind::PromptBlocked,
                    message: format!(
                        "A UserPromptSubmit hook blocked the prompt (not sent): {why}"
                    ),
                });
                return false;
            }
        };
        points::Points(self.voice()).before_prompt(&text);
        let invoked = invoke::Invocations(self.voice()).invoked(&text);
        let attached = self.attachments(invoked.as_deref().unwrap_or(&text)).await;
        self.add_user_text(text, true);
        self.add_pasted(pasted);
        for note in started.into_iter().chain(hooked).chain(invoked) {
            self.add_user_text(note, false);
        }
        if let Some(text) = attached.text {
            self.add_user_text(text, false);
        }
        self.add_user_images(attached.images);
        for why in attached.refused {
            self.emit(Event::Error {
                kind: ErrorKind::Image,
                message: format!("Not attached: {why}"),
            });
        }
        if let Some(note) = self.take_plan_note() {
            self.add_user_text(note, false);
        }
        if let Some(note) =
            plan_mode::switch_note(&self.host.shared.policy, self.host.config.plan.tool)
        {
            self.add_user_text(note, false);
        }
        if first && self.host.config.plan.tool {
            self.add_user_text(reminders::INITIAL_REMINDER, false);
        }
        true
    }
}

impl Session {
    /// Adds the images the user pasted with a message, when the model
    /// takes images; else says so (naming the model) and drops them.
    fn add_pasted(&mut self, images: Vec<crate::chat::ImageSource>) {
        if images.is_empty() {
            return;
        }
        if self.thread.takes_images(&self.host.config) {
            return self.add_user_images(images);
        }
        let message = format!(
            "Not attached: {} pasted image{}; the model `{}` does not take images (switch with /model to one that does; if it does, set `images = true`).",
            images.len(),
            if images.len() == 1 { "" } else { "s" },
            self.thread.client.model()
        );
        self.add_user_text(
            "(The user pasted an image, but this model cannot see images; it was not sent.)",
            false,
        );
        self.emit(Event::Error {
            kind: ErrorKind::Image,
            message,
        });
    }
}

/// What [`Agent::drive`] runs.
enum Work {
    Turn { resumed: bool },
    Compact(Option<String>),
}

pub struct Agent {
    session: Session,
    control: Control,
}

/// The two ends a driver holds.
pub struct AgentHandle {
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Envelope>,
    pub task: JoinHandle<()>,
}

impl Agent {
    /// Builds an engine that starts with `client` in `workspace`.
    pub fn builder(client: Arc<dyn ModelClient>, workspace: Workspace) -> AgentBuilder {
        AgentBuilder::new(client, workspace)
    }

    /// The plan's items now.
    pub fn plan(&self) -> Vec<TodoItem> {
        self.session.thread.plan.items()
    }

    pub fn conversation(&self) -> &Conversation {
        &self.session.thread.conversation
    }

    /// The op loop: runs until `Quit` or until every sender is dropped.
    pub async fn run(mut self, mut ops: UnboundedReceiver<Op>) {
        approval::announce_mode(self.session.voice());
        self.session.host.start_mcp();
        invoke::Invocations(self.session.voice()).watch_jobs();
        invoke::Invocations(self.session.voice()).tell_catalog();
        hooks::Moments(self.session.voice()).start().await;
        self.control.share_mcp(self.session.host.mcp.clone());
        // Stops watching the plan file when the engine stops.
        let _watch = plan::start_plan_file(self.session.voice()).map(|t| t.drop_guard());
        loop {
            let op = match self.control.queued.pop_front() {
                Some(queued) => self.control.unqueue(queued),
                None => match ops.try_recv() {
                    Ok(op) => self.control.took(op),
                    Err(_) => {
                        let ops_taken = self.control.taken();
                        self.session.emit(Event::Idle { ops: ops_taken });
                        match ops.recv().await {
                            Some(op) => self.control.took(op),
                            None => return,
                        }
                    }
                },
            };
            let empty = self.session.thread.conversation.is_empty();
            let step = self.control.dispatch(op, Phase::Idle { empty });
            self.settle();
            let resumed = match step {
                Step::Wait => continue,
                Step::Quit => {
                    self.session.voice().settle_user_changes();
                    return;
                }
                Step::Compact { focus } => {
                    if self.drive(Work::Compact(focus), &mut ops).await.0 {
                        return;
                    }
                    continue;
                }
                Step::Checkpoint(action) => {
                    self.session.on_checkpoint(action).await;
                    continue;
                }
                Step::Goal(action) => match self.begin_goal(action).await {
                    Some(resumed) => resumed,
                    None => continue,
                },
                Step::ApprovePlan { mode, fresh, items } => {
                    let approval = proposal::Approval { mode, fresh, items };
                    let Some(text) = proposal::approve(&mut self.session, approval) else {
                        continue;
                    };
                    if !self.session.start_prompt(text, Vec::new()).await {
                        continue;
                    }
                    false
                }
                Step::Start { text: Some(text) } => {
                    let images = self.control.take_attached();
                    if !self.session.start_prompt(text, images).await {
                        continue;
                    }
                    false
                }
                Step::Start { text: None } => {
                    goal::on_resume(&mut self.session);
                    points::Points(self.session.voice()).before_prompt("(continued)");
                    let note = resume_note(&self.session.thread.plan.lock().manager);
                    self.session.add_user_text(note, false);
                    for note in hooks::Moments(self.session.voice()).notes().await {
                        self.session.add_user_text(note, false);
                    }
                    if let Some(note) = self.session.take_plan_note() {
                        self.session.add_user_text(note, false);
                    }
                    true
                }
            };
            // `--auto-continue`: a turn that ends with plan items open is
            // nudged on, while the nudges change the plan.
            let mut resumed = resumed;
            let mut nudges = self.session.host.config.auto_continue;
            let mut nudged = false;
            loop {
                let before = self.session.thread.plan.items();
                let (quit, end) = self.drive(Work::Turn { resumed }, &mut ops).await;
                if quit {
                    return;
                }
                goal::after_turn(&mut self.session);
                let after = self.session.thread.plan.items();
                let open = after
                    .iter()
                    .filter(|i| i.status != crate::todo::TodoStatus::Completed)
                    .count();
                let stalled = nudged && after == before;
                if end != TurnEnd::Complete
                    || open == 0
                    || nudges == 0
                    || stalled
                    || !self.control.queued.is_empty()
                {
                    break;
                }
                nudges -= 1;
                let note = format!(
                    "{}\n(Waypoint continues automatically: --auto-continue.)",
                    resume_note(&self.session.thread.plan.lock().manager)
                );
                self.session.add_user_text(note, false);
                resumed = true;
                nudged = true;
            }
        }
    }

    /// A goal op while idle: whether a turn starts (`Some`), resuming.
    async fn begin_goal(&mut self, action: crate::events::GoalAction) -> Option<bool> {
        match goal::apply(&mut self.session, action) {
            goal::Begin::Nothing => None,
            goal::Begin::Prompt(text) => self
                .session
                .start_prompt(text, Vec::new())
                .await
                .then_some(false),
            goal::Begin::Resume => {
                let note = resume_note(&self.session.thread.plan.lock().manager);
                self.session.add_user_text(note, false);
                Some(true)
            }
        }
    }

    /// Puts in place what waited for the turn to end: a new client, a reset.
    fn settle(&mut self) {
        approval::apply_mode_request(self.session.voice());
        self.session.voice().settle_user_changes();
        if let Some(client) = self.control.pending_client.take() {
            self.session.emit(Event::ModelChanged {
                provider: client.provider().to_string(),
                model: client.model().to_string(),
            });
            self.session.thread.client = client;
        }
        if self.control.take_hooks_approval() {
            self.session.approve_hooks();
        }
        if std::mem::take(&mut self.control.reset_pending) {
            self.session.reset();
        }
        if let Some(id) = self.control.open_pending.take()
            && let Err(e) = self.session.open(&id)
        {
            self.session.emit(Event::Error {
                kind: ErrorKind::SessionOpen,
                message: format!("The session was not opened: {e}"),
            });
        }
    }

    /// Runs one turn (or a compaction) while the dispatcher takes ops;
    /// returns true when asked to quit.
    async fn drive(&mut self, work: Work, ops: &mut UnboundedReceiver<Op>) -> (bool, TurnEnd) {
        let cancel = CancellationToken::new();
        if let Work::Turn { resumed } = work {
            self.session.host.events.begin_turn();
            self.session.emit(Event::TurnStarted { resumed });
        }
        let mut quit = false;
        let end = {
            let Agent { session, control } = self;
            let turn = async {
                match work {
                    Work::Turn { .. } => session.run_turn(&cancel).await,
                    Work::Compact(focus) => {
                        session.compact(CompactReason::User, focus, &cancel).await;
                        TurnEnd::Complete
                    }
                }
            };
            tokio::pin!(turn);
            let mut ops_open = true;
            loop {
                tokio::select! {
                    end = &mut turn => break end,
                    op = ops.recv(), if ops_open => match op {
                        Some(op) => {
                            let op = control.took(op);
                            if control.dispatch(op, Phase::Running(&cancel)) == Step::Quit {
                                quit = true;
                            }
                        }
                        None => {
                            ops_open = false;
                            quit = true;
                            cancel.cancel();
                        }
                    },
                }
            }
        };
        if end == TurnEnd::Interrupted
            && !self.control.reset_pending
            && self.control.open_pending.is_none()
        {
            self.session.add_user_text(INTERRUPTED_NOTE, false);
            // An interrupt stops the agent: messages queued meanwhile become
            // guidance for when the user resumes or writes again, not a new turn.
            for queued in std::mem::take(&mut self.control.queued) {
                self.session.add_user_text(queued.text, true);
                self.session.add_pasted(queued.images);
            }
        }
        self.settle();
        debug_assert_eq!(self.session.thread.conversation.validate(), Ok(()));
        (quit, end)
    }
}
