//! The dispatcher: every `Op` is handled here, whether a turn runs or not.
//! Invariant: a change that cannot happen mid-turn (a new client, a reset,
//! another session) waits here until the turn has ended; everything else
//! (an interrupt, an approval, a mode switch, a `/compact`) takes effect
//! through what the turn shares with it.

use std::collections::VecDeque;
use std::sync::Arc;

use super::Outbox;
use tokio_util::sync::CancellationToken;

use super::client::{ClientFactory, ModelChoice};
use crate::chat::ImageSource;
use crate::events::{ErrorKind, Event, Op};
use crate::llm::ModelClient;
use crate::todo::SharedPlan;

/// What the engine is doing when an op arrives.
#[derive(Clone, Copy, Debug)]
pub(super) enum Phase<'a> {
    /// Waiting; `empty` when nothing has been said yet.
    Idle { empty: bool },
    /// A turn runs; cancelling the token interrupts it.
    Running(&'a CancellationToken),
}

/// What the op loop does after an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing more (or the turn goes on).
    Wait,
    /// Start a turn: with a user message, or resuming (`text` is `None`).
    Start { text: Option<String> },
    /// Compact the conversation now (`/compact` while idle).
    Compact { focus: Option<String> },
    /// A checkpoint op (list, undo, diff), while idle.
    Checkpoint(crate::events::CheckpointOp),
    /// Act on the goal (while idle).
    Goal(crate::events::GoalAction),
    /// Approve the proposed plan and start carrying it out (while idle).
    ApprovePlan {
        mode: Option<crate::events::ApprovalMode>,
        fresh: bool,
        items: Option<Vec<crate::todo::TodoItem>>,
    },
    /// Stop the engine (after the running turn has ended).
    Quit,
}

/// What handles ops: the client factory, the queue, and the changes that
/// wait for the running turn to end.
pub(super) struct Control {
    pub(super) factory: Arc<dyn ClientFactory>,
    /// The model asked for last (`SetModel`); reloads keep it.
    pub(super) choice: ModelChoice,
    pub(super) queued: VecDeque<Queued>,
    pub(super) pending_client: Option<Arc<dyn ModelClient>>,
    pub(super) reset_pending: bool,
    /// A stored session to switch to once the running turn has ended.
    pub(super) open_pending: Option<String>,
    /// `/hooks approve`, done once the running turn has ended.
    approve_hooks: bool,
    /// Why the last `ReloadSettings` failed: a `Resume` right after it is
    /// held back (it would only fail the same way) until a reload works.
    pub(super) reload_failed: Option<String>,
    /// Shared with the session: a `/compact` that waits for a round
    /// boundary, a mode switch for its next tool call.
    pub(super) requests: super::thread::Requests,
    /// Answers to approval requests, for the running turn.
    pub(super) approvals: super::shared::Answers,
    /// The session's plan: the user's edits apply to it at once.
    pub(super) plan: SharedPlan,
    /// The subagents at work: the user's edits of their plans reach them.
    children: Arc<super::children::Children>,
    pub(super) events: Outbox,
    /// Shared with the session: the MCP servers the user acts on.
    mcp: crate::mcp::Servers,
    /// Images the user attached (`Op::Attach`), for the next message.
    attached: Vec<ImageSource>,
    /// The ops taken from the driver so far (`Idle` tells them).
    taken: u64,
}

/// A message sent while a turn runs, with the images attached to it.
pub(super) struct Queued {
    pub(super) text: String,
    pub(super) images: Vec<ImageSource>,
}

impl Control {
    /// Builds the dispatcher (its MCP servers: none until the session
    /// starts them, [`Control::share_mcp`]).
    pub(super) fn new(
        factory: Arc<dyn ClientFactory>,
        requests: super::thread::Requests,
        approvals: super::shared::Answers,
        plan: SharedPlan,
        events: Outbox,
        children: Arc<super::children::Children>,
    ) -> Self {
        Self {
            children,
            factory,
            choice: ModelChoice::default(),
            queued: VecDeque::new(),
            pending_client: None,
            reset_pending: false,
            open_pending: None,
            approve_hooks: false,
            reload_failed: None,
            requests,
            approvals,
            plan,
            events,
            attached: Vec::new(),
            mcp: crate::mcp::Servers::none(),
            taken: 0,
        }
    }

    /// `op` was taken from the driver: counted, and handed back.
    pub(super) fn took(&mut self, op: Op) -> Op {
        self.taken += 1;
        op
    }

