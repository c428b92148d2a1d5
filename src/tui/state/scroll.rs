//! A vertical scroll position. Invariant: `seen` and `shown` are written
//! only by the layout pass that runs before each frame (never while
//! rendering), so scrolling moves from exactly what the user sees.

/// Following means "stick to the bottom"; otherwise `top` stays put while
/// content grows below it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scroll {
    pub top: usize,
    pub follow: bool,
    /// Content and viewport height seen at the last layout.
    pub seen: (usize, usize),
    /// The first line shown at the last layout (what scrolling moves from).
    pub shown: usize,
}

impl Scroll {
    pub fn following() -> Self {
        Self {
            follow: true,
            ..Self::default()
        }
    }

    pub fn top_only() -> Self {
        Self::default()
    }

    /// The first visible line for `total` lines in `height` rows; records both.
    pub fn resolve(&mut self, total: usize, height: usize) -> usize {
        self.seen = (total, height);
        let max_top = max_top(total, height);
        let top = if self.follow {
            max_top
        } else {
            self.top.min(max_top)
        };
        self.shown = top;
        top
    }

    /// Like [`Scroll::resolve`], but following keeps lines `anchor` (all of
    /// them when they fit, else their start) in view instead of the bottom.
    pub fn resolve_around(
        &mut self,
        total: usize,
        height: usize,
        anchor: std::ops::Range<usize>,
    ) -> usize {
        if !self.follow {
            return self.resolve(total, height);
        }
        self.seen = (total, height);
        let top = anchor
            .end
            .saturating_sub(height)
            .min(anchor.start)
            .min(max_top(total, height));
        self.shown = top;
        top
    }

    /// The first visible line at the last layout.
    fn current_top(&self) -> usize {
        self.shown.min(self.max_top())
    }

    /// The last possible first line at the last layout.
    fn max_top(&self) -> usize {
        max_top(self.seen.0, self.seen.1)
    }

    pub fn up(&mut self, n: usize) {
        self.top = self.current_top().saturating_sub(n);
        self.follow = false;
    }

    pub fn down(&mut self, n: usize, sticky: bool) {
        let max_top = self.max_top();
        self.top = (self.current_top() + n).min(max_top);
        self.follow = sticky && self.top >= max_top;
    }

    pub fn home(&mut self) {
        self.top = 0;
        self.follow = false;
    }

    pub fn end(&mut self, sticky: bool) {
        self.top = self.max_top();
        self.follow = sticky;
    }

    /// One line or one page up or down (not sticking to the bottom): a
    /// scroll key in an overlay.
    pub fn step(&mut self, up: bool, page: bool) {
        let n = if page { self.page() } else { 1 };
        if up {
            self.up(n);
        } else {
            self.down(n, false);
        }
    }

    pub fn page(&self) -> usize {
        self.seen.1.saturating_sub(1).max(1)
    }
}

/// The last possible first line for `total` lines in `height` rows.
fn max_top(total: usize, height: usize) -> usize {
    total.saturating_sub(height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_keeps_its_place_while_content_grows() {
        let mut s = Scroll::following();
        assert_eq!(s.resolve(100, 10), 90);
        s.up(5);
        assert_eq!(s.resolve(100, 10), 85);
        // More output arrives: the view does not move.
        assert_eq!(s.resolve(150, 10), 85);
        s.end(true);
        assert_eq!(s.resolve(200, 10), 190);
        s.up(1);
        s.down(100, true);
        assert!(s.follow);
    }
}
