//! Pure state transitions: engine events and terminal input in, state
//! changes and effects out. No I/O: the app loop carries out the effects.
//! Invariant: every key either changes state, yields an effect, or goes to
//! the input box (an unbound Ctrl/Alt chord does nothing and types nothing);
//! typed text is only ever removed by sending it or Ctrl+C.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};

use super::state::{
    Activity, App, Change, ConvEntry, EntryKind, Focus, HISTORY_CAP, NoticeKind, TraceEntry,
    TraceStatus,
};
use crate::events::{AbortReason, Event, Op, StopReason, ToolStatus};
use crate::todo::TodoStatus;

/// What the app loop must do after an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Send(Op),
    /// Clear and fully redraw the terminal (Ctrl+L).
    Redraw,
    Quit,
}

/// What a message sent after the engine died is answered with.
pub const ENGINE_STOPPED: &str =
    "The engine stopped unexpectedly; see the log file. Restart Waypoint.";

const SCROLL_STEP: usize = 3;
/// Entries PgUp/PgDn move the selection in the tool trace.
pub const TRACE_PAGE: usize = 5;

/// No provider could be set up: `help` (the first-run help) is shown now
/// and again whenever a message is sent.
pub fn no_engine(app: &mut App, help: String, now: Instant) {
    app.has_engine = false;
    app.set_activity(Activity::NoProvider, now);
    app.notice(NoticeKind::Error, help.clone());
    app.setup_help = Some(help);
}

/// The engine's channel closed mid-session: nothing runs any more.
pub fn engine_stopped(app: &mut App, now: Instant) {
    app.has_engine = false;
    app.can_resume = false;
    for t in app.trace.iter_mut() {
        if t.status == TraceStatus::Running {
            t.status = TraceStatus::Interrupted;
            t.duration = Some(now.saturating_duration_since(t.started));
        }
    }
    end_turn(app, Activity::Failed, now);
    app.notice(NoticeKind::Error, ENGINE_STOPPED);
    app.setup_help = Some(ENGINE_STOPPED.to_string());
}

