//! What opens over the panes: the key help, the slash-command popup, a
//! confirmation question, the session picker, the `@` file picker and the approval prompt. Invariant: the popup holds only its selection;
//! whether it is open and what it lists follow from the input text.

/// A question the user answers with y or n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirm {
    /// `/new` while a turn runs: interrupt it and start afresh?
    NewSession,
    /// An undo's preview is shown: write the files back?
    Undo,
    /// `d` on item `n`, which an `ItemCompleting` hook kept open last:
    /// complete it anyway (the user's override)?
    ForceDone { n: usize },
}

impl Confirm {
    pub fn question(self) -> &'static str {
        match self {
            Confirm::NewSession => {
                "A turn is running. Stop it and start a new session (conversation and plan cleared)?"
            }
            Confirm::Undo => "Undo as shown above (files written back, conflicts left alone)?",
            Confirm::ForceDone { .. } => {
                "An ItemCompleting hook kept this item open (see the Tools pane). Complete it anyway, as your override (recorded)?"
            }
        }
    }
}

/// An undo asked for: the op, and once previewed, what it will do in a
/// line (the question shows it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingUndo {
    pub op: crate::events::CheckpointOp,
    pub summary: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Popup {
    /// The highlighted match.
    pub selected: usize,
    /// The input text Esc closed the popup for; it reopens when the text changes.
    pub dismissed_for: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overlays {
    pub help: bool,
    /// Where the help is scrolled to (it may be taller than the terminal).
    pub help_scroll: super::Scroll,
    pub popup: Popup,
    pub confirm: Option<Confirm>,
    /// The undo asked for, until it is previewed and answered.
    pub undo: Option<PendingUndo>,
    /// The session picker, when open.
    pub picker: Option<super::Picker>,
    /// Tool calls waiting for approval (the prompt shows while any does).
    pub approvals: super::Approvals,
    /// The `@` file picker, while a mention is typed.
    pub files: Option<super::FilePicker>,
}
