//! The status line's part of an engine event: what the agent is doing
//! (and the turn's clock), whether a stopped turn can be resumed, and the
//! tokens counted. The model and the approval mode, which a notice
//! compares with what was there before, are taken by the update itself.

use std::time::Instant;

use super::{Activity, Status};
use crate::events::{AbortReason, ErrorKind, Event};
use crate::text::clean_line;

impl Status {
    pub fn apply(&mut self, event: &Event, now: Instant) {
        let turn = &mut self.turn;
        match event {
            Event::TurnStarted { .. } => self.start_turn(now),
            Event::RoundStarted { .. }
            | Event::ReasoningDelta { .. }
            | Event::ToolCallEnd { .. } => turn.set_activity(Activity::Thinking, now),
            Event::TextDelta { .. } => turn.set_activity(Activity::Streaming, now),
            Event::Retrying { reason, .. } => {
                let reason = clean_line(reason).into_owned();
                turn.set_activity(Activity::Retrying { reason }, now);
            }
            Event::ToolCallBegin { name, summary, .. } => {
                let name = crate::tui::state::trace::shown_name(name, &summary.detail).into_owned();
                turn.set_activity(Activity::Tool { name }, now);
            }
            Event::ApprovalRequested { .. } => turn.set_activity(Activity::Approval, now),
            Event::McpWait { wait } => {
                let waiting = matches!(wait, crate::events::McpWait::Waiting { .. });
                let next = if waiting {
                    Activity::McpWait
                } else {
                    Activity::Thinking
                };
                turn.set_activity(next, now);
            }
            Event::CompactionBegin { .. } => turn.set_activity(Activity::Compacting, now),
            Event::CompactionEnd { .. } => {
                let next = if turn.running() {
                    Activity::Thinking
                } else {
                    Activity::Idle
                };
                turn.set_activity(next, now);
            }
            Event::TurnComplete { open_items, .. } => {
                turn.end(Activity::Idle, now);
                turn.set_resumable(*open_items > 0);
            }
            Event::TurnAborted { reason, .. } => {
                let activity = match reason {
                    AbortReason::Interrupted => Activity::Interrupted,
                    AbortReason::MaxTurns | AbortReason::Failed | AbortReason::Hook => {
                        Activity::Failed
                    }
                };
                turn.end(activity, now);
                turn.set_resumable(true);
            }
            // A resume held back by settings that still fail can be asked again.
            Event::Error { kind, .. }
                if *kind == ErrorKind::Config
                    && !turn.running()
                    && *turn.activity() == Activity::Failed =>
            {
                turn.set_resumable(true);
            }
            Event::SessionReset => turn.set_resumable(false),
            Event::Usage {
                model,
                request,
                totals,
            } => self.accounts.add_usage(model, *request, *totals),
            Event::ContextUsage { used, window } => self.accounts.set_context(*used, *window),
            Event::McpServer { name, status } => self.mcp.set(&clean_line(name), status.clone()),
            Event::Catalog { entries } => self.catalog.clone_from(entries),
            Event::Jobs { jobs } => self.jobs.clone_from(jobs),
            Event::Hooks { active, waiting } => {
                self.hooks.active.clone_from(active);
                self.hooks.waiting.clone_from(waiting);
            }
            Event::McpTools {
                offered,
                deferred,
                tokens,
                budget,
            } => {
                self.mcp.mode = Some(super::mcp::ToolsMode {
                    offered: *offered,
                    deferred: *deferred,
                    tokens: *tokens,
                    budget: *budget,
                });
            }
            _ => {}
        }
    }
}
