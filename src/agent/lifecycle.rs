//! A session's life in the engine: recorded from the start, reset by
//! `/new` (a new transcript), restored from a stored one (`-c`, `-r`,
//! `/resume`). Invariant: whichever way a session begins, the driver hears
//! `SessionStarted` first, and a restored one's history right after.

use super::reminders::Reminders;
use super::thread::{Host, Thread};
use super::{Agent, RESUME_NOTE, Session};
use crate::chat::Conversation;
use crate::checkpoint::History;
use crate::events::Event;
use crate::session::{Header, Restored, SessionError, SessionStore, now_ms, replay};
use crate::todo::{Author, Ledger, PlanDiff, TodoManager};

/// How the engine keeps its session.
pub enum SessionSetup {
    /// Not recorded (tests, embedding).
    Off,
    /// A new session, recorded in the store.
    New(SessionStore),
    /// A stored session continued (its transcript is appended to).
    Resume(SessionStore, Box<Restored>),
}

/// The note a resume adds: [`RESUME_NOTE`], and the plan's open items.
pub fn resume_note(plan: &TodoManager) -> String {
    let open = plan.open_items();
    if open.is_empty() {
        return RESUME_NOTE.to_string();
    }
    let mut note = RESUME_NOTE.trim_end_matches(']').to_string();
    note.push_str(" Open plan items:");
    for item in open {
        let state = if item.status == crate::todo::TodoStatus::InProgress {
            " (in progress)"
        } else {
            ""
        };
        note.push_str(&format!("\n- {}{state}", item.content));
    }
    note.push(']');
    note
}

impl Session {
    /// Forgets the conversation, the plan and the reminders, and starts a
    /// new transcript. The token totals stay: they count what this process
    /// spent, which a new session does not give back.
    pub(super) fn reset(&mut self) {
        let old = std::mem::take(&mut self.thread.plan.lock().manager);
        self.clear_state();
        self.thread.plan.lock().sync_file(true);
        self.emit(Event::PlanUpdated {
            items: Vec::new(),
            rendered: TodoManager::new().render(),
            diff: PlanDiff::between(old.items(), &[]),
            revision: 0,
            author: Author::Model,
            at: now_ms(),
            note: None,
        });
        // The old session's account ends with it.
        super::shared::lock(&self.thread.observers)
            .accounts
            .replace(Ledger::new());
        self.emit(Event::SessionReset);
        self.host.events.set_turns(0);
        if let Some(store) = &self.host.store {
            let lost = self
                .host
                .transcript
                .replace(store.create(header(&self.host, &self.thread)));
            self.host.warn_unsaved(lost);
        }
        self.announce(false, Vec::new(), History::default());
        super::shared::lock(&self.thread.left).source = Some("clear");
    }

    fn clear_state(&mut self) {
        self.thread.conversation = Conversation::default();
        self.thread.last_prompt = None;
        self.thread.compacted_to = None;
        if let Ok(mut slot) = self.host.requests.compact.lock() {
            *slot = None;
        }
        self.thread.reminders =
            Reminders::new(self.host.config.nag_every, self.host.config.nag_max);
        {
            let mut left = super::shared::lock(&self.thread.left);
            left.unsaid.clear();
            left.plan_notes.clear();
        }
        let mut plan = self.thread.plan.lock();
        plan.revision = 0;
        plan.user_changes.clear();
        plan.stats.clear();
        plan.proposed = None;
        plan.agreed = None;
        plan.checks = crate::todo::Checks::default();
        *self.host.requests.goal.lock() = None;
    }

    /// Says which session is recorded (drivers print it, and its id to resume).
    fn announce(&mut self, resumed: bool, notes: Vec<String>, checkpoints: History) {
        // The commands of a recorded session carry its id, so a resume
        // after a crash can find what they left running.
        let path = self.host.transcript.path();
        self.host.config.tools.session = path.as_ref().map(|_| self.host.transcript.id());
        let Some(path) = path else {
            return;
        };
        super::points::Points(self.voice()).open(checkpoints);
        let event = Event::SessionStarted {
            id: self.host.transcript.id(),
            path: path.display().to_string(),
            resumed,
            notes,
        };
        self.emit(event);
    }

