//! The session's transcript, seen from the engine: every change to the
//! conversation goes through these methods, which add it and record it in
//! one step, and every event that matters to a resumed session (the
//! durable ones: a turn's start and end, a tool call, a plan revision,
//! usage) is recorded as it is emitted, in the envelope it is sent in: the
//! transcript and the driver get the same value. Invariant: replaying the records rebuilds the conversation
//! exactly (see `session::replay`).

use std::borrow::Cow;

use super::Session;
use super::thread::{Host, Thread};
use super::voice::Voice;
use crate::events::{ErrorKind, Event};
use crate::llm::ContentBlock;
use crate::session::{Record, now_ms};

impl Session {
    /// Sends `event` (see [`Voice::emit`]).
    pub(super) fn emit(&self, event: Event) {
        self.voice().emit(event);
    }

    /// The root thread in its host, as a component sees it.
    pub(super) fn voice(&self) -> Voice<'_> {
        Voice::of(&self.host, &self.thread)
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
