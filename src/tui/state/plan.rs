//! The plan pane's state. Invariant: `items` always equals the engine's
//! plan store (replaced whole from each `PlanUpdated`); nothing is parsed
//! from text. The selection names an item by id, so it follows the item
//! through rewordings and moves, and is gone when the item is.

use std::time::{Duration, Instant};

use super::revisions::Revisions;
use super::scroll::Scroll;
use crate::todo::{ItemStats, PlanDiff, TodoItem, TodoStatus};

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

#[derive(Debug)]
pub struct Checklist {
    pub items: Vec<TodoItem>,
    /// Items changed by the last update, with when.
    pub changed: Vec<(String, Change, Instant)>,
    /// What the last update dropped from the plan (contents), and when.
    pub removed: Vec<String>,
    pub removed_at: Option<Instant>,
    /// The item in progress and since when.
    pub active_since: Option<(String, Instant)>,
    pub collapsed: bool,
    /// Following: the item in progress stays in view.
    pub scroll: Scroll,
    /// The last turn ended with this many items open.
    pub stopped_open: Option<usize>,
    /// The last plan update was refused: its first clause (until the next
    /// accepted update).
    pub refused: Option<String>,
    /// What each item has cost (from the engine's `PlanStats`), the item
    /// whose clock ran then, and when they came.
    pub stats: Vec<ItemStats>,
    pub stats_running: Option<String>,
    pub stats_at: Option<Instant>,
    /// Every revision received, and the one shown instead of the live plan.
    pub revisions: Revisions,
    /// The selected item's id (the trace shows its calls).
    pub selected: Option<String>,
    /// Layouts keep the selected item in view (until the pane is scrolled).
    pub reveal: bool,
    /// The one-line prompt of an item being added or reworded.
    pub prompt: Option<PlanPrompt>,
    /// The last turn ended (not interrupted) with open items: the
    /// conversation shows the banner until a turn starts.
    pub finished_open: bool,
}

/// What the plan pane's prompt does with its text on Enter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// A new item after this (1-based) position; `None`: at the end.
    Add { after: Option<usize> },
    /// New text for item `n` (1-based).
    Reword { n: usize },
}

/// The plan pane's one-line prompt (typed text only, control characters
/// never enter it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanPrompt {
    pub kind: PromptKind,
    pub text: String,
}

impl Default for Checklist {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            changed: Vec::new(),
            removed: Vec::new(),
            removed_at: None,
            active_since: None,
            collapsed: false,
            scroll: Scroll::following(),
            stopped_open: None,
            refused: None,
            stats: Vec::new(),
            stats_running: None,
            stats_at: None,
            revisions: Revisions::default(),
            selected: None,
            reveal: false,
            prompt: None,
            finished_open: false,
        }
    }
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
    pub fn change_of(&self, id: &str, now: Instant) -> Option<Change> {
        self.changed
            .iter()
            .find(|(cid, _, at)| cid == id && now.saturating_duration_since(*at) < HIGHLIGHT_FOR)
            .map(|(_, c, _)| *c)
    }
    pub fn highlighting(&self, now: Instant) -> bool {
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
        // An id kept with other content the diff calls reworded is the
        // same item; one it does not (an older engine) is a new item, and
        // its old content is dropped.
        let said: Vec<String> = diff.reworded.iter().map(|r| r.to.clone()).collect();
        let mut reworded = Vec::new();
        let mut removed: Vec<String> = diff.removed.clone();
        for new in &items {
            if let Some(old) = self.items.iter().find(|o| o.id == new.id)
                && old.content != new.content
                && !said.contains(&new.content)
            {
                reworded.push(new.content.clone());
                if !items.iter().any(|i| i.content == old.content) {
                    removed.push(old.content.clone());
                }
            }
        }
        // Only work that went undone is flagged: a finished item may go.
        let finished = |content: &str| {
            self.items
                .iter()
                .any(|o| o.content == content && o.status == TodoStatus::Completed)
        };
        removed.retain(|r| !items.iter().any(|i| i.content == *r) && !finished(r));
        removed.dedup();
        for (list, change) in [
            (&reworded, Change::Added),
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
        self.changed = changed;
        self.removed_at = (!removed.is_empty()).then_some(now);
        self.removed = removed;
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
        self.stopped_open = None;
        self.refused = None;
    }

    /// Takes the engine's per-item account.
    pub fn set_stats(&mut self, stats: Vec<ItemStats>, running: Option<String>, now: Instant) {
        self.stats = stats;
        self.stats_running = running;
        self.stats_at = Some(now);
    }

    /// One item's account at `now` (the running item's time goes on).
    pub fn stats_of(&self, id: &str, now: Instant) -> Option<ItemStats> {
        let mut stats = self.stats.iter().find(|s| s.id == id)?.clone();
        if self.stats_running.as_deref() == Some(id)
            && let Some(at) = self.stats_at
        {
            let live = u64::try_from(now.saturating_duration_since(at).as_millis()).unwrap_or(0);
            stats.time_ms = stats.time_ms.saturating_add(live);
        }
        Some(stats)
    }

    /// The selected item's place (0-based) in the live plan.
    pub fn selected_index(&self) -> Option<usize> {
        let id = self.selected.as_deref()?;
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