    /// How many ops were taken from the driver so far.
    pub(super) fn taken(&self) -> u64 {
        self.taken
    }

    /// The session's servers, which the user's `/mcp` actions reach.
    pub(super) fn share_mcp(&mut self, servers: crate::mcp::Servers) {
        self.mcp = servers;
    }

    /// The images attached to the message about to start a turn.
    pub(super) fn take_attached(&mut self) -> Vec<ImageSource> {
        std::mem::take(&mut self.attached)
    }

    /// `queued` comes back as the next message, its images attached.
    pub(super) fn unqueue(&mut self, queued: Queued) -> Op {
        self.attached = queued.images;
        Op::Submit { text: queued.text }
    }

    /// Whether `/hooks approve` waits to be done (once: it is taken).
    pub(super) fn take_hooks_approval(&mut self) -> bool {
        std::mem::take(&mut self.approve_hooks)
    }

    fn emit(&self, event: Event) {
        self.events.send(event);
    }

    fn error(&self, kind: ErrorKind, message: impl Into<String>) {
        self.emit(Event::Error {
            kind,
            message: message.into(),
        });
    }

    /// The one place an op is handled, whatever the engine is doing.
    pub(super) fn dispatch(&mut self, op: Op, phase: Phase<'_>) -> Step {
        match op {
            Op::Attach { images } => {
                self.attached.extend(images);
                Step::Wait
            }
            Op::Submit { text } if text.trim().is_empty() => {
                self.error(ErrorKind::EmptyMessage, "An empty message was not sent.");
                Step::Wait
            }
            Op::Submit { text } => self.submit(text, phase),
            Op::Interrupt => {
                if let Phase::Running(cancel) = phase {
                    cancel.cancel();
                }
                Step::Wait
            }
            Op::Resume => self.resume(phase),
            Op::ReloadSettings => {
                let choice = self.choice.clone();
                self.rebuild(choice, true);
                Step::Wait
            }
            Op::SetModel { provider, model } => {
                self.set_model(provider, model);
                Step::Wait
            }
            Op::Approve { id, decision } => {
                // An answer nothing waits for (settled, interrupted) is dropped.
                self.approvals.answer(&id, decision);
                Step::Wait
            }
            Op::EditPlan { thread, edit } if !thread.is_root() => {
                // A subagent's plan, while it works: told to it at its
                // next step, as the root's is.
                match self.children.plan_of(thread) {
                    Some((plan, outbox)) => {
                        outbox.send(super::plan::apply_user_edit(
                            &plan,
                            &edit,
                            crate::todo::Author::User,
                        ));
                    }
                    None => self.error(
                        ErrorKind::PlanEdit,
                        format!("The plan was not changed: no agent {thread} is at work."),
                    ),
                }
                Step::Wait
            }
            Op::EditPlan { edit, .. } => {
                self.emit(super::plan::apply_user_edit(
                    &self.plan,
                    &edit,
                    crate::todo::Author::User,
                ));
                Step::Wait
            }
            Op::ApprovePlan { mode, fresh, items } => self.approve_plan(mode, fresh, items, phase),
            Op::Goal { action } => self.goal(action, phase),
            Op::SetApproval { mode } => {
                if let Ok(mut slot) = self.requests.mode.lock() {
                    *slot = Some(mode);
                }
                Step::Wait
            }
            Op::OpenSession { id } => {
                self.queued.clear();
                self.attached.clear();
                self.open_pending = Some(id);
                if let Phase::Running(cancel) = phase {
                    cancel.cancel();
                }
                Step::Wait
            }
            Op::NewSession => {
                // Messages queued so far belong to the session being dropped.
                self.queued.clear();
                self.attached.clear();
                self.reset_pending = true;
                if let Phase::Running(cancel) = phase {
                    cancel.cancel();
                }
                Step::Wait
            }
            Op::ApproveHooks => {
                self.approve_hooks = true;
                Step::Wait
            }
            Op::Mcp { action } => {
                if let Err(e) = self.mcp.act(&action) {
                    self.error(ErrorKind::Mcp, format!("MCP: {e}."));
                }
                Step::Wait
            }
            Op::Quit => {
                if let Phase::Running(cancel) = phase {
                    cancel.cancel();
                }
                Step::Quit
            }
            Op::Compact { focus } => self.compact(focus, phase),
            Op::Checkpoint { action } => match phase {
                Phase::Idle { .. } => Step::Checkpoint(action),
                Phase::Running(_) => {
                    self.error(
                        ErrorKind::Checkpoint,
                        "Not now: wait for the turn to end (or interrupt it with Ctrl+C) first.",
                    );
                    Step::Wait
                }
            },
        }
    }

