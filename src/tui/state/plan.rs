//! The plan pane's state. Invariant: `items` always equals the engine's
//! plan store (replaced whole from each `PlanUpdated`); nothing is parsed
//! from text. The selection names an item by id, so it follows the item
//! through rewordings and moves, and is gone when the item is.

use std::time::{Duration, Instant};

use super::revisions::{Revision, Revisions};
use super::scroll::Scroll;
use super::trace::first_clause;
use crate::events::Event;
use crate::todo::{Forecast, ItemStats, PlanDiff, TodoItem, TodoStatus};

/// How long a changed plan item stays highlighted.
pub const HIGHLIGHT_FOR: Duration = Duration::from_millis(2500);
/// How long items dropped from the plan stay listed below it.
pub const REMOVED_FOR: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Added,
    /// Same item (id), new text.
    Reworded,
    Started,
    Completed,
}

/// The plan pane's state: the live plan, what its last update changed,
/// each item's account, its history and how the pane shows it.
#[derive(Debug, Default)]
pub struct Checklist {
    pub items: Vec<TodoItem>,
    /// What the last update changed, shown for a while.
    pub highlight: Highlight,
    /// The item in progress and since when.
    pub active_since: Option<(String, Instant)>,
    /// The last turn ended with this many items open.
    pub stopped_open: Option<usize>,
    /// The last plan update was refused: its first clause (until the next
    /// accepted update).
    pub refused: Option<String>,
    /// What each item has cost (from the engine's `PlanStats`).
    pub stats: ItemAccounts,
    /// Every revision received, and the one shown instead of the live plan.
    pub revisions: Revisions,
    /// The pane itself: folded or not, scrolled, selected, prompting.
    pub view: PlanView,
    /// The last turn ended (not interrupted) with open items: the
    /// conversation shows the banner until a turn starts.
    pub finished_open: bool,
    /// Items whose work `/undo item N` took back, with their status then:
    /// marked so until their status changes (reopened, started).
    pub undone: Vec<(String, TodoStatus)>,
    /// The plan is the model's proposal in plan mode (its revision),
    /// waiting for the user's approval.
    pub proposed: Option<u32>,
    /// The session's goal and each item's evidence.
    pub goal: super::goal::GoalView,
}

/// How the plan pane shows the plan: the user's choices, not the plan's.
#[derive(Debug)]
pub struct PlanView {
    pub collapsed: bool,
    /// Following: the item in progress stays in view.
    pub scroll: Scroll,
    /// The selected item's id (the trace shows its calls).
    pub selected: Option<String>,
    /// Layouts keep the selected item in view (until the pane is scrolled).
    pub reveal: bool,
    /// The one-line prompt of an item being added or reworded.
    pub prompt: Option<PlanPrompt>,
    /// The item `x` removed last, with its place (1-based): `u` puts it
    /// back, until the user selects or edits something else.
    pub removed: Option<(usize, TodoItem)>,
    /// The last frame folded the done items: the row the item in
    /// progress was drawn on (unfolding keeps it there).
    pub folded_row: Option<usize>,
}

impl Default for PlanView {
    fn default() -> Self {
        Self {
            collapsed: false,
            scroll: Scroll::following(),
            selected: None,
            reveal: false,
            prompt: None,
            removed: None,
            folded_row: None,
        }
    }
}

/// What the last plan update changed: items marked for
/// [`HIGHLIGHT_FOR`], dropped ones listed for [`REMOVED_FOR`].
#[derive(Debug, Default)]
pub struct Highlight {
    /// Items changed by the last update, with when.
    changed: Vec<(String, Change, Instant)>,
    /// What the last update dropped from the plan (contents), and when.
    removed: Vec<String>,
    removed_at: Option<Instant>,
}

impl Highlight {
    /// How item `id` changed, while that is still shown.
    pub fn change_of(&self, id: &str, now: Instant) -> Option<Change> {
        self.changed
            .iter()
            .find(|(cid, _, at)| cid == id && now.saturating_duration_since(*at) < HIGHLIGHT_FOR)
            .map(|(_, c, _)| *c)
    }

    /// Something is still shown changed or dropped (the screen animates).
    pub fn shown(&self, now: Instant) -> bool {
        self.changed
            .iter()
            .any(|(_, _, at)| now.saturating_duration_since(*at) < HIGHLIGHT_FOR)
            || !self.dropped(now).is_empty()
    }

    /// The items the last update dropped, while they are still shown.
    pub fn dropped(&self, now: Instant) -> &[String] {
        match self.removed_at {
            Some(at) if now.saturating_duration_since(at) < REMOVED_FOR => &self.removed,
            _ => &[],
        }
    }

