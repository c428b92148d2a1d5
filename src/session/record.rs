//! The transcript's lines (format 3: format 2, with each image stored
//! once, [`super::images`]): a header, then one record per thing
//! that happened, most of them the engine's durable events as it sent
//! them. Format 1 files (Waypoint 0.1) are read through [`super::v1`].
//! Invariant: replaying the conversation records in order through
//! the same [`Conversation`](crate::chat::Conversation)
//! methods the engine used rebuilds the conversation exactly, so the
//! records are what was sent, never a display copy. A record never holds a
//! credential: the engine has none to write.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::chat::{ContentBlock, Message};
use crate::events::{AbortReason, CompactReason, Envelope, Event, ThreadId};
use crate::todo::Ledger;

/// The format this version writes; a file of a higher one is refused with
/// a message, a lower one is read.
pub const FORMAT_VERSION: u32 = 3;

/// The first line of every transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always `"header"`: tells a transcript from any other JSON lines file.
    #[serde(rename = "type")]
    pub kind: String,
    pub format: u32,
    pub id: String,
    /// The workspace's canonical path.
    pub workspace: String,
    pub provider: String,
    pub model: String,
    /// Unix time in milliseconds.
    pub started_ms: u64,
    /// The Waypoint version that started the session.
    pub version: String,
}

impl Header {
    pub fn new(id: &str, workspace: &str, provider: &str, model: &str, started_ms: u64) -> Self {
        Self {
            kind: "header".into(),
            format: FORMAT_VERSION,
            id: id.into(),
            workspace: workspace.into(),
            provider: provider.into(),
            model: model.into(),
            started_ms,
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// How a turn ended, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Complete,
    Interrupted,
    /// Stopped at the request limit (`--max-turns`).
    MaxTurns,
    Failed,
}

/// One line after the header. Times (`at`) are Unix milliseconds. The
/// session's facts are its events, kept as the driver got them (an
/// [`Event`](crate::events::Event) in its [`Envelope`], one serde
/// translation for the wire and the disk); beside them are the
/// conversation's own texts, which go out streamed in pieces and are kept
/// whole.
// An event is most records, so it is kept inline (boxing would cost an
// allocation per record where it saves a few bytes on the rest).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record<'a> {
    /// User text added to the conversation: the user's own message
    /// (`prompt`), or a note Waypoint adds (reminder, interrupt, resume).
    User {
        text: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        prompt: bool,
        at: u64,
    },
    /// Images added to the conversation after the user's text or the
    /// tool results just before (pasted, attached, or a tool's).
    Images {
        images: Cow<'a, [crate::chat::ImageSource]>,
        at: u64,
    },
    /// The model's whole reply: reasoning, text and tool calls.
    Assistant {
        content: Cow<'a, [ContentBlock]>,
        model: Cow<'a, str>,
        at: u64,
    },
    /// A durable event ([`Event::is_durable`](crate::events::Event::is_durable)),
    /// as sent: a call's `tool_call_end` is also its result in the
    /// conversation (its `output` is what the model read), and a
    /// `tool_call_begin` leaves out the input its reply holds.
    Event {
        at: u64,
        envelope: Cow<'a, Envelope>,
    },
    /// A call waits for the user's approval (`waiting`), or was answered:
    /// a call that was waiting when the process died never ran, and the
    /// wait is not its plan item's time.
    Approval {
        id: Cow<'a, str>,
        waiting: bool,
        at: u64,
    },
    /// The conversation was compacted and replaced by `messages` (the
    /// compaction's start and end are events beside it).
    Compaction {
        reason: CompactReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<Cow<'a, str>>,
        before_tokens: u64,
        after_tokens: u64,
        fallback: bool,
        messages: Cow<'a, [Message]>,
        at: u64,
    },
    /// A child thread's record (a subagent's message, reply, approval or
    /// compaction; its events carry their thread in their envelope).
    Thread {
        thread: ThreadId,
        record: Box<Record<'a>>,
    },
    /// A checkpoint: a point snapshotted, an own tool's change of a file
    /// (its pre-image kept), a command outside git, a restore.
    Checkpoint { mark: crate::checkpoint::Mark },
    /// A record type this version does not know (written by a newer one,
    /// or by format 1: see [`super::v1`]).
    #[serde(other)]
    Unknown,
}

/// How a turn that ended did, from its last event.
pub fn turn_outcome(event: &Event) -> Option<TurnOutcome> {
    match event {
        Event::TurnComplete { .. } => Some(TurnOutcome::Complete),
        Event::TurnAborted { reason, .. } => Some(match reason {
            AbortReason::Interrupted => TurnOutcome::Interrupted,
            AbortReason::MaxTurns | AbortReason::Hook => TurnOutcome::MaxTurns,
            AbortReason::Failed => TurnOutcome::Failed,
        }),
        _ => None,
    }
}

impl<'a> Record<'a> {
    /// `envelope`, recorded `at`.
    pub fn event(envelope: &'a Envelope, at: u64) -> Self {
        Record::Event {
            at,
            envelope: Cow::Borrowed(envelope),
        }
    }

