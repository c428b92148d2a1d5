//! The conversation pane's state: user prompts, the model's replies and
//! notices, each with its wrapped lines cached per width. Invariant: the
//! cache is written only by the layout pass before a frame (and cleared
//! when the text changes), never while rendering. Reasoning and compaction
//! summaries fold and unfold together (`show_reasoning`, Ctrl+O).

use std::time::Instant;

use ratatui::text::Line;

use crate::events::{AbortReason, CompactReason, Event};
use crate::text::clean_line;
use crate::tui::markdown::CodeCache;

use super::scroll::Scroll;
use super::trace::ToolCell;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    User,
    /// A user message waiting for the turn boundary.
    Queued,
    Assistant,
    /// The model's reasoning (thinking), shown dimmed.
    Reasoning,
    /// The summary written while compacting, shown dimmed and folded like
    /// reasoning.
    Summary,
    /// A line across the pane with its text in the middle (compaction done).
    Divider,
    /// One tool call, in one line where it happened (its status shown by a
    /// symbol); the trace pane has the whole of it.
    Tool(super::TraceStatus),
    Notice(NoticeKind),
}

/// An entry wrapped for one width: its height always, its lines only while
/// it is on screen (so a long session holds heights, not lines).
#[derive(Debug)]
pub struct Wrapped {
    pub width: u16,
    pub height: usize,
    pub lines: Option<Vec<Line<'static>>>,
}

/// One block of the conversation.
#[derive(Debug)]
pub struct ConvEntry {
    pub kind: EntryKind,
    text: String,
    pub cache: Option<Wrapped>,
    /// The trace entry (serial) a tool cell shows.
    pub tool: Option<u64>,
    /// When a tool cell's call started (its running time is drawn live).
    pub started: Option<Instant>,
    /// A reply's highlighted code blocks, kept while its lines are (the
    /// text may change: the cache checks it, so `push_str` keeps it).
    pub code: CodeCache,
    /// A tool cell's last lines of output, shown under it (as the command
    /// printed them: cleaned where they are drawn).
    pub tail: Vec<String>,
}

impl ConvEntry {
    pub fn new(kind: EntryKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            cache: None,
            tool: None,
            started: None,
            code: CodeCache::default(),
            tail: Vec::new(),
        }
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    /// The text with the code cache, to render it highlighted.
    pub fn text_and_code(&mut self) -> (&str, &mut CodeCache) {
        (&self.text, &mut self.code)
    }
    pub fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
        self.cache = None;
    }
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache = None;
    }
    pub fn set_kind(&mut self, kind: EntryKind) {
        self.kind = kind;
        self.cache = None;
    }
}

#[derive(Debug)]
pub struct Conversation {
    pub entries: Vec<ConvEntry>,
    pub scroll: Scroll,
    /// The entry streamed in the current round (reply or reasoning).
    pub round_entry: Option<usize>,
    /// The reasoning entry of the current round, if it has one.
    pub round_reasoning: Option<usize>,
    /// Reasoning and summaries are shown whole (else folded to their last lines).
    pub show_reasoning: bool,
    /// The summary entry of the compaction running now, if it has one.
    pub summary_entry: Option<usize>,
    /// An interrupt folded the queued messages into the conversation: the
    /// next turn (resumed or new) delivers them all.
    pub queued_held: bool,
    /// This round's retry notice (rewritten in place) and the retries so far.
    pub retry_notice: Option<(usize, u32)>,
    /// The tool cells (trace serials) of the plan item selected in the
    /// plan pane: drawn marked.
    pub marked_tools: Vec<u64>,
    /// Code on screen is still being highlighted (a frame at a time).
    pub highlighting: bool,
    /// Where the entries start, kept between frames by the layout pass.
    pub index: LayoutIndex,
}

/// What the layout pass keeps between frames, so a frame costs what is on
/// screen and what changed, not the length of the conversation. Invariant:
/// `starts[i]` is the first line of entry `i` (blank separators counted)
/// at `width`, for every `i <= dirty_from` that has a start; an entry whose
/// height or separator may have changed is at or after `dirty_from` (each
/// change to the entries lowers it, [`LayoutIndex::touch`]).
#[derive(Debug, Default)]
pub struct LayoutIndex {
    pub width: u16,
    pub starts: Vec<usize>,
    pub dirty_from: usize,
    /// The entries on screen at the last frame (they hold their lines).
    pub shown: std::ops::Range<usize>,
    /// The first of the last entries at the last frame (they keep their code).
    pub tail_from: usize,
}