    /// How many dropped items the pane makes room for (until the layout
    /// pass forgets them with [`Highlight::forget_expired`]).
    pub fn dropped_rows(&self) -> usize {
        self.removed.len()
    }

    /// Dropped items listed long enough make no more room for themselves.
    pub fn forget_expired(&mut self, now: Instant) {
        if self.dropped(now).is_empty() {
            self.removed.clear();
        }
    }

    /// Nothing changed just now (a resumed session's past).
    pub fn clear(&mut self) {
        self.changed.clear();
        self.removed.clear();
    }

    fn set(&mut self, changed: Vec<(String, Change, Instant)>, removed: Vec<String>, now: Instant) {
        self.changed = changed;
        self.removed_at = (!removed.is_empty()).then_some(now);
        self.removed = removed;
    }
}

/// What each plan item has cost, as the engine last said, and the item
/// whose clock ran then (its time goes on from when that was said).
#[derive(Debug, Default)]
pub struct ItemAccounts {
    items: Vec<ItemStats>,
    running: Option<String>,
    at: Option<Instant>,
    /// The rest of the plan as these accounts say (made when they come,
    /// never per frame).
    forecast: Option<Forecast>,
    /// The mean time of an item in this workspace's earlier sessions.
    prior_ms: Option<u64>,
}

impl ItemAccounts {
    /// Takes the engine's per-item account.
    pub fn set(&mut self, stats: Vec<ItemStats>, running: Option<String>, now: Instant) {
        self.forecast = crate::todo::forecast::forecast_from(&stats, self.prior_ms);
        self.items = stats;
        self.running = running;
        self.at = Some(now);
    }

    /// Earlier sessions' mean item time: the forecast stands on it until
    /// an item of this session is done.
    pub fn set_prior(&mut self, mean_ms: u64) {
        self.prior_ms = Some(mean_ms);
        self.forecast = crate::todo::forecast::forecast_from(&self.items, self.prior_ms);
    }

    /// What the rest of the plan will take, once an item is done.
    pub fn forecast(&self) -> Option<&Forecast> {
        self.forecast.as_ref()
    }

    /// One item's account at `now` (the running item's time goes on).
    pub fn of(&self, id: &str, now: Instant) -> Option<ItemStats> {
        let mut stats = self.items.iter().find(|s| s.id == id)?.clone();
        if self.running.as_deref() == Some(id)
            && let Some(at) = self.at
        {
            let live = u64::try_from(now.saturating_duration_since(at).as_millis()).unwrap_or(0);
            stats.time_ms = stats.time_ms.saturating_add(live);
        }
        Some(stats)
    }

    /// The item whose clock runs, if any.
    pub fn running(&self) -> Option<&str> {
        self.running.as_deref()
    }

    /// Forgets every account (another session's ids mean other items).
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// What the plan pane's prompt does with its text on Enter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// A new item after this (1-based) position; `None`: at the end.
    Add { after: Option<usize> },
    /// New text for item `n` (1-based).
    Reword { n: usize },
    /// Item `n`'s check (a command).
    Check { n: usize },
}

/// The plan pane's one-line prompt (typed text only, control characters
/// never enter it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanPrompt {
    pub kind: PromptKind,
    pub text: String,
}

