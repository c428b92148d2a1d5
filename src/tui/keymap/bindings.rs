//! The key table itself: every binding of every context, most important
//! first. Invariant: no key does two things in one context, and every
//! action has a binding (both checked by the keymap's tests).

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use super::{Action, Binding, Context, bind, ch, ctrl, plain, with};

use Context::{
    Approval, Commands, Confirm, Files, Global, Help, Input, Pane, Picker, Plan, PlanPrompt,
    Reason, Tools,
};

/// Most important first: a small terminal shows the top of the help.
pub const BINDINGS: &[Binding] = &[
    bind(
        Global,
        &[plain(KeyCode::Esc)],
        Action::Interrupt,
        "close a view or selection, else interrupt",
    ),
    bind(
        Input,
        &[plain(KeyCode::Enter)],
        Action::Send,
        "send; empty after a stop: resume",
    ),
    bind(
        Global,
        &[ctrl('r')],
        Action::Resume,
        "resume where it stopped, plan intact",
    ),
    bind(
        Global,
        &[ctrl('c')],
        Action::ClearOrQuit,
        "interrupt a turn; idle: clear input, twice quits",
    ),
    bind(
        Input,
        &[ch('/')],
        Action::Commands,
        "slash commands (at the start of the input)",
    ),
    bind(
        Global,
        &[plain(KeyCode::Tab)],
        Action::Focus,
        "next pane; completes /approval and /model",
    ),
    bind(
        Global,
        &[plain(KeyCode::BackTab)],
        Action::CycleApproval,
        "approval mode: ask, auto-edit, auto, read-only",
    ),
    bind(
        Input,
        &[
            with(KeyCode::Enter, KeyModifiers::ALT),
            with(KeyCode::Enter, KeyModifiers::SHIFT),
            ctrl('j'),
        ],
        Action::NewLine,
        "new line in the input",
    ),
    bind(
        Global,
        &[plain(KeyCode::PageUp), plain(KeyCode::PageDown)],
        Action::Page,
        "scroll the focused pane (also wheel)",
    ),
    bind(
        Pane,
        &[ch('k'), ch('j'), plain(KeyCode::Up), plain(KeyCode::Down)],
        Action::Step,
        "scroll; in tools: select a call; in the plan: an item, tools show its calls (Esc: all)",
    ),
    bind(
        Input,
        &[plain(KeyCode::Up), plain(KeyCode::Down)],
        Action::History,
        "input history",
    ),
    bind(
        Pane,
        &[plain(KeyCode::Home), plain(KeyCode::End), ch('g'), ch('G')],
        Action::Edge,
        "top / bottom (End follows new output)",
    ),
    bind(
        Tools,
        &[plain(KeyCode::Enter), ch(' ')],
        Action::Expand,
        "expand or fold the selected output",
    ),
    bind(
        Pane,
        &[plain(KeyCode::Enter)],
        Action::OpenCell,
        "the latest call's whole output (conversation)",
    ),
    bind(
        Global,
        &[ctrl('t')],
        Action::TogglePlan,
        "collapse the plan to one line",
    ),
    bind(
        Plan,
        &[ch('c')],
        Action::TogglePlan,
        "collapse the plan to one line",
    ),
    bind(
        Plan,
        &[ch('['), ch(']')],
        Action::PlanRevision,
        "older / newer plan revision with its changes (Esc: live)",
    ),
    bind(
        Plan,
        &[ch('a'), ch('e'), ch('d'), ch('x'), ch('J'), ch('K')],
        Action::PlanEdit,
        "add after the selection, edit, done, remove, move down / up",
    ),
    bind(
        PlanPrompt,
        &[plain(KeyCode::Enter)],
        Action::PromptSend,
        "add or reword the item as typed",
    ),
    bind(
        PlanPrompt,
        &[plain(KeyCode::Esc)],
        Action::PromptCancel,
        "cancel the plan edit",
    ),
    bind(
        Global,
        &[ctrl('o')],
        Action::ToggleReasoning,
        "show or fold reasoning and summaries",
    ),
    bind(Global, &[ctrl('l')], Action::Redraw, "redraw the screen"),
    bind(
        Input,
        &[ch('@')],
        Action::Mention,
        "pick a file to mention (at a word's start)",
    ),
    bind(
        Global,
        &[ctrl('g')],
        Action::Editor,
        "edit the message in $VISUAL or $EDITOR (else vi)",
    ),
    bind(
        Global,
        &[ctrl('y')],
        Action::CopyReply,
        "copy the last reply to the clipboard (OSC 52)",
    ),
    bind(
        Global,
        &[plain(KeyCode::F(2))],
        Action::ToggleMouse,
        "mouse capture on/off (off: select text)",
    ),
    bind(
        Global,
        &[plain(KeyCode::F(1))],
        Action::Help,
        "this help; any key closes it",
    ),
    bind(
        Input,
        &[ch('?')],
        Action::Help,
        "this help (on an empty input)",
    ),
    bind(Pane, &[ch('?')], Action::Help, "this help"),
    bind(
        Commands,
        &[plain(KeyCode::Up), plain(KeyCode::Down)],
        Action::CommandMove,
        "choose a command",
    ),
    bind(
        Commands,
        &[plain(KeyCode::Tab)],
        Action::CommandComplete,
        "complete the chosen command",
    ),
    bind(
        Commands,
        &[plain(KeyCode::Enter)],
        Action::CommandRun,
        "run the chosen command",
    ),
    bind(
        Commands,
        &[plain(KeyCode::Esc)],
        Action::CommandClose,
        "close the list (the text stays)",
    ),
    bind(
        Files,
        &[plain(KeyCode::Up), plain(KeyCode::Down)],
        Action::FileMove,
        "choose a file",
    ),
    bind(
        Files,
        &[plain(KeyCode::Tab), plain(KeyCode::Enter)],
        Action::FileInsert,
        "insert the chosen path (a folder: go on in it)",
    ),
    bind(
        Files,
        &[plain(KeyCode::Esc)],
        Action::FileClose,
        "close the list (the text stays)",
    ),
    bind(
        Confirm,
        &[ch('y'), plain(KeyCode::Enter)],
        Action::Yes,
        "answer yes",
    ),
    bind(
        Confirm,
        &[ch('n'), plain(KeyCode::Esc)],
        Action::No,
        "answer no",
    ),
    bind(
        Help,
        &[
            plain(KeyCode::Down),
            plain(KeyCode::Up),
            plain(KeyCode::PageDown),
            plain(KeyCode::PageUp),
        ],
        Action::HelpScroll,
        "scroll the help (any other key closes it)",
    ),
    bind(
        Picker,
        &[plain(KeyCode::Up), plain(KeyCode::Down), ch('k'), ch('j')],
        Action::PickerMove,
        "choose a session (j/k until a filter is typed)",
    ),
    bind(
        Picker,
        &[plain(KeyCode::PageUp), plain(KeyCode::PageDown)],
        Action::PickerPage,
        "a page of sessions up or down",
    ),
    bind(
        Picker,
        &[plain(KeyCode::Home), plain(KeyCode::End)],
        Action::PickerEdge,
        "first / last session",
    ),
    bind(
        Picker,
        &[plain(KeyCode::Enter)],
        Action::PickerOpen,
        "open the chosen session (this workspace's)",
    ),
    bind(
        Picker,
        &[plain(KeyCode::Tab), plain(KeyCode::BackTab)],
        Action::PickerAll,
        "this workspace's sessions or all of them",
    ),
    bind(
        Picker,
        &[plain(KeyCode::Esc)],
        Action::PickerClose,
        "close the picker; typing filters by id or prompt",
    ),
    bind(
        Approval,
        &[ch('y')],
        Action::ApproveOnce,
        "run this tool call once",
    ),
    bind(
        Approval,
        &[ch('a')],
        Action::ApproveAlways,
        "run it, and calls like it for the session (the prompt says which)",
    ),
    bind(
        Approval,
        &[ch('n')],
        Action::Refuse,
        "refuse it; then type an optional reason",
    ),
    bind(
        Approval,
        &[plain(KeyCode::Esc)],
        Action::RefuseStop,
        "refuse it and interrupt the turn",
    ),
    bind(
        Approval,
        &[
            plain(KeyCode::Up),
            plain(KeyCode::Down),
            plain(KeyCode::PageUp),
            plain(KeyCode::PageDown),
        ],
        Action::ApprovalScroll,
        "scroll a long command or diff",
    ),
    bind(
        Reason,
        &[plain(KeyCode::Enter)],
        Action::ReasonSend,
        "send the refusal with the reason typed",
    ),
    bind(
        Reason,
        &[plain(KeyCode::Esc)],
        Action::ReasonSkip,
        "send the refusal without a reason",
    ),
];
