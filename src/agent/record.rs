//! The session's transcript, seen from the engine: every change to the
//! conversation goes through these methods, which add it and record it in
//! one step, and every event that matters to a resumed session (a turn's
//! start and end, a tool call, a plan revision, usage) is recorded as it
//! is emitted. Invariant: replaying the records rebuilds the conversation
//! exactly (see `session::replay`).

use std::borrow::Cow;

use super::Session;
use crate::events::{AbortReason, ErrorKind, Event, StopReason};
use crate::llm::ContentBlock;
use crate::session::{Record, TurnOutcome, now_ms};

impl Session {
    /// Records `event` (if it is one a resumed session needs) and sends it.
    pub(super) fn emit(&mut self, event: Event) {
        self.record_event(&event);
        // A driver that hung up does not stop the engine from finishing cleanly.
        let _ = self.host.events.send(event);
    }

    pub(super) fn record(&mut self, record: &Record<'_>) {
        let warning = self.host.transcript.record(record);
        self.warn_unsaved(warning);
    }

    /// Tells the driver the transcript could not be written.
    pub(super) fn warn_unsaved(&self, warning: Option<String>) {
        if let Some(message) = warning {
            let _ = self.host.events.send(Event::Error {
                kind: ErrorKind::SessionSave,
                message,
            });
        }
    }

    /// Adds user text to the conversation: the user's own message
    /// (`prompt`) or a note of Waypoint's.
    pub(super) fn add_user_text(&mut self, text: impl Into<String>, prompt: bool) {
        let text = text.into();
        self.record(&Record::User {
            text: Cow::Borrowed(&text),
            prompt,
            at: now_ms(),
        });
        self.thread.conversation.push_user_text(text);
    }

    /// Adds the model's reply.
    pub(super) fn add_assistant(&mut self, content: Vec<ContentBlock>) {
        let model = self.thread.client.model().to_string();
        self.record(&Record::Assistant {
            content: Cow::Borrowed(&content),
            model: Cow::Owned(model),
            at: now_ms(),
        });
        self.thread.conversation.push_assistant(content);
    }

    /// Answers the last reply's tool calls (each result was recorded as it
    /// came), followed by `texts` (the nag).
    pub(super) fn add_tool_results(&mut self, results: Vec<ContentBlock>, texts: Vec<String>) {
        let at = now_ms();
        for text in &texts {
            self.record(&Record::User {
                text: Cow::Borrowed(text),
                prompt: false,
                at,
            });
        }
        self.thread.conversation.push_tool_results(results, texts);
    }

    fn record_event(&mut self, event: &Event) {
        // Streamed pieces are most events, and none is recorded (the whole
        // reply is): they cost one test here.
        if matches!(
            event,
            Event::TextDelta { .. }
                | Event::ReasoningDelta { .. }
                | Event::ToolCallOutputDelta { .. }
                | Event::SummaryDelta { .. }
        ) {
            return;
        }
        // A user's plan change made before this event is recorded first.
        self.settle_user_changes();
        let at = now_ms();
        let record = match event {
            Event::TurnStarted { resumed } => Record::TurnStart {
                resumed: *resumed,
                at,
            },
            Event::ToolCallBegin {
                id,
                name,
                summary,
                plan_item_id,
                plan_item,
                ..
            } => Record::ToolCall {
                id: Cow::Borrowed(id),
                name: Cow::Borrowed(name),
                summary: Cow::Borrowed(summary),
                plan_item_id: plan_item_id.as_deref().map(Cow::Borrowed),
                plan_item: plan_item.as_deref().map(Cow::Borrowed),
                at,
            },
            // A sandbox-blocked call ran already: only a first ask waits.
            Event::ApprovalRequested { id, reason, .. }
                if !matches!(reason, crate::events::ApprovalReason::SandboxBlocked { .. }) =>
            {
                Record::Approval {
                    id: Cow::Borrowed(id),
                    waiting: true,
                    at,
                }
            }
            Event::PlanUpdated { items, author, .. } => Record::Plan {
                items: Cow::Borrowed(items),
                at,
                author: *author,
                note: None,
            },
            Event::ContextUsage { used, window } => {
                self.thread.pending_context = Some((*used, *window));
                return;
            }
            Event::Usage { model, request, .. } => Record::Usage {
                model: Cow::Borrowed(model),
                usage: *request,
                context: self.thread.pending_context.take(),
            },
            Event::TurnComplete {
                stop_reason,
                open_items,
            } => Record::TurnEnd {
                outcome: TurnOutcome::Complete,
                stop_reason: (*stop_reason != StopReason::EndTurn).then(|| stop_reason.clone()),
                message: None,
                error: None,
                open_items: *open_items,
                at,
            },
            Event::TurnAborted {
                reason,
                message,
                error,
            } => Record::TurnEnd {
                outcome: match reason {
                    AbortReason::Interrupted => TurnOutcome::Interrupted,
                    AbortReason::MaxTurns => TurnOutcome::MaxTurns,
                    AbortReason::Failed => TurnOutcome::Failed,
                },
                stop_reason: None,
                message: Some(Cow::Borrowed(message)),
                error: *error,
                open_items: self.thread.plan.lock().manager.open_items().len(),
                at,
            },
            _ => return,
        };
        self.record(&record);
        if matches!(record, Record::TurnEnd { .. }) {
            self.sync_transcript();
        }
        if record.feed(&mut self.thread.ledger) {
            self.send_stats();
        }
    }

    /// The end of a turn: the transcript reaches the disk.
    pub(super) fn sync_transcript(&mut self) {
        let warning = self.host.transcript.sync();
        self.warn_unsaved(warning);
    }
}