impl Checklist {
    pub fn completed(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.status == TodoStatus::Completed)
            .count()
    }
    pub fn open(&self) -> usize {
        self.items.len() - self.completed()
    }
    pub fn active(&self) -> Option<&TodoItem> {
        self.items
            .iter()
            .find(|i| i.status == TodoStatus::InProgress)
    }
    /// How long the item in progress has been so, up to `until` (the clock
    /// stops when the turn does).
    pub fn active_for(&self, until: Instant) -> Duration {
        self.active_since
            .as_ref()
            .map(|(_, t)| until.saturating_duration_since(*t))
            .unwrap_or_default()
    }

    /// Takes the engine's new plan: highlights what changed, keeps the
    /// active item's clock when it is still the same item.
    pub fn update(&mut self, items: Vec<TodoItem>, diff: &PlanDiff, now: Instant) {
        let by_content = |content: &str| {
            items
                .iter()
                .find(|i| i.content == content)
                .map(|i| i.id.clone())
        };
        let mut changed = Vec::new();
        // The engine's diff says what changed (by id: an id kept with other
        // content is reworded, not new); it is taken as it is.
        let said: Vec<String> = diff.reworded.iter().map(|r| r.to.clone()).collect();
        let mut removed: Vec<String> = diff.removed.clone();
        // Only work that went undone is flagged: a finished item may go.
        let finished = |content: &str| {
            self.items
                .iter()
                .any(|o| o.content == content && o.status == TodoStatus::Completed)
        };
        removed.retain(|r| !items.iter().any(|i| i.content == *r) && !finished(r));
        removed.dedup();
        for (list, change) in [
            (&said, Change::Reworded),
            (&diff.added, Change::Added),
            (&diff.started, Change::Started),
            (&diff.completed, Change::Completed),
        ] {
            for content in list {
                if let Some(id) = by_content(content) {
                    changed.retain(|(cid, _, _)| *cid != id);
                    changed.push((id, change, now));
                }
            }
        }
        self.highlight.set(changed, removed, now);
        let active = items
            .iter()
            .find(|i| i.status == TodoStatus::InProgress)
            .map(|i| i.id.clone());
        self.active_since = match (active, self.active_since.take()) {
            (Some(id), Some((old, since))) if old == id => Some((id, since)),
            (Some(id), _) => Some((id, now)),
            (None, _) => None,
        };
        self.items = items;
        self.undone.retain(|(id, status)| {
            self.items
                .iter()
                .any(|i| i.id == *id && i.status == *status)
        });
        self.stopped_open = None;
        self.refused = None;
    }

    /// `/undo item N` took back item `id`'s work: it is marked so.
    pub fn mark_undone(&mut self, id: &str) {
        let Some(item) = self.items.iter().find(|i| i.id == id) else {
            return;
        };
        self.undone.retain(|(other, _)| other != id);
        self.undone.push((item.id.clone(), item.status));
    }

    /// Item `id`'s work was undone (and it has not moved on since).
    pub fn is_undone(&self, id: &str) -> bool {
        self.undone.iter().any(|(other, _)| other == id)
    }

    /// The selected item's place (0-based) in the live plan.
    pub fn selected_index(&self) -> Option<usize> {
        let id = self.view.selected.as_deref()?;
        self.items.iter().position(|i| i.id == id)
    }

    /// The conversation's banner shows: the last turn ended with items
    /// still open, and nothing runs.
    pub fn banner(&self, running: bool) -> bool {
        self.finished_open && !running && self.open() > 0
    }

    /// The turn ended: remember how many items it left open.
    pub fn stopped(&mut self) {
        let open = self.open();
        self.stopped_open = (open > 0).then_some(open);
    }
}

impl Checklist {
    /// The plan pane's part of an engine event: a new plan (kept as a
    /// revision too), the items' accounts, how the turn ended, a refused
    /// update (`refused`: the trace's reason), a new session. Whether the
    /// plan itself changed (the trace's filter follows it).
    pub fn apply(&mut self, event: &Event, refused: Option<&str>, now: Instant) -> bool {
        if let Some(reason) = refused {
            self.refused = Some(first_clause(reason).to_string());
        }
        self.goal.apply(event);
        match event {
            Event::TurnStarted { .. } => {
                self.stopped_open = None;
                self.finished_open = false;
            }
            Event::PlanUpdated {
                items,
                diff,
                revision,
                author,
                at,
                ..
            } => {
                if *author == crate::todo::Author::Model && self.proposed != Some(*revision) {
                    self.proposed = None;
                }
                self.revisions.push(Revision {
                    revision: *revision,
                    author: *author,
                    at: *at,
                    items: items.clone(),
                    diff: diff.clone(),
                });
                self.update(items.clone(), diff, now);
                return true;
            }
            Event::PlanProposed { revision } => self.proposed = Some(*revision),
            Event::PlanApproved { .. } => self.proposed = None,
            Event::PlanStats { items, running } => {
                self.stats.set(items.clone(), running.clone(), now);
            }
            Event::TurnComplete { open_items, .. } => {
                self.stopped_open = (*open_items > 0).then_some(*open_items);
                self.finished_open = *open_items > 0;
            }
            Event::TurnAborted { .. } => self.stopped(),
            Event::SessionReset => {
                // The engine dropped the plan (an empty `PlanUpdated` came first).
                self.stopped_open = None;
                self.proposed = None;
                self.forget_history();
                return true;
            }
            _ => {}
        }
        false
    }

    /// Another session (or a new one): no revisions, accounts, selection,
    /// prompt or banner (the old session's ids mean other items).
    pub fn forget_history(&mut self) {
        self.revisions.clear();
        self.stats.clear();
        self.view.selected = None;
        self.view.prompt = None;
        self.view.removed = None;
        self.undone.clear();
        self.finished_open = false;
        self.goal.clear();
    }
}
