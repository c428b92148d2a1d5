//! Turning a loaded transcript into a session again: the conversation (the
//! records replayed through the same methods the engine used), the plan as
//! last accepted, the token totals, and the history as the events a driver
//! would have seen live. Invariant: the rebuilt conversation is a valid
//! request: a tool call left unanswered because the process died is
//! answered as interrupted (or as not run, when it never started), and a
//! turn that never ended is ended; these repairs are records too, so they
//! are written to the transcript when it is continued.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use serde_json::Value;

use super::SessionError;
use super::load::Loaded;
use super::record::{Header, Record, TurnOutcome};
use super::store::Card;
use crate::chat::Conversation;
use crate::chat::{ContentBlock, Role, Usage};
use crate::events::{AbortReason, Envelope, Event, ThreadId, ToolOutcome};
use crate::todo::{Ledger, TodoItem, TodoManager};

/// What a call that was running when Waypoint stopped is answered with.
pub const DIED_RUNNING: &str = "interrupted: Waypoint stopped (its process ended) while this call was running; it may have done part of its work. Check its effects before running it again.";
/// What follows [`DIED_RUNNING`] when the call's live output was kept.
pub const PRINTED_BEFORE: &str = "What it printed before then (the last 64 KiB at most):";
/// What a call whose result is missing from the middle of the transcript
/// (a write failed then, in an older Waypoint) is answered with.
pub const LOST_RESULT: &str = "not recorded: this call's result was lost (the session could not be saved at the time); check its effects before relying on it.";
/// What a call that waited for the user's approval is answered with.
pub const DIED_WAITING: &str = "not run: Waypoint stopped (its process ended) while this call waited for the user's approval; it never ran.";
/// What a call that had not started is answered with.
pub const DIED_BEFORE: &str =
    "not run: Waypoint stopped (its process ended) before this call started.";
/// The note that ends a turn the process did not finish.
pub const DIED_NOTE: &str = "[Waypoint stopped (its process ended) during the previous response.]";

/// A session read back, ready to be continued.
#[derive(Debug)]
pub struct Restored {
    /// The transcript, as its writer reopens it.
    pub file: StoredFile,
    pub conversation: Conversation,
    pub plan: TodoManager,
    /// How many plan revisions were accepted (the next one is this + 1).
    pub revisions: u32,
    /// What each plan item has cost, as the live engine counted it.
    pub ledger: Ledger,
    pub totals: Usage,
    /// The session as the events a driver saw (user messages included).
    pub history: Vec<Envelope>,
    /// How many turns it had (the next one is this + 1).
    pub turns: u32,
    /// The highest child thread's number (0 when no subagent ran).
    pub threads: u32,
    /// Records that repair a session cut off mid-turn, to be appended.
    pub repairs: Vec<Record<'static>>,
    /// What was skipped or repaired, for the user.
    pub notes: Vec<String>,
    /// The last turn did not finish (interrupted, failed, cut off) or left
    /// plan items open: resuming makes sense.
    pub resumable: bool,
}

/// Where a read session's transcript is, and how far it is whole.
#[derive(Debug)]
pub struct StoredFile {
    pub header: Header,
    pub path: PathBuf,
    /// Where appending goes on (a torn tail is cut off).
    pub valid_len: u64,
    /// The card of the records read; the repairs are counted when the
    /// transcript's writer appends them.
    pub card: Card,
    /// Its checkpoints (points, own-tool changes, restores).
    pub checkpoints: crate::checkpoint::History,
    /// The images it holds whole, which later records refer to.
    pub images: std::collections::HashSet<String>,
}

impl StoredFile {
    /// Opens the transcript again for appending (its lock taken): a
    /// session open in another Waypoint is `SessionError::Locked`.
    pub fn reopen(&self) -> Result<crate::session::Transcript, SessionError> {
        crate::session::Transcript::reopen(
            &self.path,
            self.header.clone(),
            self.card.clone(),
            self.valid_len,
            self.images.clone(),
        )
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                SessionError::Locked(crate::session::short_id(&self.header.id).to_string())
            } else {
                SessionError::io(&self.path, e)
            }
        })
    }
}

