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
    /// `y`/Enter on a proposed plan (or `/approve` with no mode): approve
    /// it to run in `mode` (Tab chooses), from a fresh conversation when
    /// `fresh` (`f` switches).
    ApprovePlan {
        mode: crate::events::ApprovalMode,
        fresh: bool,
    },
}

/// The modes an approved plan can run in, in the order Tab steps through.
pub const RUN_MODES: [crate::events::ApprovalMode; 4] = [
    crate::events::ApprovalMode::Ask,
    crate::events::ApprovalMode::AutoEdit,
    crate::events::ApprovalMode::Auto,
    crate::events::ApprovalMode::Yolo,
];

impl Confirm {
    pub fn question(self) -> std::borrow::Cow<'static, str> {
        let text = match self {
            Confirm::NewSession => {
                "A turn is running. Stop it and start a new session (conversation and plan cleared)?"
            }
            Confirm::Undo => "Undo as shown above (files written back, conflicts left alone)?",
            Confirm::ForceDone { .. } => {
                "An ItemCompleting hook kept this item open (see the Tools pane). Complete it anyway, as your override (recorded)?"
            }
            Confirm::ApprovePlan { mode, fresh } => {
                let modes: Vec<String> = RUN_MODES
                    .iter()
                    .map(|m| match *m == mode {
                        true => format!("[{m}]"),
                        false => m.to_string(),
                    })
                    .collect();
                let context = match fresh {
                    true => {
                        "from a fresh conversation (the task, the research's summary and the plan)"
                    }
                    false => "in this conversation",
                };
                return format!(
                    "Approve the plan and run it in {mode} mode, {context}? Mode (Tab): {} · f: fresh context {}",
                    modes.join(" "),
                    if fresh { "on" } else { "off" }
                )
                .into();
            }
        };
        text.into()
    }

    /// Tab (or Shift+Tab, `back`) on the question: the next run mode of
    /// an approval; other questions have no choice.
    pub fn step(&mut self, back: bool) {
        if let Confirm::ApprovePlan { mode, .. } = self {
            let at = RUN_MODES.iter().position(|m| m == mode).unwrap_or(0);
            let n = RUN_MODES.len();
            *mode = RUN_MODES[if back { (at + n - 1) % n } else { (at + 1) % n }];
        }
    }

    /// `f` on the question: an approval's fresh context on or off.
    pub fn toggle(&mut self) {
        if let Confirm::ApprovePlan { fresh, .. } = self {
            *fresh = !*fresh;
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
    /// Ctrl+R's search of earlier prompts, when open.
    pub search: Option<super::HistorySearch>,
}
