//! Call stages: what a feature does to every tool call, as a component of
//! its own instead of a method on the session.
//!
//! A [`CallStage`] sees each call before it runs (before the approval
//! gate) and may let it go on, allow it, have
//! the user asked, refuse it, or rewrite its input; it is told when an
//! approved call starts running and when it stopped (a checkpoint's
//! pre-image is taken and kept there); it sees the output after the call,
//! in reverse order of registration, and may add to it.
//! A stage keeps its own state behind its own lock and reaches the session
//! only through a [`StageCx`] (shared handles, read-only) and the events it
//! pushes to `said`, which the pipeline emits (and records) for it: no
//! stage holds the session, so calls of one reply pass their stages while
//! others run, and a new feature (plan mode, per-item permissions) is a new
//! file and one line in [`Stages::standard`].
//!
//! Invariants: stages run in [`Stages`] order, every one of them for every
//! call (a refusal stops the later stages' `before`, never `after`); the
//! verdicts fold as refuse > ask > allow > continue, and the approval gate's
//! own refusal (read-only mode, a deny rule) stands whatever a stage says.

mod checkpoints;
mod checks;
mod contract;
mod hook_scripts;
mod hooks;
mod plan_mode;
pub(super) mod scope;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::rule_gate::Gate;
use super::thread::Host;
pub(super) use super::voice::Said;
use super::voice::Voice;
use crate::events::ApprovalReason;
use crate::tools::ToolOutput;
pub(super) use hooks::{item_hooks, item_json, plan_hooks};

/// A call of the model's, as the stages pass it on.
pub(super) struct Call<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
    /// Why the provider could not read the input as JSON, if it could not.
    pub invalid_input: Option<String>,
}

impl<'a> Call<'a> {
    /// Its id, tool name and input.
    pub fn parts(&self) -> (&'a str, &'a str, &'a Value) {
        (self.id, self.name, self.input)
    }
}

/// What a stage sees of the session: the shared handles of the host the
/// call runs in, and the call's cancellation.
pub(super) struct StageCx<'a> {
    pub host: &'a Host,
    /// The calling thread's tools (what each call may do and names).
    pub tools: &'a crate::tools::ToolRegistry,
    /// The calling thread's plan.
    pub plan: &'a crate::todo::SharedPlan,
    pub cancel: &'a CancellationToken,
}

impl<'a> StageCx<'a> {
    /// What a call of `thread` in `host` shows its stages.
    pub fn of(
        host: &'a Host,
        thread: &'a super::thread::Thread,
        cancel: &'a CancellationToken,
    ) -> Self {
        Self {
            host,
            tools: &thread.tools,
            plan: &thread.plan,
            cancel,
        }
    }

    /// The approval mode the call is judged in.
    pub fn mode(&self) -> crate::events::ApprovalMode {
        super::shared::lock(&self.host.shared.policy).mode
    }
}

/// What a stage says of a call before it runs.
#[derive(Debug, Default)]
pub(super) enum Verdict {
    /// Nothing: the gate decides.
    #[default]
    Continue,
    /// Run it without asking where the mode would ask (a refusal of the
    /// gate still stands).
    Allow,
    /// Ask the user first, whatever the mode says.
    Ask(ApprovalReason),
    /// Do not run it: this is its answer.
    Refuse(Box<ToolOutput>),
}

impl Verdict {
    /// The stronger of two: refuse over ask over allow over continue (the
    /// first of two alike).
    pub fn and(self, other: Verdict) -> Verdict {
        fn rank(v: &Verdict) -> u8 {
            match v {
                Verdict::Continue => 0,
                Verdict::Allow => 1,
                Verdict::Ask(_) => 2,
                Verdict::Refuse(_) => 3,
            }
        }
        if rank(&other) > rank(&self) {
            other
        } else {
            self
        }
    }

    /// The approval gate's answer as this verdict bends it: the gate's
    /// refusal stands; a refusal here refuses; an ask asks whatever the
    /// mode says; an allow runs what the mode would ask about.
    pub fn bend(self, gate: Gate) -> Result<Gate, Box<ToolOutput>> {
        match (gate, self) {
            (gate @ Gate::Refuse(..), _) => Ok(gate),
            (_, Verdict::Refuse(output)) => Err(output),
            (_, Verdict::Ask(reason)) => Ok(Gate::Ask(reason)),
            (Gate::Ask(_), Verdict::Allow) => Ok(Gate::Run { sandboxed: false }),
            (gate, _) => Ok(gate),
        }
    }
}

