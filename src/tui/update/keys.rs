//! Keys and paste: each key is resolved through the one keymap
//! ([`crate::tui::keymap`]) in the contexts open now, and its action runs
//! here. A key no binding takes goes to the input box (in a pane: a typed
//! character moves there; a Ctrl/Alt chord does nothing).

use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::scroll::{Move, scroll_focused};
use super::{ENGINE_STOPPED, Effect, show_sent};
use crate::events::{McpAction, Op};
use crate::tui::commands;
use crate::tui::keymap::{self, Action, Context, Typed};
use crate::tui::state::{Activity, App, Focus, NoticeKind};

/// The contexts open now, most specific first.
fn contexts(app: &App) -> Vec<Context> {
    if app.overlays.help {
        return vec![Context::Help];
    }
    if app.overlays.approvals.reason.is_some() {
        return vec![Context::Reason, Context::Global];
    }
    if app.overlays.approvals.is_open() {
        return vec![Context::Approval, Context::Global];
    }
    if app.overlays.confirm.is_some() {
        return vec![Context::Confirm, Context::Global];
    }
    if app.overlays.picker.is_some() {
        return vec![Context::Picker, Context::Global];
    }
    if app.overlays.search.is_some() {
        return vec![Context::Search, Context::Global];
    }
    if app.root.plan.view.prompt.is_some() {
        return vec![Context::PlanPrompt, Context::Global];
    }
    let mut out = Vec::with_capacity(3);
    if app.focus == Focus::Input && app.overlays.files.is_some() {
        out.push(Context::Files);
    }
    if app.focus == Focus::Input && commands::popup_open(app) {
        out.push(Context::Commands);
    }
    out.push(Context::Global);
    match app.focus {
        Focus::Input => out.push(Context::Input),
        Focus::Checklist => out.extend([Context::Plan, Context::Pane]),
        Focus::Trace => out.extend([Context::Tools, Context::Pane]),
        Focus::Conversation => out.push(Context::Pane),
    }
    out
}

/// The action `key` is offered to first in the current state (it may still
/// decline, e.g. `↑` on the second line of the input moves the cursor).
pub fn resolve(app: &App, key: &KeyEvent) -> Option<Action> {
    contexts(app)
        .into_iter()
        .find_map(|c| keymap::lookup(c, key))
}

pub fn on_key(app: &mut App, key: KeyEvent, now: Instant) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
    if !ctrl_c {
        app.status.ui.disarm_quit();
    }
    if app.overlays.help
        && !ctrl_c
        && let Some(action) = keymap::lookup(Context::Help, &key)
        && let Some(effects) = perform(app, action, now)
    {
        return effects;
    }
    if app.overlays.help && !ctrl_c {
        // Any other key only closes the help (nothing is typed by it);
        // Ctrl+C still works below.
        app.overlays.help = false;
        return Vec::new();
    }
    let confirming = app.overlays.confirm.is_some();
    let approving = app.overlays.approvals.is_open();
    for context in contexts(app) {
        if let Some(action) = keymap::lookup(context, &key)
            && let Some(effects) = perform(app, action, now)
        {
            super::daily::follow(app);
            return effects;
        }
    }
    if approving {
        // Nothing reaches the input behind the prompt; a reason may be typed.
        super::approval::unbound(app, &key);
        return Vec::new();
    }
    if confirming {
        // A question waits for y or n; other keys do nothing.
        return Vec::new();
    }
    if let Some(picker) = app.overlays.picker.as_mut() {
        // Typing filters the sessions; nothing reaches the input box.
        match keymap::typed(&key) {
            Some(Typed::Char(c)) => picker.push_filter(c),
            Some(Typed::Backspace) => picker.pop_filter(),
            None => {}
        }
        return Vec::new();
    }
    if super::history::typed(app, &key) {
        // Typed into the prompt search; nothing reaches the input box.
        return Vec::new();
    }
    if app.root.plan.view.prompt.is_some() {
        // Typed into the plan pane's prompt; nothing reaches the input box.
        super::plan::prompt_key(app, &key);
        return Vec::new();
    }
    let before = app.input.text();
    let effects = unbound(app, key);
    if app.input.text() != before {
        // The command list follows what is typed.
        app.overlays.popup.selected = 0;
    }
    // The file list follows the word after its `@` (the cursor may move).
    super::daily::follow(app);
    effects
}

