//! The session's goal (issue 46): a durable objective Waypoint keeps the
//! agent working on, across the model's stops, until the evidence says it
//! is met, a budget stops it, the user pauses it, or nothing moves.
//!
//! The pieces are components: the goal itself lives here, shared by the
//! dispatcher (the user's `/goal` ops) and the turn; the turn phase
//! [`super::phases`]'s `goal` judges it when the model stops asking for
//! tools, the round phase `goal_budget` counts what it spends, and the
//! call stage `checks` gathers the items' evidence. Invariants: one goal
//! per session; it is `met` only when every plan item is completed and
//! verified or accepted and the goal's own check passed; its state
//! changes are recorded (`GoalSet`, `GoalUpdated`), so a resume restores
//! it with what it spent.

mod check_run;
mod judge;

use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(super) use check_run::run_check;
pub(super) use judge::{go_on_note, judge};

use super::Session;
use super::shared::lock;
use crate::events::{
    Envelope, ErrorKind, Event, Evidence, Goal, GoalAction, GoalReport, GoalState, Spent,
};
use crate::todo::{Checks, TodoItem};

/// Rounds that change neither the plan nor its evidence before an active
/// goal stops as `unmet`.
pub const STALL_ROUNDS: u32 = 3;

/// The goal, shared by the dispatcher and the session's turns, and the
/// goal ops that arrived while a turn ran.
#[derive(Clone, Default)]
pub(super) struct SharedGoal {
    run: Arc<Mutex<Option<GoalRun>>>,
    pending: Arc<Mutex<Vec<GoalAction>>>,
}

impl SharedGoal {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Option<GoalRun>> {
        lock(&self.run)
    }

    /// An op that arrived while a turn ran: applied when it has ended.
    /// Whether it pauses the goal (the turn should stop now).
    pub fn hold(&self, action: GoalAction) -> bool {
        let pause = action == GoalAction::Pause;
        lock(&self.pending).push(action);
        pause
    }

    /// The goal is active now.
    pub fn active(&self) -> bool {
        self.lock()
            .as_ref()
            .is_some_and(|g| g.state == GoalState::Active)
    }
}

/// A goal as the engine keeps it.
#[derive(Debug)]
pub(super) struct GoalRun {
    pub goal: Goal,
    pub state: GoalState,
    pub reason: Option<String>,
    pub spent: Spent,
    /// The session's token totals when last counted.
    seen: crate::chat::Usage,
    /// When it became active last (none while it is not).
    since: Option<Instant>,
    /// The 80% warning was given.
    pub warned: bool,
    /// Rounds in a row that changed nothing, and what the last one saw.
    pub stale: u32,
    pub last_seen: Option<u64>,
    /// The goal's own check, when it ran last.
    pub check: Option<Evidence>,
    /// The drifting item the model was told of last (once per item).
    pub drift_told: Option<String>,
}

impl GoalRun {
    fn new(goal: Goal, seen: crate::chat::Usage) -> Self {
        Self {
            goal,
            state: GoalState::Active,
            reason: None,
            spent: Spent::default(),
            seen,
            since: Some(Instant::now()),
            warned: false,
            stale: 0,
            last_seen: None,
            check: None,
            drift_told: None,
        }
    }

    /// Counts what the session spent since the last count: `totals` are
    /// its token totals now, priced with `price` where known.
    pub fn account(&mut self, totals: crate::chat::Usage, price: Option<crate::pricing::Price>) {
        let delta = crate::chat::Usage {
            input_tokens: totals.input_tokens.saturating_sub(self.seen.input_tokens),
            output_tokens: totals.output_tokens.saturating_sub(self.seen.output_tokens),
            cache_read_tokens: totals
                .cache_read_tokens
                .saturating_sub(self.seen.cache_read_tokens),
            cache_write_tokens: totals
                .cache_write_tokens
                .saturating_sub(self.seen.cache_write_tokens),
        };
        self.seen = totals;
        self.spent.tokens = self
            .spent
            .tokens
            .saturating_add(delta.prompt_tokens().saturating_add(delta.output_tokens));
        if let Some(price) = price {
            self.spent.cost_usd += crate::pricing::cost(price, &delta);
        }
        if let Some(since) = self.since.replace(Instant::now()) {
            self.spent.seconds = self.spent.seconds.saturating_add(since.elapsed().as_secs());
        }
    }

    /// Counts from the session's token totals `totals` on (a restored
    /// goal's spent figures are the stored session's).
    pub fn rebase(&mut self, totals: crate::chat::Usage) {
        self.seen = totals;
        if self.state == GoalState::Active {
            self.since = Some(Instant::now());
        }
    }

    /// Moves to `state` (with `reason`); the clock runs only while active.
    pub fn set(&mut self, state: GoalState, reason: Option<String>) {
        if state != GoalState::Active
            && let Some(since) = self.since.take()
        {
            self.spent.seconds = self.spent.seconds.saturating_add(since.elapsed().as_secs());
        }
        if state == GoalState::Active && self.since.is_none() {
            self.since = Some(Instant::now());
        }
        self.state = state;
        self.reason = reason;
    }

    /// Its report as the plan stands.
    pub fn report(&self, items: &[TodoItem], checks: &Checks) -> GoalReport {
        judge::report(self, items, checks)
    }
}

/// What the agent loop does after a goal op while idle.
pub(super) enum Begin {
    /// Nothing (refused, or nothing to run).
    Nothing,
    /// A turn with this message.
    Prompt(String),
    /// A turn going on where the last one stopped.
    Resume,
}

/// The goal's report as the session's plan stands, emitted (recorded).
pub(super) fn announce(session: &mut Session) {
    let report = {
        let goal = session.host.requests.goal.lock();
        let Some(run) = goal.as_ref() else {
            return;
        };
        let state = session.thread.plan.lock();
        run.report(state.manager.items(), &state.checks)
    };
    session.emit(Event::GoalUpdated { report });
}

