//! The engine: a background task that owns the conversation and the plan,
//! takes `Op`s and emits `Event`s. Invariant: it never blocks on its
//! consumer (events go through an unbounded channel), and after any
//! interrupt or failure the conversation is still a valid request.

pub mod conversation;
pub mod reminders;
mod turn;

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::events::{Event, Op};
use crate::llm::{ModelClient, Usage};
use crate::todo::TodoManager;
use crate::tools::{ToolConfig, ToolDef, Workspace};
use conversation::Conversation;
use reminders::Reminders;

pub const DEFAULT_SYSTEM_PROMPT: &str = include_str!("../../assets/system_prompt.md");
pub const INTERRUPTED_NOTE: &str = "[The user interrupted the previous response.]";
pub const RESUME_NOTE: &str = "[The user asks you to continue where you stopped. Re-run an interrupted command only if it is still needed.]";

#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub system_prompt: String,
    pub max_tokens: u32,
    /// Tool rounds without a plan update before the nag; 0 disables it.
    pub nag_every: u32,
    /// Model requests allowed per turn before it is stopped.
    pub max_rounds: u32,
    pub tools: ToolConfig,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            max_tokens: 8192,
            nag_every: 3,
            max_rounds: 100,
            tools: ToolConfig::default(),
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

pub struct Agent {
    client: Arc<dyn ModelClient>,
    workspace: Workspace,
    config: AgentConfig,
    conversation: Conversation,
    plan: TodoManager,
    reminders: Reminders,
    events: UnboundedSender<Event>,
    totals: Usage,
    /// The tool definitions sent with every request, built once.
    tools: Vec<ToolDef>,
}

/// The two ends a driver holds.
pub struct AgentHandle {
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Event>,
    pub task: JoinHandle<()>,
}

impl Agent {
    pub fn new(
        client: Arc<dyn ModelClient>,
        workspace: Workspace,
        mut config: AgentConfig,
        events: UnboundedSender<Event>,
    ) -> Self {
        config.system_prompt = config
            .system_prompt
            .replace("{workspace}", &workspace.root().display().to_string());
        let reminders = Reminders::new(config.nag_every);
        Self {
            client,
            workspace,
            config,
            conversation: Conversation::default(),
            plan: TodoManager::new(),
            reminders,
            events,
            totals: Usage::default(),
            tools: crate::tools::definitions(),
        }
    }

    /// Starts the engine on the current tokio runtime.
    pub fn spawn(
        client: Arc<dyn ModelClient>,
        workspace: Workspace,
        config: AgentConfig,
    ) -> AgentHandle {
        let (ops_tx, ops_rx) = unbounded_channel();
        let (ev_tx, ev_rx) = unbounded_channel();
        let agent = Agent::new(client, workspace, config, ev_tx);
        let task = tokio::spawn(agent.run(ops_rx));
        AgentHandle {
            ops: ops_tx,
            events: ev_rx,
            task,
        }
    }

    pub fn plan(&self) -> &TodoManager {
        &self.plan
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    fn emit(&self, event: Event) {
        // A driver that hung up does not stop the engine from finishing cleanly.
        let _ = self.events.send(event);
    }

    /// The op loop: runs until `Quit` or until every sender is dropped.
    pub async fn run(mut self, mut ops: UnboundedReceiver<Op>) {
        let mut queued: VecDeque<String> = VecDeque::new();
        loop {
            let op = match queued.pop_front() {
                Some(text) => Op::Submit { text },
                None => match ops.try_recv() {
                    Ok(op) => op,
                    Err(_) => {
                        self.emit(Event::Idle);
                        match ops.recv().await {
                            Some(op) => op,
                            None => return,
                        }
                    }
                },
            };
            let resumed = match op {
                Op::Quit => return,
                Op::Interrupt => continue,
                Op::SetModel { .. } | Op::NewSession => {
                    self.emit(Event::Error {
                        message: "not available yet".into(),
                    });
                    continue;
                }
                Op::SetClient(client) => {
                    tracing::info!(model = client.0.model(), "model client replaced");
                    self.client = client.0;
                    continue;
                }
                Op::Submit { text } if text.trim().is_empty() => {
                    self.emit(Event::Error {
                        message: "An empty message was not sent.".into(),
                    });
                    continue;
                }
                Op::Submit { text } => {
                    let first = self.conversation.is_empty();
                    self.conversation.push_user_text(text);
                    if first {
                        self.conversation
                            .push_user_text(reminders::INITIAL_REMINDER);
                    }
                    false
                }
                Op::Resume => {
                    if self.conversation.is_empty() {
                        self.emit(Event::Error {
                            message: "Nothing to resume yet: send a message first.".into(),
                        });
                        continue;
                    }
                    self.conversation.push_user_text(RESUME_NOTE);
                    true
                }
            };
            if self.drive_turn(resumed, &mut ops, &mut queued).await {
                return;
            }
        }
    }

    /// Runs one turn while watching for ops; returns true when asked to quit.
    async fn drive_turn(
        &mut self,
        resumed: bool,
        ops: &mut UnboundedReceiver<Op>,
        queued: &mut VecDeque<String>,
    ) -> bool {
        let cancel = CancellationToken::new();
        let events = self.events.clone();
        let _ = events.send(Event::TurnStarted { resumed });
        let mut quit = false;
        let mut pending_client = None;
        let end = {
            let turn = self.run_turn(&cancel);
            tokio::pin!(turn);
            let mut ops_open = true;
            loop {
                tokio::select! {
                    end = &mut turn => break end,
                    op = ops.recv(), if ops_open => match op {
                        Some(Op::Interrupt) => cancel.cancel(),
                        Some(Op::Submit { text }) if text.trim().is_empty() => {}
                        Some(Op::Submit { text }) => {
                            let _ = events.send(Event::Queued { text: text.clone() });
                            queued.push_back(text);
                        }
                        Some(Op::Resume | Op::SetModel { .. } | Op::NewSession) => {}
                        // Applies to the next turn; this one keeps its client.
                        Some(Op::SetClient(client)) => pending_client = Some(client),
                        Some(Op::Quit) => {
                            quit = true;
                            cancel.cancel();
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
        if end == TurnEnd::Interrupted {
            self.conversation.push_user_text(INTERRUPTED_NOTE);
            // An interrupt stops the agent: messages queued meanwhile become
            // guidance for when the user resumes or writes again, not a new turn.
            for text in queued.drain(..) {
                self.conversation.push_user_text(text);
            }
        }
        if let Some(client) = pending_client {
            self.client = client.0;
        }
        debug_assert_eq!(self.conversation.validate(), Ok(()));
        quit
    }
}