/// A key no binding took.
fn unbound(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    if app.focus == Focus::Input {
        // A paste's placeholder goes whole.
        if key.code == KeyCode::Backspace
            && key.modifiers.is_empty()
            && app.input.delete_placeholder()
        {
            return Vec::new();
        }
        app.input.area.input(key);
        return Vec::new();
    }
    if let Some(Typed::Char(c)) = keymap::typed(&key) {
        // Typing anywhere goes to the input box: nothing typed is lost.
        app.focus = Focus::Input;
        app.input.area.insert_char(c);
    }
    Vec::new()
}

/// Runs `action`, by concern; `None` when it does not apply now (the key
/// then goes on to the next context, and finally to the input).
fn perform(app: &mut App, action: Action, now: Instant) -> Option<Vec<Effect>> {
    match action {
        Action::Interrupt
        | Action::Send
        | Action::Resume
        | Action::ClearOrQuit
        | Action::CycleApproval => turn_key(app, action, now),
        Action::Commands
        | Action::Focus
        | Action::NewLine
        | Action::History { .. }
        | Action::Help { .. } => input_key(app, action),
        Action::Page { .. }
        | Action::Step { .. }
        | Action::Edge { .. }
        | Action::Expand
        | Action::OpenCell
        | Action::TogglePlan
        | Action::ToggleReasoning
        | Action::Redraw => pane_key(app, action),
        Action::CommandRun => match super::overlays::run_command(app)? {
            true => Some(submit(app, now)),
            false => Some(Vec::new()),
        },
        Action::CommandMove { .. }
        | Action::CommandComplete
        | Action::CommandClose
        | Action::HelpScroll { .. }
        | Action::Yes
        | Action::No
        | Action::ConfirmStep { .. }
        | Action::ConfirmFresh
        | Action::PickerMove { .. }
        | Action::PickerPage { .. }
        | Action::PickerEdge { .. }
        | Action::PickerOpen
        | Action::PickerAll
        | Action::PickerClose => super::overlays::key(app, action, now),
        Action::SearchHistory => super::history::open(app),
        Action::SearchMove { .. } | Action::SearchAccept | Action::SearchClose => {
            super::history::key(app, action)
        }
        Action::ApproveOnce
        | Action::ApproveAlways
        | Action::Refuse
        | Action::RefuseStop
        | Action::ApprovalScroll { .. }
        | Action::ReasonSend
        | Action::ReasonSkip => super::approval::key(app, action, now),
        Action::Mention
        | Action::FileMove { .. }
        | Action::FileInsert { .. }
        | Action::FileClose
        | Action::Editor
        | Action::CopyReply
        | Action::PasteImage
        | Action::ToggleMouse => super::daily::key(app, action),
        Action::PlanRevision { .. }
        | Action::ApprovePlan
        | Action::PlanEdit(_)
        | Action::PromptSend
        | Action::PromptCancel => super::plan::key(app, action),
    }
}

/// The turn's keys: send, resume, interrupt (or close a view), Ctrl+C,
/// the approval mode.
fn turn_key(app: &mut App, action: Action, now: Instant) -> Option<Vec<Effect>> {
    let none = Some(Vec::new());
    match action {
        Action::Interrupt => {
            // The innermost view or selection of the focused pane closes
            // first, even while the agent runs: leaving a view never kills
            // a build. Only an Esc with nothing left to close interrupts.
            if close_view(app) {
                return none;
            }
            if let Some(skip) = skip_mcp_wait(app, now) {
                return Some(skip);
            }
            if app.status.turn.running() {
                return Some(vec![Effect::Send(Op::Interrupt)]);
            }
            app.focus = Focus::Input;
            none
        }
        Action::Send => Some(submit(app, now)),
        Action::Resume => Some(resume(app)),
        Action::ClearOrQuit => clear_or_quit(app, now),
        Action::CycleApproval => Some(cycle_approval(app)),
        _ => None,
    }
}

/// While the task given at start waits for MCP servers, Esc and Ctrl+C
/// start it without them (instead of interrupting it).
fn skip_mcp_wait(app: &mut App, now: Instant) -> Option<Vec<Effect>> {
    if !app.status.turn.running() || *app.status.turn.activity() != Activity::McpWait {
        return None;
    }
    app.status.turn.set_activity(Activity::Thinking, now);
    Some(vec![Effect::Send(Op::Mcp {
        action: McpAction::SkipWait,
    })])
}

