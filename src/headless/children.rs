//! Headless text for subagents: a child thread's calls, plan and end as
//! lines indented under the parent's, each naming its task (`explore ·
//! Find the parser`), so the children's work interleaves readably. A
//! child's own text is not printed: its answer comes back as the task's
//! result, which the parent reads.

use std::collections::HashMap;

use crate::events::{Envelope, Event, ThreadId, ToolStatus};
use crate::text::clean_line;

/// What the lines of children need to remember.
#[derive(Debug, Default)]
pub(super) struct ChildLines {
    /// The parent's task calls: how each is shown, by call id.
    tasks: HashMap<String, String>,
    /// Each child's running calls: tool and summary, by thread and id.
    running: HashMap<(ThreadId, String), (String, String)>,
}

impl ChildLines {
    /// Notes a root thread's call (a task names its children).
    pub(super) fn root(&mut self, event: &Event) {
        if let Event::ToolCallBegin { id, summary, .. } = event {
            self.tasks
                .insert(id.clone(), clean_line(&summary.line).into_owned());
        }
    }

    /// The line a child's event prints, if any.
    pub(super) fn line(&mut self, envelope: &Envelope) -> Option<String> {
        let label = envelope
            .parent_call
            .as_ref()
            .and_then(|call| self.tasks.get(call))
            .cloned()
            .unwrap_or_else(|| envelope.thread.to_string());
        let said = match &envelope.event {
            Event::ToolCallBegin {
                id, name, summary, ..
            } => {
                let shown = (
                    clean_line(name).into_owned(),
                    clean_line(&summary.line).into_owned(),
                );
                self.running.insert((envelope.thread, id.clone()), shown);
                return None;
            }
            Event::ToolCallEnd {
                id,
                status,
                duration_ms,
                ..
            } => {
                let (name, summary) = self
                    .running
                    .remove(&(envelope.thread, id.clone()))
                    .unwrap_or_default();
                let status = match status {
                    ToolStatus::Ok => "ok",
                    ToolStatus::Error => "error",
                    ToolStatus::Interrupted => "interrupted",
                };
                let sep = if summary.is_empty() { "" } else { " " };
                format!("→ {name}{sep}{summary}  [{status} {duration_ms} ms]")
            }
            Event::PlanUpdated { items, .. } => {
                let (done, total) = crate::todo::progress(items);
                let active = items
                    .iter()
                    .find(|i| i.status == crate::todo::TodoStatus::InProgress)
                    .map(|i| format!(" · {}", clean_line(&i.active_form)))
                    .unwrap_or_default();
                format!("plan {done}/{total}{active}")
            }
            Event::TurnComplete { .. } => "done".to_string(),
            Event::TurnAborted { message, .. } => format!("stopped: {}", clean_line(message)),
            _ => return None,
        };
        Some(format!("  │ {label} {said}\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{ToolDetail, ToolSummary};

    fn begin(id: &str, name: &str, line: &str) -> Event {
        Event::ToolCallBegin {
            id: id.into(),
            name: name.into(),
            summary: ToolSummary {
                line: line.into(),
                detail: ToolDetail::Output,
            },
            input: serde_json::Value::Null,
            plan_item_id: None,
            plan_item: None,
        }
    }

    #[test]
    fn a_childs_calls_are_named_by_its_task_and_indented() {
        let mut lines = ChildLines::default();
        lines.root(&begin("t1", "task", "explore · Find A"));
        let child = |event| Envelope {
            thread: ThreadId(1),
            parent_call: Some("t1".into()),
            turn: 1,
            event,
        };
        assert_eq!(lines.line(&child(begin("c1", "read_file", "a.txt"))), None);
        let end = Event::ToolCallEnd {
            id: "c1".into(),
            name: "read_file".into(),
            status: ToolStatus::Ok,
            outcome: crate::events::ToolOutcome::Ok,
            duration_ms: 3,
            output: "1\tA".into(),
            exit_code: None,
        };
        assert_eq!(
            lines.line(&child(end)).as_deref(),
            Some("  │ explore · Find A → read_file a.txt  [ok 3 ms]\n")
        );
        assert_eq!(
            lines.line(&child(Event::TextDelta { text: "hi".into() })),
            None,
            "a child's text is its answer, read by the parent"
        );
    }
}