impl LayoutIndex {
    /// Entry `i` changed (its text, kind or tail; or one was added after
    /// it, which may change the blank line below it).
    pub fn touch(&mut self, i: usize) {
        self.dirty_from = self.dirty_from.min(i);
    }
}

impl Default for Conversation {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            scroll: Scroll::following(),
            round_entry: None,
            round_reasoning: None,
            show_reasoning: false,
            summary_entry: None,
            retry_notice: None,
            queued_held: false,
            marked_tools: Vec::new(),
            highlighting: false,
            index: LayoutIndex::default(),
        }
    }
}

impl Conversation {
    /// Adds an entry; returns where it went (see [`Self::push_entry`]).
    pub fn push(&mut self, kind: EntryKind, text: impl Into<String>) -> usize {
        self.push_entry(ConvEntry::new(kind, text))
    }

    /// Adds an entry at the end, or, while messages wait to be sent, above
    /// them: the running turn's output stays above the messages queued
    /// during it, so its last reply never reads as their answer. A message
    /// the user sends goes last (the waiting ones reach the model first).
    /// Returns where it went.
    fn push_entry(&mut self, entry: ConvEntry) -> usize {
        let waiting = self
            .entries
            .iter()
            .rev()
            .take_while(|e| e.kind == EntryKind::Queued)
            .count();
        let at = if matches!(entry.kind, EntryKind::Queued | EntryKind::User) {
            self.entries.len()
        } else {
            self.entries.len() - waiting
        };
        self.index.touch(at.saturating_sub(1));
        self.entries.insert(at, entry);
        at
    }