/// Rebuilds a session from its records.
pub fn replay(loaded: Loaded) -> Result<Restored, SessionError> {
    let Loaded {
        path,
        header,
        records,
        lines,
        mut notes,
        valid_len,
        images,
    } = loaded;
    let mut r = Replayer {
        card: Card::from_header(&header),
        ..Replayer::default()
    };
    // Each child thread (a subagent) is replayed on its own, from its
    // records; the session's card counts them all.
    let mut children: BTreeMap<ThreadId, Replayer> = BTreeMap::new();
    for record in &records {
        route(&mut r, &mut children, record);
    }
    if r.lost > 0 {
        notes.push(format!(
            "{} tool result(s) were missing from the transcript (a save had failed); they are marked as lost",
            r.lost
        ));
    }
    // Children first: a subagent cut off mid-turn is ended before the
    // parent's call that ran it is answered.
    let mut repairs: Vec<Record<'static>> = children
        .values()
        .flat_map(|child| child.repairs(&path))
        .collect();
    repairs.extend(r.unreported(&children));
    repairs.extend(r.repairs(&path));
    // The card as the file stands: the transcript's writer counts the
    // repairs when it appends them.
    let mut card = r.card.clone();
    card.records = lines as u64;
    for record in &repairs {
        route(&mut r, &mut children, record);
    }
    let threads = children.keys().map(|t| t.0).max().unwrap_or(0);
    if !repairs.is_empty() {
        notes.push(
            "the session was cut off mid-turn; the unfinished turn is marked as interrupted".into(),
        );
    }
    r.conversation
        .validate()
        .map_err(|why| SessionError::Damaged {
            id: header.id.clone(),
            why,
        })?;
    let plan = match TodoManager::restore(r.plan) {
        Ok(plan) => plan,
        Err(e) => {
            notes.push(format!(
                "the stored plan could not be restored ({e}); it starts empty"
            ));
            TodoManager::new()
        }
    };
    let resumable = r.last_outcome != Some(TurnOutcome::Complete) && r.last_outcome.is_some()
        || !plan.open_items().is_empty();
    Ok(Restored {
        file: StoredFile {
            header,
            path,
            valid_len,
            card,
            checkpoints: std::mem::take(&mut r.checkpoints),
            images,
        },
        conversation: r.conversation,
        plan,
        revisions: r.revisions,
        ledger: r.ledger,
        totals: r.totals,
        history: r.history,
        turns: r.turn,
        threads,
        repairs,
        notes,
        resumable,
    })
}

/// Gives `record` to the replayer of its thread (a child's made on
/// first sight; what it adds to the history goes to the root's, in
/// order); the session's card sees every record.
fn route(root: &mut Replayer, children: &mut BTreeMap<ThreadId, Replayer>, record: &Record<'_>) {
    let thread = record.thread();
    if thread.is_root() {
        root.apply(record);
        return;
    }
    root.card.observe(record);
    let child = children.entry(thread).or_insert_with(|| Replayer {
        thread,
        ..Replayer::default()
    });
    match record {
        Record::Thread { record, .. } => child.apply(record),
        Record::Event { envelope, .. } => {
            if child.parent_call.is_none() && envelope.parent_call.is_some() {
                child.parent_call.clone_from(&envelope.parent_call);
                // Its first message came before any event said its call.
                for past in root.history.iter_mut().filter(|e| e.thread == thread) {
                    past.parent_call.clone_from(&envelope.parent_call);
                }
            }
            child.apply(record);
        }
        _ => {}
    }
    // The history keeps the order the records were written in.
    root.history.append(&mut child.history);
}

