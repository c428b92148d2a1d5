//! Pure state transitions: engine events and terminal input in, state
//! changes and effects out. No I/O: the app loop carries out the effects.
//! Invariant: every key either changes state, yields an effect, or goes to
//! the input box (an unbound Ctrl/Alt chord does nothing and types nothing);
//! typed text is only ever removed by sending it or Ctrl+C.

mod approval;
mod daily;
mod keys;
mod plan;
mod scroll;

use std::time::{Duration, Instant};

pub use daily::{COPY_CAP, edited, files_listed, last_reply};
pub use keys::{on_key, on_paste, resolve};
pub use plan::send_edit;
pub use scroll::{TRACE_PAGE, on_mouse};

use super::state::{
    Activity, App, ApprovalRequest, EntryKind, NoticeKind, Revision, TraceStatus, first_clause,
};
use crate::events::{
    AbortReason, CompactReason, ErrorKind, Event, Op, StopReason, ToolDetail, ToolStatus,
    ToolSummary,
};
use crate::text::clean_line;

/// What the app loop must do after an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Send(Op),
    /// Append `text` to the spill file of trace entry `serial` (made on first use).
    SpillOutput {
        serial: u64,
        text: String,
    },
    /// Read the settings again and start the engine (the app opened
    /// without a provider).
    StartEngine,
    /// Read the stored sessions once and open the picker over them.
    OpenPicker,
    /// Write session `id` as Markdown to `path` (relative to the
    /// workspace; `None`: `waypoint-session-ID.md` there).
    Export {
        id: String,
        path: Option<String>,
    },
    /// Clear and fully redraw the terminal (Ctrl+L, /clear).
    Redraw,
    /// List the workspace's files for the `@` picker (once per opening).
    ListFiles,
    /// Edit `text` in `$VISUAL`/`$EDITOR`; the result replaces the input.
    Edit(String),
    /// Put `text` on the clipboard through the terminal (OSC 52).
    Copy(String),
    /// Switch mouse capture on (`true`) or off.
    MouseCapture(bool),
    Quit,
}

/// What a message sent after the engine died is answered with.
pub const ENGINE_STOPPED: &str =
    "The engine stopped unexpectedly; see the log file. Restart Waypoint.";

/// No provider could be set up: `help` (the first-run help) is shown now
/// and again whenever a message is sent.
pub fn no_engine(app: &mut App, help: String, now: Instant) {
    app.status.has_engine = false;
    app.status.set_activity(Activity::NoProvider, now);
    app.notice(NoticeKind::Error, help.clone());
    app.status.setup_help = Some(help);
}

/// An engine started after the app opened without one.
pub fn engine_started(app: &mut App, model: String, now: Instant) {
    app.status.has_engine = true;
    app.status.setup_help = None;
    app.status.set_activity(Activity::Idle, now);
    app.status.set_model(model);
    app.notice(
        NoticeKind::Info,
        format!("Settings read again: using {}.", app.status.model),
    );
}

/// The engine's channel closed mid-session: nothing runs any more.
pub fn engine_stopped(app: &mut App, now: Instant) {
    app.status.has_engine = false;
    app.status.can_resume = false;
    app.trace.stop_running(now);
    end_turn(app, Activity::Failed, now);
    app.notice(NoticeKind::Error, ENGINE_STOPPED);
    app.status.setup_help = Some(ENGINE_STOPPED.to_string());
}

