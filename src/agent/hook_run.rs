//! Running one moment's hooks over the host, for the session and for the
//! call stages alike: the payload (Claude Code's field names:
//! `session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `permission_mode`, and the event's own), the hooks run at once (in the
//! sandbox where their origin and the mode say), and each run's report.
//! Invariant: with no hook configured for a moment, nothing here runs.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::shared::lock;
use super::stages::Said;
use super::thread::Host;
use crate::events::{ApprovalMode, Event, HookReport, HookResult};
use crate::hooks::run::{Ended, HookRun};
use crate::hooks::{Decision, Hook, HookEvent, HookOrigin, Verdict};
use crate::tools::hook_run::Place;

/// What a moment's hooks said together.
#[derive(Debug, Default)]
pub(super) struct Hooked {
    pub decision: Decision,
    /// The input a call runs with instead (the last hook's that gave one).
    pub updated_input: Option<Map<String, Value>>,
    /// What the model is to read besides (each hook's, in order).
    pub context: Vec<String>,
    /// Why the agent must stop (`continue: false`), the first hook's.
    pub stop: Option<String>,
    /// Each hook that ran: its command, and whether it exited 0.
    pub runs: Vec<(String, bool)>,
}

impl Hooked {
    fn merge(&mut self, verdict: Verdict) {
        self.decision = match (std::mem::take(&mut self.decision), verdict.decision) {
            (Decision::Block(a), Decision::Block(b)) => Decision::Block(format!("{a}\n{b}")),
            (Decision::Block(a), _) | (_, Decision::Block(a)) => Decision::Block(a),
            (Decision::Ask(a), _) | (_, Decision::Ask(a)) => Decision::Ask(a),
            (Decision::Allow, _) | (_, Decision::Allow) => Decision::Allow,
            _ => Decision::Continue,
        };
        if verdict.updated_input.is_some() {
            self.updated_input = verdict.updated_input;
        }
        self.context.extend(verdict.context);
        if self.stop.is_none() {
            self.stop = verdict.stop;
        }
    }

    /// The block's reason, when the hooks blocked.
    pub fn blocked(&self) -> Option<&str> {
        match &self.decision {
            Decision::Block(why) => Some(why),
            _ => None,
        }
    }
}

impl Host {
    /// Whether any hook runs at `event`.
    pub(super) fn hooks_at(&self, event: HookEvent) -> bool {
        self.config.tools.hooks.has(event)
    }

    /// Runs the hooks of `event` whose matcher takes one of `subjects`,
    /// with `fields` (an object) beside the common ones on their stdin;
    /// each run's report goes to `said` (`label`: what it concerned). A
    /// `continue: false` is the caller's to act on.
    pub(super) async fn run_hooks(
        &self,
        moment: Moment<'_>,
        fields: Value,
        cancel: &CancellationToken,
        said: &mut Said,
    ) -> Hooked {
        let Moment {
            event,
            subjects,
            label,
        } = moment;
        let hooks: Vec<Hook> = self
            .config
            .tools
            .hooks
            .matching(event, subjects)
            .into_iter()
            .cloned()
            .collect();
        let mut hooked = Hooked::default();
        if hooks.is_empty() {
            return hooked;
        }
        let payload = self.hook_payload(event, fields);
        let runs = self.run_all(&hooks, &payload, cancel).await;
        for run in runs {
            hooked
                .runs
                .push((run.command.clone(), run.exit_code() == Some(0)));
            let verdict = Verdict::of(event, &run);
            said.events.push(report(event, label, &run, &verdict));
            hooked.merge(verdict);
        }
        hooked
    }

