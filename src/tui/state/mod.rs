//! The TUI's state: everything the screen shows, and nothing else. A small
//! root holds one struct per pane (input, status, overlays) and a
//! [`ThreadView`] per agent thread (its conversation, trace and plan: the
//! root thread's, and any child's); each pane's update and render read
//! only their own state plus a read-only [`Ctx`]. Invariant: no I/O here (spill files and
//! other side effects are `Effect`s the app loop carries out), and what is
//! typed in the input box is never dropped by anything but the user.

pub mod approval;
pub mod conversation;
pub mod files;
pub mod goal;
pub mod history_search;
pub mod input;
pub mod output;
pub mod overlays;
pub mod picker;
pub mod plan;
pub mod revisions;
pub mod scroll;
pub mod status;
pub mod thread;
pub mod trace;

use std::time::Instant;

use super::style::Palette;

pub use approval::{ApprovalRequest, Approvals, BodyCache};
pub use conversation::{ConvEntry, Conversation, EntryKind, LayoutIndex, NoticeKind, Wrapped};
pub use files::FilePicker;
pub use goal::GoalView;
pub use history_search::{HistorySearch, PROMPTS_CAP, Prompt};
pub use input::{HISTORY_CAP, Input, PASTE_LINES, Pasted};
pub use output::{OUTPUT_MEMORY_CAP, OutputLog, Spill};
pub use overlays::{Confirm, Overlays, PendingUndo, Popup};
pub use picker::{PICKER_PAGE, Picker};
pub use plan::{
    Change, Checklist, HIGHLIGHT_FOR, Highlight, ItemAccounts, PlanPrompt, PlanView, PromptKind,
};
pub use revisions::{REVISIONS_CAP, Revision, Revisions};
pub use scroll::Scroll;
pub use status::{
    Accounts, Activity, ModelUsage, Place, Presence, QUIT_ARM_FOR, Status, Turn, UiFlags,
};
pub use thread::{ChildEnd, ChildLive, ChildThread, NestedPlan, ThreadView, Threads};
pub use trace::{
    CallClock, DiffCache, PlanLink, ToolCell, Trace, TraceChange, TraceEntry, TraceStatus,
    first_clause,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Input,
    Conversation,
    Checklist,
    Trace,
}

impl Focus {
    pub fn next(self) -> Self {
        match self {
            Focus::Input => Focus::Conversation,
            Focus::Conversation => Focus::Checklist,
            Focus::Checklist => Focus::Trace,
            Focus::Trace => Focus::Input,
        }
    }
}

/// What every pane may read besides its own state.
#[derive(Clone, Copy, Debug)]
pub struct Ctx<'a> {
    pub palette: Palette,
    pub focus: Focus,
    pub now: Instant,
    /// A turn runs (spinners turn, clocks tick).
    pub running: bool,
    /// Where clocks stop: `now` while a turn runs, else when it ended.
    pub clock_until: Instant,
    pub model: &'a str,
    pub workspace: &'a str,
    /// The project instructions files in the system prompt (path, bytes).
    pub instructions: &'a [(String, u64)],
    /// A tool call waits for the user's approval (nothing runs).
    pub waiting: bool,
    /// The subagents: a task call's expanded view lists its child's calls.
    pub threads: &'a Threads,
    /// The session's goal: its status line part.
    pub goal: Option<&'a GoalView>,
}

impl Ctx<'_> {
    pub fn focused(&self, focus: Focus) -> bool {
        self.focus == focus
    }
}

/// Everything the screen shows: the root thread's panes, the other
/// threads', the input, the status line and what opens over them.
pub struct App {
    pub palette: Palette,
    pub focus: Focus,
    /// The root thread's panes: the conversation with the user, its tool
    /// trace and its plan.
    pub root: ThreadView,
    /// The other threads' views (subagents), by id.
    pub threads: Threads,
    pub input: Input,
    pub status: Status,
    pub overlays: Overlays,
    /// When to send a terminal notification (never, unless set up).
    pub notify: crate::tui::notify::Notifier,
}

impl App {
    pub fn new(
        model: impl Into<String>,
        workspace: impl Into<String>,
        palette: Palette,
        now: Instant,
    ) -> Self {
        Self {
            palette,
            focus: Focus::Input,
            root: ThreadView::default(),
            threads: Threads::default(),
            input: Input::default(),
            status: Status::new(model.into(), workspace.into(), now),
            overlays: Overlays::default(),
            notify: crate::tui::notify::Notifier::default(),
        }
    }

    pub fn ctx(&self, now: Instant) -> Ctx<'_> {
        Ctx {
            palette: self.palette,
            focus: self.focus,
            now,
            running: self.status.turn.running(),
            clock_until: self.status.turn.clock_until(now),
            model: self.status.accounts.model(),
            workspace: self.status.place.workspace(),
            instructions: self.status.place.instructions(),
            waiting: self.overlays.approvals.is_open(),
            threads: &self.threads,
            goal: Some(&self.root.plan.goal).filter(|g| g.is_set()),
        }
    }

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.root.conversation.notice(kind, text);
    }

    /// Something on screen changes with time alone (spinner, timers, highlight).
    pub fn animating(&self, now: Instant) -> bool {
        self.status.turn.running()
            || self.root.conversation.highlighting
            || *self.status.turn.activity() == Activity::Compacting
            || self.root.plan.highlight.shown(now)
            || self.status.ui.quit_armed(now)
    }
}