pub fn on_event(app: &mut App, event: Event, now: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    match event {
        Event::TurnStarted { resumed } => {
            app.status.start_turn(now);
            app.plan.stopped_open = None;
            app.plan.finished_open = false;
            app.conversation.promote_queued(resumed);
        }
        Event::RoundStarted { .. } => {
            app.conversation.end_retries();
            app.conversation.round_entry = None;
            app.conversation.round_reasoning = None;
            app.status.set_activity(Activity::Thinking, now);
        }
        Event::ReasoningDelta { text } => {
            app.conversation.settle_retry();
            app.conversation.push_reasoning(&text);
            app.status.set_activity(Activity::Thinking, now);
        }
        Event::TextDelta { text } => {
            app.conversation.settle_retry();
            app.conversation.push_reply(&text);
            app.status.set_activity(Activity::Streaming, now);
        }
        Event::Retrying {
            attempt,
            delay_ms,
            reason,
        } => {
            // Text streamed in this round is void: the reply starts again
            // (a message queued meanwhile may sit below it).
            app.conversation.drop_round_reply();
            let reason = clean_line(&reason).into_owned();
            let of = app
                .status
                .max_retries
                .map(|max| format!("/{max}"))
                .unwrap_or_default();
            let secs = delay_ms as f64 / 1000.0;
            let wait = if delay_ms < 1000 {
                format!("{secs:.1} s")
            } else {
                format!("{secs:.0} s")
            };
            app.conversation.retrying(
                attempt,
                format!("retrying ({attempt}{of}) in {wait}: {reason}"),
            );
            app.status.set_activity(Activity::Retrying { reason }, now);
        }
        Event::ToolCallBegin {
            id,
            name,
            summary,
            plan_item,
            plan_item_id,
            ..
        } => {
            app.conversation.settle_retry();
            app.conversation.round_entry = None;
            // The model chose these strings: shown as one clean line each.
            let name = clean_line(&name).into_owned();
            let summary = ToolSummary {
                line: clean_line(&summary.line).into_owned(),
                ..summary
            };
            let plan_item = plan_item.map(|p| clean_line(&p).into_owned());
            app.status
                .set_activity(Activity::Tool { name: name.clone() }, now);
            app.trace.begin(id, name, summary, plan_item, now);
            if let Some(t) = app.trace.entries.last_mut() {
                t.plan_item_id = plan_item_id;
                app.conversation
                    .push_tool(t.serial, t.cell_text(), t.started);
            }
            plan::sync(app);
        }
        Event::ToolCallOutputDelta { id, chunk } => {
            if let Some(t) = app.trace.by_id(&id) {
                t.streamed = true;
                let spill = t.output.push(chunk);
                effects.extend(spill_effect(t.serial, spill));
                let (serial, tail) = (t.serial, cell_tail(t));
                app.conversation.tool_tail(serial, tail);
            }
        }
        Event::ToolCallEnd {
            id,
            status,
            outcome,
            duration_ms,
            output,
            exit_code,
            ..
        } => {
            let mut refused = None;
            let mut cell = None;
            if let Some(t) = app.trace.by_id(&id) {
                t.status = status.into();
                t.duration = Some(Duration::from_millis(duration_ms));
                // A command that ran but failed is shown as failed.
                if let Some(code) = exit_code.filter(|c| *c != 0) {
                    t.exit_code = Some(code);
                    if t.status == TraceStatus::Ok {
                        t.status = TraceStatus::Error;
                    }
                }
                if let crate::events::ToolOutcome::Refused {
                    by: crate::events::Refuser::Plan,
                    reason,
                } = &outcome
                {
                    t.refusal = Some(crate::text::clean_line(reason.trim()).into_owned());
                    refused.clone_from(&t.refusal);
                }
                let spill = if !t.streamed {
                    t.output.push(output)
                } else if status != ToolStatus::Ok {
                    // Keep the live log (and its spill file); the result's
                    // first line says why it stopped (the rest repeats the log).
                    t.output
                        .push_line(output.lines().next().unwrap_or_default())
                } else {
                    None
                };
                effects.extend(spill_effect(t.serial, spill));
                cell = Some((t.serial, t.status, t.cell_text(), cell_tail(t)));
            }
            if let Some((serial, status, text, tail)) = cell {
                app.conversation.end_tool(serial, status, text);
                app.conversation.tool_tail(serial, tail);
            }
            if let Some(reason) = refused {
                app.plan.refused = Some(first_clause(&reason).to_string());
            }
            app.status.set_activity(Activity::Thinking, now);
        }
        Event::PlanUpdated {
            items,
            diff,
            revision,
            author,
            at,
            ..
        } => {
            app.plan.revisions.push(Revision {
                revision,
                author,
                at,
                items: items.clone(),
                diff: diff.clone(),
            });
            app.plan.update(items, &diff, now);
            plan::sync(app);
        }
        Event::PlanStats { items, running } => app.plan.set_stats(items, running, now),
        Event::Usage {
            model,
            request,
            totals,
        } => app.status.add_usage(&model, request, totals),
        Event::ContextUsage { used, window } => app.status.context = Some((used, window)),
        Event::CompactionBegin { reason } => {
            let why = match reason {
                CompactReason::Threshold => "the context is nearly full",
                CompactReason::User => "asked with /compact",
                CompactReason::TooLong => "the prompt was too long for the model",
            };
            app.conversation.begin_compaction(why);
            app.status.set_activity(Activity::Compacting, now);
        }
        Event::SummaryDelta { text } => app.conversation.push_summary(&text),
        Event::CompactionEnd {
            before_tokens,
            after_tokens,
            fallback,
        } => {
            app.conversation
                .end_compaction(before_tokens, after_tokens, fallback);
            let next = if app.status.running {
                Activity::Thinking
            } else {
                Activity::Idle
            };
            app.status.set_activity(next, now);
        }
        Event::Queued { .. } => {}
        Event::TurnComplete {
            open_items,
            stop_reason,
        } => {
            end_turn(app, Activity::Idle, now);
            app.status.can_resume = open_items > 0;
            app.plan.stopped_open = (open_items > 0).then_some(open_items);
            app.plan.finished_open = open_items > 0;
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
            let activity = match reason {
                AbortReason::Interrupted => Activity::Interrupted,
                AbortReason::MaxTurns | AbortReason::Failed => Activity::Failed,
            };
            // A reply the failure broke off is never shown as if whole.
            if reason == AbortReason::Failed {
                app.conversation.mark_round_cut();
            }
            end_turn(app, activity, now);
            // The engine keeps messages queued before an interrupt in the
            // conversation: the next turn, resumed or not, delivers them.
            if reason == AbortReason::Interrupted
                && app
                    .conversation
                    .entries
                    .iter()
                    .any(|e| e.kind == EntryKind::Queued)
            {
                app.conversation.queued_held = true;
            }
            app.status.can_resume = true;
            app.plan.stopped();
            let (kind, text) = match reason {
                AbortReason::Interrupted => (
                    NoticeKind::Warning,
                    "Interrupted. Press Enter on an empty input (or Ctrl+R) to resume with the plan intact, or type new guidance.".to_string(),
                ),
                AbortReason::MaxTurns => (NoticeKind::Warning, format!("Stopped: {message}. Ctrl+R resumes.")),
                // A setting or the credentials: fixable, and resuming reloads them.
                AbortReason::Failed if matches!(error, Some(ErrorKind::Config | ErrorKind::Auth)) => (
                    NoticeKind::Error,
                    format!("{}. Fix the setting and press Ctrl+R: the settings are read again.", sentence(&message)),
                ),
                AbortReason::Failed if error == Some(ErrorKind::Unreachable) => (
                    NoticeKind::Error,
                    format!("{message} Start it (or fix base_url) and press Ctrl+R."),
                ),
                // A broken stream, a failing or busy service: nothing of
                // the user's to fix.
                AbortReason::Failed if matches!(error, Some(ErrorKind::RetriesExhausted | ErrorKind::Server | ErrorKind::RateLimited)) => (
                    NoticeKind::Error,
                    format!("{}. Nothing on your side to fix: press Ctrl+R to try again (the plan is intact).", sentence(&message)),
                ),
                AbortReason::Failed => (NoticeKind::Error, format!("{}. Fix it and press Ctrl+R to resume.", sentence(&message))),
            };
            app.notice(kind, text);
        }
        Event::Error { kind, message } => {
            // A resume held back by settings that still fail can be asked again.
            if kind == ErrorKind::Config
                && !app.status.running
                && app.status.activity == Activity::Failed
            {
                app.status.can_resume = true;
            }
            // A refused plan edit changed nothing; the message says why.
            let message = if kind == ErrorKind::PlanEdit {
                clean_line(&message).into_owned()
            } else {
                message
            };
            app.notice(NoticeKind::Error, message);
        }
        Event::ModelChanged { model, .. } => {
            if model != app.status.model {
                app.notice(
                    NoticeKind::Info,
                    format!("Model: {model} from the next request on."),
                );
            }
            app.status.set_model(model);
        }
        Event::SessionReset => {
            approval::dropped(app);
            // The engine dropped the conversation and the plan (an empty
            // `PlanUpdated` came first); the token totals stay.
            app.conversation.clear();
            app.trace.clear();
            app.status.can_resume = false;
            app.plan.stopped_open = None;
            forget_plan_history(app);
            app.notice(
                NoticeKind::Info,
                "New session: empty conversation and plan.",
            );
        }
        Event::SessionStarted {
            id,
            path,
            resumed,
            notes,
        } => {
            let mut notices = Vec::new();
            if resumed {
                notices.push((
                    NoticeKind::Info,
                    format!("Resumed session {}.", crate::session::short_id(&id)),
                ));
            }
            notices.extend(
                notes
                    .into_iter()
                    .map(|note| (NoticeKind::Warning, format!("Note: {note}"))),
            );
            if resumed {
                // The history comes next and replaces the screen: they follow it.
                app.status.session_notices = notices;
            } else {
                for (kind, text) in notices {
                    app.notice(kind, text);
                }
            }
            // Another session's revisions are not this one's.
            if app
                .status
                .session
                .as_ref()
                .is_some_and(|(old, _)| *old != id)
            {
                forget_plan_history(app);
            }
            app.status.session = Some((id, path));
        }
        Event::History { events } => {
            // The screen shows this session's past, as it was seen live.
            app.conversation.clear();
            app.trace.clear();
            app.plan
                .update(Vec::new(), &crate::todo::PlanDiff::default(), now);
            forget_plan_history(app);
            app.status.clear_usage();
            for past in events {
                effects.extend(on_event(app, past.event, now));
            }
            // Nothing of the past waits for an answer.
            approval::dropped(app);
            for (kind, text) in std::mem::take(&mut app.status.session_notices) {
                app.notice(kind, text);
            }
            // Nothing in it changed just now.
            app.plan.changed.clear();
            app.plan.removed.clear();
            plan::sync(app);
            app.conversation.scroll.follow = true;
        }
        Event::UserMessage { text } => app.conversation.push(EntryKind::User, text),
        Event::ApprovalMode { mode, sandboxed } => {
            // The first one is the mode the app started in; later ones answer /approval.
            if app
                .status
                .approval
                .is_some_and(|(m, s)| (m, s) != (mode, sandboxed))
            {
                let sandbox = if sandboxed {
                    ", commands in the sandbox"
                } else {
                    ""
                };
                app.notice(
                    NoticeKind::Info,
                    format!("Approval mode: {mode}{sandbox}, from the next tool call on."),
                );
            }
            app.status.approval = Some((mode, sandboxed));
        }
        Event::ApprovalRequested {
            id,
            name,
            summary,
            command,
            cwd,
            reason,
        } => approval::requested(
            app,
            ApprovalRequest {
                id,
                name,
                summary,
                command,
                cwd,
                reason,
            },
            now,
        ),
        Event::Idle => {}
    }
    effects
}

