//! The engine's side of hooks: builds each event's payload (Claude Code's
//! field names: `session_id`, `transcript_path`, `cwd`,
//! `hook_event_name`, `permission_mode`, and the event's own), runs the
//! matching hooks at once, records and shows each run, and folds their
//! verdicts into one: a block wins over an ask, an ask over an allow.
//! Invariant: with no hook configured for a moment, nothing here runs and
//! nothing is spent.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::Session;
use super::shared::lock;
use crate::events::{ApprovalMode, ErrorKind, Event, HookReport, HookResult};
use crate::hooks::run::{Ended, HookRun};
use crate::hooks::{Decision, Hook, HookEvent, HookOrigin, STOP_CONTINUES, Verdict};
use crate::todo::{TodoItem, TodoStatus};
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

/// Claude Code's name for an approval mode (`permission_mode`).
fn permission_mode(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "plan",
        ApprovalMode::Ask | ApprovalMode::Auto => "default",
        ApprovalMode::AutoEdit => "acceptEdits",
        ApprovalMode::Yolo => "bypassPermissions",
    }
}

impl Session {
    /// Whether any hook runs at `event`.
    pub(super) fn hooks_at(&self, event: HookEvent) -> bool {
        self.host.config.tools.hooks.has(event)
    }

    /// Runs the hooks of `event` whose matcher takes one of `subjects`,
    /// with `fields` (an object) beside the common ones on their stdin;
    /// each run is recorded and shown (`label`: what it concerned).
    pub(super) async fn run_hooks(
        &mut self,
        event: HookEvent,
        subjects: &[&str],
        label: Option<&str>,
        fields: Value,
        cancel: &CancellationToken,
    ) -> Hooked {
        let hooks: Vec<Hook> = self
            .host
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
            let verdict = Verdict::of(event, &run);
            self.report_hook(event, label, &run, &verdict);
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
        let mode = lock(&self.host.policy).mode;
        let sandboxed = |hook: &Hook| match hook.origin {
            HookOrigin::Project(_) => mode != ApprovalMode::Yolo,
            HookOrigin::Config(_) => mode == ApprovalMode::Auto,
        };
        let any = hooks.iter().any(sandboxed);
        let confinement = match self.host.config.tools.sandbox.as_ref().filter(|_| any) {
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
        let session = self.host.config.tools.session.clone();
        let place = |confined: bool| Place {
            root: self.host.workspace.root(),
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
        let mode = lock(&self.host.policy).mode;
        let mut payload = json!({
            "session_id": self.host.transcript.id(),
            "transcript_path": self.host.transcript.path().map(|p| p.display().to_string()),
            "cwd": self.host.workspace.root().display().to_string(),
            "hook_event_name": event.name(),
            "permission_mode": permission_mode(mode),
        });
        if let (Some(all), Value::Object(own)) = (payload.as_object_mut(), fields) {
            all.extend(own);
        }
        payload
    }

    /// One run, told and recorded (a hook's `systemMessage` and a
    /// failure reach the user through its report).
    fn report_hook(
        &mut self,
        event: HookEvent,
        label: Option<&str>,
        run: &HookRun,
        verdict: &Verdict,
    ) {
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
        self.emit(Event::Hook {
            report: HookReport {
                event: event.name().to_string(),
                command: run.command.clone(),
                subject: label.map(str::to_string),
                result,
                exit_code: run.exit_code(),
                duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
                message,
            },
        });
    }
}

impl Session {
    /// `UserPromptSubmit` for `prompt`: what the hooks add for the model,
    /// or why they blocked it (it is then not sent).
    pub(super) async fn prompt_hooks(&mut self, prompt: &str) -> Result<Vec<String>, String> {
        if !self.hooks_at(HookEvent::UserPromptSubmit) {
            return Ok(Vec::new());
        }
        let cancel = CancellationToken::new();
        let start: String = prompt.chars().take(40).collect();
        let fields = json!({ "prompt": prompt });
        let hooked = self
            .run_hooks(
                HookEvent::UserPromptSubmit,
                &[],
                Some(&start),
                fields,
                &cancel,
            )
            .await;
        if let Some(why) = hooked.blocked().or(hooked.stop.as_deref()) {
            return Err(why.to_string());
        }
        Ok(hooked
            .context
            .into_iter()
            .map(|c| format!("[UserPromptSubmit hook: {c}]"))
            .collect())
    }

    /// The engine starts: the user hears about the hooks' settings, and
    /// `SessionStart` runs (`startup`, or `resume` for a continued session).
    pub(super) async fn start_hooks(&mut self) {
        self.tell_hook_setup();
        let source = if self.thread.conversation.is_empty() {
            "startup"
        } else {
            "resume"
        };
        self.session_start_hooks(source).await;
    }

    /// What the `SessionStart` hooks said for the model, taken once; they
    /// run again first when the session started afresh since (`clear`
    /// after a new session, `compact` after a compaction).
    pub(super) async fn start_notes(&mut self) -> Vec<String> {
        if let Some(source) = self.thread.run.start_source.take() {
            self.session_start_hooks(source).await;
        }
        std::mem::take(&mut self.thread.run.hook_notes)
    }

    /// `SessionStart` (`source`: startup, resume, clear or compact): what
    /// the hooks add for the model, kept for the next prompt.
    pub(super) async fn session_start_hooks(&mut self, source: &str) {
        if !self.hooks_at(HookEvent::SessionStart) {
            return;
        }
        let cancel = CancellationToken::new();
        let fields = json!({ "source": source });
        let hooked = self
            .run_hooks(
                HookEvent::SessionStart,
                &[source],
                Some(source),
                fields,
                &cancel,
            )
            .await;
        let notes = hooked
            .context
            .into_iter()
            .map(|c| format!("[SessionStart hook: {c}]"));
        self.thread.run.hook_notes.extend(notes);
    }

    /// Approves the project's waiting hooks as written now: they run
    /// from the next moment on (and in later sessions of the project).
    pub(super) fn approve_hooks(&mut self) {
        let set = self.host.config.tools.hooks.clone();
        let rules_waited = self.approve_rules();
        let Some(waiting) = &set.waiting else {
            if !rules_waited {
                self.emit(Event::Error {
                    kind: ErrorKind::Hook,
                    message: "Nothing of this project waits for approval.".into(),
                });
            }
            return;
        };
        let env = |k: &str| std::env::var(k).ok();
        if let Err(e) = crate::hooks::config::approve(waiting, self.host.workspace.root(), &env) {
            self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!("The project's hooks were not approved: {e}"),
            });
            return;
        }
        let mut set = (*set).clone();
        set.activate();
        self.host.config.tools.hooks = std::sync::Arc::new(set);
        self.tell_hooks();
    }

