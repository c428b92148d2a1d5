//! The questions a batch of calls puts to the user beyond the gate's:
//! many subagents at once (asked once for them all), and a command the
//! sandbox stopped (run it outside?).

use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::{Asking, refusal};
use super::stages::Call;
use crate::events::{ApprovalReason, Decision, ToolSummary};
use crate::tools::{Refuser, ToolOutput};

impl Session {
    /// Asks the user about a call (see [`Asking::ask`]); the wait is
    /// counted apart from the call's duration. `None` when interrupted.
    pub(super) async fn ask(
        &mut self,
        parts: (&str, &str, &serde_json::Value),
        summary: ToolSummary,
        reason: ApprovalReason,
        cancel: &CancellationToken,
    ) -> Option<Decision> {
        let asked = Asking::new(self.voice())
            .ask(parts, summary, reason, cancel)
            .await;
        self.thread.run.approval_wait += asked.waited;
        asked.decision
    }

    /// In ask mode, more subagents at once than `[task] ask_above` are
    /// put to the user first, once for them all: what every one of them
    /// answers when the user says no (or the turn is interrupted).
    pub(super) async fn ask_fan_out(
        &mut self,
        calls: &[Call<'_>],
        summaries: &[ToolSummary],
        cancel: &CancellationToken,
    ) -> Option<ToolOutput> {
        let agents: Vec<usize> = (0..calls.len())
            .filter(|&at| self.thread.tools.is_agent(calls[at].name))
            .collect();
        let above = self.host.config.tools.task.ask_above;
        let mode = super::shared::lock(&self.host.shared.policy).mode;
        let first = *agents.first()?;
        if mode != crate::events::ApprovalMode::Ask || agents.len() <= above {
            return None;
        }
        let question = format!(
            "Start {} subagents at once? (more than [task] ask_above = {above}; each spends tokens of its own)",
            agents.len()
        );
        let reason = ApprovalReason::Tool { question };
        let call = &calls[first];
        match self
            .ask(call.parts(), summaries[first].clone(), reason, cancel)
            .await
        {
            Some(Decision::Once | Decision::Always) => None,
            Some(Decision::Refuse { reason }) => Some(ToolOutput::refused(
                Refuser::User,
                refusal(reason.as_deref()),
            )),
            None => Some(ToolOutput::interrupted(
                "It was waiting for the user's approval and did not run.",
                "",
            )),
        }
    }

    /// A command the sandbox stopped at `what`: the user may run it
    /// outside; the model is told when they do not.
    pub(super) async fn outside_sandbox(
        &mut self,
        call: &Call<'_>,
        summary: ToolSummary,
        out: ToolOutput,
        what: String,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let reason = ApprovalReason::SandboxBlocked { what: what.clone() };
        match self.ask(call.parts(), summary, reason, cancel).await {
            Some(Decision::Once | Decision::Always) => {
                self.checkpoint_and_run(call, false, cancel).await
            }
            None => out,
            Some(Decision::Refuse { .. }) => ToolOutput {
                content: format!(
                    "{}\n[blocked by the sandbox: {what}. Commands run with writes limited to the workspace, the temp folder and cargo's download caches; the user did not allow running it outside.]",
                    out.content
                ),
                ..out
            },
        }
    }
}