/// Ctrl+C: interrupts a running turn (refusing what waits for approval);
/// idle, clears the input, else arms quitting, and quits when armed.
fn clear_or_quit(app: &mut App, now: Instant) -> Option<Vec<Effect>> {
    // While a turn runs Ctrl+C interrupts it, as in the other
    // agents (the typed text stays, to be sent after).
    if let Some(skip) = skip_mcp_wait(app, now) {
        app.status.ui.disarm_quit();
        return Some(skip);
    }
    if app.status.turn.running() {
        app.status.ui.disarm_quit();
        // Behind an approval prompt: what Esc does there, refuse
        // and interrupt.
        if app.overlays.approvals.is_open() {
            return super::approval::key(app, Action::RefuseStop, now);
        }
        return Some(vec![Effect::Send(Op::Interrupt)]);
    }
    // The prompt search open: Ctrl+C leaves it, as a shell's reverse
    // search does; the typed text stays.
    if app.overlays.search.take().is_some() {
        app.status.ui.disarm_quit();
        return Some(Vec::new());
    }
    // Behind the approval prompt the typed text stays: only quitting arms.
    if !app.input.is_empty() && !app.overlays.approvals.is_open() {
        app.input.clear();
        app.status.ui.disarm_quit();
    } else if app.status.ui.quit_armed(now) {
        return Some(vec![Effect::Quit]);
    } else {
        app.status.ui.arm_quit(now);
    }
    Some(Vec::new())
}

