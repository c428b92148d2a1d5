//! Turn phases: what may keep a turn going when the model has no more
//! calls to make, as components instead of steps `run_turn` names.
//!
//! When a reply asks for no tool, the turn's [`BeforeEnd`] phases are
//! asked in order; the first that does not let the turn end decides: the
//! turn goes on (another model request, with what the phase added to the
//! conversation) or ends as the phase says. A phase keeps its own state for
//! the turn (how often it already kept the turn going). Goals, evidence
//! gates and a nudge for a model that described a change without making it
//! are phases of this kind. Invariant: a phase that keeps the turn going
//! has added something for the model to read or waited for something to
//! arrive, so the next request differs from the last.

mod background;
mod compaction;
mod goal;
mod goal_budget;

pub(super) use goal_budget::account as account_goal;
mod mcp_wait;
mod plan_context;
mod reports;
mod stop_hooks;
mod text_calls;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{Session, TurnEnd};
use crate::events::StopReason;

/// What a phase says when the model asked for no tool.
pub(super) enum Next {
    /// Nothing more to do here: the next phase is asked, the last ends it.
    End,
    /// The turn goes on: the model is asked again.
    GoOn,
    /// The turn ended (interrupted meanwhile): it ends so.
    Ended(TurnEnd),
}

/// Something done before a turn's first round, or at every round's start,
/// before the model is asked.
pub(super) trait RoundStart: Send {
    /// Its name, for the log.
    fn name(&self) -> &'static str;

    /// The turn's end, when it ended here (interrupted meanwhile).
    fn start<'a>(
        &'a mut self,
        session: &'a mut Session,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<TurnEnd>>;
}

/// One reason a turn may not end when the model stops asking for tools.
pub(super) trait BeforeEnd: Send {
    /// Its name, for the log.
    fn name(&self) -> &'static str;

    /// The model's reply asked for no tool (it stopped for `stop`).
    fn check<'a>(
        &'a mut self,
        session: &'a mut Session,
        stop: &'a StopReason,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Next>;
}

/// A turn's phases before its end, in order: a tool call written as text
/// is corrected first (nothing ran), then the turn waits for its
/// background tasks' reports, then the `Stop` hooks may send it on.
pub(super) struct TurnPhases {
    turn_start: Vec<Box<dyn RoundStart>>,
    round_start: Vec<Box<dyn RoundStart>>,
    before_end: Vec<Box<dyn BeforeEnd>>,
}

impl TurnPhases {
    /// A new turn's (each phase's count starts afresh).
    pub fn new() -> Self {
        Self {
            turn_start: vec![Box::new(mcp_wait::McpJoin)],
            round_start: vec![
                Box::new(goal_budget::GoalBudget),
                Box::new(compaction::Compaction),
                Box::new(reports::Reports),
                Box::new(plan_context::PlanContext::default()),
            ],
            before_end: vec![
                Box::new(text_calls::TextCalls::default()),
                Box::new(background::Background),
                Box::new(stop_hooks::StopHooks::default()),
                Box::new(goal::GoalPhase),
            ],
        }
    }

    /// Before the turn's first round: the MCP servers' tools join (the
    /// task given at start waits for those still starting).
    pub async fn turn_start(
        &mut self,
        session: &mut Session,
        cancel: &CancellationToken,
    ) -> Option<TurnEnd> {
        start_all(&mut self.turn_start, session, cancel).await
    }

    /// At every round's start: compaction when asked or needed, the
    /// background's reports, then the user's plan when the model has no
    /// todo tool.
    pub async fn round_start(
        &mut self,
        session: &mut Session,
        cancel: &CancellationToken,
    ) -> Option<TurnEnd> {
        start_all(&mut self.round_start, session, cancel).await
    }

    /// Asks each phase in order; the first that does not say `End` decides.
    pub async fn before_end(
        &mut self,
        session: &mut Session,
        stop: &StopReason,
        cancel: &CancellationToken,
    ) -> Next {
        for phase in &mut self.before_end {
            match phase.check(session, stop, cancel).await {
                Next::End => {}
                other => {
                    tracing::debug!(phase = phase.name(), "the turn does not end yet");
                    return other;
                }
            }
        }
        Next::End
    }
}

/// Runs `phases` in order until one ends the turn.
async fn start_all(
    phases: &mut [Box<dyn RoundStart>],
    session: &mut Session,
    cancel: &CancellationToken,
) -> Option<TurnEnd> {
    for phase in phases {
        if let Some(end) = phase.start(session, cancel).await {
            tracing::debug!(phase = phase.name(), "the turn ended at a round's start");
            return Some(end);
        }
    }
    None
}
