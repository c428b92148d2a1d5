//! The serialised bytes of a conversation's older messages, kept between
//! requests so a request costs what is new in it, not the whole history.
//! Invariant: the bytes kept for a conversation are exactly what the wire's
//! writer wrote for its first `count` messages (each ending in `,`); they
//! are used only for the same live [`ConversationKey`] (a conversation only
//! grows, and never changes a message before its last), a wire keeps only
//! messages its request leaves unmarked, and a request for fewer messages
//! than are kept rebuilds them. The bytes of a dropped conversation
//! (compaction and a new session replace it) are freed at the next request.
//! Once a part is sealed, the tool results written in it are offered back
//! ([`PrefixCache::take_kept`]) so the conversation reads their text from
//! the part instead of holding a second copy.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

use super::body::BodyWriter;
use crate::chat::{ContentBlock, ConversationKey, KeptText, KeyWatch, Message};

/// Kept bytes are sealed into shared parts of about this size: a request
/// copies at most one unsealed part, and sends the sealed ones as they are.
#[cfg(not(test))]
const SEGMENT: usize = 256 * 1024;
/// Small in unit tests, so a few rounds seal parts.
#[cfg(test)]
const SEGMENT: usize = 2 * 1024;

/// Conversations kept at once (a parent and the children it waits for).
const KEPT: usize = 4;

/// A result's text shorter than this stays owned: reading it from a part
/// would save less than the handle costs.
const KEEP_FROM: usize = 64;

#[derive(Debug, Default)]
pub struct PrefixCache {
    entries: Mutex<Vec<Entry>>,
}

#[derive(Debug)]
struct Entry {
    watch: KeyWatch,
    count: usize,
    /// The kept bytes: sealed parts, then the part still growing.
    sealed: Vec<Bytes>,
    open: Vec<u8>,
    /// Tool results written in the open part: (message, block, literal).
    pending: Vec<(usize, usize, Range<usize>)>,
    /// Tool results in sealed parts, not yet taken by the conversation.
    ready: Vec<KeptText>,
}

impl Entry {
    fn clear(&mut self) {
        self.count = 0;
        self.sealed.clear();
        self.open = Vec::new();
        self.pending.clear();
        self.ready.clear();
    }

    /// Notes where the owned tool-result texts of message `index`, just
    /// written at `from..` of the open part, are: the first place after
    /// the previous one where their literal is (any place holding the same
    /// bytes reads back as the same text).
    fn note_texts(&mut self, index: usize, m: &Message, from: usize) {
        let mut at = from;
        for (block, b) in m.content.iter().enumerate() {
            let ContentBlock::ToolResult { content, .. } = b else {
                continue;
            };
            let Some(text) = content.owned().filter(|t| t.len() >= KEEP_FROM) else {
                continue;
            };
            let Ok(literal) = serde_json::to_vec(text) else {
                continue;
            };
            if let Some(pos) = self
                .open
                .get(at..)
                .and_then(|rest| memchr::memmem::find(rest, &literal))
            {
                let start = at + pos;
                at = start + literal.len();
                self.pending.push((index, block, start..at));
            }
        }
    }

    /// The open part becomes a sealed one once it is big enough (its spare
    /// room given back first when that is more than a quarter).
    fn seal_if_full(&mut self) {
        if self.open.len() < SEGMENT {
            return;
        }
        let mut part = std::mem::take(&mut self.open);
        if part.capacity() - part.len() > part.len() / 4 {
            part.shrink_to_fit();
        }
        let part = Bytes::from(part);
        self.ready.extend(
            self.pending
                .drain(..)
                .map(|(message, block, range)| KeptText {
                    message,
                    block,
                    literal: part.slice(range),
                }),
        );
        self.sealed.push(part);
    }

    fn len(&self) -> usize {
        self.sealed.iter().map(Bytes::len).sum::<usize>() + self.open.len()
    }
}