pub fn on_event(app: &mut App, event: Event, now: Instant) {
    match event {
        Event::TurnStarted { resumed } => on_turn_started(app, resumed, now),
        Event::RoundStarted { .. } => {
            app.round_entry = None;
            app.set_activity(Activity::Thinking, now);
        }
        Event::TextDelta { text } => on_text(app, &text, now),
        Event::Retrying {
            attempt,
            delay_ms,
            reason,
        } => {
            // Text streamed in this round is void: the reply starts again
            // (a message queued meanwhile may sit below it).
            if let Some(i) = app.round_entry.take()
                && app
                    .conversation
                    .get(i)
                    .is_some_and(|e| e.kind == EntryKind::Assistant)
            {
                app.conversation.remove(i);
            }
            app.notice(
                NoticeKind::Warning,
                format!(
                    "Retry {attempt} in {:.1} s: {reason}",
                    delay_ms as f64 / 1000.0
                ),
            );
            app.set_activity(Activity::Retrying { reason }, now);
        }
        Event::ToolCallBegin {
            id,
            name,
            summary,
            input,
            plan_item,
            ..
        } => {
            app.round_entry = None;
            app.set_activity(Activity::Tool { name: name.clone() }, now);
            app.trace.push(TraceEntry {
                id,
                name,
                summary,
                input,
                plan_item,
                status: TraceStatus::Running,
                started: now,
                duration: None,
                output: Default::default(),
                streamed: false,
            });
        }
        Event::ToolCallOutputDelta { id, chunk } => {
            if let Some(t) = app.trace.iter_mut().rev().find(|t| t.id == id) {
                t.output.push(&chunk);
                t.streamed = true;
            }
        }
        Event::ToolCallEnd {
            id,
            status,
            duration_ms,
            output,
            ..
        } => {
            if let Some(t) = app.trace.iter_mut().rev().find(|t| t.id == id) {
                t.status = match status {
                    ToolStatus::Ok => TraceStatus::Ok,
                    ToolStatus::Error => TraceStatus::Error,
                    ToolStatus::Interrupted => TraceStatus::Interrupted,
                };
                t.duration = Some(Duration::from_millis(duration_ms));
                if !t.streamed {
                    t.output.push(&output);
                } else if status != ToolStatus::Ok {
                    // Keep the live log (and its spill file); the result's
                    // first line says why it stopped (the rest repeats the log).
                    t.output
                        .push_line(output.lines().next().unwrap_or_default());
                }
            }
            app.set_activity(Activity::Thinking, now);
        }
        Event::PlanUpdated { items, diff, .. } => {
            let by_content = |content: &str| {
                items
                    .iter()
                    .find(|i| i.content == content)
                    .map(|i| i.id.clone())
            };
            let mut changed = Vec::new();
            for (list, change) in [
                (&diff.added, Change::Added),
                (&diff.started, Change::Started),
                (&diff.completed, Change::Completed),
            ] {
                for content in list {
                    if let Some(id) = by_content(content) {
                        changed.retain(|(cid, _, _)| *cid != id);
                        changed.push((id, change, now));
                    }
                }
            }
            app.checklist.changed = changed;
            let active = items
                .iter()
                .find(|i| i.status == TodoStatus::InProgress)
                .map(|i| i.id.clone());
            app.checklist.active_since = match (active, app.checklist.active_since.take()) {
                (Some(id), Some((old, since))) if old == id => Some((id, since)),
                (Some(id), _) => Some((id, now)),
                (None, _) => None,
            };
            app.checklist.items = items;
            app.checklist.stopped_open = None;
        }
        Event::Usage {
            input_tokens,
            model: _,
            output_tokens,
            total_input_tokens,
            total_output_tokens,
        } => {
            app.tokens = (total_input_tokens, total_output_tokens);
            app.turn_tokens.0 += input_tokens;
            app.turn_tokens.1 += output_tokens;
        }
        Event::Queued { .. } => {}
        Event::TurnComplete {
            open_items,
            stop_reason,
        } => {
            end_turn(app, Activity::Idle, now);
            app.can_resume = open_items > 0;
            app.checklist.stopped_open = (open_items > 0).then_some(open_items);
            if stop_reason == StopReason::MaxTokens {
                app.notice(
                    NoticeKind::Warning,
                    "The reply hit the token limit and may be cut off.",
                );
            }
        }
        Event::TurnAborted {
            reason, message, ..
        } => {
            let activity = match reason {
                AbortReason::Interrupted => Activity::Interrupted,
                AbortReason::MaxTurns | AbortReason::Failed => Activity::Failed,
            };
            end_turn(app, activity, now);
            app.can_resume = true;
            let open = app
                .checklist
                .items
                .iter()
                .filter(|i| i.status != TodoStatus::Completed)
                .count();
            app.checklist.stopped_open = (open > 0).then_some(open);
            let (kind, text) = match reason {
                AbortReason::Interrupted => (
                    NoticeKind::Warning,
                    "Interrupted. Press Enter on an empty input (or Ctrl+R) to resume with the plan intact, or type new guidance.".to_string(),
                ),
                AbortReason::MaxTurns => (NoticeKind::Warning, format!("Stopped: {message}. Ctrl+R resumes.")),
                AbortReason::Failed => (NoticeKind::Error, format!("{message}. Fix it and press Ctrl+R to resume.")),
            };
            app.notice(kind, text);
        }
        Event::Error { message, .. } => app.notice(NoticeKind::Error, message),
        Event::ModelChanged { model, .. } => app.model = model,
        Event::SessionReset => {}
        Event::Idle => {}
    }
}

fn on_turn_started(app: &mut App, resumed: bool, now: Instant) {
    app.running = true;
    app.can_resume = false;
    app.turn_started = Some(now);
    app.turn_tokens = (0, 0);
    app.checklist.stopped_open = None;
    app.set_activity(Activity::Thinking, now);
    if !resumed
        && let Some(q) = app
            .conversation
            .iter_mut()
            .find(|e| e.kind == EntryKind::Queued)
    {
        q.set_kind(EntryKind::User);
    }
}

fn end_turn(app: &mut App, activity: Activity, now: Instant) {
    if app.running {
        app.turn_ended = Some(now);
    }
    app.running = false;
    app.round_entry = None;
    app.set_activity(activity, now);
}

fn on_text(app: &mut App, text: &str, now: Instant) {
    // The round's entry, even when a queued message now sits below it.
    let entry = app
        .round_entry
        .and_then(|i| app.conversation.get_mut(i))
        .filter(|e| e.kind == EntryKind::Assistant);
    match entry {
        Some(e) => e.push_str(text),
        None => {
            app.conversation
                .push(ConvEntry::new(EntryKind::Assistant, text));
            app.round_entry = Some(app.conversation.len() - 1);
        }
    }
    app.set_activity(Activity::Streaming, now);
}

