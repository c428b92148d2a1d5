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
            Context::PlanPrompt => "plan prompt",
            Context::Global => "",
            Context::Input => "input",
            Context::Pane => "panes",
            Context::Plan => "plan",
            Context::Tools => "tools",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Interrupt,
    Send,
    Resume,
    ClearOrQuit,
    Commands,
    Focus,
    NewLine,
    Page,
    Step,
    History,
    Edge,
    Expand,
    TogglePlan,
    ToggleReasoning,
    Redraw,
    Help,
    CommandMove,
    CommandComplete,
    CommandRun,
    CommandClose,
    Yes,
    No,
    HelpScroll,
    PickerMove,
    PickerPage,
    PickerEdge,
    PickerOpen,
    PickerAll,
    PickerClose,
    ApproveOnce,
    ApproveAlways,
    Refuse,
    RefuseStop,
    ApprovalScroll,
    ReasonSend,
    ReasonSkip,
    Mention,
    FileMove,
    FileInsert,
    FileClose,
    Editor,
    CopyReply,
    ToggleMouse,
    PlanRevision,
    PlanEdit,
    PromptSend,
    PromptCancel,
    OpenCell,
    CycleApproval,
}

impl Action {
    /// Every action; a test checks each has a binding.
    pub const ALL: [Action; 49] = [
        Action::Interrupt,
        Action::Send,
        Action::Resume,
        Action::ClearOrQuit,
        Action::Commands,
        Action::Focus,
        Action::NewLine,
        Action::Page,
        Action::Step,
        Action::History,
        Action::Edge,
        Action::Expand,
        Action::TogglePlan,
        Action::ToggleReasoning,
        Action::Redraw,
        Action::Help,
        Action::CommandMove,
        Action::CommandComplete,
        Action::CommandRun,
        Action::CommandClose,
        Action::Yes,
        Action::No,
        Action::HelpScroll,
        Action::PickerMove,
        Action::PickerPage,
        Action::PickerEdge,
        Action::PickerOpen,
        Action::PickerAll,
        Action::PickerClose,
        Action::ApproveOnce,
        Action::ApproveAlways,
        Action::Refuse,
        Action::RefuseStop,
        Action::ApprovalScroll,
        Action::ReasonSend,
        Action::ReasonSkip,
        Action::Mention,
        Action::FileMove,
        Action::FileInsert,
        Action::FileClose,
        Action::Editor,
        Action::CopyReply,
        Action::ToggleMouse,
        Action::PlanRevision,
        Action::PlanEdit,
        Action::PromptSend,
        Action::PromptCancel,
        Action::OpenCell,
        Action::CycleApproval,
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

pub struct Binding {
    pub context: Context,
    pub keys: &'static [Key],
    pub action: Action,
    pub help: &'static str,
}

impl Binding {
    /// `Tab/Shift+Tab`.
    pub fn keys_label(&self) -> String {
        self.keys
            .iter()
            .map(Key::label)
            .collect::<Vec<_>>()
            .join("/")
    }
}

const fn bind(
    context: Context,
    keys: &'static [Key],
    action: Action,
    help: &'static str,
) -> Binding {
    Binding {
        context,
        keys,
        action,
        help,
    }
}

/// The binding of `ev` in `context`, if any (exact modifiers first).
pub fn lookup(context: Context, ev: &KeyEvent) -> Option<&'static Binding> {
    let mut in_context = BINDINGS.iter().filter(|b| b.context == context);
    in_context
        .clone()
        .find(|b| b.keys.iter().any(|k| k.matches(ev, true)))
        .or_else(|| in_context.find(|b| b.keys.iter().any(|k| k.matches(ev, false))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Context::{Input, Pane};

    #[test]
    fn every_action_has_a_binding() {
        for action in Action::ALL {
            assert!(
                BINDINGS.iter().any(|b| b.action == action),
                "{action:?} has no key"
            );
        }
        // A new action must be added to ALL: this match has no wildcard.
        let index = |a: Action| match a {
            Action::Interrupt => 0,
            Action::Send => 1,
            Action::Resume => 2,
            Action::ClearOrQuit => 3,
            Action::Commands => 4,
            Action::Focus => 5,
            Action::NewLine => 6,
            Action::Page => 7,
            Action::Step => 8,
            Action::History => 9,
            Action::Edge => 10,
            Action::Expand => 11,
            Action::TogglePlan => 12,
            Action::ToggleReasoning => 13,
            Action::Redraw => 14,
            Action::Help => 15,
            Action::CommandMove => 16,
            Action::CommandComplete => 17,
            Action::CommandRun => 18,
            Action::CommandClose => 19,
            Action::Yes => 20,
            Action::No => 21,
            Action::HelpScroll => 22,
            Action::PickerMove => 23,
            Action::PickerPage => 24,
            Action::PickerEdge => 25,
            Action::PickerOpen => 26,
            Action::PickerAll => 27,
            Action::PickerClose => 28,
            Action::ApproveOnce => 29,
            Action::ApproveAlways => 30,
            Action::Refuse => 31,
            Action::RefuseStop => 32,
            Action::ApprovalScroll => 33,
            Action::ReasonSend => 34,
            Action::ReasonSkip => 35,
            Action::Mention => 36,
            Action::FileMove => 37,
            Action::FileInsert => 38,
            Action::FileClose => 39,
            Action::Editor => 40,
            Action::CopyReply => 41,
            Action::ToggleMouse => 42,
            Action::PlanRevision => 43,
            Action::PlanEdit => 44,
            Action::PromptSend => 45,
            Action::PromptCancel => 46,
            Action::OpenCell => 47,
            Action::CycleApproval => 48,
        };
        for (i, a) in Action::ALL.iter().enumerate() {
            assert_eq!(index(*a), i);
        }
    }

    #[test]
    fn a_key_names_one_action_per_context() {
        for (i, b) in BINDINGS.iter().enumerate() {
            for k in b.keys {
                assert_eq!(
                    lookup(b.context, &k.event()).map(|found| found.action),
                    Some(b.action),
                    "{} in {:?}",
                    k.label(),
                    b.context
                );
                for other in &BINDINGS[i + 1..] {
                    if other.context == b.context && other.action != b.action {
                        assert!(
                            !other.keys.contains(k),
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
        assert_eq!(lookup(Pane, &shift_g).map(|b| b.action), Some(Action::Edge));
        let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(
            lookup(Input, &alt_enter).map(|b| b.action),
            Some(Action::NewLine)
        );
        let ctrl_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::CONTROL);
        assert_eq!(
            lookup(Input, &ctrl_enter).map(|b| b.action),
            Some(Action::Send)
        );
        let ctrl_k = KeyEvent::new(KeyCode::Char('k'), KeyModifiers::CONTROL);
        assert_eq!(lookup(Pane, &ctrl_k).map(|b| b.action), None);
    }
}
