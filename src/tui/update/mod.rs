//! Pure state transitions: engine events and terminal input in, state
//! changes and effects out. No I/O: the app loop carries out the effects.
//! An engine event is routed by its thread; the root thread's goes to the
//! status line, the panes' own reducers (`Trace::apply`,
//! `Conversation::apply`, `Checklist::apply`, in one `ThreadView`) and
//! then to the notices.
//! Invariant: every key either changes state, yields an effect, or goes to
//! the input box (an unbound Ctrl/Alt chord does nothing and types nothing);
//! typed text is only ever removed by sending it or Ctrl+C.

mod agreement;
mod approval;
mod checkpoint;
mod daily;
mod goal;
mod history;
mod keys;
mod overlays;
mod plan;
mod scroll;
mod session;

use std::time::Instant;

pub use daily::{COPY_CAP, edited, files_listed, image_path, image_read, last_reply};
pub use history::prompts_loaded;
pub use keys::{on_key, on_paste, resolve};
pub use plan::send_edit;
pub use scroll::{TRACE_PAGE, on_mouse};

use super::state::{Activity, App, ApprovalRequest, EntryKind, NoticeKind};
use crate::events::{AbortReason, Envelope, ErrorKind, Event, McpStatus, StopReason};
use crate::text::clean_line;

pub use crate::tui::effect::Effect;

/// What a message sent after the engine died is answered with.
pub const ENGINE_STOPPED: &str =
    "The engine stopped unexpectedly; see the log file. Restart Waypoint.";

/// No provider could be set up: `help` (the first-run help) is shown now
/// and again whenever a message is sent.
pub fn no_engine(app: &mut App, help: String, now: Instant) {
    app.status.turn.set_activity(Activity::NoProvider, now);
    app.notice(NoticeKind::Error, help.clone());
    app.status.engine.gone(help);
}

/// An engine started after the app opened without one.
pub fn engine_started(app: &mut App, model: String, now: Instant) {
    app.status.engine.arrived();
    app.status.turn.set_activity(Activity::Idle, now);
    app.status.accounts.set_model(model);
    app.notice(
        NoticeKind::Info,
        format!(
            "Settings read again: using {}.",
            app.status.accounts.model()
        ),
    );
}

/// The engine's channel closed mid-session: nothing runs any more.
pub fn engine_stopped(app: &mut App, now: Instant) {
    app.status.turn.set_resumable(false);
    app.root.trace.stop_running(now);
    approval::dropped(app);
    app.status.turn.end(Activity::Failed, now);
    app.root.conversation.end_turn();
    app.notice(NoticeKind::Error, ENGINE_STOPPED);
    app.status.engine.gone(ENGINE_STOPPED.to_string());
}

/// An engine event, routed by the thread it is of: the root thread's to
/// the app ([`on_event`]), another thread's to that thread's view (made
/// on first sight; the status line and the notices are the root's). A
/// child's call that waits for approval waits for the user all the same.
pub fn on_envelope(app: &mut App, envelope: Envelope, now: Instant) -> Vec<Effect> {
    // A turn's end is the root's; an approval waits for the user whoever asks.
    let notify = match &envelope.event {
        Event::ApprovalRequested { .. } => app.notify.on_event(&envelope.event, now),
        event if envelope.thread.is_root() => app.notify.on_event(event, now),
        _ => None,
    };
    let mut effects = routed(app, envelope, now);
    effects.extend(notify.map(Effect::Notify));
    effects
}

/// [`on_envelope`] past the notification.
fn routed(app: &mut App, envelope: Envelope, now: Instant) -> Vec<Effect> {
    if envelope.thread.is_root() {
        return on_event(app, envelope.event, now);
    }
    let price = match &envelope.event {
        Event::Usage { model, request, .. } => {
            // Every request is the session's: the status line counts a
            // child's too.
            app.status.accounts.add_child_usage(model, *request);
            crate::pricing::price_of(model, app.status.accounts.prices())
        }
        _ => None,
    };
    app.threads.apply(&envelope, price, now);
    // The task's cell says what its subagent runs now.
    if let (Event::ToolCallBegin { name, summary, .. }, Some(call)) =
        (&envelope.event, &envelope.parent_call)
    {
        let shown = crate::tui::state::trace::shown_name(name, &summary.detail);
        let progress = Event::ToolCallProgress {
            id: call.clone(),
            message: format!("→ {shown} {}", summary.line).trim_end().to_string(),
        };
        let _ = app.root.apply(&progress, None, now);
    }
    match envelope.event {
        Event::ApprovalRequested { .. } => {
            app.status.apply(&envelope.event, now);
            told(app, envelope.event);
            let task = envelope
                .parent_call
                .as_deref()
                .and_then(|call| app.root.trace.entries.iter().find(|t| t.id == call))
                .map_or_else(|| envelope.thread.to_string(), |t| t.summary.line.clone());
            app.overlays.approvals.asked_by(task);
        }
        // The approval mode is the session's, whichever thread took a switch.
        event @ Event::ApprovalMode { .. } => return session::on_event(app, event, now),
        _ => {}
    }
    Vec::new()
}

