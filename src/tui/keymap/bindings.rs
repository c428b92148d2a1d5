//! The key table itself: every binding of every context, most important
//! first; each key names its action with what the key says (which way,
//! which edit). Invariant: no key does two things in one context, and
//! every action has a binding (both checked by the keymap's tests).

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use super::{Action, Binding, Context, ItemEdit, bind, ch, ctrl, plain, with};

use Context::{
    Approval, Commands, Confirm, Files, Global, Help, Input, Pane, Picker, Plan, PlanPrompt,
    Reason, Search, Tools,
};

/// Most important first: a small terminal shows the top of the help.
pub const BINDINGS: &[Binding] = &[
    bind(
        Global,
        &[(plain(KeyCode::Esc), Action::Interrupt)],
        "close a view or selection, else interrupt",
    ),
    bind(
        Input,
        &[(plain(KeyCode::Enter), Action::Send)],
        "send; empty after a stop: resume",
    ),
    bind(
        Global,
        &[(plain(KeyCode::F(5)), Action::Resume)],
        "resume where it stopped, plan intact",
    ),
    bind(
        Input,
        &[(ctrl('r'), Action::SearchHistory)],
        "search earlier prompts (this project's first, then all)",
    ),
    bind(
        Global,
        &[(ctrl('c'), Action::ClearOrQuit)],
        "interrupt a turn; idle: clear input, twice quits",
    ),
    bind(
        Input,
        &[(ch('/'), Action::Commands)],
        "slash commands (at the start of the input)",
    ),
    bind(
        Global,
        &[(plain(KeyCode::Tab), Action::Focus)],
        "next pane; completes /approval and /model",
    ),
    bind(
        Global,
        &[(plain(KeyCode::BackTab), Action::CycleApproval)],
        "approval mode: ask, auto-edit, auto, read-only",
    ),
    bind(
        Input,
        &[
            (with(KeyCode::Enter, KeyModifiers::ALT), Action::NewLine),
            (with(KeyCode::Enter, KeyModifiers::SHIFT), Action::NewLine),
            (ctrl('j'), Action::NewLine),
        ],
        "new line in the input",
    ),
    bind(
        Global,
        &[
            (plain(KeyCode::PageUp), Action::Page { up: true }),
            (plain(KeyCode::PageDown), Action::Page { up: false }),
        ],
        "scroll the focused pane (also wheel)",
    ),
    bind(
        Pane,
        &[
            (ch('k'), Action::Step { up: true }),
            (ch('j'), Action::Step { up: false }),
            (plain(KeyCode::Up), Action::Step { up: true }),
            (plain(KeyCode::Down), Action::Step { up: false }),
        ],
        "scroll; in tools: select a call; in the plan: an item, tools show its calls (Esc: all)",
    ),
    bind(
        Input,
        &[
            (plain(KeyCode::Up), Action::History { older: true }),
            (plain(KeyCode::Down), Action::History { older: false }),
        ],
        "input history",
    ),
    bind(
        Pane,
        &[
            (plain(KeyCode::Home), Action::Edge { top: true }),
            (plain(KeyCode::End), Action::Edge { top: false }),
            (ch('g'), Action::Edge { top: true }),
            (ch('G'), Action::Edge { top: false }),
        ],
        "top / bottom (End follows new output)",
    ),
    bind(
        Tools,
        &[
            (plain(KeyCode::Enter), Action::Expand),
            (ch(' '), Action::Expand),
        ],
        "expand or fold the selected output",
    ),
    bind(
        Pane,
        &[(plain(KeyCode::Enter), Action::OpenCell)],
        "the latest call's whole output (conversation)",
    ),
    bind(
        Global,
        &[(ctrl('t'), Action::TogglePlan)],
        "collapse the plan to one line",
    ),
    bind(
        Plan,
        &[(ch('c'), Action::TogglePlan)],
        "collapse the plan to one line",
    ),
    bind(
        Plan,
        &[
            (ch('['), Action::PlanRevision { older: true }),
            (ch(']'), Action::PlanRevision { older: false }),
        ],
        "older / newer plan revision with its changes (Esc: live)",
    ),
    bind(
        Plan,
        &[
            (ch('a'), Action::PlanEdit(ItemEdit::Add)),
            (ch('e'), Action::PlanEdit(ItemEdit::Reword)),
            (ch('d'), Action::PlanEdit(ItemEdit::ToggleDone)),
            (ch('x'), Action::PlanEdit(ItemEdit::Remove)),
            (ch('J'), Action::PlanEdit(ItemEdit::MoveDown)),
            (ch('K'), Action::PlanEdit(ItemEdit::MoveUp)),
        ],
        "add after the selection, edit, done, remove, move down / up",
    ),
    bind(
        Plan,
        &[
            (ch('y'), Action::ApprovePlan),
            (plain(KeyCode::Enter), Action::ApprovePlan),
        ],
        "approve the proposed plan (plan mode): asks the mode it runs in, fresh context or not",
    ),
    bind(
        Plan,
        &[(ch('v'), Action::PlanEdit(ItemEdit::Check))],
        "set the selected item's check: the command whose success proves it done (goals)",
    ),
    bind(
        Plan,
        &[(ch('u'), Action::PlanEdit(ItemEdit::Undo))],
        "undo the selected item's file changes (a preview asks first); after `x`, put it back",
    ),
    bind(
        PlanPrompt,
        &[(plain(KeyCode::Enter), Action::PromptSend)],
        "add or reword the item as typed",
    ),
    bind(
        PlanPrompt,
        &[(plain(KeyCode::Esc), Action::PromptCancel)],
        "cancel the plan edit",
    ),
    bind(
        Global,
        &[(ctrl('o'), Action::ToggleReasoning)],
        "show or fold reasoning and summaries",
    ),
    bind(Global, &[(ctrl('l'), Action::Redraw)], "redraw the screen"),
    bind(
        Input,
        &[(ch('@'), Action::Mention)],
        "pick a file to mention (at a word's start)",
    ),
    bind(
        Global,
        &[(ctrl('g'), Action::Editor)],
        "edit the message in $VISUAL or $EDITOR (else vi)",
    ),
    bind(
        Global,
        &[(ctrl('y'), Action::CopyReply)],
        "copy the last reply to the clipboard (OSC 52)",
    ),
    bind(
        Input,
        &[(ctrl('v'), Action::PasteImage)],
        "paste the clipboard's image (or paste / drop an image's path)",
    ),
    bind(
        Global,
        &[(plain(KeyCode::F(2)), Action::ToggleMouse)],
        "mouse capture on/off (off: select text)",
    ),
    bind(
        Global,
        &[(plain(KeyCode::F(1)), Action::Help { typed: false })],
        "this help; any key closes it",
    ),
    bind(
        Input,
        &[(ch('?'), Action::Help { typed: true })],
        "this help (on an empty input)",
    ),
    bind(
        Pane,
        &[(ch('?'), Action::Help { typed: true })],
        "this help",
    ),
    bind(
        Commands,
        &[
            (plain(KeyCode::Up), Action::CommandMove { up: true }),
            (plain(KeyCode::Down), Action::CommandMove { up: false }),
        ],
        "choose a command",
    ),
    bind(
        Commands,
        &[(plain(KeyCode::Tab), Action::CommandComplete)],
        "complete the chosen command",
    ),
    bind(
        Commands,
        &[(plain(KeyCode::Enter), Action::CommandRun)],
        "run the chosen command",
    ),
    bind(
        Commands,
        &[(plain(KeyCode::Esc), Action::CommandClose)],
        "close the list (the text stays)",
    ),
    bind(
        Files,
        &[
            (plain(KeyCode::Up), Action::FileMove { up: true }),
            (plain(KeyCode::Down), Action::FileMove { up: false }),
        ],
        "choose a file",
    ),
    bind(
        Files,
        &[
            (plain(KeyCode::Tab), Action::FileInsert { or_send: false }),
            (plain(KeyCode::Enter), Action::FileInsert { or_send: true }),
        ],
        "insert the chosen path (a folder: go on in it)",
    ),
    bind(
        Files,
        &[(plain(KeyCode::Esc), Action::FileClose)],
        "close the list (the text stays)",
    ),
    bind(
        Confirm,
        &[(ch('y'), Action::Yes), (plain(KeyCode::Enter), Action::Yes)],
        "answer yes",
    ),
    bind(
        Confirm,
        &[(ch('n'), Action::No), (plain(KeyCode::Esc), Action::No)],
        "answer no",
    ),
    bind(
        Confirm,
        &[
            (plain(KeyCode::Tab), Action::ConfirmStep { back: false }),
            (plain(KeyCode::BackTab), Action::ConfirmStep { back: true }),
        ],
        "approving a plan: the mode it runs in",
    ),
    bind(
        Confirm,
        &[(ch('f'), Action::ConfirmFresh)],
        "approving a plan: from a fresh context (the task, the summary, the plan) or this one",
    ),
    bind(
        Help,
        &[
            (
                plain(KeyCode::Down),
                Action::HelpScroll {
                    up: false,
                    page: false,
                },
            ),
            (
                plain(KeyCode::Up),
                Action::HelpScroll {
                    up: true,
                    page: false,
                },
            ),
            (
                plain(KeyCode::PageDown),
                Action::HelpScroll {
                    up: false,
                    page: true,
                },
            ),
            (
                plain(KeyCode::PageUp),
                Action::HelpScroll {
                    up: true,
                    page: true,
                },
            ),
        ],
        "scroll the help (any other key closes it)",
    ),
    bind(
        Search,
        &[
            (ctrl('r'), Action::SearchMove { next: true }),
            (plain(KeyCode::Down), Action::SearchMove { next: true }),
            (plain(KeyCode::Up), Action::SearchMove { next: false }),
        ],
        "next / previous match",
    ),
    bind(
        Search,
        &[(plain(KeyCode::Enter), Action::SearchAccept)],
        "put the prompt in the input (not sent)",
    ),
    bind(
        Search,
        &[(plain(KeyCode::Esc), Action::SearchClose)],
        "close; the input stays as typed",
    ),
    bind(
        Picker,
        &[
            (
                plain(KeyCode::Up),
                Action::PickerMove {
                    up: true,
                    typed: false,
                },
            ),
            (
                plain(KeyCode::Down),
                Action::PickerMove {
                    up: false,
                    typed: false,
                },
            ),
            (
                ch('k'),
                Action::PickerMove {
                    up: true,
                    typed: true,
                },
            ),
            (
                ch('j'),
                Action::PickerMove {
                    up: false,
                    typed: true,
                },
            ),
        ],
        "choose a session (j/k until a filter is typed)",
    ),
    bind(
        Picker,
        &[
            (plain(KeyCode::PageUp), Action::PickerPage { up: true }),
            (plain(KeyCode::PageDown), Action::PickerPage { up: false }),
        ],
        "a page of sessions up or down",
    ),
    bind(
        Picker,
        &[
            (plain(KeyCode::Home), Action::PickerEdge { up: true }),
            (plain(KeyCode::End), Action::PickerEdge { up: false }),
        ],
        "first / last session",
    ),
    bind(
        Picker,
        &[(plain(KeyCode::Enter), Action::PickerOpen)],
        "open the chosen session (this workspace's)",
    ),
    bind(
        Picker,
        &[
            (plain(KeyCode::Tab), Action::PickerAll),
            (plain(KeyCode::BackTab), Action::PickerAll),
        ],
        "this workspace's sessions or all of them",
    ),
    bind(
        Picker,
        &[(plain(KeyCode::Esc), Action::PickerClose)],
        "close the picker; typing filters by id or prompt",
    ),
    bind(
        Approval,
        &[(ch('y'), Action::ApproveOnce)],
        "run this tool call once",
    ),
    bind(
        Approval,
        &[(ch('a'), Action::ApproveAlways)],
        "run it, and calls like it for the session (the prompt says which)",
    ),
    bind(
        Approval,
        &[(ch('n'), Action::Refuse)],
        "refuse it; then type an optional reason",
    ),
    bind(
        Approval,
        &[(plain(KeyCode::Esc), Action::RefuseStop)],
        "refuse it and interrupt the turn",
    ),
    bind(
        Approval,
        &[
            (
                plain(KeyCode::Up),
                Action::ApprovalScroll {
                    up: true,
                    page: false,
                },
            ),
            (
                plain(KeyCode::Down),
                Action::ApprovalScroll {
                    up: false,
                    page: false,
                },
            ),
            (
                plain(KeyCode::PageUp),
                Action::ApprovalScroll {
                    up: true,
                    page: true,
                },
            ),
            (
                plain(KeyCode::PageDown),
                Action::ApprovalScroll {
                    up: false,
                    page: true,
                },
            ),
        ],
        "scroll a long command or diff",
    ),
    bind(
        Reason,
        &[(plain(KeyCode::Enter), Action::ReasonSend)],
        "send the refusal with the reason typed",
    ),
    bind(
        Reason,
        &[(plain(KeyCode::Esc), Action::ReasonSkip)],
        "send the refusal without a reason",
    ),
];