#[derive(Default)]
struct Replayer {
    /// The thread replayed, and the parent's call that started it.
    thread: ThreadId,
    parent_call: Option<String>,
    card: Card,
    conversation: Conversation,
    plan: Vec<TodoItem>,
    revisions: u32,
    ledger: Ledger,
    totals: Usage,
    history: Vec<Envelope>,
    /// The turn being read (0 before the first).
    turn: u32,
    /// The inputs of the last reply's tool calls, by id.
    inputs: HashMap<String, Value>,
    /// Calls that began (a `tool_call` record) and have no result yet.
    running: HashSet<String>,
    /// Calls waiting for the user's approval when the records end.
    waiting: HashSet<String>,
    /// A turn began and has not ended.
    in_turn: bool,
    last_outcome: Option<TurnOutcome>,
    /// Tool results found missing before a later message, and answered.
    lost: usize,
    /// The session's checkpoints (the root's records).
    checkpoints: crate::checkpoint::History,
    /// (conversation length, history length) each time the conversation
    /// grew: where a rewind cuts the history the driver shows.
    cuts: Vec<(usize, usize)>,
}

impl Replayer {
    /// Adds `event` to the history, in the turn being read.
    fn say(&mut self, event: Event) {
        let envelope = self.address(self.turn, event);
        self.history.push(envelope);
    }

    /// `event` in the replayed thread's envelope.
    fn address(&self, turn: u32, event: Event) -> Envelope {
        Envelope {
            thread: self.thread,
            parent_call: self.parent_call.clone(),
            turn,
            event,
        }
    }