/// A stage's word before a call: its verdict, and the input the call runs
/// with instead, if it rewrites it (later stages see the new input).
#[derive(Debug, Default)]
pub(super) struct Before {
    pub verdict: Verdict,
    pub input: Option<Value>,
}

impl Before {
    /// Goes on, as far as this stage is concerned.
    pub fn go_on() -> Self {
        Self::default()
    }

    /// Has the user asked `question` first.
    pub fn ask(question: String) -> Self {
        Self {
            verdict: Verdict::Ask(ApprovalReason::Tool { question }),
            input: None,
        }
    }
}

/// One feature's part in every tool call.
pub(super) trait CallStage: Send + Sync {
    /// Its name, for the log.
    fn name(&self) -> &'static str;

    /// Before `call` runs (by default it goes on); events for the user go
    /// to `said`.
    fn before<'a>(
        &'a self,
        _cx: &'a StageCx<'a>,
        _call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        Box::pin(std::future::ready(Before::go_on()))
    }

    /// Just before `call` runs (approved; a call that may write holds its
    /// turn to write), in order of registration: may still refuse it (its
    /// answer), after which it does not run and no later stage's `running`
    /// is called; events for the user go to `said`.
    fn running<'a>(
        &'a self,
        _cx: &'a StageCx<'a>,
        _call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Option<ToolOutput>> {
        Box::pin(std::future::ready(None))
    }

    /// Right after `call` ran (finished, failed or cut off), in reverse
    /// order, before its output goes anywhere.
    fn ran(&self, _cx: &StageCx<'_>, _call: &Call<'_>) {}

    /// After `call` ran (or was refused): may add to its `output`.
    fn after<'a>(
        &'a self,
        _cx: &'a StageCx<'a>,
        _call: &'a Call<'a>,
        _output: &'a mut ToolOutput,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// The stages every call of a session passes, in order (shared by its
/// threads: a subagent's calls pass the same).
pub(super) struct Stages {
    stages: Vec<Box<dyn CallStage>>,
}

impl std::fmt::Debug for Stages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.stages.iter().map(|s| s.name()))
            .finish()
    }
}

impl Stages {
    /// Waypoint's own stages, in the order they see a call.
    pub fn standard() -> Self {
        Self {
            stages: vec![
                Box::new(hooks::CallHooks::default()),
                Box::new(hook_scripts::HookScripts::default()),
                Box::new(plan_mode::PlanMode),
                Box::new(contract::Contract::default()),
                Box::new(scope::Scope),
                Box::new(checks::ItemChecks::default()),
                Box::new(checkpoints::CallPoints::default()),
            ],
        }
    }

    /// Every stage's `before`, in order, each seeing the input as the ones
    /// before it left it; a refusal stops there. The folded verdict and
    /// the rewritten input, if any stage rewrote it.
    pub async fn before(&self, cx: &StageCx<'_>, call: &Call<'_>, said: &mut Said) -> Before {
        let mut verdict = Verdict::Continue;
        let mut input: Option<Value> = None;
        for stage in &self.stages {
            let current = Call {
                input: input.as_ref().unwrap_or(call.input),
                invalid_input: call.invalid_input.clone(),
                ..*call
            };
            let before = stage.before(cx, &current, said).await;
            if before.input.is_some() {
                input = before.input;
            }
            verdict = verdict.and(before.verdict);
            if matches!(verdict, Verdict::Refuse(_)) {
                tracing::info!(stage = stage.name(), tool = %call.name, "call refused by a stage");
                break;
            }
        }
        Before { verdict, input }
    }

    /// What the stages say before `call` (see [`Stages::before`]), what
    /// they told the user heard.
    pub async fn pass_before(
        &self,
        voice: Voice<'_>,
        call: &Call<'_>,
        cancel: &CancellationToken,
    ) -> Before {
        let mut said = Said::default();
        let cx = StageCx::of(voice.host, voice.thread, cancel);
        let before = self.before(&cx, call, &mut said).await;
        voice.hear(said);
        before
    }