/// Sends what is in the input box (or resumes on an empty Enter).
fn submit(app: &mut App) -> Vec<Effect> {
    let text = app.input_text();
    if text.trim().is_empty() {
        return resume(app);
    }
    app.set_input(Vec::new());
    if app.history.last() != Some(&text) {
        app.history.push(text.clone());
        if app.history.len() > HISTORY_CAP {
            app.history.remove(0);
        }
    }
    app.history_pos = None;
    app.draft = None;
    if !app.has_engine {
        app.conversation.push(ConvEntry::new(EntryKind::User, text));
        let help = app
            .setup_help
            .clone()
            .unwrap_or_else(|| ENGINE_STOPPED.to_string());
        app.notice(NoticeKind::Error, help);
        return Vec::new();
    }
    let kind = if app.running {
        EntryKind::Queued
    } else {
        EntryKind::User
    };
    // The reply streaming now (`round_entry`) goes on above a queued message.
    app.conversation.push(ConvEntry::new(kind, text.clone()));
    app.conv_scroll.follow = true;
    vec![Effect::Send(Op::Submit { text })]
}

/// Resumes a stopped turn; does nothing when there is nothing to resume
/// (a finished turn, one running, or a resume already sent).
fn resume(app: &mut App) -> Vec<Effect> {
    if !(app.can_resume && !app.running && app.has_engine) {
        return Vec::new();
    }
    app.can_resume = false;
    app.conv_scroll.follow = true;
    if app.activity == Activity::Failed {
        app.notice(
            NoticeKind::Info,
            "Reloading the settings and resuming where the agent stopped.",
        );
        // Read the settings again first: the user may have fixed the setting.
        return vec![Effect::Send(Op::ReloadSettings), Effect::Send(Op::Resume)];
    }
    app.notice(NoticeKind::Info, "Resuming where the agent stopped.");
    vec![Effect::Send(Op::Resume)]
}

fn recall(app: &mut App, older: bool) {
    if app.history.is_empty() {
        return;
    }
    let pos = match (app.history_pos, older) {
        (None, true) => {
            app.draft = Some(app.input.lines().to_vec());
            app.history.len() - 1
        }
        (None, false) => return,
        (Some(p), true) => p.saturating_sub(1),
        (Some(p), false) if p + 1 < app.history.len() => p + 1,
        (Some(_), false) => {
            app.history_pos = None;
            let draft = app.draft.take().unwrap_or_default();
            app.set_input(draft);
            return;
        }
    };
    app.history_pos = Some(pos);
    let lines = app.history[pos].split('\n').map(str::to_string).collect();
    app.set_input(lines);
}

pub fn on_paste(app: &mut App, text: &str) {
    app.focus = Focus::Input;
    app.input
        .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
}

pub fn on_key(app: &mut App, key: KeyEvent, now: Instant) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    if !(ctrl && key.code == KeyCode::Char('c')) {
        app.ctrl_c_at = None;
    }
    if app.show_help && !(ctrl && key.code == KeyCode::Char('c')) {
        // Any key closes the help; Ctrl+C still works below, and a typed
        // character still reaches the input (but `?` only closes it).
        app.show_help = false;
        let typed = match key.code {
            KeyCode::Char(c) if !ctrl && !alt => c != '?' || !app.input_text().is_empty(),
            _ => false,
        };
        if !(typed && app.focus == Focus::Input) {
            return Vec::new();
        }
    }
    match key.code {
        KeyCode::Char('c') if ctrl => {
            if !app.input_text().is_empty() {
                app.set_input(Vec::new());
                app.history_pos = None;
                app.ctrl_c_at = None;
            } else if app.quit_armed(now) {
                return vec![Effect::Quit];
            } else {
                app.ctrl_c_at = Some(now);
            }
            Vec::new()
        }
        KeyCode::Char('l') if ctrl => vec![Effect::Redraw],
        KeyCode::Char('r') if ctrl => resume(app),
        KeyCode::Char('t') if ctrl => {
            app.checklist.collapsed = !app.checklist.collapsed;
            Vec::new()
        }
        KeyCode::Esc => {
            if app.running {
                vec![Effect::Send(Op::Interrupt)]
            } else if app.focus != Focus::Input {
                app.focus = Focus::Input;
                Vec::new()
            } else {
                Vec::new()
            }
        }
        KeyCode::F(1) => {
            app.show_help = true;
            Vec::new()
        }
        KeyCode::Tab => {
            app.focus = app.focus.next();
            Vec::new()
        }
        KeyCode::BackTab => {
            app.focus = app.focus.prev();
            Vec::new()
        }
        KeyCode::PageUp => {
            scroll_focused(app, ScrollMove::PageUp);
            Vec::new()
        }
        KeyCode::PageDown => {
            scroll_focused(app, ScrollMove::PageDown);
            Vec::new()
        }
        _ if app.focus == Focus::Input => on_input_key(app, key, ctrl, alt, shift),
        _ => on_pane_key(app, key, ctrl || alt),
    }
}