/// An event of the root thread. The session's own facts (which session,
/// its past, the model, the approval mode) are the app's; any other goes
/// to the status line, then the root thread's panes, then to what it
/// tells the user or closes (notices, the approval queue).
pub fn on_event(app: &mut App, event: Event, now: Instant) -> Vec<Effect> {
    match event {
        Event::SessionStarted { .. }
        | Event::History { .. }
        | Event::ModelChanged { .. }
        | Event::ApprovalMode { .. } => session::on_event(app, event, now),
        event => {
            let relisted = relisted(app, &event);
            // A goal's forecast learns from earlier sessions' items.
            let history = matches!(event, Event::GoalSet { .. }).then_some(Effect::ItemHistory);
            app.status.apply(&event, now);
            let max_retries = app.status.engine.max_retries();
            let spill = app.root.apply(&event, max_retries, now);
            match relisted {
                // A ready server listed its tools again: said only when
                // they changed (it was said ready once already).
                Some(Relisted::Same) => {}
                Some(Relisted::Changed(name, tools)) => app.notice(
                    NoticeKind::Info,
                    format!(
                        "MCP server {name} now offers {}.",
                        crate::units::plural(tools, "tool")
                    ),
                ),
                None => told(app, event),
            }
            spill
                .map(|(serial, text)| Effect::SpillOutput { serial, text })
                .into_iter()
                .chain(history)
                .collect()
        }
    }
}

/// A `Ready` for a server that was ready already: it listed its tools again.
enum Relisted {
    Same,
    Changed(String, usize),
}

/// Whether `event` is a ready server's re-list, before the status line
/// takes it (which keeps each server's latest state).
fn relisted(app: &App, event: &Event) -> Option<Relisted> {
    let Event::McpServer {
        name,
        status: McpStatus::Ready { tools, .. },
    } = event
    else {
        return None;
    };
    let name = clean_line(name);
    let was = app
        .status
        .mcp
        .servers()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)?;
    match was {
        McpStatus::Ready { tools: before, .. } if before == tools => Some(Relisted::Same),
        McpStatus::Ready { .. } => Some(Relisted::Changed(name.into_owned(), *tools)),
        _ => None,
    }
}

/// What an event of the root thread tells the user (a notice) or closes
/// (the approval queue, the child threads of the old session), once the
/// panes have taken it.
fn told(app: &mut App, event: Event) {
    match event {
        Event::TurnComplete { stop_reason, .. } => {
            approval::dropped(app);
            if stop_reason == StopReason::MaxTokens {
                app.notice(
                    NoticeKind::Warning,
                    "The reply hit the token limit and may be cut off.",
                );
            }
        }
        Event::TurnAborted {
            reason,
            message,
            error,
        } => {
            approval::dropped(app);
            let (kind, text) = aborted(reason, &message, error);
            app.notice(kind, text);
        }
        Event::Checkpoint { answer } => checkpoint::answered(app, answer),
        Event::PlanUpdated { author, diff, .. } => plan::echoed(app, author, &diff),
        Event::Error { kind, message } => {
            // A refused plan edit changed nothing; the message says why.
            let message = if kind == ErrorKind::PlanEdit {
                clean_line(&message).into_owned()
            } else {
                message
            };
            let notice = if matches!(kind, ErrorKind::Hook | ErrorKind::Catalog) {
                NoticeKind::Warning
            } else {
                NoticeKind::Error
            };
            app.notice(notice, message);
        }
        event @ (Event::GoalSet { .. } | Event::GoalUpdated { .. } | Event::GoalBudget { .. }) => {
            goal::told(app, &event)
        }
        event @ (Event::PlanChangeRequested { .. }
        | Event::PlanChangeAccepted { .. }
        | Event::PlanChangeRefused { .. }
        | Event::PlanApproved { .. }) => agreement::told(app, event),
        Event::Hook { report } => {
            if let Some(line) = crate::hooks::report_line(&report) {
                app.notice(NoticeKind::Warning, line);
            }
        }
        Event::SessionReset => {
            // The engine dropped the conversation and the plan (an empty
            // `PlanUpdated` came first); the token totals stay.
            approval::dropped(app);
            app.threads.clear();
            app.notice(
                NoticeKind::Info,
                "New session: empty conversation and plan.",
            );
        }
        Event::McpServer { name, status } => {
            let name = clean_line(&name).into_owned();
            match status {
                McpStatus::Starting => {}
                McpStatus::Slow { after_ms } => app.notice(
                    NoticeKind::Info,
                    format!(
                        "MCP server {name} is still starting after {} s; its tools join when it is ready.",
                        after_ms / 1000
                    ),
                ),
                McpStatus::Ready { tools, .. } => app.notice(
                    NoticeKind::Info,
                    format!(
                        "MCP server {name} ready: {} (offered from the next model request).",
                        crate::units::plural(tools, "tool")
                    ),
                ),
                McpStatus::Failed { error, stderr } => {
                    let last = stderr.lines().last().map(clean_line).unwrap_or_default();
                    let tail = if last.is_empty() {
                        String::new()
                    } else {
                        format!(" (stderr: {last})")
                    };
                    app.notice(
                        NoticeKind::Warning,
                        format!("MCP server {name} failed: {}{tail}", clean_line(&error)),
                    );
                }
                McpStatus::Disabled => {}
                McpStatus::NeedsApproval { command } => app.notice(
                    NoticeKind::Warning,
                    format!(
                        "This project's .mcp.json declares the MCP server {name} ({}). It was not started: type /mcp approve to run this project's servers (remembered for this project).",
                        clean_line(&command)
                    ),
                ),
            }
        }
        Event::McpWait { wait } => mcp_wait_notice(app, &wait),
        Event::McpTools { .. } => {}
        Event::ApprovalRequested {
            id,
            name,
            summary,
            command,
            cwd,
            reason,
        } => app.overlays.approvals.push(ApprovalRequest {
            id,
            name,
            summary,
            command,
            cwd,
            reason,
            by: None,
        }),
        _ => {}
    }
}

