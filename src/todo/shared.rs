//! The session's plan as the engine shares it: the turn (through the plan
//! tools) and the op dispatcher (through the user's edits) both change it,
//! so it lives behind one lock. Invariants: every accepted change, by the
//! model or the user, takes the next revision number under the lock; a
//! user's change waits in `user_changes` until the session has recorded it
//! and told the model; the lock is never held across an `.await`.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::file::PlanFile;
use super::{ItemStats, TodoItem, TodoManager};

/// A user revision not yet recorded (and not yet told to the model).
#[derive(Clone, Debug, PartialEq)]
pub struct UserChange {
    /// The plan before the change and after it.
    pub before: Vec<TodoItem>,
    pub items: Vec<TodoItem>,
    /// `added "Update the README" after item 3`.
    pub description: String,
    /// The plan after it, rendered, and what changed.
    pub rendered: String,
    pub diff: super::PlanDiff,
    pub revision: u32,
    pub at: u64,
    /// The user, or the plan file changed while a tool ran.
    pub author: super::Author,
}

/// What the lock guards.
#[derive(Debug, Default)]
pub struct PlanState {
    pub manager: TodoManager,
    /// The last revision number handed out (0: none yet).
    pub revision: u32,
    pub user_changes: Vec<UserChange>,
    /// The per-item account as last computed by the session (for `todo_read`).
    pub stats: Vec<ItemStats>,
    /// The Markdown copy kept in the workspace (`--plan-file`).
    pub file: Option<Arc<PlanFile>>,
    /// Why the plan file could not be written last (until reported).
    pub file_error: Option<String>,
    /// Tool calls running now, and whether one ran since the plan file
    /// was last looked at: its changes then are not the user's for sure.
    pub tools_running: u32,
    pub tool_since_look: bool,
    /// The items subagents run for now: one id per running child.
    pub busy: Vec<String>,
    /// The plan is the model's proposal in plan mode, waiting for the
    /// user's approval (the revision that proposed it).
    pub proposed: Option<u32>,
    /// The plan the user approved, with the changes accepted since: what
    /// the model's writes are held to (none: no plan was approved).
    pub agreed: Option<Vec<super::TodoItem>>,
    /// The evidence that items are done: their checks' last runs, the
    /// checks approved to run unasked, the items accepted without one.
    pub checks: super::Checks,
}

impl PlanState {
    /// Who changed the plan file, as the watcher found it now: the plan
    /// file itself while a tool runs or if one ran since the last look,
    /// else the user. Starts the next look.
    pub fn file_author(&mut self) -> super::Author {
        let author = if self.tools_running > 0 || self.tool_since_look {
            super::Author::PlanFile
        } else {
            super::Author::User
        };
        self.tool_since_look = self.tools_running > 0;
        author
    }

    /// Why the plan as it stands may not be kept: an item is completed
    /// while subagents started for it still run.
    pub fn busy_refusal(&self) -> Option<String> {
        self.manager.items().iter().enumerate().find_map(|(at, item)| {
            let running = self.busy.iter().filter(|id| **id == item.id).count();
            (running > 0 && item.status == super::TodoStatus::Completed).then(|| {
                let (who, verb) = match running {
                    1 => ("1 subagent".to_string(), "runs"),
                    n => (format!("{n} subagents"), "run"),
                };
                format!(
                    "item {} (\"{}\") cannot be completed while {who} started for it still {verb}; complete it once they have returned",
                    at + 1,
                    crate::text::clean_line(&item.content)
                )
            })
        })
    }

    /// Hands out the next revision number (and brings the plan file up
    /// to date).
    pub fn next_revision(&mut self) -> u32 {
        self.revision = self.revision.saturating_add(1);
        self.sync_file(false);
        self.revision
    }

    /// Writes the plan file, if there is one (`force`: even over edits not
    /// read back yet).
    pub fn sync_file(&mut self, force: bool) {
        if let Some(file) = &self.file
            && let Err(e) = file.write(self.manager.items(), force)
        {
            tracing::warn!(error = %e, "plan file not written");
            self.file_error = Some(e);
        }
    }
}

/// A handle on the session's plan; clones share it.
#[derive(Clone, Debug, Default)]
pub struct SharedPlan(Arc<Mutex<PlanState>>);

impl SharedPlan {
    /// The plan, for a moment (a panic elsewhere while it was held does not
    /// make it unusable: every change is whole or not at all).
    pub fn lock(&self) -> MutexGuard<'_, PlanState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of the current items.
    pub fn items(&self) -> Vec<TodoItem> {
        self.lock().manager.items().to_vec()
    }

    /// Marks a tool call running until the guard is dropped (however the
    /// call ends): plan-file changes meanwhile are the plan file's.
    pub fn tool_running(&self) -> ToolRunning {
        {
            let mut state = self.lock();
            state.tools_running = state.tools_running.saturating_add(1);
            state.tool_since_look = true;
        }
        ToolRunning(self.clone())
    }
}

/// A tool call running (see [`SharedPlan::tool_running`]).
#[derive(Debug)]
pub struct ToolRunning(SharedPlan);

impl Drop for ToolRunning {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.tools_running = state.tools_running.saturating_sub(1);
    }
}