fn on_input_key(app: &mut App, key: KeyEvent, ctrl: bool, alt: bool, shift: bool) -> Vec<Effect> {
    match key.code {
        KeyCode::Enter if alt || shift => {
            app.input.insert_newline();
            Vec::new()
        }
        KeyCode::Char('j') if ctrl => {
            app.input.insert_newline();
            Vec::new()
        }
        KeyCode::Enter => submit(app),
        KeyCode::Char('?') if app.input_text().is_empty() => {
            app.show_help = true;
            Vec::new()
        }
        KeyCode::Up if app.input.cursor().0 == 0 => {
            recall(app, true);
            Vec::new()
        }
        KeyCode::Down if app.input.cursor().0 + 1 >= app.input.lines().len() => {
            recall(app, false);
            Vec::new()
        }
        _ => {
            app.input.input(key);
            Vec::new()
        }
    }
}

#[derive(Clone, Copy)]
enum ScrollMove {
    Up(usize),
    Down(usize),
    PageUp,
    PageDown,
    Home,
    End,
}

/// A key in a focused pane: j/k/g/G (and arrows, Home/End) scroll, `c`
/// folds the plan, Enter/Space expand a tool's output, `?` opens the help;
/// any other character goes to the input. A Ctrl/Alt chord types nothing.
fn on_pane_key(app: &mut App, key: KeyEvent, chord: bool) -> Vec<Effect> {
    if chord && matches!(key.code, KeyCode::Char(_)) {
        return Vec::new();
    }
    let mv = match key.code {
        KeyCode::Char('k') | KeyCode::Up => Some(ScrollMove::Up(1)),
        KeyCode::Char('j') | KeyCode::Down => Some(ScrollMove::Down(1)),
        KeyCode::Home | KeyCode::Char('g') => Some(ScrollMove::Home),
        KeyCode::End | KeyCode::Char('G') => Some(ScrollMove::End),
        _ => None,
    };
    if let Some(mv) = mv {
        scroll_focused(app, mv);
        return Vec::new();
    }
    match key.code {
        KeyCode::Char('?') => app.show_help = true,
        KeyCode::Char('c') if app.focus == Focus::Checklist => {
            app.checklist.collapsed = !app.checklist.collapsed;
        }
        KeyCode::Enter | KeyCode::Char(' ') if app.focus == Focus::Trace => {
            if app.trace_selected.is_none() && !app.trace.is_empty() {
                app.trace_selected = Some(app.trace.len() - 1);
            }
            app.trace_expanded = !app.trace_expanded && app.trace_selected.is_some();
            app.detail_scroll.home();
        }
        KeyCode::Char(c) if !c.is_control() => {
            // Typing anywhere goes to the input box: nothing typed is lost.
            app.focus = Focus::Input;
            app.input.insert_char(c);
        }
        _ => {}
    }
    Vec::new()
}

fn scroll_focused(app: &mut App, mv: ScrollMove) {
    match app.focus {
        Focus::Trace if app.trace_expanded => apply(&mut app.detail_scroll, mv, false),
        Focus::Trace => {
            let last = app.trace.len().saturating_sub(1);
            if app.trace.is_empty() {
                return;
            }
            let cur = app.trace_selected.unwrap_or(last);
            let next = match mv {
                ScrollMove::Up(n) => cur.saturating_sub(n),
                ScrollMove::Down(n) => (cur + n).min(last),
                ScrollMove::PageUp => cur.saturating_sub(TRACE_PAGE),
                ScrollMove::PageDown => (cur + TRACE_PAGE).min(last),
                ScrollMove::Home => 0,
                ScrollMove::End => last,
            };
            // Selecting the last entry follows new calls again.
            app.trace_selected = if next == last { None } else { Some(next) };
        }
        // End (or scrolling to the bottom) follows the item in progress again.
        Focus::Checklist => apply(&mut app.checklist.scroll, mv, true),
        Focus::Conversation | Focus::Input => apply(&mut app.conv_scroll, mv, true),
    }
}

fn apply(scroll: &mut super::state::Scroll, mv: ScrollMove, sticky: bool) {
    match mv {
        ScrollMove::Up(n) => scroll.up(n),
        ScrollMove::Down(n) => scroll.down(n, sticky),
        ScrollMove::PageUp => scroll.up(scroll.page()),
        ScrollMove::PageDown => scroll.down(scroll.page(), sticky),
        ScrollMove::Home => scroll.home(),
        ScrollMove::End => scroll.end(sticky),
    }
}

/// The mouse wheel scrolls the focused pane; returns whether the event
/// changed anything (clicks and motion do not).
pub fn on_mouse(app: &mut App, mouse: MouseEvent) -> bool {
    match mouse.kind {
        MouseEventKind::ScrollUp => scroll_focused(app, ScrollMove::Up(SCROLL_STEP)),
        MouseEventKind::ScrollDown => scroll_focused(app, ScrollMove::Down(SCROLL_STEP)),
        _ => return false,
    }
    true
}
