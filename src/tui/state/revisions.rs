//! The plan's revision history as the TUI received it: every accepted
//! `PlanUpdated` (model or user) with its number, author, time, items and
//! diff, and which one the plan pane shows. Invariants: revisions are kept
//! in the order they came, at most [`REVISIONS_CAP`] (the oldest go first);
//! `viewing` always indexes `list` or is `None` (the live plan).

use std::collections::VecDeque;

use crate::todo::{Author, PlanDiff, TodoItem};

/// Revisions kept for stepping back (a session rarely has more).
pub const REVISIONS_CAP: usize = 200;

/// One accepted plan revision.
#[derive(Clone, Debug, PartialEq)]
pub struct Revision {
    /// The engine's number (1, 2, … in the session; 0 when not told).
    pub revision: u32,
    pub author: Author,
    /// Unix milliseconds (0 when not told).
    pub at: u64,
    pub items: Vec<TodoItem>,
    pub diff: PlanDiff,
}

#[derive(Clone, Debug, Default)]
pub struct Revisions {
    pub list: VecDeque<Revision>,
    /// The revision shown instead of the live plan.
    pub viewing: Option<usize>,
}

impl Revisions {
    /// Keeps a new revision (the view stays on the one it showed).
    pub fn push(&mut self, revision: Revision) {
        if self.list.len() >= REVISIONS_CAP && self.list.pop_front().is_some() {
            self.viewing = self.viewing.map(|i| i.saturating_sub(1));
        }
        self.list.push_back(revision);
    }

    /// Forgets them all (another session, or a new one).
    pub fn clear(&mut self) {
        self.list.clear();
        self.viewing = None;
    }

    /// One revision back: from the live plan, the newest revision.
    pub fn older(&mut self) {
        self.viewing = match self.viewing {
            _ if self.list.is_empty() => None,
            None => Some(self.list.len() - 1),
            Some(i) => Some(i.saturating_sub(1)),
        };
    }

    /// One revision forward: past the newest, the live plan again.
    pub fn newer(&mut self) {
        self.viewing = self
            .viewing
            .and_then(|i| (i + 1 < self.list.len()).then_some(i + 1));
    }

    /// The revision shown, if not the live plan.
    pub fn shown(&self) -> Option<&Revision> {
        self.viewing.and_then(|i| self.list.get(i))
    }

    /// The number shown for the revision at `index` (its own, else its place).
    pub fn number(&self, index: usize) -> u32 {
        match self.list.get(index) {
            Some(r) if r.revision > 0 => r.revision,
            _ => u32::try_from(index + 1).unwrap_or(u32::MAX),
        }
    }

    /// The newest revision's number.
    pub fn latest(&self) -> u32 {
        self.list.len().checked_sub(1).map_or(0, |i| self.number(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(n: u32) -> Revision {
        Revision {
            revision: n,
            author: Author::Model,
            at: 0,
            items: Vec::new(),
            diff: PlanDiff::default(),
        }
    }

    #[test]
    fn stepping_goes_back_to_the_first_and_forward_to_live() {
        let mut r = Revisions::default();
        r.older();
        assert_eq!(r.viewing, None, "nothing to show");
        for n in 1..=3 {
            r.push(rev(n));
        }
        r.older();
        assert_eq!(r.viewing, Some(2));
        r.older();
        r.older();
        r.older();
        assert_eq!(r.viewing, Some(0));
        r.newer();
        r.newer();
        assert_eq!(r.shown().map(|s| s.revision), Some(3));
        r.newer();
        assert_eq!(r.viewing, None);
    }

    #[test]
    fn the_cap_drops_the_oldest_and_keeps_the_view() {
        let mut r = Revisions::default();
        for n in 1..=REVISIONS_CAP as u32 {
            r.push(rev(n));
        }
        r.viewing = Some(5);
        r.push(rev(999));
        assert_eq!(r.list.len(), REVISIONS_CAP);
        assert_eq!(r.shown().map(|s| s.revision), Some(6));
        assert_eq!(r.latest(), 999);
    }
}