/// Applies `action` while no turn runs.
pub(super) fn apply(session: &mut Session, action: GoalAction) -> Begin {
    let shared = session.host.requests.goal.clone();
    let state = shared.lock().as_ref().map(|g| g.state);
    let refuse = |session: &mut Session, message: &str| {
        session.emit(Event::Error {
            kind: ErrorKind::Goal,
            message: message.to_string(),
        });
        Begin::Nothing
    };
    match action {
        GoalAction::Set { goal } => {
            if state.is_some_and(|s| !s.ended()) {
                return refuse(
                    session,
                    "A goal is already set: `/goal clear` drops it first (`/goal` shows it).",
                );
            }
            if goal.text.trim().is_empty() {
                return refuse(session, "A goal needs its text: `/goal TEXT`.");
            }
            *shared.lock() = Some(GoalRun::new(goal.clone(), session.thread.totals));
            session.emit(Event::GoalSet { goal: goal.clone() });
            announce(session);
            Begin::Prompt(judge::first_prompt(&goal))
        }
        GoalAction::Accept { n } => accept(session, n),
        GoalAction::Pause | GoalAction::Resume | GoalAction::Clear
            if state.is_none_or(GoalState::ended) =>
        {
            refuse(session, "No goal is active: `/goal TEXT` sets one.")
        }
        GoalAction::Pause => {
            if let Some(run) = shared.lock().as_mut() {
                run.set(GoalState::Paused, Some("paused by the user".into()));
            }
            announce(session);
            Begin::Nothing
        }
        GoalAction::Resume => {
            if let Some(run) = shared.lock().as_mut() {
                run.set(GoalState::Active, None);
                run.stale = 0;
            }
            announce(session);
            Begin::Resume
        }
        GoalAction::Clear => {
            if let Some(run) = shared.lock().as_mut() {
                run.set(GoalState::Unmet, Some("cleared by the user".into()));
            }
            announce(session);
            Begin::Nothing
        }
    }
}

/// `/goal accept N`: plan item `n` counts as done without evidence (told
/// as an `ItemChecked` with no command, so a resume restores it).
fn accept(session: &mut Session, n: usize) -> Begin {
    let accepted = {
        let mut plan = session.thread.plan.lock();
        let item = plan.manager.items().get(n.wrapping_sub(1)).cloned();
        item.inspect(|item| plan.checks.accept(&item.id))
    };
    let Some(item) = accepted else {
        session.emit(Event::Error {
            kind: ErrorKind::Goal,
            message: format!("There is no plan item {n} to accept."),
        });
        return Begin::Nothing;
    };
    session.emit(Event::ItemChecked {
        n,
        evidence: Evidence {
            item: item.id,
            content: item.content,
            tail: "accepted by the user without evidence".into(),
            ..Evidence::default()
        },
    });
    announce(session);
    Begin::Nothing
}

/// After a turn: the goal ops that came meanwhile (a turn that ended
/// early paused an active goal already, see [`on_abort`]).
pub(super) fn after_turn(session: &mut Session) {
    let pending = std::mem::take(&mut *lock(&session.host.requests.goal.pending));
    for action in pending {
        // What a mid-turn op asks for runs from the next prompt on.
        let _ = apply(session, action);
    }
}

/// A turn ends early (`reason`): an active goal waits, paused, with why
/// (said before the turn's end, which ends a headless run).
pub(super) fn on_abort(session: &mut Session, reason: crate::events::AbortReason) {
    use crate::events::AbortReason;
    if !session.host.events.thread().is_root() || !session.host.requests.goal.active() {
        return;
    }
    crate::agent::phases::account_goal(session);
    let why = match reason {
        AbortReason::Interrupted => "interrupted by the user",
        AbortReason::MaxTurns => {
            "the turn reached its request limit (--max-turns); a resume goes on"
        }
        AbortReason::Failed => "the turn failed (see why above); a resume goes on",
        AbortReason::Hook => "a hook stopped the turn; a resume goes on",
    };
    if let Some(run) = session.host.requests.goal.lock().as_mut() {
        run.set(GoalState::Paused, Some(why.into()));
    }
    announce(session);
}

/// A resume (`Op::Resume`, F5, `waypoint -r ID -p` without a task)
/// goes on with a paused goal too.
pub(super) fn on_resume(session: &mut Session) {
    let resumed = match session.host.requests.goal.lock().as_mut() {
        Some(run) if run.state == GoalState::Paused => {
            run.set(GoalState::Active, None);
            run.stale = 0;
            true
        }
        _ => false,
    };
    if resumed {
        announce(session);
    }
}

/// The goal a stored session's events leave (its last state, what it
/// spent, the items the user accepted), and the items' evidence into
/// `checks`.
pub(super) fn restored(history: &[Envelope], checks: &mut Checks) -> Option<GoalRun> {
    let mut run: Option<GoalRun> = None;
    for envelope in history.iter().filter(|e| e.thread.is_root()) {
        match &envelope.event {
            Event::GoalSet { goal } => {
                run = Some(GoalRun::new(goal.clone(), crate::chat::Usage::default()));
            }
            Event::GoalUpdated { report } => {
                if let Some(run) = run.as_mut() {
                    run.spent = report.spent;
                    run.check.clone_from(&report.check);
                    run.set(report.state, report.reason.clone());
                }
            }
            Event::ItemChecked { evidence, .. } if evidence.command.is_empty() => {
                checks.accept(&evidence.item);
            }
            Event::ItemChecked { evidence, .. } => checks.record(evidence.clone()),
            _ => {}
        }
    }
    run
}