    /// Entry `i` of this round (reply, reasoning, summary), if it is of `kind`.
    fn round_entry_of(&mut self, i: Option<usize>, kind: EntryKind) -> Option<&mut ConvEntry> {
        let i = i.filter(|&i| self.entries.get(i).is_some_and(|e| e.kind == kind))?;
        self.index.touch(i);
        self.entries.get_mut(i)
    }

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.push(EntryKind::Notice(kind), text);
        self.round_entry = None;
    }

    /// Appends streamed reasoning to this round's reasoning entry, or starts
    /// one (the reply text that follows gets its own entry).
    pub fn push_reasoning(&mut self, text: &str) {
        let entry = self.round_entry_of(self.round_entry, EntryKind::Reasoning);
        match entry {
            Some(e) => e.push_str(text),
            None => {
                self.round_entry = Some(self.push(EntryKind::Reasoning, text));
                self.round_reasoning = self.round_entry;
            }
        }
    }

    /// Marks this round's reply as cut off (the turn failed while it
    /// streamed), so it never reads as a whole answer.
    pub fn mark_round_cut(&mut self) {
        if let Some(e) = self.round_entry_of(self.round_entry, EntryKind::Assistant) {
            e.push_str("\n\n*[cut off: the reply stopped here]*");
        }
    }

    /// Appends streamed reply text to this round's entry (even when a queued
    /// message now sits below it), or starts one.
    pub fn push_reply(&mut self, text: &str) {
        let entry = self.round_entry_of(self.round_entry, EntryKind::Assistant);
        match entry {
            Some(e) => e.push_str(text),
            None => {
                self.round_entry = Some(self.push(EntryKind::Assistant, text));
            }
        }
    }

    /// The reply (and reasoning) streamed in this round is void (the
    /// request is retried).
    pub fn drop_round_reply(&mut self) {
        let mut streamed: Vec<usize> = [self.round_entry.take(), self.round_reasoning.take()]
            .into_iter()
            .flatten()
            .collect();
        streamed.sort_unstable();
        streamed.dedup();
        for i in streamed.into_iter().rev() {
            if self
                .entries
                .get(i)
                .is_some_and(|e| matches!(e.kind, EntryKind::Assistant | EntryKind::Reasoning))
            {
                self.entries.remove(i);
                self.index.touch(i.saturating_sub(1));
            }
        }
    }

    /// A tool call began: its one-line cell goes where it happened.
    pub fn push_tool(&mut self, serial: u64, text: String, now: Instant) {
        let mut entry = ConvEntry::new(EntryKind::Tool(super::TraceStatus::Running), text);
        entry.tool = Some(serial);
        entry.started = Some(now);
        self.push_entry(entry);
        self.round_entry = None;
    }

    /// The call shown by cell `serial` ended: its status and line.
    pub fn end_tool(&mut self, serial: u64, status: super::TraceStatus, text: String) {
        if let Some(i) = self.entries.iter().rposition(|e| e.tool == Some(serial)) {
            self.index.touch(i);
            let e = &mut self.entries[i];
            e.set_kind(EntryKind::Tool(status));
            e.set_text(text);
        }
    }

    /// The last lines of the output of the call shown by cell `serial`.
    pub fn tool_tail(&mut self, serial: u64, tail: Vec<String>) {
        if let Some(i) = self.entries.iter().rposition(|e| e.tool == Some(serial))
            && self.entries[i].tail != tail
        {
            self.index.touch(i);
            let e = &mut self.entries[i];
            e.tail = tail;
            e.cache = None;
        }
    }

    /// The request is retried: this round's one notice says so, rewritten
    /// in place on each retry.
    pub fn retrying(&mut self, attempt: u32, text: String) {
        let current = self
            .retry_notice
            .filter(|(i, _)| {
                self.entries.get(*i).is_some_and(|e| {
                    matches!(
                        e.kind,
                        EntryKind::Notice(NoticeKind::Warning | NoticeKind::Info)
                    )
                })
            })
            .map(|(i, _)| i);
        match current {
            Some(i) => {
                self.index.touch(i);
                self.entries[i].set_kind(EntryKind::Notice(NoticeKind::Warning));
                self.entries[i].set_text(text);
            }
            None => {
                let at = self.push(EntryKind::Notice(NoticeKind::Warning), text);
                self.round_entry = None;
                self.retry_notice = Some((at, attempt));
                return;
            }
        }
        self.retry_notice = current.map(|i| (i, attempt));
        self.round_entry = None;
    }

    /// The reply started: the retry notice, if any, becomes a short record
    /// of how many retries it took (a further retry in this round rewrites
    /// it again).
    pub fn settle_retry(&mut self) {
        let Some((i, attempts)) = self.retry_notice else {
            return;
        };
        if let Some(e) = self.round_entry_of(Some(i), EntryKind::Notice(NoticeKind::Warning)) {
            e.set_kind(EntryKind::Notice(NoticeKind::Info));
            e.set_text(format!(
                "retried {}",
                crate::units::plural(attempts as usize, "time")
            ));
        }
    }

    /// The round (or the turn) ended: its retry notice is settled for good.
    pub fn end_retries(&mut self) {
        self.settle_retry();
        self.retry_notice = None;
    }

    /// A turn started: the queued message it answers becomes a user
    /// message; after an interrupt, every queued message does (the engine
    /// added them all to the conversation, and this turn sends them).
    pub fn promote_queued(&mut self, resumed: bool) {
        let all = std::mem::take(&mut self.queued_held);
        if resumed && !all {
            return;
        }
        let queued: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].kind == EntryKind::Queued)
            .take(if all { usize::MAX } else { 1 })
            .collect();
        for i in queued {
            self.index.touch(i);
            self.entries[i].set_kind(EntryKind::User);
        }
    }

    /// Compaction began: a notice says why; the summary streamed next gets
    /// its own entry.
    pub fn begin_compaction(&mut self, reason: &str) {
        self.notice(
            NoticeKind::Info,
            format!("Compacting the conversation ({reason})…"),
        );
        self.summary_entry = None;
    }

    /// Appends a piece of the compaction summary, or starts its entry.
    pub fn push_summary(&mut self, text: &str) {
        let entry = self.round_entry_of(self.summary_entry, EntryKind::Summary);
        match entry {
            Some(e) => e.push_str(text),
            None => {
                self.summary_entry = Some(self.push(EntryKind::Summary, text));
            }
        }
    }

    /// Compaction ended: a divider says how much the context shrank.
    pub fn end_compaction(&mut self, before: u64, after: u64, fallback: bool) {
        self.summary_entry = None;
        self.round_entry = None;
        self.push(
            EntryKind::Divider,
            crate::units::compaction(before, after, fallback),
        );
    }

    /// Shows the model's reasoning, or folds it again.
    pub fn toggle_reasoning(&mut self) {
        self.show_reasoning = !self.show_reasoning;
        self.index.touch(0);
        for e in &mut self.entries {
            if matches!(e.kind, EntryKind::Reasoning | EntryKind::Summary) {
                e.cache = None;
            }
        }
    }

    /// Empties the pane (the session goes on).
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