    /// The stages after `call` (see [`Stages::after`]), what they told
    /// the user heard.
    pub async fn pass_after(
        &self,
        voice: Voice<'_>,
        call: &Call<'_>,
        output: &mut ToolOutput,
        cancel: &CancellationToken,
    ) {
        let mut said = Said::default();
        let cx = StageCx::of(voice.host, voice.thread, cancel);
        self.after(&cx, call, output, &mut said).await;
        voice.hear(said);
    }

    /// The stages' `running` (see [`Stages::running`]), what they told the
    /// user heard; a refusal ends the call before it runs (told to the
    /// stages as ran).
    pub async fn pass_running(
        &self,
        voice: Voice<'_>,
        call: &Call<'_>,
        cancel: &CancellationToken,
    ) -> Option<ToolOutput> {
        let mut said = Said::default();
        let cx = StageCx::of(voice.host, voice.thread, cancel);
        let refused = self.running(&cx, call, &mut said).await;
        voice.hear(said);
        if refused.is_some() {
            self.ran(&cx, call);
        }
        refused
    }

    /// Every stage's `running`, in order, until one refuses the call (its
    /// answer).
    pub async fn running(
        &self,
        cx: &StageCx<'_>,
        call: &Call<'_>,
        said: &mut Said,
    ) -> Option<ToolOutput> {
        for stage in &self.stages {
            if let Some(refused) = stage.running(cx, call, said).await {
                tracing::info!(stage = stage.name(), tool = %call.name, "call refused as it was to run");
                return Some(refused);
            }
        }
        None
    }

    /// Every stage's `ran`, in reverse order.
    pub fn ran(&self, cx: &StageCx<'_>, call: &Call<'_>) {
        for stage in self.stages.iter().rev() {
            stage.ran(cx, call);
        }
    }

    /// Every stage's `after`, in reverse order.
    pub async fn after(
        &self,
        cx: &StageCx<'_>,
        call: &Call<'_>,
        output: &mut ToolOutput,
        said: &mut Said,
    ) {
        for stage in self.stages.iter().rev() {
            stage.after(cx, call, output, said).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::Refuser;

    fn refused() -> Verdict {
        Verdict::Refuse(Box::new(ToolOutput::refused(
            Refuser::Hook,
            String::from("no"),
        )))
    }

    fn ask() -> Verdict {
        Verdict::Ask(ApprovalReason::Mode)
    }

    #[test]
    fn verdicts_fold_refuse_over_ask_over_allow_over_continue() {
        assert!(matches!(
            Verdict::Continue.and(Verdict::Allow),
            Verdict::Allow
        ));
        assert!(matches!(Verdict::Allow.and(ask()), Verdict::Ask(_)));
        assert!(matches!(ask().and(Verdict::Allow), Verdict::Ask(_)));
        assert!(matches!(ask().and(refused()), Verdict::Refuse(_)));
        assert!(matches!(refused().and(ask()), Verdict::Refuse(_)));
        assert!(matches!(
            Verdict::Allow.and(Verdict::Continue),
            Verdict::Allow
        ));
    }

    #[test]
    fn the_gates_refusal_stands_and_an_ask_or_allow_bends_the_rest() {
        let gate_refuses = || Gate::Refuse(Refuser::Mode, String::from("read-only"));
        for verdict in [Verdict::Continue, Verdict::Allow, ask(), refused()] {
            assert!(matches!(
                verdict.bend(gate_refuses()),
                Ok(Gate::Refuse(Refuser::Mode, _))
            ));
        }
        let run = || Gate::Run { sandboxed: true };
        assert!(matches!(
            ask().bend(run()),
            Ok(Gate::Ask(ApprovalReason::Mode))
        ));
        assert!(refused().bend(run()).is_err());
        assert!(matches!(
            Verdict::Allow.bend(Gate::Ask(ApprovalReason::Mode)),
            Ok(Gate::Run { sandboxed: false })
        ));
        assert!(matches!(
            Verdict::Allow.bend(run()),
            Ok(Gate::Run { sandboxed: true })
        ));
        assert!(matches!(
            Verdict::Continue.bend(Gate::Ask(ApprovalReason::Mode)),
            Ok(Gate::Ask(ApprovalReason::Mode))
        ));
    }
}
