//! The session's hook moments: `UserPromptSubmit`, `SessionStart`,
//! `Stop`/`SubagentStop`, `PreCompact`, and the approval of a project's
//! hooks. Running a moment's hooks is [`super::hook_run`]'s; the hooks
//! around a tool call are a call stage ([`super::stages`]).
//! Invariant: with no hook configured for a moment, nothing here runs and
//! nothing is spent.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Session;
use super::hook_run::{Hooked, Moment};
use super::shared::lock;
use super::stages::Said;
use super::thread::Host;
use super::voice::Voice;
use crate::events::{ErrorKind, Event};
use crate::hooks::{HookEvent, STOP_CONTINUES};

/// The hooks of a thread's moments, as a component: what they said for
/// later waits in the thread's [`super::thread::Left`].
pub(super) struct Moments<'a>(pub Voice<'a>);

impl Moments<'_> {
    /// Whether any hook runs at `event`.
    fn at(&self, event: HookEvent) -> bool {
        self.0.host.hooks_at(event)
    }

    /// The hooks of `moment` (see [`super::thread::Host::run_hooks`]),
    /// their reports emitted.
    async fn run(&self, moment: Moment<'_>, fields: Value, cancel: &CancellationToken) -> Hooked {
        let mut said = Said::default();
        let hooked = self
            .0
            .host
            .run_hooks(moment, fields, cancel, &mut said)
            .await;
        self.0.hear(said);
        hooked
    }
    /// `UserPromptSubmit` for `prompt`: what the hooks add for the model,
    /// or why they blocked it (it is then not sent).
    pub async fn prompt(&self, prompt: &str) -> Result<Vec<String>, String> {
        if !self.at(HookEvent::UserPromptSubmit) {
            return Ok(Vec::new());
        }
        let cancel = CancellationToken::new();
        let start: String = prompt.chars().take(40).collect();
        let fields = json!({ "prompt": prompt });
        let hooked = self
            .run(
                Moment {
                    label: Some(&start),
                    ..Moment::of(HookEvent::UserPromptSubmit)
                },
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
    pub async fn start(&self) {
        self.tell_setup();
        let source = if self.0.thread.conversation.is_empty() {
            "startup"
        } else {
            "resume"
        };
        self.session_start(source).await;
    }

    /// What the `SessionStart` hooks said for the model, taken once; they
    /// run again first when the session started afresh since (`clear`
    /// after a new session, `compact` after a compaction).
    pub async fn notes(&self) -> Vec<String> {
        let source = lock(&self.0.thread.left).source.take();
        if let Some(source) = source {
            self.session_start(source).await;
        }
        std::mem::take(&mut lock(&self.0.thread.left).notes)
    }

    /// `SessionStart` (`source`: startup, resume, clear or compact): what
    /// the hooks add for the model, kept for the next prompt.
    async fn session_start(&self, source: &str) {
        if !self.at(HookEvent::SessionStart) {
            return;
        }
        let cancel = CancellationToken::new();
        let fields = json!({ "source": source });
        let hooked = self
            .run(
                Moment {
                    event: HookEvent::SessionStart,
                    subjects: &[source],
                    label: Some(source),
                },
                fields,
                &cancel,
            )
            .await;
        let notes = hooked
            .context
            .into_iter()
            .map(|c| format!("[SessionStart hook: {c}]"));
        lock(&self.0.thread.left).notes.extend(notes);
    }

    /// Sends the hooks that run and those that wait, one line each.
    pub fn tell(&self) {
        let set = self.0.host.config.tools.hooks.clone();
        let active = set.all().iter().map(crate::hooks::Hook::line).collect();
        let waiting = set
            .waiting
            .as_ref()
            .map(|w| w.commands.clone())
            .unwrap_or_default();
        self.0.emit(Event::Hooks { active, waiting });
    }

    /// Tells the user what of the hooks' settings could not be read, and
    /// which project hooks wait for approval (and so do not run).
    fn tell_setup(&self) {
        let set = self.0.host.config.tools.hooks.clone();
        if !set.is_empty() || set.waiting.is_some() {
            self.tell();
        }
        for problem in &set.problems {
            self.0.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!("Hook settings: {problem}"),
            });
        }
        if let Some(waiting) = &self.0.host.config.tools.rules.waiting {
            let message = format!(
                "This project's {} has permission rules that allow more ({} of them); they do not apply until you approve them: /hooks approve (or `waypoint hooks approve`). Its deny and ask rules apply already.",
                waiting.files.join(" and "),
                waiting.rules.allow.len()
                    + waiting.rules.exact.len()
                    + waiting.rules.access.read.all().count()
                    + waiting.rules.access.edit.all().count()
                    + waiting.rules.access.fetch.all().count()
            );
            self.0.emit(Event::Error {
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
            self.0.emit(Event::Error {
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
    pub async fn stop(&self, continued: &mut u32, cancel: &CancellationToken) -> Option<String> {
        let event = if self.0.host.events.thread().is_root() {
            HookEvent::Stop
        } else {
            HookEvent::SubagentStop
        };
        if !self.at(event) {
            return None;
        }
        let fields = json!({ "stop_hook_active": *continued > 0 });
        let hooked = self.run(Moment::of(event), fields, cancel).await;
        let why = hooked.blocked()?.to_string();
        if hooked.stop.is_some() || cancel.is_cancelled() {
            return None;
        }
        if *continued >= STOP_CONTINUES {
            self.0.emit(Event::Error {
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
    pub async fn pre_compact(&self, manual: bool, focus: Option<&str>, cancel: &CancellationToken) {
        if !self.at(HookEvent::PreCompact) {
            return;
        }
        let trigger = if manual { "manual" } else { "auto" };
        let fields = json!({ "trigger": trigger, "custom_instructions": focus.unwrap_or("") });
        self.run(
            Moment {
                event: HookEvent::PreCompact,
                subjects: &[trigger],
                label: Some(trigger),
            },
            fields,
            cancel,
        )
        .await;
    }
}

impl Session {
    /// Approves the project's waiting hooks as written now: they run
    /// from the next moment on (and in later sessions of the project).
    pub(super) fn approve_hooks(&mut self) {
        let set = self.host.config.tools.hooks.clone();
        let rules_waited = match approve_rules(&mut self.host) {
            Some(Err(message)) => {
                self.emit(Event::Error {
                    kind: ErrorKind::Hook,
                    message,
                });
                true
            }
            Some(Ok(())) => true,
            None => false,
        };
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
        if let Err(e) =
            crate::hooks::config::approve(waiting, self.host.shared.workspace.root(), &env)
        {
            self.emit(Event::Error {
                kind: ErrorKind::Hook,
                message: format!("The project's hooks were not approved: {e}"),
            });
            return;
        }
        let mut set = (*set).clone();
        set.activate();
        self.host.config.tools.hooks = std::sync::Arc::new(set);
        Moments(self.voice()).tell();
    }
}

/// Approves the project's permission rules that wait (they allow more):
/// they apply from the next call on. `None` when none waited; else why
/// they were not approved, if they were not.
fn approve_rules(host: &mut Host) -> Option<Result<(), String>> {
    let waiting = host.config.tools.rules.waiting.clone()?;
    let env = |k: &str| std::env::var(k).ok();
    let root = host.shared.workspace.root().to_path_buf();
    Some(
        match crate::config::claude::approve(&waiting, &root, &env) {
            Ok(()) => {
                host.config.tools.rules.approve_waiting();
                Ok(())
            }
            Err(e) => Err(format!(
                "The project's permission rules were not approved: {e}"
            )),
        },
    )
}