    /// `record` as the replayed thread writes it.
    fn own(&self, record: Record<'static>) -> Record<'static> {
        match record {
            Record::Event { .. } => record,
            _ if self.thread.is_root() => record,
            record => Record::Thread {
                thread: self.thread,
                record: Box::new(record),
            },
        }
    }

    /// A reply's tool calls with no result recorded before the next
    /// message (a write lost them): answered as lost, so the conversation
    /// stays whole.
    fn answer_lost(&mut self) {
        let Some(last) = self.conversation.messages().last() else {
            return;
        };
        if last.role != Role::Assistant {
            return;
        }
        let results: Vec<ContentBlock> = last
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: LOST_RESULT.into(),
                    is_error: true,
                }),
                _ => None,
            })
            .collect();
        if results.is_empty() {
            return;
        }
        self.lost += results.len();
        for id in results.iter().filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
            _ => None,
        }) {
            self.running.remove(&id);
            self.waiting.remove(&id);
        }
        self.conversation.push_tool_results(results, Vec::new());
    }

    fn apply(&mut self, record: &Record<'_>) {
        self.card.observe(record);
        record.feed(&mut self.ledger);
        if matches!(record, Record::User { .. } | Record::Assistant { .. }) {
            self.answer_lost();
        }
        match record {
            Record::User { text, prompt, .. } => {
                self.conversation.push_user_text(text.to_string());
                if *prompt {
                    // A message said between turns starts the next one.
                    let turn = if self.in_turn {
                        self.turn
                    } else {
                        self.turn + 1
                    };
                    let event = Event::UserMessage {
                        text: text.to_string(),
                    };
                    let envelope = self.address(turn, event);
                    self.history.push(envelope);
                }
            }
            Record::Images { images, .. } => {
                let blocks = images.iter().cloned();
                let blocks = blocks
                    .map(|source| ContentBlock::Image { source })
                    .collect();
                self.conversation.push_tool_results(blocks, Vec::new());
            }
            Record::Assistant { content, .. } => self.assistant(content),
            Record::Event { envelope, .. } => self.event(envelope.as_ref().clone()),
            Record::Approval { id, waiting, .. } => {
                if *waiting {
                    self.waiting.insert(id.to_string());
                } else {
                    self.waiting.remove(id.as_ref());
                }
            }
            Record::Compaction {
                summary, messages, ..
            } => {
                self.conversation = Conversation::from_messages(messages.to_vec());
                if let Some(summary) = summary {
                    self.say(Event::SummaryDelta {
                        text: summary.to_string(),
                    });
                }
            }
            Record::Checkpoint { mark } => {
                if let crate::checkpoint::Mark::Restore(restored) = mark
                    && let Some(keep) = restored.messages
                {
                    let messages = self.conversation.messages();
                    let kept = messages[..keep.min(messages.len())].to_vec();
                    self.conversation = Conversation::from_messages(kept);
                    let shown = self.cuts.iter().rev().find(|(c, _)| *c <= keep);
                    self.history.truncate(shown.map_or(0, |&(_, h)| h));
                    self.cuts.retain(|(c, _)| *c <= keep);
                }
                self.checkpoints.add(mark.clone());
            }
            Record::Thread { .. } | Record::Unknown => {}
        }
        let len = self.conversation.messages().len();
        if self.cuts.last().is_none_or(|&(c, _)| c != len) {
            self.cuts.push((len, self.history.len()));
        } else if let Some(last) = self.cuts.last_mut() {
            last.1 = self.history.len();
        }
    }

    /// A reply: its text and reasoning as the driver saw them stream.
    fn assistant(&mut self, content: &[ContentBlock]) {
        self.inputs.clear();
        for block in content.iter() {
            match block {
                ContentBlock::Text { text } => {
                    self.say(Event::TextDelta { text: text.clone() });
                }
                ContentBlock::Thinking { thinking: text, .. }
                | ContentBlock::Reasoning { text, .. }
                    if !text.is_empty() =>
                {
                    self.say(Event::ReasoningDelta { text: text.clone() });
                }
                ContentBlock::ToolUse { id, input, .. } => {
                    self.inputs.insert(id.clone(), input.value());
                }
                _ => {}
            }
        }
        self.conversation.push_assistant(content.to_vec());
    }

    /// A durable event: into the history as it was sent (a call's input
    /// from its reply, the totals as this session's), after what it
    /// changes in the session.
    fn event(&mut self, mut envelope: Envelope) {
        match &mut envelope.event {
            Event::TurnStarted { .. } => {
                self.in_turn = true;
                self.turn = envelope.turn;
            }
            Event::ToolCallBegin { id, input, .. } => {
                self.running.insert(id.clone());
                if input.is_null() {
                    *input = self.inputs.get(id.as_str()).cloned().unwrap_or(Value::Null);
                }
            }
            Event::ToolCallEnd {
                id,
                outcome,
                output,
                ..
            } => {
                self.waiting.remove(id.as_str());
                self.conversation.push_tool_results(
                    vec![ContentBlock::ToolResult {
                        tool_use_id: id.clone(),
                        content: output.clone().into(),
                        is_error: outcome.is_error(),
                    }],
                    Vec::new(),
                );
                // A call that was never announced (not run) is only an answer.
                if !self.running.remove(id.as_str()) {
                    return;
                }
            }
            Event::PlanUpdated {
                items, revision, ..
            } => {
                self.revisions = self.revisions.max(*revision);
                self.plan.clone_from(items);
            }
            Event::Usage {
                request, totals, ..
            } => {
                *request = request.plausible();
                self.totals.add(request);
                *totals = self.totals;
            }
            event @ (Event::TurnComplete { .. } | Event::TurnAborted { .. }) => {
                self.in_turn = false;
                self.last_outcome = super::record::turn_outcome(event);
            }
            _ => {}
        }
        self.history.push(envelope);
    }

    /// Notes for the background tasks whose report never came (the
    /// process stopped while they ran): their calls were answered when
    /// they started, so only a note tells the model they did not finish.
    fn unreported(&self, children: &BTreeMap<ThreadId, Replayer>) -> Vec<Record<'static>> {
        let root = |e: &&Envelope| e.thread.is_root();
        let reported: HashSet<ThreadId> = self
            .history
            .iter()
            .filter(root)
            .filter_map(|e| match &e.event {
                Event::TaskDone { child, .. } => Some(*child),
                _ => None,
            })
            .collect();
        let answered: HashSet<&str> = self
            .history
            .iter()
            .filter(root)
            .filter_map(|e| match &e.event {
                Event::ToolCallEnd { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        children
            .iter()
            .filter(|(thread, _)| !reported.contains(thread))
            .filter_map(|(thread, child)| {
                let call = child.parent_call.as_deref().filter(|c| answered.contains(c))?;
                Some(Record::User {
                    text: Cow::Owned(format!(
                        "[The background task of your call {call} ({thread}) was cut off when Waypoint stopped: it did not finish and sent no report.]"
                    )),
                    prompt: false,
                    at: self.card.updated_ms,
                })
            })
            .collect()
    }

    /// What a session cut off mid-turn needs: results for the last reply's
    /// unanswered tool calls (a running one's with what it printed, as kept
    /// beside the transcript at `transcript`), then a note and the turn's end.
    fn repairs(&self, transcript: &std::path::Path) -> Vec<Record<'static>> {
        let at = self.card.updated_ms;
        let mut out = Vec::new();
        let messages = self.conversation.messages();
        if let Some(i) = messages.iter().rposition(|m| m.role == Role::Assistant) {
            let answered: HashSet<&str> = messages
                .get(i + 1)
                .map(|m| {
                    m.content
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::ToolResult { tool_use_id, .. } => {
                                Some(tool_use_id.as_str())
                            }
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            for block in &messages[i].content {
                if let ContentBlock::ToolUse { id, name, .. } = block
                    && !answered.contains(id.as_str())
                {
                    let (content, outcome) = if self.waiting.contains(id) {
                        (DIED_WAITING.to_string(), ToolOutcome::NotRun)
                    } else if self.running.contains(id) {
                        match super::live::read(transcript, self.thread, id) {
                            Some(printed) => (
                                format!("{DIED_RUNNING}\n{PRINTED_BEFORE}\n{printed}"),
                                ToolOutcome::Interrupted { partial: true },
                            ),
                            None => (
                                DIED_RUNNING.to_string(),
                                ToolOutcome::Interrupted { partial: false },
                            ),
                        }
                    } else {
                        (DIED_BEFORE.to_string(), ToolOutcome::NotRun)
                    };
                    let end = Event::ToolCallEnd {
                        id: id.clone(),
                        name: name.clone(),
                        status: outcome.status(),
                        outcome,
                        duration_ms: 0,
                        output: content,
                        exit_code: None,
                    };
                    out.push(Record::Event {
                        at,
                        envelope: Cow::Owned(self.address(self.turn, end)),
                    });
                }
            }
        }
        if self.in_turn || !out.is_empty() {
            out.push(self.own(Record::User {
                text: Cow::Borrowed(DIED_NOTE),
                prompt: false,
                at,
            }));
            let end = Event::TurnAborted {
                reason: AbortReason::Interrupted,
                message: "Waypoint stopped while this turn ran".into(),
                error: None,
            };
            out.push(Record::Event {
                at,
                envelope: Cow::Owned(self.address(self.turn, end)),
            });
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::events::{ThreadId, ToolDetail, ToolSummary};

    fn at(thread: u32, call: Option<&str>, turn: u32, event: Event) -> Record<'static> {
        Record::Event {
            at: 1,
            envelope: Cow::Owned(Envelope {
                thread: ThreadId(thread),
                parent_call: call.map(str::to_string),
                turn,
                event,
            }),
        }
    }

    fn user(text: &str, prompt: bool) -> Record<'static> {
        Record::User {
            text: Cow::Owned(text.into()),
            prompt,
            at: 1,
        }
    }

    fn calls(ids: &[(&str, &str)]) -> Record<'static> {
        let content = ids
            .iter()
            .map(|(id, name)| ContentBlock::ToolUse {
                id: (*id).into(),
                name: (*name).into(),
                input: serde_json::json!({}).into(),
            })
            .collect::<Vec<_>>();
        Record::Assistant {
            content: Cow::Owned(content),
            model: Cow::Borrowed("m"),
            at: 1,
        }
    }

    fn begin(id: &str, name: &str) -> Event {
        Event::ToolCallBegin {
            id: id.into(),
            name: name.into(),
            summary: ToolSummary {
                line: String::new(),
                detail: ToolDetail::Output,
            },
            input: Value::Null,
            plan_item_id: None,
            plan_item: None,
        }
    }

    /// A parent whose task call started child 1, which was cut off while
    /// its own `read_file` ran.
    fn cut_off() -> Loaded {
        let child = |record: Record<'static>| Record::Thread {
            thread: ThreadId(1),
            record: Box::new(record),
        };
        let records = vec![
            user("go", true),
            at(0, None, 1, Event::TurnStarted { resumed: false }),
            calls(&[("t1", "task")]),
            at(0, None, 1, begin("t1", "task")),
            child(user("Task: look", true)),
            at(1, Some("t1"), 1, Event::TurnStarted { resumed: false }),
            child(calls(&[("c1", "read_file")])),
            at(1, Some("t1"), 1, begin("c1", "read_file")),
        ];
        Loaded {
            path: PathBuf::from("/nowhere.jsonl"),
            header: Header::new("s", "/ws", "p", "m", 0),
            lines: records.len(),
            records,
            notes: Vec::new(),
            valid_len: 0,
            images: Default::default(),
        }
    }

    #[test]
    fn a_child_is_replayed_apart_repaired_and_kept_in_order() {
        let restored = replay(cut_off()).unwrap();
        // The parent's conversation has only its own messages.
        let text = serde_json::to_string(restored.conversation.messages()).unwrap();
        assert!(
            !text.contains("Task: look") && !text.contains("c1"),
            "{text}"
        );
        assert_eq!(restored.threads, 1);
        // The child's cut-off call and turn are ended in its thread first,
        // then the parent's task call is answered as cut off.
        let ends: Vec<(u32, String)> = restored
            .repairs
            .iter()
            .filter_map(|r| match r {
                Record::Event { envelope, .. } => match &envelope.event {
                    Event::ToolCallEnd { id, .. } => Some((envelope.thread.0, id.clone())),
                    Event::TurnAborted { .. } => Some((envelope.thread.0, "end".into())),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert_eq!(
            ends,
            [
                (1, "c1".into()),
                (1, "end".into()),
                (0, "t1".into()),
                (0, "end".into())
            ]
        );
        assert!(
            restored.repairs.iter().any(|r| matches!(r, Record::Thread { thread: ThreadId(1), record } if matches!(**record, Record::User { .. }))),
            "the child's note is its own record"
        );
        // The history holds the child's events in the order written,
        // addressed to its thread and call.
        let order: Vec<(u32, &'static str)> = restored
            .history
            .iter()
            .map(|e| {
                let kind = match &e.event {
                    Event::UserMessage { .. } => "user",
                    Event::TurnStarted { .. } => "turn",
                    Event::ToolCallBegin { .. } => "begin",
                    Event::ToolCallEnd { .. } => "end",
                    Event::TurnAborted { .. } => "aborted",
                    _ => "other",
                };
                (e.thread.0, kind)
            })
            .collect();
        assert_eq!(
            &order[..6],
            [
                (0, "user"),
                (0, "turn"),
                (0, "begin"),
                (1, "user"),
                (1, "turn"),
                (1, "begin")
            ]
        );
        let child = restored.history.iter().find(|e| e.thread.0 == 1).unwrap();
        assert_eq!(child.parent_call.as_deref(), Some("t1"));
    }

    #[test]
    fn a_background_task_cut_off_is_told_to_the_model() {
        let mut loaded = cut_off();
        loaded.records.push(Record::Event {
            at: 2,
            envelope: Cow::Owned(Envelope::root(
                1,
                Event::ToolCallEnd {
                    id: "t1".into(),
                    name: "task".into(),
                    status: crate::events::ToolStatus::Ok,
                    outcome: ToolOutcome::Ok,
                    duration_ms: 1,
                    output: "Started in the background (thread 1).".into(),
                    exit_code: None,
                },
            )),
        });
        let restored = replay(loaded).unwrap();
        let notes: Vec<String> = restored
            .repairs
            .iter()
            .filter_map(|r| match r {
                Record::User { text, .. } => Some(text.to_string()),
                _ => None,
            })
            .collect();
        assert!(
            notes.iter().any(|n| n.contains(
                "The background task of your call t1 (thread 1) was cut off when Waypoint stopped"
            )),
            "{notes:?}"
        );
    }
}
