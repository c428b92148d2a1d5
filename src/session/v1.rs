//! Reading format 1 (Waypoint 0.1): its records told the session's facts
//! in shapes of their own (`turn_start`, `tool_call`, `tool_result`,
//! `plan`, `usage`, `turn_end`); each is turned here into the events the
//! engine sent then, addressed to the turn it happened in, so the rest of
//! the reader knows one format. Its `user`, `assistant`, `approval` and
//! `compaction` records are format 2's already. Invariant: the
//! conversation an upgraded file replays to is the one its records gave
//! (a result's `is_error` is kept), and a file that format 2 continued
//! (a resumed old session) reads as one history.

use std::borrow::Cow;

use serde::Deserialize;

use super::record::{Record, TurnOutcome};
use crate::chat::Usage;
use crate::events::{
    AbortReason, Envelope, ErrorKind, Event, Failure, StopReason, ToolOutcome, ToolStatus,
    ToolSummary,
};
use crate::todo::{Author, PlanDiff, TodoItem, TodoManager};

/// The records only format 1 has.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Legacy {
    TurnStart {
        resumed: bool,
        at: u64,
    },
    ToolCall {
        id: String,
        name: String,
        summary: ToolSummary,
        #[serde(default)]
        plan_item_id: Option<String>,
        #[serde(default)]
        plan_item: Option<String>,
        at: u64,
    },
    ToolResult {
        id: String,
        name: String,
        content: String,
        #[serde(default)]
        is_error: bool,
        status: ToolStatus,
        #[serde(default)]
        outcome: Option<ToolOutcome>,
        duration_ms: u64,
        #[serde(default)]
        exit_code: Option<i32>,
        at: u64,
    },
    Plan {
        items: Vec<TodoItem>,
        at: u64,
        #[serde(default)]
        author: Author,
        #[serde(default)]
        note: Option<String>,
    },
    Usage {
        model: String,
        usage: Usage,
        #[serde(default)]
        context: Option<(u64, u64)>,
    },
    TurnEnd {
        outcome: TurnOutcome,
        #[serde(default)]
        stop_reason: Option<StopReason>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        error: Option<ErrorKind>,
        open_items: usize,
        at: u64,
    },
    #[serde(other)]
    Unknown,
}

/// Turns a transcript's records into format 2 as they are read.
#[derive(Default)]
pub(super) struct Upgrader {
    turn: u32,
    round: u32,
    plan: Vec<TodoItem>,
    revisions: u32,
    totals: Usage,
    /// A format 2 compaction is open (its start was read).
    compacting: bool,
    /// A request's start was read and its reply not yet (format 1 kept
    /// no request starts: each reply had one).
    requesting: bool,
    /// The last time read, for the events format 1 kept no time of.
    at: u64,
}

impl Upgrader {
    /// A format 2 record, passed on (an old compaction gets the start and
    /// end events it was shown with; a reply, its request's start).
    pub(super) fn current(&mut self, record: Record<'static>, out: &mut Vec<Record<'static>>) {
        if let Some(at) = record.at() {
            self.at = at;
        }
        match &record {
            Record::Event { envelope, .. } => {
                self.turn = envelope.turn;
                match &envelope.event {
                    Event::CompactionBegin { .. } => self.compacting = true,
                    Event::CompactionEnd { .. } => self.compacting = false,
                    Event::RoundStarted { round } => {
                        self.round = *round;
                        self.requesting = true;
                    }
                    Event::PlanUpdated {
                        items, revision, ..
                    } => {
                        self.plan.clone_from(items);
                        self.revisions = *revision;
                    }
                    _ => {}
                }
                out.push(record);
            }
            Record::Compaction {
                reason,
                before_tokens,
                after_tokens,
                fallback,
                ..
            } if !self.compacting => {
                let begin = Event::CompactionBegin { reason: *reason };
                let end = Event::CompactionEnd {
                    before_tokens: *before_tokens,
                    after_tokens: *after_tokens,
                    fallback: *fallback,
                };
                self.push(out, begin);
                out.push(record);
                self.push(out, end);
            }
            Record::Assistant { .. } => {
                if !std::mem::take(&mut self.requesting) {
                    self.round += 1;
                    self.push(out, Event::RoundStarted { round: self.round });
                }
                out.push(record);
            }
            _ => out.push(record),
        }
    }