    /// The event, if this is one.
    pub fn as_event(&self) -> Option<&Event> {
        match self {
            Record::Event { envelope, .. } => Some(&envelope.event),
            _ => None,
        }
    }
}

impl Record<'static> {
    /// Reads one transcript line, as serde's derived reading does, but an
    /// event (most of a transcript) as written, `{"type":"event","at":…,
    /// "envelope":…}`, without first buffering the whole line for the
    /// record's tag: its fields are read as a plain struct. Any other line
    /// (another record, another key order) goes to the derived reader.
    pub fn from_line(line: &[u8]) -> serde_json::Result<Self> {
        #[derive(Deserialize)]
        struct EventLine {
            at: u64,
            envelope: Envelope,
        }
        if !line.starts_with(br#"{"type":"event","#) {
            return serde_json::from_slice(line);
        }
        let line: EventLine = serde_json::from_slice(line)?;
        Ok(Record::Event {
            at: line.at,
            envelope: Cow::Owned(line.envelope),
        })
    }
}

impl Record<'_> {
    /// Gives `ledger` what this record tells about the plan items' costs;
    /// true when it changed something. The live engine and a replay feed
    /// the same records, so both compute the same figures.
    pub fn feed(&self, ledger: &mut Ledger) -> bool {
        let (at, event) = match self {
            Record::Approval { waiting, at, .. } => {
                ledger.approval(*waiting, *at);
                return true;
            }
            Record::Event { at, envelope } => (*at, &envelope.event),
            _ => return false,
        };
        match event {
            Event::TurnStarted { .. } => ledger.turn_started(at),
            Event::TurnComplete { .. } | Event::TurnAborted { .. } => ledger.turn_ended(at),
            // A revision's own time: a user's is recorded after it was made.
            Event::PlanUpdated { items, at, .. } => ledger.plan(items, *at),
            Event::ToolCallBegin { plan_item_id, .. } => ledger.tool_call(plan_item_id.as_deref()),
            Event::Usage { model, request, .. } => ledger.usage(model, request),
            Event::TaskDone {
                item,
                model,
                usage,
                tool_calls,
                ..
            } => ledger.subagent(item.as_deref(), model, usage, *tool_calls),
            _ => return false,
        }
        true
    }

    /// The record's time, where it has one.
    pub fn at(&self) -> Option<u64> {
        match self {
            Record::User { at, .. }
            | Record::Images { at, .. }
            | Record::Assistant { at, .. }
            | Record::Event { at, .. }
            | Record::Approval { at, .. }
            | Record::Compaction { at, .. } => Some(*at),
            Record::Thread { record, .. } => record.at(),
            Record::Checkpoint { .. } | Record::Unknown => None,
        }
    }

    /// An owned copy, to keep.
    pub fn into_owned(self) -> Record<'static> {
        match self {
            Record::Checkpoint { mark } => Record::Checkpoint { mark },
            Record::User { text, prompt, at } => Record::User {
                text: Cow::Owned(text.into_owned()),
                prompt,
                at,
            },
            Record::Images { images, at } => Record::Images {
                images: Cow::Owned(images.into_owned()),
                at,
            },
            Record::Assistant { content, model, at } => Record::Assistant {
                content: Cow::Owned(content.into_owned()),
                model: Cow::Owned(model.into_owned()),
                at,
            },
            Record::Event { at, envelope } => Record::Event {
                at,
                envelope: Cow::Owned(envelope.into_owned()),
            },
            Record::Approval { id, waiting, at } => Record::Approval {
                id: Cow::Owned(id.into_owned()),
                waiting,
                at,
            },
            Record::Compaction {
                reason,
                summary,
                before_tokens,
                after_tokens,
                fallback,
                messages,
                at,
            } => Record::Compaction {
                reason,
                summary: summary.map(|s| Cow::Owned(s.into_owned())),
                before_tokens,
                after_tokens,
                fallback,
                messages: Cow::Owned(messages.into_owned()),
                at,
            },
            Record::Thread { thread, record } => Record::Thread {
                thread,
                record: Box::new(record.into_owned()),
            },
            Record::Unknown => Record::Unknown,
        }
    }

    /// The thread the record is of.
    pub fn thread(&self) -> ThreadId {
        match self {
            Record::Event { envelope, .. } => envelope.thread,
            Record::Thread { thread, .. } => *thread,
            _ => ThreadId::ROOT,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::events::ThreadId;

    #[test]
    fn records_round_trip_and_unknown_types_are_kept_apart() {
        let rec = Record::User {
            text: "hi".into(),
            prompt: true,
            at: 5,
        };
        let line = serde_json::to_string(&rec).unwrap();
        assert_eq!(line, r#"{"type":"user","text":"hi","prompt":true,"at":5}"#);
        assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), rec);
        let future: Record = serde_json::from_str(r#"{"type":"hologram","x":1}"#).unwrap();
        assert_eq!(future, Record::Unknown);
        let future = r#"{"type":"hologram","x":1}"#.as_bytes();
        assert_eq!(Record::from_line(future).unwrap(), Record::Unknown);
        assert_eq!(Record::from_line(line.as_bytes()).unwrap(), rec);
    }

    #[test]
    fn an_event_line_is_read_as_the_derived_reader_reads_it() {
        let envelope = Envelope {
            thread: ThreadId(2),
            parent_call: Some("toolu_1".into()),
            turn: 4,
            event: Event::TurnStarted { resumed: true },
        };
        let line = serde_json::to_string(&Record::event(&envelope, 9)).unwrap();
        let derived: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(Record::from_line(line.as_bytes()).unwrap(), derived);
        // The root thread's address is left out and read as the default.
        let root = Envelope::root(0, Event::TurnStarted { resumed: false });
        let line = serde_json::to_string(&Record::event(&root, 1)).unwrap();
        assert!(!line.contains("thread"), "{line}");
        let read = Record::from_line(line.as_bytes()).unwrap();
        assert_eq!(read, serde_json::from_str::<Record>(&line).unwrap());
        // Another writer's key order is read by the derived reader.
        let reordered =
            r#"{"at":3,"envelope":{"turn":2,"type":"turn_started","resumed":true},"type":"event"}"#;
        assert_eq!(
            Record::from_line(reordered.as_bytes()).unwrap(),
            Record::Event {
                at: 3,
                envelope: Cow::Owned(Envelope::root(2, Event::TurnStarted { resumed: true })),
            }
        );
        // Broken lines fail in both readers.
        for bad in [
            r#"{"type":"event","at":1}"#,
            r#"{"type":"event","at":1,"envelope":{"type":"no_such"}}"#,
            r#"{"type":"event","at":"x","envelope":{"type":"turn_started","resumed":true}}"#,
            r#"{"at":1}"#,
        ] {
            assert!(Record::from_line(bad.as_bytes()).is_err(), "{bad}");
            assert!(serde_json::from_str::<Record>(bad).is_err(), "{bad}");
        }
    }
}