    /// A goal op: now while idle; else when the turn has ended (a pause
    /// stops it now).
    fn goal(&mut self, action: crate::events::GoalAction, phase: Phase<'_>) -> Step {
        match phase {
            Phase::Idle { .. } => Step::Goal(action),
            Phase::Running(cancel) => {
                if self.requests.goal.hold(action) {
                    cancel.cancel();
                }
                Step::Wait
            }
        }
    }

    /// `ApprovePlan`: once the turn has ended.
    fn approve_plan(
        &mut self,
        mode: Option<crate::events::ApprovalMode>,
        fresh: bool,
        items: Option<Vec<crate::todo::TodoItem>>,
        phase: Phase<'_>,
    ) -> Step {
        match phase {
            Phase::Idle { .. } => Step::ApprovePlan { mode, fresh, items },
            Phase::Running(_) => {
                self.error(
                    ErrorKind::PlanEdit,
                    "Not now: approve the plan once the turn has ended (or interrupt it with Esc).",
                );
                Step::Wait
            }
        }
    }

    /// A user message: a turn now, or queued behind the running one.
    fn submit(&mut self, text: String, phase: Phase<'_>) -> Step {
        match phase {
            Phase::Idle { .. } => {
                self.reload_failed = None;
                Step::Start { text: Some(text) }
            }
            Phase::Running(_) => {
                self.emit(Event::Queued { text: text.clone() });
                let images = std::mem::take(&mut self.attached);
                self.queued.push_back(Queued { text, images });
                Step::Wait
            }
        }
    }

    /// Continue: only once something was said, and not on settings that
    /// just failed to load.
    fn resume(&mut self, phase: Phase<'_>) -> Step {
        match phase {
            Phase::Idle { empty: true } => {
                self.error(
                    ErrorKind::NothingToResume,
                    "Nothing to resume yet: send a message first.",
                );
                Step::Wait
            }
            Phase::Idle { empty: false } => match self.reload_failed.take() {
                Some(why) => {
                    self.error(
                        ErrorKind::Config,
                        format!("Not resumed: the settings still do not work ({why}). Fix them and resume again."),
                    );
                    Step::Wait
                }
                None => Step::Start { text: None },
            },
            // The turn is still going: there is nothing to resume.
            Phase::Running(_) => Step::Wait,
        }
    }

    /// Another model from the next turn on. A model the table knows goes
    /// with its provider: `gpt-4o` is never sent to Anthropic's API (a
    /// provider that cannot be set up says so, and the model stays).
    fn set_model(&mut self, provider: Option<String>, model: String) {
        let provider =
            provider.or_else(|| crate::models::known(&model).map(|m| m.provider.to_string()));
        self.rebuild(
            ModelChoice {
                provider,
                model: Some(model),
            },
            false,
        );
    }

    /// `/compact`: now when idle, at the next round boundary mid-turn.
    fn compact(&mut self, focus: Option<String>, phase: Phase<'_>) -> Step {
        match phase {
            Phase::Idle { empty: true } => {
                self.error(
                    ErrorKind::NothingToCompact,
                    "Nothing to compact yet: send a message first.",
                );
                Step::Wait
            }
            Phase::Idle { empty: false } => Step::Compact { focus },
            Phase::Running(_) => {
                if let Ok(mut slot) = self.requests.compact.lock() {
                    *slot = Some(focus);
                }
                Step::Wait
            }
        }
    }

    /// Builds a client for `choice`; it takes over at the next turn. A
    /// failure is reported and the current client stays.
    fn rebuild(&mut self, choice: ModelChoice, reload: bool) {
        match self.factory.build(&choice, reload) {
            Ok(client) => {
                tracing::info!(model = client.model(), "model client rebuilt");
                self.pending_client = Some(client);
                self.choice = choice;
                if reload {
                    self.reload_failed = None;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "model client not rebuilt");
                if reload {
                    self.reload_failed = Some(e.to_string());
                    self.error(
                        ErrorKind::Config,
                        format!("The settings could not be used: {e}"),
                    );
                } else {
                    self.error(ErrorKind::Config, format!("The model was not changed: {e}"));
                }
            }
        }
    }
}
