//! The session's transcript, seen from the engine: every change to the
//! conversation goes through these methods, which add it and record it in
//! one step, and every event that matters to a resumed session (the
//! durable ones: a turn's start and end, a tool call, a plan revision,
//! usage) is recorded as it is emitted, in the envelope it is sent in: the
//! transcript and the driver get the same value. Invariant: replaying the records rebuilds the conversation
//! exactly (see `session::replay`).

use std::borrow::Cow;

use super::Session;
use super::observers::Seen;
use super::thread::{Host, Thread};
use crate::events::{Envelope, ErrorKind, Event};
use crate::llm::ContentBlock;
use crate::session::{Record, now_ms};

impl Session {
    /// Sends `event`; a durable one ([`Event::is_durable`]) is recorded
    /// first, in the envelope it goes out in.
    pub(super) fn emit(&mut self, event: Event) {
        if !event.is_durable() {
            // A driver that hung up does not stop the engine from finishing cleanly.
            let _ = self.host.events.send(event);
            return;
        }
        let mut envelope = self.host.events.envelope(event);
        self.record_envelope(&mut envelope);
        let _ = self.host.events.post(envelope);
    }

    /// Records a durable event the driver is not sent (the answer of a
    /// call that was never announced).
    pub(super) fn record_only(&mut self, event: Event) {
        let mut envelope = self.host.events.envelope(event);
        self.record_envelope(&mut envelope);
    }

    /// Writes `envelope` (a call's input is left out: its reply holds it)
    /// and shows it to the observers; a turn's end reaches the disk.
    fn record_envelope(&mut self, envelope: &mut Envelope) {
        // A user's plan change made before this event is recorded first.
        self.settle_user_changes();
        let input = match &mut envelope.event {
            Event::ToolCallBegin { input, .. } => Some(std::mem::take(input)),
            _ => None,
        };
        let record = Record::event(envelope, now_ms());
        self.observe(&record);
        let ends_turn = matches!(
            envelope.event,
            Event::TurnComplete { .. } | Event::TurnAborted { .. }
        );
        if let (Some(input), Event::ToolCallBegin { input: slot, .. }) =
            (input, &mut envelope.event)
        {
            *slot = input;
        }
        if ends_turn {
            self.host.sync_transcript();
        }
    }

    /// Writes `record`, then shows it to the thread's observers (see
    /// [`super::observers`]) and sends what they answer.
    pub(super) fn observe(&mut self, record: &Record<'_>) {
        self.host.record(record);
        let seen = seen(&self.host, &self.thread);
        for event in self.observers.on_record(&seen, record) {
            let _ = self.host.events.send(event);
        }
    }

    /// Adds user text to the conversation: the user's own message
    /// (`prompt`) or a note of Waypoint's.
    pub(super) fn add_user_text(&mut self, text: impl Into<String>, prompt: bool) {
        let text = text.into();
        self.host.record(&Record::User {
            text: Cow::Borrowed(&text),
            prompt,
            at: now_ms(),
        });
        self.thread.conversation.push_user_text(text);
    }

    /// Adds images after the user's text (pasted or mentioned).
    pub(super) fn add_user_images(&mut self, images: Vec<crate::chat::ImageSource>) {
        if images.is_empty() {
            return;
        }
        self.host.record(&Record::Images {
            images: Cow::Borrowed(&images),
            at: now_ms(),
        });
        let blocks = images
            .into_iter()
            .map(|source| ContentBlock::Image { source });
        self.thread
            .conversation
            .push_tool_results(blocks.collect(), Vec::new());
    }

    /// Adds the model's reply.
    pub(super) fn add_assistant(&mut self, content: Vec<ContentBlock>) {
        let model = self.thread.client.model().to_string();
        self.host.record(&Record::Assistant {
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
        // The results are their calls' `ToolCallEnd` records; the images
        // the tools gave are recorded here.
        let images: Vec<crate::chat::ImageSource> = results
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Image { source } => Some(source.clone()),
                _ => None,
            })
            .collect();
        if !images.is_empty() {
            self.host.record(&Record::Images {
                images: Cow::Owned(images),
                at,
            });
        }
        for text in &texts {
            self.host.record(&Record::User {
                text: Cow::Borrowed(text),
                prompt: false,
                at,
            });
        }
        self.thread.conversation.push_tool_results(results, texts);
    }
}

/// What the observers see of `thread` in `host`.
pub(super) fn seen<'a>(host: &'a Host, thread: &'a Thread) -> Seen<'a> {
    Seen {
        plan: &thread.plan,
        conversation: &thread.conversation,
        outbox: &host.events,
        checkpoints: &host.checkpoints,
        prices: &host.config.prices,
    }
}

impl Host {
    /// Writes `record` to the transcript; a failure is told to the driver.
    pub(super) fn record(&self, record: &Record<'_>) {
        let warning = self.transcript.record(record);
        self.warn_unsaved(warning);
    }

    /// Tells the driver the transcript could not be written.
    pub(super) fn warn_unsaved(&self, warning: Option<String>) {
        if let Some(message) = warning {
            let _ = self.events.send(Event::Error {
                kind: ErrorKind::SessionSave,
                message,
            });
        }
    }

    /// The end of a turn: the transcript reaches the disk.
    pub(super) fn sync_transcript(&self) {
        let warning = self.transcript.sync();
        self.warn_unsaved(warning);
    }
}

impl Thread {
    /// Whether the model in use takes images: as the settings say, else
    /// as its name says.
    pub(super) fn takes_images(&self, config: &super::AgentConfig) -> bool {
        let client = &self.client;
        config
            .tools
            .images
            .unwrap_or_else(|| crate::models::takes_images(client.provider(), client.model()))
    }
}
