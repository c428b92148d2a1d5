//! The one table of key bindings: each row is a context, its keys, the
//! action and the help text. `update::on_key` resolves keys through it and
//! the `?` overlay and the README are generated from it, so help can never
//! disagree with the keys. Invariant: within one context a key names at
//! most one action, and every [`Action`] has a binding.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod bindings;
mod docs;
pub use bindings::BINDINGS;
pub use docs::{help_rows, markdown_table};

/// Where a binding applies. Earlier contexts win: an open popup before the
/// global keys, the global keys before the focused pane's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// The approval prompt is open (a tool call waits).
    Approval,
    /// A refusal reason is being typed in the approval prompt.
    Reason,
    /// The `?` help is open (a key it does not scroll with closes it).
    Help,
    /// A yes/no question is open.
    Confirm,
    /// The session picker is open (typed text filters it).
    Picker,
    /// The slash-command list is open over the input.
    Commands,
    /// The `@` file list is open over the input.
    Files,
    /// Ctrl+R's search of earlier prompts is open (typed text searches).
    Search,
    /// The plan pane's one-line prompt is open (an item's text is typed).
    PlanPrompt,
    /// Everywhere.
    Global,
    /// The input box has the focus.
    Input,
    /// A pane other than the input has the focus.
    Pane,
    /// The plan pane has the focus.
    Plan,
    /// The tool trace has the focus.
    Tools,
}

impl Context {
    pub fn label(self) -> &'static str {
        match self {
            Context::Approval => "approval",
            Context::Reason => "refusal reason",
            Context::Help => "help",
            Context::Confirm => "question",
            Context::Picker => "sessions",
            Context::Commands => "command list",
            Context::Files => "file list",
            Context::Search => "prompt search",
            Context::PlanPrompt => "plan prompt",
            Context::Global => "",
            Context::Input => "input",
            Context::Pane => "panes",
            Context::Plan => "plan",
            Context::Tools => "tools",
        }
    }
}

/// What a key does, with what the key itself says (which way, which
/// edit): the update runs an action without looking at the key again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Interrupt,
    Send,
    Resume,
    ClearOrQuit,
    Commands,
    Focus,
    NewLine,
    /// A page of the focused pane up or down.
    Page {
        up: bool,
    },
    /// One line (or entry, or plan item) up or down.
    Step {
        up: bool,
    },
    /// The previous (`older`) or next message of the input history.
    History {
        older: bool,
    },
    /// The top or the bottom of the focused pane.
    Edge {
        top: bool,
    },
    Expand,
    TogglePlan,
    ToggleReasoning,
    Redraw,
    /// `typed`: the key is a character, typed instead into a non-empty input.
    Help {
        typed: bool,
    },
    CommandMove {
        up: bool,
    },
    CommandComplete,
    CommandRun,
    CommandClose,
    Yes,
    No,
    HelpScroll {
        up: bool,
        page: bool,
    },
    /// `typed`: a letter, typed into the filter once one is typed.
    PickerMove {
        up: bool,
        typed: bool,
    },
    PickerPage {
        up: bool,
    },
    /// The first (`up`) or last session.
    PickerEdge {
        up: bool,
    },
    PickerOpen,
    PickerAll,
    PickerClose,
    ApproveOnce,
    ApproveAlways,
    Refuse,
    RefuseStop,
    ApprovalScroll {
        up: bool,
        page: bool,
    },
    ReasonSend,
    ReasonSkip,
    Mention,
    FileMove {
        up: bool,
    },
    /// `or_send`: with nothing to insert, the key goes on (Enter sends).
    FileInsert {
        or_send: bool,
    },
    FileClose,
    /// Ctrl+R in the input: search the earlier prompts.
    SearchHistory,
    /// The next (further down) or previous match of the prompt search.
    SearchMove {
        next: bool,
    },
    /// The chosen prompt into the input (not sent).
    SearchAccept,
    /// Close the search; the input stays as typed.
    SearchClose,
    Editor,
    CopyReply,
    /// Ctrl+V: the clipboard's image into the input.
    PasteImage,
    ToggleMouse,
    PlanRevision {
        older: bool,
    },
    PlanEdit(ItemEdit),
    PromptSend,
    PromptCancel,
    OpenCell,
    CycleApproval,
    /// `y` in the plan pane: approve the proposed plan.
    ApprovePlan,
    /// Tab on a question with a choice (an approval's run mode).
    ConfirmStep {
        back: bool,
    },
    /// `f` on a plan's approval: fresh context on or off.
    ConfirmFresh,
}