impl PrefixCache {
    /// Appends `messages[..upto]` to `out`, each as `write` writes it (a
    /// wire's writer ends each message with `,`), reusing what was kept
    /// for `key` (its sealed parts shared, not copied) and keeping what is
    /// new.
    pub fn write<F>(
        &self,
        key: Option<&ConversationKey>,
        messages: &[Message],
        upto: usize,
        out: &mut BodyWriter,
        mut write: F,
    ) -> serde_json::Result<()>
    where
        F: FnMut(&Message, &mut Vec<u8>) -> serde_json::Result<()>,
    {
        let upto = upto.min(messages.len());
        let Some(key) = key else {
            for m in &messages[..upto] {
                write(m, out.buf())?;
            }
            return Ok(());
        };
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|e| !e.watch.is_gone());
        let entry = match entries.iter().position(|e| e.watch.is(key)) {
            Some(i) => entries.remove(i),
            None => Entry {
                watch: key.watch(),
                count: 0,
                sealed: Vec::new(),
                open: Vec::new(),
                pending: Vec::new(),
                ready: Vec::new(),
            },
        };
        if entries.len() >= KEPT {
            entries.remove(0);
        }
        entries.push(entry);
        let Some(entry) = entries.last_mut() else {
            return Ok(());
        };
        if entry.count > upto {
            entry.clear();
        }
        for m in &messages[entry.count..upto] {
            let before = entry.open.len();
            if let Err(e) = write(m, &mut entry.open) {
                entry.open.truncate(before);
                return Err(e);
            }
            entry.note_texts(entry.count, m, before);
            entry.count += 1;
            entry.seal_if_full();
        }
        out.push_shared(&entry.sealed);
        out.buf().extend_from_slice(&entry.open);
        Ok(())
    }

    /// Writes all of `messages` into an open JSON array and closes it:
    /// every message but the last (the only one that can still change)
    /// kept for `key`, the last written afresh (as `write` writes each,
    /// ending in `,`; the last comma taken back).
    pub fn write_list<F>(
        &self,
        key: Option<&ConversationKey>,
        messages: &[Message],
        out: &mut BodyWriter,
        mut write: F,
    ) -> serde_json::Result<()>
    where
        F: FnMut(&Message, &mut Vec<u8>) -> serde_json::Result<()>,
    {
        let sealed = messages.len().saturating_sub(1);
        self.write(key, messages, sealed, out, &mut write)?;
        for m in &messages[sealed..] {
            write(m, out.buf())?;
        }
        out.drop_last(b',');
        out.buf().push(b']');
        Ok(())
    }

    /// The tool results of `key`'s conversation whose text is now in a
    /// sealed part, for [`crate::chat::Conversation::keep_texts`].
    pub fn take_kept(&self, key: &ConversationKey) -> Vec<KeptText> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter_mut()
            .find(|e| e.watch.is(key))
            .map(|e| std::mem::take(&mut e.ready))
            .unwrap_or_default()
    }

    /// Bytes kept, over all conversations (for the memory account).
    pub fn kept_bytes(&self) -> usize {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.iter().map(Entry::len).sum()
    }
}

#[cfg(test)]
/// A conversation grown as the engine grows one: prompts, replies with
/// thinking, text and calls, results with texts after them, a reply of
/// the other wire's reasoning, an interrupt note merged into the last
/// user message.
pub(crate) fn grow(c: &mut crate::chat::Conversation, round: usize) {
    use crate::chat::{ContentBlock, ReasoningField};
    use serde_json::json;
    match round % 5 {
        0 => c.push_user_text(format!("Prompt {round}: go on.")),
        1 => c.push_assistant(vec![
            ContentBlock::Thinking {
                thinking: format!("thinking {round}"),
                signature: "sig".into(),
            },
            ContentBlock::Text {
                text: format!("Reading file {round}."),
            },
            ContentBlock::ToolUse {
                id: format!("toolu_{round}"),
                name: "read_file".into(),
                input: json!({"path": format!("src/{round}.rs"), "limit": 20}).into(),
            },
        ]),
        2 => c.push_tool_results(
            vec![ContentBlock::ToolResult {
                tool_use_id: format!("toolu_{}", round - 1),
                content: format!("fn f{round}() {{}}\n\"quoted\" \u{1F600}\n")
                    .repeat(1 + round % 7)
                    .into(),
                is_error: round.is_multiple_of(3),
            }],
            vec![format!("<reminder>plan {round}</reminder>")],
        ),
        3 => c.push_assistant(vec![
            ContentBlock::Reasoning {
                text: "other wire".into(),
                field: ReasoningField::ReasoningContent,
                details: None,
            },
            ContentBlock::Text {
                text: format!("Done with {round}."),
            },
        ]),
        _ => c.push_user_text(format!("[interrupted] note {round}")),
    }
}

/// Lets `c`'s tool results read their text from what `cache` keeps, as
/// the engine does after each request; returns how many did.
#[cfg(test)]
pub(crate) fn keep(cache: &PrefixCache, c: &mut crate::chat::Conversation) -> usize {
    let kept = cache.take_kept(c.key());
    let n = kept.len();
    c.keep_texts(kept);
    n
}

