//! The serialised bytes of a conversation's older messages, kept between
//! requests so a request costs what is new in it, not the whole history.
//! Invariant: the bytes kept for a conversation are exactly what the wire's
//! writer wrote for its first `count` messages (each ending in `,`); they
//! are used only for the same live [`ConversationKey`] (a conversation only
//! grows, and never changes a message before its last), a wire keeps only
//! messages its request leaves unmarked, and a request for fewer messages
//! than are kept rebuilds them. The bytes of a dropped conversation
//! (compaction and a new session replace it) are freed at the next request.

use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

use super::body::BodyWriter;
use crate::chat::{ConversationKey, KeyWatch, Message};

/// Kept bytes are sealed into shared parts of about this size: a request
/// copies at most one unsealed part, and sends the sealed ones as they are.
const SEGMENT: usize = 256 * 1024;

/// Conversations kept at once (a parent and the children it waits for).
const KEPT: usize = 4;

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
}

impl Entry {
    fn clear(&mut self) {
        self.count = 0;
        self.sealed.clear();
        self.open = Vec::new();
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
        self.sealed.push(Bytes::from(part));
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
            entry.count += 1;
            entry.seal_if_full();
        }
        out.push_shared(&entry.sealed);
        out.buf().extend_from_slice(&entry.open);
        Ok(())
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
                content: format!("fn f{round}() {{}}\n\"quoted\" \u{1F600}"),
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
}