/// A plan pane key's edit of the selected item (or the one in progress).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemEdit {
    /// A new item after the selection (at the end without one).
    Add,
    /// New text for the item.
    Reword,
    /// Done, or open again.
    ToggleDone,
    Remove,
    MoveDown,
    MoveUp,
    /// Undo the files the item's calls changed (preview first).
    Undo,
    /// Set the item's check (the command that proves it done).
    Check,
}

impl Action {
    /// Every action a key can name; a test checks each has a binding and
    /// each kind of action is here.
    pub const ALL: [Action; 86] = [
        Action::Interrupt,
        Action::Send,
        Action::Resume,
        Action::ClearOrQuit,
        Action::Commands,
        Action::Focus,
        Action::NewLine,
        Action::Page { up: true },
        Action::Page { up: false },
        Action::Step { up: true },
        Action::Step { up: false },
        Action::History { older: true },
        Action::History { older: false },
        Action::Edge { top: true },
        Action::Edge { top: false },
        Action::Expand,
        Action::TogglePlan,
        Action::ToggleReasoning,
        Action::Redraw,
        Action::Help { typed: false },
        Action::Help { typed: true },
        Action::CommandMove { up: true },
        Action::CommandMove { up: false },
        Action::CommandComplete,
        Action::CommandRun,
        Action::CommandClose,
        Action::Yes,
        Action::No,
        Action::HelpScroll {
            up: true,
            page: false,
        },
        Action::HelpScroll {
            up: false,
            page: false,
        },
        Action::HelpScroll {
            up: true,
            page: true,
        },
        Action::HelpScroll {
            up: false,
            page: true,
        },
        Action::PickerMove {
            up: true,
            typed: false,
        },
        Action::PickerMove {
            up: false,
            typed: false,
        },
        Action::PickerMove {
            up: true,
            typed: true,
        },
        Action::PickerMove {
            up: false,
            typed: true,
        },
        Action::PickerPage { up: true },
        Action::PickerPage { up: false },
        Action::PickerEdge { up: true },
        Action::PickerEdge { up: false },
        Action::PickerOpen,
        Action::PickerAll,
        Action::PickerClose,
        Action::ApproveOnce,
        Action::ApproveAlways,
        Action::Refuse,
        Action::RefuseStop,
        Action::ApprovalScroll {
            up: true,
            page: false,
        },
        Action::ApprovalScroll {
            up: false,
            page: false,
        },
        Action::ApprovalScroll {
            up: true,
            page: true,
        },
        Action::ApprovalScroll {
            up: false,
            page: true,
        },
        Action::ReasonSend,
        Action::ReasonSkip,
        Action::Mention,
        Action::FileMove { up: true },
        Action::FileMove { up: false },
        Action::FileInsert { or_send: false },
        Action::FileInsert { or_send: true },
        Action::FileClose,
        Action::Editor,
        Action::CopyReply,
        Action::PasteImage,
        Action::ToggleMouse,
        Action::PlanRevision { older: true },
        Action::PlanRevision { older: false },
        Action::PlanEdit(ItemEdit::Add),
        Action::PlanEdit(ItemEdit::Reword),
        Action::PlanEdit(ItemEdit::ToggleDone),
        Action::PlanEdit(ItemEdit::Remove),
        Action::PlanEdit(ItemEdit::MoveDown),
        Action::PlanEdit(ItemEdit::MoveUp),
        Action::ApprovePlan,
        Action::ConfirmStep { back: false },
        Action::ConfirmStep { back: true },
        Action::ConfirmFresh,
        Action::PlanEdit(ItemEdit::Undo),
        Action::PlanEdit(ItemEdit::Check),
        Action::PromptSend,
        Action::PromptCancel,
        Action::OpenCell,
        Action::CycleApproval,
        Action::SearchHistory,
        Action::SearchMove { next: true },
        Action::SearchMove { next: false },
        Action::SearchAccept,
        Action::SearchClose,
    ];
}