    /// Runs `hooks` at once with `payload`: the user's own in the sandbox
    /// in auto mode, a project's in the sandbox in every mode but yolo
    /// (its script lies in the workspace, which commands write).
    async fn run_all(
        &self,
        hooks: &[Hook],
        payload: &Value,
        cancel: &CancellationToken,
    ) -> Vec<HookRun> {
        let bytes = serde_json::to_vec(payload).unwrap_or_default();
        let mode = lock(&self.shared.policy).mode;
        let sandboxed = |hook: &Hook| match hook.origin {
            HookOrigin::Project(_) => mode != ApprovalMode::Yolo,
            HookOrigin::Config(_) => mode == ApprovalMode::Auto,
        };
        let any = hooks.iter().any(sandboxed);
        let confinement = match self.config.tools.sandbox.as_ref().filter(|_| any) {
            Some(sandbox) => match sandbox.confinement() {
                Ok(c) => Some(c),
                Err(e) => {
                    let failed = |hook: &Hook| HookRun {
                        command: hook.command.clone(),
                        ended: Ended::Failed(format!("the sandbox could not be prepared: {e}")),
                        stdout: String::new(),
                        stderr: String::new(),
                        duration: std::time::Duration::ZERO,
                    };
                    return hooks.iter().map(failed).collect();
                }
            },
            None => None,
        };
        let session = self.config.tools.session.clone();
        let place = |confined: bool| Place {
            root: self.shared.workspace.root(),
            session: session.as_deref(),
            confinement: confinement.as_deref().filter(|_| confined),
            cancel,
        };
        let (inside, outside) = (place(true), place(false));
        futures_util::future::join_all(hooks.iter().map(|h| {
            let place = if sandboxed(h) { &inside } else { &outside };
            crate::tools::hook_run::run(&h.command, &bytes, h.timeout, place)
        }))
        .await
    }

    /// The payload: the common fields, then the event's.
    fn hook_payload(&self, event: HookEvent, fields: Value) -> Value {
        let mode = lock(&self.shared.policy).mode;
        let mut payload = json!({
            "session_id": self.transcript.id(),
            "transcript_path": self.transcript.path().map(|p| p.display().to_string()),
            "cwd": self.shared.workspace.root().display().to_string(),
            "hook_event_name": event.name(),
            "permission_mode": permission_mode(mode),
        });
        if let (Some(all), Value::Object(own)) = (payload.as_object_mut(), fields) {
            all.extend(own);
        }
        payload
    }
}

/// One run's report (a hook's `systemMessage` and a failure reach the
/// user through it; it is recorded).
fn report(event: HookEvent, label: Option<&str>, run: &HookRun, verdict: &Verdict) -> Event {
    let result = match (&run.ended, &verdict.decision) {
        (Ended::TimedOut, _) => HookResult::TimedOut,
        (Ended::Cancelled, _) => HookResult::Interrupted,
        (_, Decision::Block(_)) => HookResult::Blocked,
        (Ended::Exited(0), _) => HookResult::Ok,
        _ => HookResult::Failed,
    };
    let message = match &verdict.decision {
        Decision::Block(why) => Some(why.clone()),
        _ => verdict.message.clone(),
    };
    tracing::info!(event = %event, command = %run.command, ?result, "hook ran");
    Event::Hook {
        report: HookReport {
            event: event.name().to_string(),
            command: run.command.clone(),
            subject: label.map(str::to_string),
            result,
            exit_code: run.exit_code(),
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            message,
        },
    }
}

/// A moment hooks run at: its event, the words their matchers are tried
/// on, and what it concerned (shown with each run).
#[derive(Clone, Copy)]
pub(super) struct Moment<'a> {
    pub event: HookEvent,
    pub subjects: &'a [&'a str],
    pub label: Option<&'a str>,
}

impl<'a> Moment<'a> {
    /// `event`, for every hook of it, concerning nothing in particular.
    pub fn of(event: HookEvent) -> Self {
        Self {
            event,
            subjects: &[],
            label: None,
        }
    }
}

/// Claude Code's name for an approval mode (`permission_mode`).
fn permission_mode(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly | ApprovalMode::Plan => "plan",
        ApprovalMode::Ask | ApprovalMode::Auto => "default",
        ApprovalMode::AutoEdit => "acceptEdits",
        ApprovalMode::Yolo => "bypassPermissions",
    }
}