impl Conversation {
    /// The conversation's part of an engine event: streamed reasoning,
    /// replies and summaries, retries, the tool cells (`cell`: what the
    /// trace made of the call), compaction, the turn's end, a new session.
    /// `max_retries` numbers the retry notice. Notices are the app's.
    pub fn apply(&mut self, event: &Event, cell: Option<&ToolCell>, max_retries: Option<u32>) {
        match event {
            Event::TurnStarted { resumed } => self.promote_queued(*resumed),
            Event::RoundStarted { .. } => {
                self.end_retries();
                self.round_entry = None;
                self.round_reasoning = None;
            }
            Event::ReasoningDelta { text } => {
                self.settle_retry();
                self.push_reasoning(text);
            }
            Event::TextDelta { text } => {
                self.settle_retry();
                self.push_reply(text);
            }
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                // Text streamed in this round is void: the reply starts again
                // (a message queued meanwhile may sit below it).
                self.drop_round_reply();
                let text = retry_text(*attempt, *delay_ms, reason, max_retries);
                self.retrying(*attempt, text);
            }
            Event::ToolCallBegin { .. } => {
                self.settle_retry();
                self.round_entry = None;
            }
            Event::CompactionBegin { reason } => self.begin_compaction(match reason {
                CompactReason::Threshold => "the context is nearly full",
                CompactReason::User => "asked with /compact",
                CompactReason::TooLong => "the prompt was too long for the model",
                CompactReason::Approval => "the plan was approved with fresh context",
            }),
            Event::SummaryDelta { text } => self.push_summary(text),
            Event::CompactionEnd {
                before_tokens,
                after_tokens,
                fallback,
            } => self.end_compaction(*before_tokens, *after_tokens, *fallback),
            Event::TurnComplete { .. } => self.end_turn(),
            Event::TurnAborted { reason, .. } => self.aborted(*reason),
            Event::SessionReset => self.clear(),
            Event::UserMessage { text } => {
                self.push(EntryKind::User, text.clone());
            }
            _ => {}
        }
        match cell {
            Some(ToolCell::Begin {
                serial,
                text,
                started,
            }) => self.push_tool(*serial, text.clone(), *started),
            Some(ToolCell::Tail { serial, tail }) => self.tool_tail(*serial, tail.clone()),
            Some(ToolCell::End {
                serial,
                status,
                text,
                tail,
            }) => {
                self.end_tool(*serial, *status, text.clone());
                self.tool_tail(*serial, tail.clone());
            }
            None => {}
        }
    }

    /// The turn ended: its retry notice is settled, nothing streams on.
    pub fn end_turn(&mut self) {
        self.end_retries();
        self.round_entry = None;
    }

    /// The turn was aborted: a reply the failure broke off is never shown
    /// as if whole, and after an interrupt the messages queued before it
    /// are delivered by the next turn (the engine keeps them).
    fn aborted(&mut self, reason: AbortReason) {
        if reason == AbortReason::Failed {
            self.mark_round_cut();
        }
        self.end_turn();
        if reason == AbortReason::Interrupted
            && self.entries.iter().any(|e| e.kind == EntryKind::Queued)
        {
            self.queued_held = true;
        }
    }
}

/// `retrying (2/6) in 1.5 s: overloaded`.
fn retry_text(attempt: u32, delay_ms: u64, reason: &str, max_retries: Option<u32>) -> String {
    let reason = clean_line(reason);
    let of = max_retries.map(|max| format!("/{max}")).unwrap_or_default();
    let secs = delay_ms as f64 / 1000.0;
    let wait = if delay_ms < 1000 {
        format!("{secs:.1} s")
    } else {
        format!("{secs:.0} s")
    };
    format!("retrying ({attempt}{of}) in {wait}: {reason}")
}