/// One key with the modifiers it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const fn plain(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ch(c: char) -> Key {
    plain(KeyCode::Char(c))
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

const fn with(code: KeyCode, mods: KeyModifiers) -> Key {
    Key { code, mods }
}

const CHORD: KeyModifiers = KeyModifiers::CONTROL.union(KeyModifiers::ALT);

impl Key {
    /// Whether `ev` is this key. Characters ignore Shift (terminals differ on
    /// reporting it for `G` or `?`) but never Ctrl or Alt; other keys bound
    /// without modifiers accept any (Ctrl+PgUp still pages), unless a
    /// binding with those modifiers exists (`exact` is tried first).
    pub fn matches(&self, ev: &KeyEvent, exact: bool) -> bool {
        if self.code != ev.code {
            return false;
        }
        let mods = ev.modifiers & (CHORD | KeyModifiers::SHIFT);
        match self.code {
            KeyCode::Char(_) | KeyCode::BackTab => {
                mods.difference(KeyModifiers::SHIFT) == self.mods.difference(KeyModifiers::SHIFT)
            }
            _ if exact => mods == self.mods,
            _ => self.mods.is_empty() || mods.contains(self.mods),
        }
    }

    /// How the help writes it: `Ctrl+R`, `Shift+Enter`, `PgUp`, `?`.
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift+Tab".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut out = String::new();
        for (m, label) in [
            (KeyModifiers::CONTROL, "Ctrl+"),
            (KeyModifiers::ALT, "Alt+"),
            (KeyModifiers::SHIFT, "Shift+"),
        ] {
            if self.mods.contains(m) {
                out.push_str(label);
            }
        }
        out + &name
    }

    /// The key event this key stands for (for tests and the initial prompt).
    pub fn event(&self) -> KeyEvent {
        KeyEvent::new(self.code, self.mods)
    }
}

/// One row of the table: keys of one context, each with the action it
/// names, and the help text they share.
pub struct Binding {
    pub context: Context,
    pub keys: &'static [(Key, Action)],
    pub help: &'static str,
}

impl Binding {
    /// `Tab/Shift+Tab`.
    pub fn keys_label(&self) -> String {
        self.keys
            .iter()
            .map(|(k, _)| k.label())
            .collect::<Vec<_>>()
            .join("/")
    }
}

const fn bind(context: Context, keys: &'static [(Key, Action)], help: &'static str) -> Binding {
    Binding {
        context,
        keys,
        help,
    }
}

/// The action `ev` names in `context`, if any (exact modifiers first).
pub fn lookup(context: Context, ev: &KeyEvent) -> Option<Action> {
    let in_context = || {
        BINDINGS
            .iter()
            .filter(move |b| b.context == context)
            .flat_map(|b| b.keys.iter())
    };
    in_context()
        .find(|(k, _)| k.matches(ev, true))
        .or_else(|| in_context().find(|(k, _)| k.matches(ev, false)))
        .map(|&(_, action)| action)
}

/// What a key no binding took types into a one-line text field (a
/// filter, a reason, a plan item): a character, or Backspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typed {
    Char(char),
    Backspace,
}

