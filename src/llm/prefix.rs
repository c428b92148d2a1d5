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

use crate::chat::{ConversationKey, KeyWatch, Message};

/// Room reserved after the kept bytes for the request's newest messages and
/// tools.
const TAIL_ROOM: usize = 64 * 1024;

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
    bytes: Vec<u8>,
}

impl PrefixCache {
    /// Appends `messages[..upto]` to `out`, each as `write` writes it (a
    /// wire's writer ends each message with `,`), reusing what was kept
    /// for `key` and keeping what is new.
    pub fn write<F>(
        &self,
        key: Option<&ConversationKey>,
        messages: &[Message],
        upto: usize,
        out: &mut Vec<u8>,
        mut write: F,
    ) -> serde_json::Result<()>
    where
        F: FnMut(&Message, &mut Vec<u8>) -> serde_json::Result<()>,
    {
        let upto = upto.min(messages.len());
        let Some(key) = key else {
            for m in &messages[..upto] {
                write(m, out)?;
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
                bytes: Vec::new(),
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
            entry.count = 0;
            entry.bytes.clear();
        }
        for m in &messages[entry.count..upto] {
            let before = entry.bytes.len();
            if let Err(e) = write(m, &mut entry.bytes) {
                entry.bytes.truncate(before);
                return Err(e);
            }
            entry.count += 1;
        }
        // Room for the rest of the request too, so the body is not copied
        // again as it grows.
        out.reserve(entry.bytes.len() + TAIL_ROOM);
        out.extend_from_slice(&entry.bytes);
        Ok(())
    }

    /// Bytes kept, over all conversations (for the memory account).
    pub fn kept_bytes(&self) -> usize {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.iter().map(|e| e.bytes.len()).sum()
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
                input: json!({"path": format!("src/{round}.rs"), "limit": 20}),
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
        let mut out = Vec::new();
        PrefixCache::default()
            .write(None, messages, upto, &mut out, text)
            .unwrap();
        out
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
            let mut out = Vec::new();
            cache
                .write(Some(c.key()), c.messages(), upto, &mut out, |m, o| {
                    calls += 1;
                    text(m, o)
                })
                .unwrap();
            assert_eq!(out, fresh(c.messages(), upto));
        }
        // Each message was written once: 1, then 2 more per round.
        assert_eq!(calls, 11);
        // A shorter request (a conversation that shrank) is rebuilt.
        let mut out = Vec::new();
        cache
            .write(Some(c.key()), &c.messages()[..2], 1, &mut out, text)
            .unwrap();
        assert_eq!(out, fresh(c.messages(), 1));
    }

    #[test]
    fn a_dropped_conversation_is_freed_and_a_clone_is_kept_apart() {
        let cache = PrefixCache::default();
        let mut a = Conversation::default();
        a.push_user_text("a");
        a.push_assistant(vec![ContentBlock::Text { text: "b".into() }]);
        let mut out = Vec::new();
        cache
            .write(Some(a.key()), a.messages(), 2, &mut out, text)
            .unwrap();
        let mut b = a.clone();
        b.push_user_text("only in b");
        let mut out_b = Vec::new();
        cache
            .write(Some(b.key()), b.messages(), 3, &mut out_b, text)
            .unwrap();
        assert_eq!(out_b, fresh(b.messages(), 3));
        assert_eq!(cache.kept_bytes(), out.len() + out_b.len());
        drop(a);
        let other = Conversation::from_messages(vec![user("x")]);
        cache
            .write(
                Some(other.key()),
                other.messages(),
                0,
                &mut Vec::new(),
                text,
            )
            .unwrap();
        assert_eq!(cache.kept_bytes(), out_b.len());
    }
}