    /// Continues `restored`: its conversation, plan and totals replace the
    /// current ones, its transcript is appended to (repairs first), and its
    /// history is sent to the driver.
    fn restore(&mut self, store: SessionStore, restored: Restored) -> Result<(), SessionError> {
        let transcript = restored.file.reopen()?;
        let Restored {
            file,
            conversation,
            plan,
            revisions,
            ledger,
            totals,
            history,
            turns,
            threads,
            repairs,
            notes,
            ..
        } = restored;
        let (id, checkpoints) = (file.header.id, file.checkpoints);
        self.clear_state();
        let lost = self.host.transcript.replace(transcript);
        self.host.warn_unsaved(lost);
        self.host.store = Some(store);
        self.thread.conversation = conversation;
        self.host.events.set_turns(turns);
        self.host.shared.tasks.numbered_from(threads);
        {
            let mut state = self.thread.plan.lock();
            state.manager = plan;
            state.revision = revisions;
            state.proposed = super::proposal::proposed_in(&history);
            state.agreed = super::proposal::agreed_in(&history);
            let mut goal = super::goal::restored(&history, &mut state.checks);
            if let Some(run) = goal.as_mut() {
                run.rebase(totals);
            }
            *self.host.requests.goal.lock() = goal;
            state.sync_file(true);
        }
        super::shared::lock(&self.thread.observers)
            .accounts
            .replace(ledger);
        self.thread.totals = totals;
        for record in &repairs {
            self.host.record(record);
        }
        if !repairs.is_empty() {
            self.host.sync_transcript();
        }
        // What the cut-off calls printed is in their repaired results now.
        if let Some(path) = self.host.transcript.path() {
            crate::session::live::forget(&path);
        }
        tracing::info!(session = %id, "session resumed");
        // What a crashed run of this session left running is stopped now,
        // before anything runs again, and the user is told.
        let mut notes = notes;
        let ended = crate::tools::procs::end_leftovers(&id);
        if !ended.is_empty() {
            notes.push(format!(
                "Still running from the run that stopped, and now stopped: {}.",
                ended.join(", ")
            ));
        }
        self.announce(true, notes, checkpoints);
        self.emit(Event::History { events: history });
        self.voice().send_stats();
        Ok(())
    }

    /// Opens the stored session whose id starts with `prefix`; it must be
    /// of this workspace.
    pub(super) fn open(&mut self, prefix: &str) -> Result<(), SessionError> {
        let store = self.host.store.clone().ok_or(SessionError::NoHome)?;
        let info = store.find(prefix)?;
        if info.card.id == self.host.transcript.id() {
            return Err(SessionError::AlreadyOpen(
                crate::session::short_id(&info.card.id).to_string(),
            ));
        }
        let here = self.host.shared.workspace.root().display().to_string();
        if info.card.workspace != here {
            return Err(SessionError::Damaged {
                id: info.card.id.clone(),
                why: format!(
                    "it belongs to {}; quit and run `waypoint -r {}` there",
                    info.card.workspace,
                    crate::session::short_id(&info.card.id)
                ),
            });
        }
        let restored = replay(crate::session::load(&info.path)?)?;
        self.restore(store, restored)
    }
}

impl Agent {
    /// Records the session as `setup` says (see [`SessionSetup`]); the
    /// `SessionStarted` event (and a resumed session's history) is sent now.
    pub fn keep_session(&mut self, setup: SessionSetup) -> Result<(), SessionError> {
        match setup {
            SessionSetup::Off => Ok(()),
            SessionSetup::New(store) => {
                let lost = self
                    .session
                    .host
                    .transcript
                    .replace(store.create(header(&self.session.host, &self.session.thread)));
                self.session.host.warn_unsaved(lost);
                self.session.host.store = Some(store);
                self.session.announce(false, Vec::new(), History::default());
                Ok(())
            }
            SessionSetup::Resume(store, restored) => self.session.restore(store, *restored),
        }
    }
}

/// A header for a new session of this workspace and client.
fn header(host: &Host, thread: &Thread) -> Header {
    Header::new(
        &crate::session::new_id(),
        &host.shared.workspace.root().display().to_string(),
        thread.client.provider(),
        thread.client.model(),
        now_ms(),
    )
}
