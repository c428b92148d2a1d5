//! The TUI's state: everything the screen shows, and nothing else. A small
//! root holds one struct per pane (conversation, trace, plan, input,
//! status, overlays); each pane's update and render read only their own
//! state plus a read-only [`Ctx`]. Invariant: no I/O here (spill files and
//! other side effects are `Effect`s the app loop carries out), and what is
//! typed in the input box is never dropped by anything but the user.

pub mod approval;
pub mod conversation;
pub mod files;
pub mod input;
pub mod output;
pub mod overlays;
pub mod picker;
pub mod plan;
pub mod revisions;
pub mod scroll;
pub mod status;
pub mod trace;

use std::time::Instant;

use super::style::Palette;

pub use approval::{ApprovalRequest, Approvals, BodyCache};
pub use conversation::{ConvEntry, Conversation, EntryKind, NoticeKind, Wrapped};
pub use files::FilePicker;
pub use input::{HISTORY_CAP, Input, PASTE_LINES, Pasted};
pub use output::{OUTPUT_MEMORY_CAP, OutputLog, Spill};
pub use overlays::{Confirm, Overlays, Popup};
pub use picker::{PICKER_PAGE, Picker};
pub use plan::{Change, Checklist, HIGHLIGHT_FOR, PlanPrompt, PromptKind};
pub use revisions::{REVISIONS_CAP, Revision, Revisions};
pub use scroll::Scroll;
pub use status::{Activity, ModelUsage, QUIT_ARM_FOR, Status};
pub use trace::{DiffCache, Trace, TraceEntry, TraceStatus, first_clause};

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
}

impl Ctx<'_> {
    pub fn focused(&self, focus: Focus) -> bool {
        self.focus == focus
    }
}

pub struct App {
    pub palette: Palette,
    pub focus: Focus,
    pub conversation: Conversation,
    pub trace: Trace,
    pub plan: Checklist,
    pub input: Input,
    pub status: Status,
    pub overlays: Overlays,
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
            conversation: Conversation::default(),
            trace: Trace::default(),
            plan: Checklist::default(),
            input: Input::default(),
            status: Status::new(model.into(), workspace.into(), now),
            overlays: Overlays::default(),
        }
    }

    pub fn ctx(&self, now: Instant) -> Ctx<'_> {
        Ctx {
            palette: self.palette,
            focus: self.focus,
            now,
            running: self.status.running,
            clock_until: self.status.clock_until(now),
            model: &self.status.model,
            workspace: &self.status.workspace,
            instructions: &self.status.instructions,
            waiting: self.overlays.approvals.is_open(),
        }
    }

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.conversation.notice(kind, text);
    }

    /// Something on screen changes with time alone (spinner, timers, highlight).
    pub fn animating(&self, now: Instant) -> bool {
        self.status.running
            || self.conversation.highlighting
            || self.status.activity == Activity::Compacting
            || self.plan.highlighting(now)
            || self.status.quit_armed(now)
    }
}
