//! The session picker (`/resume`, `waypoint -r`): the stored sessions as
//! read once when it opened, this workspace's only unless "all
//! workspaces" is on, filtered by what is typed (an id prefix or words of
//! the first prompt). Invariant: it holds a listing, never reads one, and
//! only a session of this workspace can be chosen to open.

use crate::session::SessionInfo;
use crate::text::clean_line;

/// Rows PgUp/PgDn move the selection.
pub const PICKER_PAGE: usize = 10;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Picker {
    /// Every stored session, the most recent first (as `SessionStore::list` gave them).
    pub sessions: Vec<SessionInfo>,
    /// The workspace the app runs in (as session cards write it).
    pub workspace: String,
    /// The session open now, if any (marked in the list).
    pub current: Option<String>,
    /// Show every workspace's sessions, not only this one's.
    pub all: bool,
    /// What is typed: an id prefix or words of the first prompt.
    pub filter: String,
    /// Index into [`Picker::shown`].
    pub selected: usize,
    /// When the listing was read (Unix ms): "5 min ago" counts from here.
    pub now_ms: u64,
    /// Why the listing could not be read, if it could not.
    pub error: Option<String>,
}

impl Picker {
    pub fn new(sessions: Vec<SessionInfo>, workspace: impl Into<String>, now_ms: u64) -> Self {
        Self {
            sessions,
            workspace: workspace.into(),
            now_ms,
            ..Self::default()
        }
    }

    /// Whether `info` belongs to the app's workspace.
    pub fn here(&self, info: &SessionInfo) -> bool {
        info.card.workspace == self.workspace
    }

    /// How many sessions this workspace has (whatever is shown).
    pub fn here_count(&self) -> usize {
        self.sessions.iter().filter(|s| self.here(s)).count()
    }

    /// The sessions listed now, in order.
    pub fn shown(&self) -> Vec<&SessionInfo> {
        let filter = self.filter.trim().to_lowercase();
        self.sessions
            .iter()
            .filter(|s| self.all || self.here(s))
            .filter(|s| filter.is_empty() || matches(s, &filter))
            .collect()
    }

    /// The highlighted session.
    pub fn chosen(&self) -> Option<&SessionInfo> {
        let shown = self.shown();
        let last = shown.len().checked_sub(1)?;
        shown.get(self.selected.min(last)).copied()
    }

    /// Moves the selection by `delta` rows, stopping at either end.
    pub fn step(&mut self, delta: isize) {
        let last = self.shown().len().saturating_sub(1);
        let at = self.selected.min(last);
        self.selected = at.saturating_add_signed(delta).min(last);
    }

    /// To the first (`true`) or last row.
    pub fn edge(&mut self, top: bool) {
        self.selected = if top {
            0
        } else {
            self.shown().len().saturating_sub(1)
        };
    }

    /// Switches between this workspace and all of them, keeping the
    /// highlighted session when it is still listed.
    pub fn toggle_all(&mut self) {
        let id = self.chosen().map(|s| s.card.id.clone());
        self.all = !self.all;
        self.select_id(id.as_deref());
    }

    pub fn push_filter(&mut self, c: char) {
        let id = self.chosen().map(|s| s.card.id.clone());
        self.filter.push(c);
        self.select_id(id.as_deref());
    }

    pub fn pop_filter(&mut self) {
        let id = self.chosen().map(|s| s.card.id.clone());
        self.filter.pop();
        self.select_id(id.as_deref());
    }

    fn select_id(&mut self, id: Option<&str>) {
        self.selected = id
            .and_then(|id| self.shown().iter().position(|s| s.card.id == id))
            .unwrap_or(0);
    }
}

/// An id starting with `filter`, or a first prompt or model containing it.
fn matches(info: &SessionInfo, filter: &str) -> bool {
    let c = &info.card;
    c.id.to_lowercase().starts_with(filter)
        || c.first_prompt
            .as_deref()
            .is_some_and(|p| clean_line(p).to_lowercase().contains(filter))
        || clean_line(&c.model).to_lowercase().contains(filter)
}