/// What an aborted turn says: why, and how to go on.
fn aborted(reason: AbortReason, message: &str, error: Option<ErrorKind>) -> (NoticeKind, String) {
    match reason {
        AbortReason::Interrupted => (
            NoticeKind::Warning,
            "Interrupted. Press Enter on an empty input (or F5) to resume with the plan intact, or type new guidance.".to_string(),
        ),
        AbortReason::MaxTurns => (NoticeKind::Warning, format!("Stopped: {message}. F5 resumes.")),
        AbortReason::Hook => (NoticeKind::Warning, format!("Stopped by a hook: {message}. F5 resumes.")),
        // A setting or the credentials: fixable, and resuming reloads them.
        AbortReason::Failed if matches!(error, Some(ErrorKind::Config | ErrorKind::Auth)) => (
            NoticeKind::Error,
            format!("{}. Fix the setting and press F5: the settings are read again.", sentence(message)),
        ),
        AbortReason::Failed if error == Some(ErrorKind::Unreachable) => (
            NoticeKind::Error,
            format!("{message} Start it (or fix base_url) and press F5."),
        ),
        // A broken stream, a failing or busy service: nothing of
        // the user's to fix.
        AbortReason::Failed if matches!(error, Some(ErrorKind::RetriesExhausted | ErrorKind::Server | ErrorKind::RateLimited)) => (
            NoticeKind::Error,
            format!("{}. Nothing on your side to fix: press F5 to try again (the plan is intact).", sentence(message)),
        ),
        AbortReason::Failed => (NoticeKind::Error, format!("{}. Fix it and press F5 to resume.", sentence(message))),
    }
}

/// `message` without its closing full stop, to be followed by one.
fn sentence(message: &str) -> &str {
    message.trim_end().trim_end_matches('.')
}

/// Marks text the user sent: shown at once, queued while a turn runs.
pub(crate) fn show_sent(app: &mut App, text: &str) {
    let kind = if app.status.turn.running() {
        EntryKind::Queued
    } else {
        EntryKind::User
    };
    // The running turn's output (the reply streaming now, its next
    // rounds) goes on above a queued message.
    app.root.conversation.push(kind, text);
    app.root.conversation.scroll.follow = true;
}

/// Says the task given at start waits for MCP servers; then what it
/// starts without.
fn mcp_wait_notice(app: &mut App, wait: &crate::events::McpWait) {
    use crate::events::McpWait;
    let text = match wait {
        McpWait::Waiting { names } => format!(
            "Waiting for MCP servers: {}… (Esc starts without them)",
            clean_line(&names.join(", "))
        ),
        McpWait::Over {
            skipped,
            failed,
            starting,
        } => {
            let mut without = Vec::new();
            if !starting.is_empty() {
                without.push(format!(
                    "{} (still starting; their tools join when ready)",
                    clean_line(&starting.join(", "))
                ));
            }
            if !failed.is_empty() {
                without.push(format!("{} (failed)", clean_line(&failed.join(", "))));
            }
            if without.is_empty() {
                return;
            }
            let lead = if *skipped {
                "Skipped the wait; starting"
            } else {
                "Starting"
            };
            format!("{lead} without MCP servers {}.", without.join(", "))
        }
    };
    app.notice(NoticeKind::Info, text);
}
