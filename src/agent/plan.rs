//! The engine's side of the plan: revisions announced with their number,
//! author and time; the user's edits applied at once (even mid-turn) and
//! told to the model at its next step; the per-item account kept from the
//! same records a replay reads. Invariants: a user's revision is recorded
//! before any record that follows it in time is written by a later step
//! (it is settled before every request, after every tool call and before a
//! turn's end); the model hears about every user change exactly once, with
//! the plan as it is then.

use std::sync::Arc;
use std::time::Duration;

use super::Outbox;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::voice::Voice;
use crate::events::{ErrorKind, Event};
use crate::session::now_ms;
use crate::todo::file::PlanFile;
use crate::todo::{Author, SharedPlan};

/// How often the plan file is looked at for the user's edits.
const PLAN_FILE_POLL: Duration = Duration::from_millis(500);
use crate::tools::PlanChange;

pub(super) use super::plan_edit::apply_user_edit;

impl Session {
    /// What the user changed in the plan since the model last heard, with
    /// the plan as it is now; `None` when nothing changed.
    pub(super) fn take_plan_note(&mut self) -> Option<String> {
        self.voice().settle_user_changes();
        let mut by_user = Vec::new();
        let mut by_file = Vec::new();
        let mut by_skill = Vec::new();
        for (author, before, after) in
            std::mem::take(&mut super::shared::lock(&self.thread.left).unsaid)
        {
            let lines = crate::todo::net_change(&before, &after);
            match author {
                Author::PlanFile => by_file.extend(lines),
                Author::Skill => by_skill.extend(lines),
                // The model said it itself (the plan block shows it).
                Author::Reply => {}
                Author::User | Author::Model | Author::Approved => by_user.extend(lines),
            }
        }
        // Edits that undid each other leave nothing to say.
        let mut said = Vec::new();
        if !by_user.is_empty() {
            said.push(format!(
                "The user changed the plan: {}.",
                by_user.join("; ")
            ));
        }
        if !by_skill.is_empty() {
            said.push(format!(
                "The skill you loaded proposed a plan (its author's, not the user's; check it against what the user asked): {}.",
                by_skill.join("; ")
            ));
        }
        if !by_file.is_empty() {
            said.push(format!(
                "The plan file was changed while a tool ran (by a tool or a script, not necessarily the user): {}.",
                by_file.join("; ")
            ));
        }
        if said.is_empty() {
            return None;
        }
        let rendered = self.thread.plan.lock().manager.render();
        let keep = if self.host.config.plan.tool {
            "; the plan is yours to keep up to date with todo_write"
        } else {
            ""
        };
        Some(format!(
            "[{} Take it into account{keep}.]\n\nCurrent plan:\n{rendered}",
            said.join(" ")
        ))
    }
}

/// Announces (and records) the model's accepted plan write.
pub(super) fn model_revision(voice: Voice<'_>, change: &PlanChange) {
    voice.emit(Event::PlanUpdated {
        items: change.items.clone(),
        rendered: change.rendered.clone(),
        diff: change.diff.clone(),
        revision: change.revision,
        author: Author::Model,
        at: now_ms(),
        note: None,
    });
    super::proposal::after_model_revision(voice, change.revision);
}

/// Starts keeping the plan file (`plan_file` in the config): written
/// now and on every revision, and looked at twice a second for the
/// user's edits, which become user revisions. Returns what stops the
/// watching; `None` when there is no plan file (or it is refused).
pub(super) fn start_plan_file(voice: Voice<'_>) -> Option<CancellationToken> {
    let Voice { host, thread } = voice;
    let wanted = host.config.plan.file.clone()?;
    let path = match host.shared.workspace.resolve(&wanted.display().to_string()) {
        Ok(path) => path,
        Err(why) => {
            let _ = host.events.send(Event::Error {
                kind: ErrorKind::PlanFile,
                message: format!("No plan file is kept: {why}."),
            });
            return None;
        }
    };
    let rel = host.shared.workspace.relative(&path).to_path_buf();
    let file = match PlanFile::open(host.shared.workspace.files().clone(), rel) {
        Ok(file) => Arc::new(file),
        Err(why) => {
            let _ = host.events.send(Event::Error {
                kind: ErrorKind::PlanFile,
                message: format!("No plan file is kept: {why}."),
            });
            return None;
        }
    };
    {
        let mut state = thread.plan.lock();
        state.file = Some(file.clone());
        state.sync_file(true);
    }
    voice.send_stats();
    let cancel = CancellationToken::new();
    tokio::spawn(watch(
        file,
        thread.plan.clone(),
        host.events.clone(),
        cancel.clone(),
    ));
    Some(cancel)
}

/// Reads the user's edits of the plan file back as user revisions.
async fn watch(file: Arc<PlanFile>, plan: SharedPlan, events: Outbox, cancel: CancellationToken) {
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(PLAN_FILE_POLL) => {}
        }
        // Whoever changed the file since the last look: a tool, if one ran.
        let author = plan.lock().file_author();
        let items = plan.items();
        let Some(edits) = file.read_back(&items) else {
            continue;
        };
        let mut changed = false;
        for edit in &edits {
            let event = apply_user_edit(&plan, edit, author);
            changed |= matches!(event, Event::PlanUpdated { .. });
            if !events.send(event) {
                return;
            }
        }
        if !changed {
            // Nothing to take from it (a line deleted, say): the file shows
            // the live plan again.
            plan.lock().sync_file(true);
        }
    }
}
