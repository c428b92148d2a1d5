//! Which events the transcript keeps.

use super::Event;

impl Event {
    /// A fact a resumed session needs, so the transcript keeps it as sent
    /// (in its envelope): a turn's start and end, each request's start and
    /// usage, each call's start and end (the end holds the result the
    /// model read), each plan revision, each compaction's start and end.
    /// The rest is streamed pieces (the reply itself is kept whole), or
    /// the state of this process (modes, ids, the waits for an answer).
    pub fn is_durable(&self) -> bool {
        match self {
            Event::TurnStarted { .. }
            | Event::RoundStarted { .. }
            | Event::ToolCallBegin { .. }
            | Event::ToolCallEnd { .. }
            | Event::PlanUpdated { .. }
            | Event::PlanProposed { .. }
            | Event::PlanApproved { .. }
            | Event::PlanChangeAccepted { .. }
            | Event::PlanChangeRefused { .. }
            | Event::GoalSet { .. }
            | Event::GoalUpdated { .. }
            | Event::ItemChecked { .. }
            | Event::Usage { .. }
            | Event::TaskDone { .. }
            | Event::ContextUsage { .. }
            | Event::CompactionBegin { .. }
            | Event::CompactionEnd { .. }
            | Event::TurnComplete { .. }
            | Event::TurnAborted { .. }
            | Event::Hook { .. } => true,
            Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::Retrying { .. }
            | Event::ToolCallOutputDelta { .. }
            | Event::ToolCallProgress { .. }
            | Event::PlanStats { .. }
            | Event::PlanChangeRequested { .. }
            | Event::SummaryDelta { .. }
            | Event::Queued { .. }
            | Event::Error { .. }
            | Event::Checkpoint { .. }
            | Event::ModelChanged { .. }
            | Event::SessionReset
            | Event::SessionStarted { .. }
            | Event::History { .. }
            | Event::UserMessage { .. }
            | Event::ApprovalRequested { .. }
            | Event::ApprovalMode { .. }
            | Event::McpServer { .. }
            | Event::McpWait { .. }
            | Event::McpTools { .. }
            | Event::Hooks { .. }
            | Event::Catalog { .. }
            | Event::Jobs { .. }
            | Event::GoalBudget { .. }
            | Event::Idle { .. } => false,
        }
    }
}