/// Another session (or a new one): no revisions, selection, prompt or banner.
fn forget_plan_history(app: &mut App) {
    app.plan.revisions.clear();
    // The old session's account: its ids mean other items in the next one.
    app.plan.stats.clear();
    app.plan.stats_running = None;
    app.plan.selected = None;
    app.plan.prompt = None;
    app.plan.finished_open = false;
    plan::sync(app);
}

/// The effect that writes what a tool's output log handed back for its spill file.
fn spill_effect(serial: u64, text: Option<String>) -> Option<Effect> {
    text.map(|text| Effect::SpillOutput { serial, text })
}

/// `message` without its closing full stop, to be followed by one.
fn sentence(message: &str) -> &str {
    message.trim_end().trim_end_matches('.')
}

fn end_turn(app: &mut App, activity: Activity, now: Instant) {
    approval::dropped(app);
    app.status.end_turn(activity, now);
    app.conversation.end_retries();
    app.conversation.round_entry = None;
}

/// Marks text the user sent: shown at once, queued while a turn runs.
pub(crate) fn show_sent(app: &mut App, text: &str) {
    let kind = if app.status.running {
        EntryKind::Queued
    } else {
        EntryKind::User
    };
    // The reply streaming now (`round_entry`) goes on above a queued message.
    app.conversation.push(kind, text);
    app.conversation.scroll.follow = true;
}

/// The output lines a tool cell shows under it: a command's last three
/// (live while it runs), the end of any other call's error; none for a
/// call that went well (its one line says enough) or for the plan tools.
fn cell_tail(t: &crate::tui::state::TraceEntry) -> Vec<String> {
    const TAIL_LINES: usize = 3;
    if t.summary.detail == ToolDetail::Plan {
        // A refused plan update says why under its cell, not only in the
        // Tools pane.
        return match (&t.refusal, t.status) {
            (Some(why), TraceStatus::Error) => vec![why.clone()],
            (None, TraceStatus::Error) => t.output.command_tail(1),
            _ => Vec::new(),
        };
    }
    if t.name == "bash" || t.status != TraceStatus::Ok {
        return t.output.command_tail(TAIL_LINES);
    }
    Vec::new()
}