/// The input box's keys: the command list, Tab (completion, else the
/// next pane), a new line, the history, the help.
fn input_key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    match action {
        Action::Commands => {
            // Only at the start of an empty input; elsewhere `/` is typed.
            if !app.input.is_empty() {
                return None;
            }
            app.input.area.insert_char('/');
            app.overlays.popup = Default::default();
        }
        Action::Focus => {
            // In the input, Tab first completes a command's argument
            // (`/approval au` → `/approval auto-edit`).
            if app.focus == Focus::Input
                && let Some(done) = commands::complete_argument(&app.input.text())
            {
                app.input.set_text(&done);
            } else {
                app.focus = app.focus.next();
            }
        }
        Action::NewLine => app.input.area.insert_newline(),
        Action::History { older } => {
            // Up on the first line (Down on the last) recalls; otherwise the
            // cursor moves in the text.
            if older && !app.input.on_first_line() || !older && !app.input.on_last_line() {
                return None;
            }
            app.input.recall(older);
        }
        Action::Help { typed } => {
            // `?` typed into a message is a character.
            if typed && app.focus == Focus::Input && !app.input.is_empty() {
                return None;
            }
            app.overlays.help = true;
            app.overlays.help_scroll.home();
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// The panes' keys: scrolling, the trace's expanded view, folding the
/// plan and the reasoning, redrawing.
fn pane_key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    match action {
        Action::Page { up } => scroll_focused(app, if up { Move::PageUp } else { Move::PageDown }),
        // A past revision scrolls; the live plan selects an item.
        Action::Step { up }
            if app.focus == Focus::Checklist && app.root.plan.revisions.viewing.is_none() =>
        {
            super::plan::select_step(app, up)
        }
        Action::Step { up } => scroll_focused(app, if up { Move::Up(1) } else { Move::Down(1) }),
        Action::Edge { top } => scroll_focused(app, if top { Move::Home } else { Move::End }),
        Action::Expand => {
            let trace = &mut app.root.trace;
            if trace.selected.is_none() {
                trace.selected = trace.last_shown();
            }
            trace.expanded = !trace.expanded && trace.selected.is_some();
            trace.detail_scroll.home();
        }
        Action::OpenCell => {
            // The conversation's latest call, whole, in the trace (a tab
            // of its own on narrow screens); ↑/↓ there reach the others.
            if app.focus == Focus::Conversation
                && let Some(last) = app.root.trace.last_shown()
            {
                app.root.trace.selected = Some(last);
                app.root.trace.expanded = true;
                app.root.trace.detail_scroll.home();
                app.focus = Focus::Trace;
            }
        }
        Action::TogglePlan => app.root.plan.view.collapsed = !app.root.plan.view.collapsed,
        Action::ToggleReasoning => app.root.conversation.toggle_reasoning(),
        Action::Redraw => return Some(vec![Effect::Redraw]),
        _ => return None,
    }
    Some(Vec::new())
}

/// Sends what is in the input box (or resumes on an empty Enter); a slash
/// command runs here and never reaches the model.
pub(super) fn submit(app: &mut App, now: Instant) -> Vec<Effect> {
    if app.input.text().trim().is_empty() {
        return resume(app);
    }
    // Long pastes go whole to the model, shortened in the conversation.
    let shown = app.input.shown();
    let text = app.input.take();
    let images = app.input.take_images(&text);
    app.overlays.popup = Default::default();
    app.overlays.files = None;
    if let Some(effects) = commands::run(app, &text, now) {
        return effects;
    }
    if !app.status.engine.present() && *app.status.turn.activity() == Activity::NoProvider {
        // The user may have set a provider up since: read the settings again.
        app.root
            .conversation
            .push(crate::tui::state::EntryKind::User, shown);
        let mut effects = vec![Effect::StartEngine];
        effects.extend(with_images(images, text));
        return effects;
    }
    if !app.status.engine.present() {
        app.root
            .conversation
            .push(crate::tui::state::EntryKind::User, shown);
        let help = app
            .status
            .engine
            .setup_help()
            .map(str::to_string)
            .unwrap_or_else(|| ENGINE_STOPPED.to_string());
        app.notice(NoticeKind::Error, help);
        return Vec::new();
    }
    show_sent(app, &shown);
    with_images(images, text)
}

/// A message's ops: its pasted images first (the engine keeps them for
/// the message that follows), then the message.
fn with_images(images: Vec<crate::chat::ImageSource>, text: String) -> Vec<Effect> {
    let attach = if images.is_empty() {
        None
    } else {
        Some(Effect::Send(Op::Attach { images }))
    };
    attach
        .into_iter()
        .chain([Effect::Send(Op::Submit { text })])
        .collect()
}

/// Resumes a stopped turn; does nothing when there is nothing to resume
/// (a finished turn, one running, or a resume already sent).
pub(crate) fn resume(app: &mut App) -> Vec<Effect> {
    if !app.status.engine.present() && *app.status.turn.activity() == Activity::NoProvider {
        return vec![Effect::StartEngine];
    }
    let s = &mut app.status;
    if !(s.turn.can_resume() && !s.turn.running() && s.engine.present()) {
        return Vec::new();
    }
    s.turn.set_resumable(false);
    app.root.conversation.scroll.follow = true;
    if *app.status.turn.activity() == Activity::Failed {
        app.notice(
            NoticeKind::Info,
            "Reloading the settings and resuming where the agent stopped.",
        );
        return vec![Effect::Send(Op::ReloadSettings), Effect::Send(Op::Resume)];
    }
    app.notice(NoticeKind::Info, "Resuming where the agent stopped.");
    vec![Effect::Send(Op::Resume)]
}

/// A paste: into the open prompt, picker or the input; a pasted (or
/// dropped) path of an image asks for the image to be read.
pub fn on_paste(app: &mut App, text: &str) -> Vec<Effect> {
    if app.overlays.approvals.is_open() {
        super::approval::paste(app, text);
        return Vec::new();
    }
    if super::plan::prompt_paste(app, text) || super::history::paste(app, text) {
        return Vec::new();
    }
    if let Some(picker) = app.overlays.picker.as_mut() {
        // Into the picker's filter, as one clean line.
        crate::text::clean_line(text)
            .chars()
            .for_each(|c| picker.push_filter(c));
        return Vec::new();
    }
    app.focus = Focus::Input;
    if let Some(path) = super::daily::image_path(text) {
        return vec![Effect::ReadImage(Some(path))];
    }
    // Pasted text may hold escape sequences: they must not reach the screen;
    // a long paste shows as a placeholder.
    app.input.paste(&crate::text::clean(text));
    super::daily::follow(app);
    Vec::new()
}

/// Shift+Tab, as in Claude Code: the next approval mode of ask →
/// auto-edit → auto → plan → read-only → ask (`yolo` is never reached by a key:
/// `/approval yolo` or `--yolo` only). The engine confirms the switch.
fn cycle_approval(app: &mut App) -> Vec<Effect> {
    use crate::events::ApprovalMode::{Ask, Auto, AutoEdit, Plan, ReadOnly, Yolo};
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "No approval mode can be set: no provider is set up.",
        );
        return Vec::new();
    }
    let mode = match app.status.engine.approval().map(|(mode, _)| mode) {
        Some(Ask) => AutoEdit,
        Some(AutoEdit) => Auto,
        Some(Auto) => Plan,
        Some(Plan) => ReadOnly,
        Some(ReadOnly | Yolo) | None => Ask,
    };
    vec![Effect::Send(Op::SetApproval { mode })]
}

/// Closes the focused pane's innermost view: in the plan, a past revision,
/// then the selected item (and the trace's filter by it); in the tools, an
/// expanded output, then the selected call. Whether there was one.
fn close_view(app: &mut App) -> bool {
    match app.focus {
        Focus::Checklist => super::plan::leave(app, true),
        Focus::Trace if app.root.trace.expanded => {
            app.root.trace.expanded = false;
            true
        }
        Focus::Trace => app.root.trace.selected.take().is_some(),
        Focus::Input | Focus::Conversation => false,
    }
}