/// The tool results of `messages` that read their text from kept bytes.
#[cfg(test)]
pub(crate) fn kept_results(messages: &[Message]) -> Vec<&Bytes> {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                content: crate::chat::Text::Kept { literal, .. },
                ..
            } => Some(literal),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{ContentBlock, Conversation, Role};

    fn text(m: &Message, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, m)?;
        out.push(b',');
        Ok(())
    }

    fn fresh(messages: &[Message], upto: usize) -> Vec<u8> {
        written(&PrefixCache::default(), None, messages, upto)
    }

    /// What `cache` writes for `messages[..upto]`, in one piece.
    fn written(
        cache: &PrefixCache,
        key: Option<&ConversationKey>,
        messages: &[Message],
        upto: usize,
    ) -> Vec<u8> {
        let mut out = BodyWriter::default();
        cache.write(key, messages, upto, &mut out, text).unwrap();
        out.finish().to_bytes().to_vec()
    }

    fn user(t: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: t.into() }],
        }
    }

    #[test]
    fn kept_bytes_are_what_writing_afresh_gives_and_grow_by_what_is_new() {
        let cache = PrefixCache::default();
        let mut c = Conversation::default();
        let mut calls = 0;
        for round in 0..6 {
            c.push_user_text(format!("question {round}"));
            c.push_assistant(vec![ContentBlock::Text {
                text: format!("answer {round}"),
            }]);
            let upto = c.messages().len() - 1;
            let mut out = BodyWriter::default();
            cache
                .write(Some(c.key()), c.messages(), upto, &mut out, |m, o| {
                    calls += 1;
                    text(m, o)
                })
                .unwrap();
            assert_eq!(out.finish().to_bytes(), fresh(c.messages(), upto));
        }
        // Each message was written once: 1, then 2 more per round.
        assert_eq!(calls, 11);
        // A shorter request (a conversation that shrank) is rebuilt.
        let out = written(&cache, Some(c.key()), &c.messages()[..2], 1);
        assert_eq!(out, fresh(c.messages(), 1));
    }

    #[test]
    fn a_dropped_conversation_is_freed_and_a_clone_is_kept_apart() {
        let cache = PrefixCache::default();
        let mut a = Conversation::default();
        a.push_user_text("a");
        a.push_assistant(vec![ContentBlock::Text { text: "b".into() }]);
        let out = written(&cache, Some(a.key()), a.messages(), 2);
        let mut b = a.clone();
        b.push_user_text("only in b");
        let out_b = written(&cache, Some(b.key()), b.messages(), 3);
        assert_eq!(out_b, fresh(b.messages(), 3));
        assert_eq!(cache.kept_bytes(), out.len() + out_b.len());
        drop(a);
        let other = Conversation::from_messages(vec![user("x")]);
        written(&cache, Some(other.key()), other.messages(), 0);
        assert_eq!(cache.kept_bytes(), out_b.len());
    }

    #[test]
    fn a_long_conversation_is_kept_in_sealed_parts_that_requests_share() {
        let cache = PrefixCache::default();
        let mut c = Conversation::default();
        let mut seen: Option<Bytes> = None;
        for round in 0..400 {
            c.push_user_text(format!("{round}: {}", "x".repeat(2048)));
            c.push_assistant(vec![ContentBlock::Text {
                text: "y".repeat(2048),
            }]);
            let upto = c.messages().len() - 1;
            let mut out = BodyWriter::default();
            cache
                .write(Some(c.key()), c.messages(), upto, &mut out, text)
                .unwrap();
            let body = out.finish();
            assert_eq!(body.to_bytes(), fresh(c.messages(), upto), "round {round}");
            // The first sealed part is the same memory in every request
            // after it was sealed: shared, not copied.
            let parts = body.parts();
            if parts.len() > 1 {
                let first = &parts[0];
                assert!(first.len() >= SEGMENT, "{}", first.len());
                match &seen {
                    Some(s) => assert_eq!(s.as_ptr(), first.as_ptr()),
                    None => seen = Some(first.clone()),
                }
            }
        }
        assert!(seen.is_some(), "400 rounds of 4 KiB seal a part");
        let upto = c.messages().len() - 1;
        assert_eq!(cache.kept_bytes(), fresh(c.messages(), upto).len());
    }

    #[test]
    fn results_read_their_text_from_the_sealed_parts_and_are_rewritten_the_same() {
        let cache = PrefixCache::default();
        let (mut c, mut mirror) = (Conversation::default(), Conversation::default());
        let mut body = None;
        for round in 0..200 {
            grow(&mut c, round);
            grow(&mut mirror, round);
            let upto = c.messages().len() - 1;
            let mut out = BodyWriter::default();
            cache
                .write(Some(c.key()), c.messages(), upto, &mut out, text)
                .unwrap();
            body = Some(out.finish());
            keep(&cache, &mut c);
        }
        let body = body.unwrap();
        assert_eq!(c.messages(), mirror.messages());
        let kept = kept_results(c.messages());
        let results = mirror
            .messages()
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| matches!(b, ContentBlock::ToolResult { .. }))
            .count();
        assert!(kept.len() * 2 > results, "{} of {results} kept", kept.len());
        // Each kept text is in a part the request sends: shared, not copied.
        let parts = body.parts();
        for literal in kept {
            let inside = parts.iter().any(|p| {
                let range = p.as_ptr_range();
                range.contains(&literal.as_ptr()) && literal.as_ptr_range().end <= range.end
            });
            assert!(inside, "a kept text is not in a sealed part");
        }
        // Written afresh (another client, a rebuilt cache), the results
        // with kept text give the same bytes.
        let upto = c.messages().len() - 1;
        assert_eq!(
            written(&PrefixCache::default(), Some(c.key()), c.messages(), upto),
            fresh(mirror.messages(), upto)
        );
    }
}