    /// Approves the project's permission rules that wait (they allow
    /// more): they apply from the next call on. Whether any waited.
    fn approve_rules(&mut self) -> bool {
        let Some(waiting) = self.host.config.tools.rules.waiting.clone() else {
            return false;
        };
        let env = |k: &str| std::env::var(k).ok();
        let root = self.host.workspace.root().to_path_buf();
        match crate::config::claude::approve(&waiting, &root, &env) {
            Ok(()) => self.host.config.tools.rules.approve_waiting(),
            Err(e) => self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!("The project's permission rules were not approved: {e}"),
            }),
        }
        true
    }

    /// Sends the hooks that run and those that wait, one line each.
    fn tell_hooks(&mut self) {
        let set = self.host.config.tools.hooks.clone();
        let active = set.all().iter().map(crate::hooks::Hook::line).collect();
        let waiting = set
            .waiting
            .as_ref()
            .map(|w| w.commands.clone())
            .unwrap_or_default();
        self.emit(Event::Hooks { active, waiting });
    }

    /// Tells the user what of the hooks' settings could not be read, and
    /// which project hooks wait for approval (and so do not run).
    fn tell_hook_setup(&mut self) {
        let set = self.host.config.tools.hooks.clone();
        if !set.is_empty() || set.waiting.is_some() {
            self.tell_hooks();
        }
        for problem in &set.problems {
            self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!("Hook settings: {problem}"),
            });
        }
        if let Some(waiting) = &self.host.config.tools.rules.waiting {
            let message = format!(
                "This project's {} has permission rules that allow more ({} of them); they do not apply until you approve them: /hooks approve (or `waypoint hooks approve`). Its deny and ask rules apply already.",
                waiting.files.join(" and "),
                waiting.rules.allow.len()
                    + waiting.rules.exact.len()
                    + waiting.rules.access.read.all().count()
                    + waiting.rules.access.edit.all().count()
                    + waiting.rules.access.fetch.all().count()
            );
            self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message,
            });
        }
        if let Some(waiting) = &set.waiting {
            let files: Vec<String> = waiting
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
            self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!(
                    "This project's {} has {} hook(s) that do not run until you approve them: /hooks to see them, /hooks approve (or `waypoint hooks approve`) to run them in this project.",
                    files.join(" and "),
                    waiting.count
                ),
            });
        }
    }

    /// `Stop` (the root's turn) or `SubagentStop` (a child's), as the
    /// model ends its turn: the note that says why to go on, when a hook
    /// keeps the turn going
    /// (`continued` times so far; at most [`STOP_CONTINUES`] in a row).
    pub(super) async fn stop_hooks(
        &mut self,
        continued: &mut u32,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let event = if self.host.events.thread().is_root() {
            HookEvent::Stop
        } else {
            HookEvent::SubagentStop
        };
        if !self.hooks_at(event) {
            return None;
        }
        let fields = json!({ "stop_hook_active": *continued > 0 });
        let hooked = self.run_hooks(event, &[], None, fields, cancel).await;
        let why = hooked.blocked()?.to_string();
        if hooked.stop.is_some() || cancel.is_cancelled() {
            return None;
        }
        if *continued >= STOP_CONTINUES {
            self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!(
                    "A {event} hook asked to go on {STOP_CONTINUES} times in a row; the turn ends here."
                ),
            });
            return None;
        }
        *continued += 1;
        Some(format!("[A {event} hook keeps the turn going: {why}]"))
    }

    /// `PreCompact` (`trigger`: manual or auto), before a compaction.
    pub(super) async fn pre_compact_hooks(
        &mut self,
        manual: bool,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) {
        if !self.hooks_at(HookEvent::PreCompact) {
            return;
        }
        let trigger = if manual { "manual" } else { "auto" };
        let fields = json!({ "trigger": trigger, "custom_instructions": focus.unwrap_or("") });
        self.run_hooks(
            HookEvent::PreCompact,
            &[trigger],
            Some(trigger),
            fields,
            cancel,
        )
        .await;
    }

    /// The user completed items `ItemCompleting` hooks guard: their word
    /// overrides the gate, recorded as such (the hooks are not run).
    pub(super) fn note_overrides(&mut self, before: &[TodoItem], after: &[TodoItem]) {
        if !self.hooks_at(HookEvent::ItemCompleting) {
            return;
        }
        for item in after.iter().filter(|i| i.status == TodoStatus::Completed) {
            let was_open = before
                .iter()
                .any(|b| b.id == item.id && b.status != TodoStatus::Completed);
            let guards = self
                .host
                .config
                .tools
                .hooks
                .matching(HookEvent::ItemCompleting, &[&item.content]);
            let Some(hook) = guards.first().filter(|_| was_open) else {
                continue;
            };
            let command = hook.command.clone();
            self.emit(Event::Hook {
                report: HookReport {
                    event: HookEvent::ItemCompleting.name().to_string(),
                    command,
                    subject: Some(item.content.clone()),
                    result: HookResult::Overridden,
                    exit_code: None,
                    duration_ms: 0,
                    message: Some("the user completed the item; the hook was not asked".into()),
                },
            });
        }
    }
}