/// The text edit `ev` makes in a one-line field; chords and other keys
/// make none.
pub fn typed(ev: &KeyEvent) -> Option<Typed> {
    let chord = ev.modifiers.intersects(CHORD);
    match ev.code {
        KeyCode::Char(c) if !chord && !c.is_control() => Some(Typed::Char(c)),
        KeyCode::Backspace => Some(Typed::Backspace),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Context::{Input, Pane};

    #[test]
    fn every_action_has_a_binding() {
        let bound = |action: Action| {
            BINDINGS
                .iter()
                .any(|b| b.keys.iter().any(|&(_, a)| a == action))
        };
        for action in Action::ALL {
            assert!(bound(action), "{action:?} has no key");
        }
        for b in BINDINGS {
            for (k, action) in b.keys {
                assert!(Action::ALL.contains(action), "{} in ALL", k.label());
            }
        }
        // A new action must be added to ALL: this match has no wildcard.
        let kind = |a: Action| match a {
            Action::Interrupt => 0,
            Action::Send => 1,
            Action::Resume => 2,
            Action::ClearOrQuit => 3,
            Action::Commands => 4,
            Action::Focus => 5,
            Action::NewLine => 6,
            Action::Page { .. } => 7,
            Action::Step { .. } => 8,
            Action::History { .. } => 9,
            Action::Edge { .. } => 10,
            Action::Expand => 11,
            Action::TogglePlan => 12,
            Action::ToggleReasoning => 13,
            Action::Redraw => 14,
            Action::Help { .. } => 15,
            Action::CommandMove { .. } => 16,
            Action::CommandComplete => 17,
            Action::CommandRun => 18,
            Action::CommandClose => 19,
            Action::Yes => 20,
            Action::No => 21,
            Action::HelpScroll { .. } => 22,
            Action::PickerMove { .. } => 23,
            Action::PickerPage { .. } => 24,
            Action::PickerEdge { .. } => 25,
            Action::PickerOpen => 26,
            Action::PickerAll => 27,
            Action::PickerClose => 28,
            Action::ApproveOnce => 29,
            Action::ApproveAlways => 30,
            Action::Refuse => 31,
            Action::RefuseStop => 32,
            Action::ApprovalScroll { .. } => 33,
            Action::ReasonSend => 34,
            Action::ReasonSkip => 35,
            Action::Mention => 36,
            Action::FileMove { .. } => 37,
            Action::FileInsert { .. } => 38,
            Action::FileClose => 39,
            Action::Editor => 40,
            Action::CopyReply => 41,
            Action::ToggleMouse => 42,
            Action::PlanRevision { .. } => 43,
            Action::PlanEdit(_) => 44,
            Action::PromptSend => 45,
            Action::PromptCancel => 46,
            Action::OpenCell => 47,
            Action::CycleApproval => 48,
            Action::PasteImage => 49,
            Action::ApprovePlan => 50,
            Action::ConfirmStep { .. } => 51,
            Action::ConfirmFresh => 52,
            Action::SearchHistory => 53,
            Action::SearchMove { .. } => 54,
            Action::SearchAccept => 55,
            Action::SearchClose => 56,
        };
        let kinds: std::collections::BTreeSet<usize> = Action::ALL.into_iter().map(kind).collect();
        assert_eq!(kinds, (0..57).collect());
    }

    #[test]
    fn a_key_names_one_action_per_context() {
        for (i, b) in BINDINGS.iter().enumerate() {
            for (k, action) in b.keys {
                assert_eq!(
                    lookup(b.context, &k.event()),
                    Some(*action),
                    "{} in {:?}",
                    k.label(),
                    b.context
                );
                for other in &BINDINGS[i + 1..] {
                    if other.context == b.context {
                        assert!(
                            !other.keys.iter().any(|(o, a)| o == k && a != action),
                            "{} is bound twice in {:?}",
                            k.label(),
                            b.context
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn modifiers_are_matched_as_terminals_send_them() {
        let shift_g = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(lookup(Pane, &shift_g), Some(Action::Edge { top: false }));
        let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(lookup(Input, &alt_enter), Some(Action::NewLine));
        let ctrl_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::CONTROL);
        assert_eq!(lookup(Input, &ctrl_enter), Some(Action::Send));
        let ctrl_k = KeyEvent::new(KeyCode::Char('k'), KeyModifiers::CONTROL);
        assert_eq!(lookup(Pane, &ctrl_k), None);
        let ctrl_x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL);
        assert_eq!(typed(&ctrl_x), None);
        assert_eq!(
            typed(&KeyEvent::new(KeyCode::Char('X'), KeyModifiers::SHIFT)),
            Some(Typed::Char('X'))
        );
    }
}