    /// A format 1 record, as the events it stood for.
    pub(super) fn legacy(&mut self, record: Legacy, out: &mut Vec<Record<'static>>) {
        match record {
            Legacy::TurnStart { resumed, at } => {
                self.at = at;
                self.turn += 1;
                self.round = 0;
                self.push(out, Event::TurnStarted { resumed });
            }
            Legacy::ToolCall {
                id,
                name,
                summary,
                plan_item_id,
                plan_item,
                at,
            } => {
                self.at = at;
                let begin = Event::ToolCallBegin {
                    id,
                    name,
                    summary,
                    input: serde_json::Value::Null,
                    plan_item_id,
                    plan_item,
                };
                self.push(out, begin);
            }
            Legacy::ToolResult {
                id,
                name,
                content,
                is_error,
                status,
                outcome,
                duration_ms,
                exit_code,
                at,
            } => {
                self.at = at;
                let end = Event::ToolCallEnd {
                    id,
                    name,
                    status,
                    outcome: outcome_of(outcome, status, is_error),
                    duration_ms,
                    output: content,
                    exit_code,
                };
                self.push(out, end);
            }
            Legacy::Plan {
                items,
                at,
                author,
                note,
            } => {
                self.at = at;
                let event = self.plan(items, author, note);
                self.push(out, event);
            }
            Legacy::Usage {
                model,
                usage,
                context,
            } => {
                if let Some((used, window)) = context {
                    self.push(out, Event::ContextUsage { used, window });
                }
                self.totals.add(&usage);
                let event = Event::Usage {
                    model,
                    request: usage,
                    totals: self.totals,
                };
                self.push(out, event);
            }
            Legacy::TurnEnd {
                outcome,
                stop_reason,
                message,
                error,
                open_items,
                at,
            } => {
                self.at = at;
                let message = message.unwrap_or_default();
                let reason = match outcome {
                    TurnOutcome::Complete => {
                        let stop_reason = stop_reason.unwrap_or(StopReason::EndTurn);
                        let end = Event::TurnComplete {
                            stop_reason,
                            open_items,
                        };
                        self.push(out, end);
                        return;
                    }
                    TurnOutcome::Interrupted => AbortReason::Interrupted,
                    TurnOutcome::MaxTurns => AbortReason::MaxTurns,
                    TurnOutcome::Failed => AbortReason::Failed,
                };
                let error = error.filter(|_| reason == AbortReason::Failed);
                let end = Event::TurnAborted {
                    reason,
                    message,
                    error,
                };
                self.push(out, end);
            }
            Legacy::Unknown => {}
        }
    }

    /// A revision as it was announced: numbered, rendered, with its diff.
    fn plan(&mut self, items: Vec<TodoItem>, author: Author, note: Option<String>) -> Event {
        self.revisions += 1;
        let diff = PlanDiff::between(&self.plan, &items);
        let rendered = TodoManager::restore(items.clone())
            .map(|p| p.render())
            .unwrap_or_default();
        self.plan.clone_from(&items);
        Event::PlanUpdated {
            items,
            rendered,
            diff,
            revision: self.revisions,
            author,
            at: self.at,
            note,
        }
    }

    fn push(&self, out: &mut Vec<Record<'static>>, event: Event) {
        out.push(Record::Event {
            at: self.at,
            envelope: Cow::Owned(Envelope::root(self.turn, event)),
        });
    }
}

/// A format 1 result's outcome: as recorded, or (before outcomes were
/// recorded) from its status; either way one that reads as an error
/// exactly when the model read the result as one.
fn outcome_of(recorded: Option<ToolOutcome>, status: ToolStatus, is_error: bool) -> ToolOutcome {
    let outcome = recorded.unwrap_or(match status {
        ToolStatus::Ok => ToolOutcome::Ok,
        ToolStatus::Error => ToolOutcome::Failed {
            failure: Failure::Tool,
        },
        ToolStatus::Interrupted => ToolOutcome::Interrupted { partial: false },
    });
    match (outcome.is_error(), is_error) {
        (false, true) => ToolOutcome::Failed {
            failure: Failure::Tool,
        },
        (true, false) => ToolOutcome::Ok,
        _ => outcome,
    }
}
