//! A session's card, `ID.card.json` beside its transcript `ID.jsonl`: the
//! small summary a listing reads instead of the transcript. The transcript
//! keeps it up to date as it writes; it is only ever a cache of the
//! transcript.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::{Header, Record};

/// What a listing shows of a session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    pub id: String,
    pub workspace: String,
    pub provider: String,
    pub model: String,
    pub started_ms: u64,
    pub updated_ms: u64,
    #[serde(default)]
    pub first_prompt: Option<String>,
    #[serde(default)]
    pub plan_done: usize,
    #[serde(default)]
    pub plan_total: usize,
    /// Records written (the header not counted).
    #[serde(default)]
    pub records: u64,
    /// The transcript's size in bytes when the card was written.
    #[serde(default)]
    pub size: u64,
    /// Its plan items' times, for a later session's forecast.
    #[serde(flatten)]
    pub items: ItemTimes,
}

/// Root plan items completed, and the wall time between each one's start
/// (in progress) and its completion, added up: what a later session's
/// forecast learns from (issue 46).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemTimes {
    #[serde(default, rename = "items_done")]
    pub done: u32,
    #[serde(default, rename = "items_ms")]
    pub ms: u64,
    /// When each item in progress started (not kept: a resumed session's
    /// item counts from its next start).
    #[serde(skip)]
    pub started: std::collections::BTreeMap<String, u64>,
}

impl Card {
    pub fn from_header(h: &Header) -> Self {
        Self {
            id: h.id.clone(),
            workspace: h.workspace.clone(),
            provider: h.provider.clone(),
            model: h.model.clone(),
            started_ms: h.started_ms,
            updated_ms: h.started_ms,
            ..Self::default()
        }
    }

    /// Keeps the card up to date with a record about to be written.
    pub fn observe(&mut self, record: &Record<'_>) {
        match record {
            Record::User {
                text, prompt: true, ..
            } if self.first_prompt.is_none() => {
                self.first_prompt = Some(prompt_line(text));
            }
            Record::Assistant { model, .. } if self.model != **model => {
                self.model = model.to_string();
            }
            Record::Event { envelope, .. } if envelope.thread.is_root() => {
                if let crate::events::Event::PlanUpdated { items, at, .. } = &envelope.event {
                    (self.plan_done, self.plan_total) = crate::todo::progress(items);
                    self.items.observe(items, *at);
                }
            }
            _ => {}
        }
        if let Some(at) = record.at() {
            self.updated_ms = at;
        }
        self.records += 1;
    }
}

impl ItemTimes {
    /// Starts the clock of items newly in progress, and adds the time of
    /// those newly completed.
    fn observe(&mut self, items: &[crate::todo::TodoItem], at: u64) {
        use crate::todo::TodoStatus;
        for item in items {
            match item.status {
                TodoStatus::InProgress => {
                    self.started.entry(item.id.clone()).or_insert(at);
                }
                TodoStatus::Completed => {
                    if let Some(from) = self.started.remove(&item.id) {
                        self.done = self.done.saturating_add(1);
                        self.ms = self.ms.saturating_add(at.saturating_sub(from));
                    }
                }
                TodoStatus::Pending => {
                    self.started.remove(&item.id);
                }
            }
        }
    }
}

/// `ID.card.json` beside `ID.jsonl`.
pub fn card_path(transcript: &Path) -> PathBuf {
    transcript.with_extension("card.json")
}

/// A first prompt as a card keeps it: one clean line of at most 200 characters.
pub(super) fn prompt_line(text: &str) -> String {
    crate::text::clean_line(text).chars().take(200).collect()
}
